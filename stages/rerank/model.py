"""The rerank stages: ``KeepOrder`` (the default, does nothing) and ``ModelRerank``.

``ModelRerank`` runs between resolve and load. Resolve keeps a longer ``shortlist``
(the pipeline asks for it through the request); the candidates are shown to the chat
model in batches of ``batch_size`` (labelled ``S1``..., see :mod:`.prompt`), all
batches concurrently through the model adapter's own limiter. Each batch's answer
reorders and drops its candidates; the model never compares candidates of different
batches, so batches keep their lexical order relative to each other. The list is then
cut to the request's limit.

A batch whose call fails, times out, passes the deadline or answers nothing usable
keeps its lexical order, and the report's note says so. Answers are cached in the
summary cache under their own prompt version.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import attrs
from returns.context import RequiresContextFutureResult
from returns.future import FutureResult
from returns.io import IOFailure
from returns.result import Result, Success
from returns.unsafe import unsafe_perform_io

from harkback.stages.errors import RecallError
from harkback.stages.flow import Resolved
from harkback.stages.ports import Deps
from harkback.stages.records import Candidate, RerankReport, Summary, TokenUsage
from harkback.stages.request import MAX_SHORTLIST
from harkback.stages.rerank.prompt import (
    best_passages,
    build_request,
    labels_for,
    ranking_key,
    read_ranking,
    session_block,
)
from harkback.stages.stage import Step, cached_before, model_in_key, not_kept_because, pure

SHORTLIST = 20
BATCH_SIZE = 5
PASSAGES = 2
PASSAGE_CHARS = 300
MAX_OUTPUT_TOKENS = 48
DEADLINE_S = 30.0
"""Default time for all rerank calls of one recall together."""


@attrs.frozen
class KeepOrder:
    """No rerank: ``Resolved`` passes through unchanged (the pipeline does not time it)."""

    shortlist: int = 0

    def __call__(self, resolved: Resolved) -> Step[Resolved]:
        """Return ``resolved`` as it is."""
        return pure(resolved)


@attrs.frozen(kw_only=True)
class Judged:
    """One batch's outcome: the order to use (indexes into the batch) and what it cost.

    ``order`` None means the lexical order stands for this batch, and ``why`` says why;
    ``not_cached`` why the model's answer could not be cached ("" when it was, or need
    not be).
    """

    order: tuple[int, ...] | None
    why: str = ""
    not_cached: str = ""
    called: bool = False
    cached: bool = False
    usage: TokenUsage = attrs.field(factory=TokenUsage)


def merge(batches: Sequence[Sequence[Candidate]], judged: Sequence[Judged],
          limit: int) -> tuple[Candidate, ...]:
    """Each batch in the model's order (or lexical order when it failed), batch after
    batch, cut to ``limit``.

    >>> from harkback.stages.records import Session
    >>> a, b, c = (Candidate(root=Session(id=i), hits=()) for i in "abc")
    >>> [x.root.id for x in merge([[a, b], [c]], [Judged(order=(1,)), Judged(order=None)], 5)]
    ['b', 'c']
    """
    out: list[Candidate] = []
    for batch, outcome in zip(batches, judged, strict=True):
        order = range(len(batch)) if outcome.order is None else outcome.order
        out.extend(batch[i] for i in order)
    return tuple(out[:limit])


def describe_fallback(judged: Sequence[Judged]) -> str:
    """The note for batches that kept the lexical order ("" when none did).

    >>> describe_fallback([Judged(order=None, why="HTTP 500"), Judged(order=(0,))])
    'rerank: lexical order kept for 1 of 2 batches (HTTP 500)'
    >>> describe_fallback([Judged(order=None, why="x")])
    'rerank: the lexical order stands (x)'
    """
    failed = [j for j in judged if j.order is None]
    if not failed:
        return ""
    reasons = "; ".join(dict.fromkeys(j.why for j in failed))
    if len(failed) == len(judged):
        return f"rerank: the lexical order stands ({reasons})"
    return f"rerank: lexical order kept for {len(failed)} of {len(judged)} batches ({reasons})"


def describe_not_cached(judged: Sequence[Judged]) -> str:
    """The note for model answers the cache failed to keep ("" when none): the next
    search pays for the model again.

    >>> describe_not_cached([Judged(order=(0,), not_cached="the disk is full"), Judged(order=(0,))])
    'rerank choice not cached: the disk is full'
    """
    reasons = "; ".join(dict.fromkeys(j.not_cached for j in judged if j.not_cached))
    return f"rerank choice not cached: {reasons}" if reasons else ""


@attrs.frozen(kw_only=True)
class ModelRerank:
    """A chat model keeps the relevant candidates of a ``shortlist``, best first.

    ``batch_size`` candidates per call, each shown with ``passages`` best hits of at most
    ``passage_chars`` characters; ``deadline_s`` bounds all calls of one recall together.
    Without a model in :class:`Deps` the lexical order stands, with a note.
    """

    shortlist: int = attrs.field(default=SHORTLIST, validator=[attrs.validators.ge(1),
                                                               attrs.validators.le(MAX_SHORTLIST)])
    batch_size: int = attrs.field(default=BATCH_SIZE, validator=attrs.validators.ge(1))
    passages: int = attrs.field(default=PASSAGES, validator=attrs.validators.ge(1))
    passage_chars: int = attrs.field(default=PASSAGE_CHARS, validator=attrs.validators.ge(40))
    max_output_tokens: int = attrs.field(default=MAX_OUTPUT_TOKENS,
                                         validator=attrs.validators.ge(1))
    temperature: float = 0.0
    deadline_s: float = attrs.field(default=DEADLINE_S, validator=attrs.validators.gt(0))

    def __call__(self, resolved: Resolved) -> Step[Resolved]:
        """Rerank ``resolved.candidates`` and cut them to the request's limit."""
        def run(deps: Deps) -> FutureResult[Resolved, RecallError]:
            return FutureResult(self._all(resolved, deps))

        return RequiresContextFutureResult(run)

    def batches(self, candidates: Sequence[Candidate]) -> tuple[tuple[Candidate, ...], ...]:
        """The candidates in consecutive batches of ``batch_size``."""
        size = self.batch_size
        return tuple(tuple(candidates[i:i + size]) for i in range(0, len(candidates), size))

    async def _all(self, resolved: Resolved, deps: Deps) -> Result[Resolved, RecallError]:
        deadline = asyncio.get_running_loop().time() + self.deadline_s
        batches = self.batches(resolved.candidates)
        judged = await asyncio.gather(*(self._judge(b, resolved, deps, deadline)
                                        for b in batches))
        kept = merge(batches, judged, resolved.request.limit)
        usage = TokenUsage()
        for outcome in judged:
            usage = usage + outcome.usage
        report = RerankReport(
            shown=len(resolved.candidates), kept=len(kept),
            calls=sum(j.called for j in judged), cached_calls=sum(j.cached for j in judged),
            usage=usage, note="; ".join(filter(None, (describe_fallback(judged),
                                                      describe_not_cached(judged)))),
            model_order=any(j.order is not None for j in judged))
        return Success(attrs.evolve(resolved, candidates=kept, rerank=report))

    async def _judge(self, batch: Sequence[Candidate], resolved: Resolved, deps: Deps,
                     deadline: float) -> Judged:
        """The model's order for one batch, or why the lexical order stands."""
        model = deps.model
        if model is None:
            return Judged(order=None, why="no chat model configured")
        labels = labels_for(len(batch))
        blocks = [session_block(label, candidate, best_passages(
            candidate, resolved.parsed, passages=self.passages, chars=self.passage_chars))
            for label, candidate in zip(labels, batch, strict=True)]
        query = resolved.request.query
        request = build_request(query, blocks, max_tokens=self.max_output_tokens,
                                temperature=self.temperature)
        key = ranking_key(batch[0].root.id, query, request, model_in_key(model))
        if deps.cache is not None:
            hit = await cached_before(deps.cache, key, deadline)
            ranking = None if hit is None else read_ranking(hit.text, labels=labels)
            if ranking is not None:
                return Judged(order=tuple(labels.index(x) for x in ranking), cached=True)
        remaining = deadline - asyncio.get_running_loop().time()
        if remaining <= 0:
            return Judged(order=None, why=f"the {self.deadline_s:g} s deadline had passed")
        try:
            answer = await asyncio.wait_for(model.complete(request).awaitable(),
                                            timeout=remaining)
        except TimeoutError:
            return Judged(order=None, called=True,
                          why=f"not finished within the {self.deadline_s:g} s deadline")
        if isinstance(answer, IOFailure):
            return Judged(order=None, called=True,
                          why=unsafe_perform_io(answer.failure()).message())
        chat = unsafe_perform_io(answer.unwrap())
        cut = chat.finish_reason == "length"
        # Cut at the token limit, the last line may end mid-list ("RELEVANT: S2, S"): the
        # sessions it did not reach would be dropped. Only the lines it finished count.
        text = chat.text.rpartition("\n")[0] if cut else chat.text
        ranking = read_ranking(text, labels=labels)
        if ranking is None:
            why = (f"the model's answer was cut at its {self.max_output_tokens}-token limit "
                   "before its list ended" if cut else
                   "the model named none of the sessions it was shown, as asked "
                   "(RELEVANT: S1, ...)")
            return Judged(order=None, called=True, usage=chat.usage, why=why)
        not_cached = "" if deps.cache is None else await not_kept_because(
            deps.cache, key, Summary(text=text, kind="llm", usage=chat.usage), deadline)
        return Judged(order=tuple(labels.index(x) for x in ranking), called=True,
                      usage=chat.usage, not_cached=not_cached)
