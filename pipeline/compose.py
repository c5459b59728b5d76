"""The pipeline: five swappable stages composed once, and an optional rerank.

Swap one stage with ``attrs.evolve``:

>>> from harkback.stages.summarize.plain import RawSummarize
>>> p = attrs.evolve(Pipeline(), summarize=RawSummarize(chars=300))
>>> type(p.summarize).__name__
'RawSummarize'

The rerank stage sits between resolve and load. The default, :class:`KeepOrder`, passes
``Resolved`` through and is not timed (``timings`` names the five stages); a
:class:`ModelRerank` (``attrs.evolve(p, rerank=ModelRerank())``) makes resolve keep its
``shortlist`` and is timed as ``rerank``.
"""

from __future__ import annotations

from typing import Any, Protocol

import attrs
from returns.context import RequiresContextFutureResult
from returns.future import FutureResult

from harkback.pipeline.timing import timed
from harkback.stages.assemble import Assemble
from harkback.stages.errors import RecallError
from harkback.stages.flow import Loaded, Matched, Resolved, SummarizedSet
from harkback.stages.load.load import Load
from harkback.stages.match.lexical import LexicalMatch
from harkback.stages.named_times import named_times
from harkback.stages.parts_only import parts_only_noted
from harkback.stages.ports import Deps
from harkback.stages.query import parse_query
from harkback.stages.recent import (
    RecentSessions,
    browse_window,
    listing_query,
    own_work_first,
    projects_hold_any,
)
from harkback.stages.request import DEFAULT_ROLES, SearchRequest
from harkback.stages.rerank.model import KeepOrder
from harkback.stages.resolve import LineageResolve
from harkback.stages.result import BrowseResult, RecallResult
from harkback.stages.stage import Stage, Step, pure
from harkback.stages.summarize.plain import ExtractiveSummarize
from harkback.stages.undated import undated_left_out
from harkback.stages.unheld_sources import held_noted, sources_held, unheld_noted

STAGE_NAMES = ("match", "resolve", "load", "summarize", "assemble")
RERANK = "rerank"
"""The timing name of a rerank stage that does something."""
TOOL_OUTPUT_NOTE = ("nothing matched in user or assistant messages; these sessions matched "
                    "in tool output (a command's output, an error message)")
"""Said when a search with the default roles found nothing and tool output was searched."""


class Rerank(Stage[Resolved, Resolved], Protocol):
    """A rerank stage: chooses ``request.limit`` of the ``shortlist`` candidates that
    resolve keeps for it (a shortlist of 0 asks for nothing more than the limit)."""

    @property
    def shortlist(self) -> int:
        """How many candidates resolve should keep for this stage (0: the limit)."""
        ...


def _a_stage(_owner: object, field: attrs.Attribute[Any], stage: object) -> None:
    """Refuse at once a stage given by name (``match="bm25"``), which failed only at the
    first search ('str' object is not callable).

    >>> try:
    ...     Pipeline(match="bm25")
    ... except TypeError as error:
    ...     print(error)
    match must be a stage, got the text 'bm25': a stage by name is RANKERS['bm25']
    """
    if isinstance(stage, str):
        registry = _REGISTRIES.get(field.name)
        hint = f": a stage by name is {registry}[{stage!r}]" if registry else ""
        raise TypeError(f"{field.name} must be a stage, got the text {stage!r}{hint}")
    if not callable(stage):
        raise TypeError(f"{field.name} must be a stage (a callable), "
                        f"got {type(stage).__name__}")
    if isinstance(stage, type):  # called with a request, it made a stage of it, or failed
        raise TypeError(f"{field.name} must be a stage, got the class {stage.__name__}: "
                        f"make one, {stage.__name__}()")


_REGISTRIES = {"match": "RANKERS", "summarize": "SUMMARIZERS"}
"""Where the stages of a field are found by name (``harkback.pipeline`` exports them)."""


@attrs.frozen(kw_only=True)
class Pipeline:
    """match → resolve → load → summarize → assemble, and recent mode for empty queries."""

    match: Stage[SearchRequest, Matched] = attrs.field(default=LexicalMatch(),
                                                        validator=_a_stage)
    resolve: Stage[Matched, Resolved] = attrs.field(default=LineageResolve(),
                                                     validator=_a_stage)
    rerank: Rerank = attrs.field(default=KeepOrder(), validator=_a_stage)
    load: Stage[Resolved, Loaded] = attrs.field(default=Load(), validator=_a_stage)
    summarize: Stage[Loaded, SummarizedSet] = attrs.field(default=ExtractiveSummarize(),
                                                           validator=_a_stage)
    assemble: Stage[SummarizedSet, RecallResult] = attrs.field(default=Assemble(),
                                                                validator=_a_stage)
    recent: Stage[SearchRequest, BrowseResult] = attrs.field(default=RecentSessions(),
                                                              validator=_a_stage)

    @property
    def reranks(self) -> bool:
        """True when the rerank stage does something (it is then run and timed)."""
        return not isinstance(self.rerank, KeepOrder)

    def search(self, request: SearchRequest) -> Step[RecallResult]:
        """Run the five stages (and a rerank when set), each timed, on a non-empty query."""
        return _noted(request, self._stages(request))

    def _stages(self, request: SearchRequest) -> Step[RecallResult]:
        if not self.reranks:
            resolved = timed("match", self.match)(request).bind(timed("resolve", self.resolve))
        else:
            wide = attrs.evolve(request, shortlist=max(request.limit, self.rerank.shortlist))
            resolved = (timed("match", self.match)(wide)
                        .bind(timed("resolve", self.resolve))
                        .bind(timed(RERANK, self.rerank)))
        return (resolved
                .bind(timed("load", self.load))
                .bind(timed("summarize", self.summarize))
                .bind(timed("assemble", self.assemble)))

    def browse(self, request: SearchRequest, *, asked: bool = False) -> Step[BrowseResult]:
        """List recent sessions (no model call); for a question (``asked``), the user's
        own before the scheduler's (:func:`~harkback.stages.recent.own_work_first`)."""
        def listing(r: SearchRequest) -> Step[BrowseResult]:
            return own_work_first(self.recent, r) if asked else self.recent(r)

        return timed("recent", listing)(request).bind(
            lambda listed: unheld_noted(request.sources, listed)).bind(
            lambda listed: parts_only_noted(request, listed))

    def run(self, request: SearchRequest) -> Step[RecallResult | BrowseResult]:
        """Search, or browse when the query is empty or names only a time."""
        if request.is_browse:
            return self.browse(request).map(_widen_browse)

        def choose(deps: Deps) -> FutureResult[RecallResult | BrowseResult, RecallError]:
            now = deps.clock()
            # A query in search syntax lists no time (browse_window): its ranker reads its
            # windows alone (weighed_times), not the whole reading of named_times.
            said = None if parse_query(request.query).advanced else named_times(
                request.query, now)
            listing = None if said is None else browse_window(request, now, said)
            if listing is not None:
                # The payload says what was asked and which time it was read to name.
                window = (listing.since, listing.until)
                return self.browse(listing, asked=True).map(lambda listed: _widen_browse(
                    attrs.evolve(listed, query=request.query, window=window)))(deps)
            # The ranker weighs the times read here: the question is not read again.
            searched = request if said is None else attrs.evolve(request, weighed=said.weighed)
            return self._stages(searched).bind(
                lambda found: self._in_tool_output(searched, found)).map(_widen_recall)(deps)

        return RequiresContextFutureResult(choose)

    def _in_tool_output(self, request: SearchRequest, found: RecallResult) -> Step[RecallResult]:
        """``found``, or when the default roles matched no session, what tool output holds.

        The exact error a user copies from a command's output is often only there:
        "No matching sessions found" for it sent them to grep the transcripts. Sessions
        that matched and a rerank kept none of are an answer: not searched again (the
        model would be asked twice, and shown the sessions it left out). Nor is a search
        by sources, or projects, the store holds no session of: no role of theirs can
        match. Nor is a query with no searchable unit (punctuation alone: a question of
        stopwords or framing alone still searches its own words), which no role can match.
        What the request's bounds and filters left out is said once, of both.
        """
        if (found.results or found.sessions_searched or request.roles != DEFAULT_ROLES
                or parse_query(request.query).is_empty):
            return _noted(request, pure(found))
        wide = attrs.evolve(request, roles=(*request.roles, "tool"))

        def again(held: tuple[str, ...] | None) -> Step[RecallResult]:
            if held is not None and not any(name in held for name in request.sources):
                return pure(found)
            return projects_hold_any(request).bind(lambda some: self._stages(wide).map(
                lambda tools: attrs.evolve(tools, notes=(*tools.notes, TOOL_OUTPUT_NOTE))
                if tools.results else found) if some else pure(found))

        # The store is asked its sources once, for the choice and for the note.
        return sources_held(request.sources).bind(lambda held: again(held).bind(
            lambda result: _undated_noted(request, result)).map(
            lambda result: held_noted(request.sources, held, result)))


def _noted(request: SearchRequest, found: Step[RecallResult]) -> Step[RecallResult]:
    """``found`` with the notes on what ``request``'s time bounds and source filter left out."""
    return (found.bind(lambda result: _undated_noted(request, result))
            .bind(lambda result: unheld_noted(request.sources, result)))


def _undated_noted(request: SearchRequest, result: RecallResult) -> Step[RecallResult]:
    """``result`` with a note on the sessions with no time that ``request``'s time bounds
    kept out of the search (they matched or not: a bound cannot place them)."""
    if request.since is None and request.until is None:
        return pure(result)
    return listing_query(request).bind(lambda query: undated_left_out(query, "searched")).map(
        lambda notes: attrs.evolve(result, notes=(*result.notes, *notes)))


def _widen_browse(result: BrowseResult) -> RecallResult | BrowseResult:
    return result


def _widen_recall(result: RecallResult) -> RecallResult | BrowseResult:
    return result
