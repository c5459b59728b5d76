"""The load stage: render each candidate's whole lineage and cut it around the hits.

>>> Load().budget_chars
100000
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
from returns.future import FutureResult
from returns.io import IOSuccess
from returns.result import Failure, Result, Success
from returns.unsafe import unsafe_perform_io

from harkback.stages.errors import StoreUnavailable
from harkback.stages.first_request import first_request
from harkback.stages.flow import Loaded, Resolved
from harkback.stages.load.render import TOOL_OUTPUT_CHARS, Rendered, order_lineage, render_lineage
from harkback.stages.load.truncate import Span, cut_around, focus_spans, locate_units
from harkback.stages.long_text import LONGEST_READ
from harkback.stages.ports import SessionStore
from harkback.stages.query import ParsedQuery
from harkback.stages.records import Candidate, Message, MessageHit, Session, Transcript
from harkback.stages.spelled import searched_units
from harkback.stages.stage import Step, with_store

BUDGET_CHARS = 100_000


def fetch_lineages(store: SessionStore, roots: Sequence[Session]
                   ) -> FutureResult[tuple[tuple[Session, ...], ...], StoreUnavailable]:
    """Each root with all of its descendants, root first, then by start time.

    Asks the store for one generation of children at a time, of every lineage at once
    (one call a generation, not one per lineage); within a lineage a session seen
    before is not asked about again, so a parent cycle cannot loop. The generations are
    walked in a loop, not by nesting a step per generation: a chain of thousands of
    continuations is as safe as a short one.
    """
    async def walk() -> Result[tuple[tuple[Session, ...], ...], StoreUnavailable]:
        found = [{root.id: root} for root in roots]
        frontiers = [(root.id,) for root in roots]
        while asked := tuple(dict.fromkeys(sid for frontier in frontiers
                                           for sid in frontier)):
            fetched = await store.children(asked)
            if not isinstance(fetched, IOSuccess):
                return Failure(unsafe_perform_io(fetched.failure()))
            children = unsafe_perform_io(fetched.unwrap())
            for index, (known, frontier) in enumerate(zip(found, frontiers, strict=True)):
                parents = frozenset(frontier)
                new = {c.id: c for c in children
                       if c.parent_session_id in parents and c.id not in known}
                known.update(new)
                frontiers[index] = tuple(new)
        return Success(tuple(order_lineage(root, tuple(known.values()))
                               for root, known in zip(roots, found, strict=True)))

    return FutureResult(walk())


def hit_spans(rendered: Rendered, hits: Sequence[MessageHit]) -> tuple[Span, ...]:
    """The spans of the hit messages in a rendered transcript, best score first.

    Hits on messages that were not rendered are left out.
    """
    spans: list[Span] = []
    for hit in sorted(hits, key=lambda h: -h.score):
        span = rendered.span_of(hit.session_id, hit.position)
        if span is not None and (span.start, span.end) not in spans:
            spans.append((span.start, span.end))
    return tuple(spans)


def placed(hits: Sequence[MessageHit], messages: Sequence[Message]) -> tuple[MessageHit, ...]:
    """``hits`` with a hit at position 0 of a session that has no message there moved to
    that session's first message: a title match points at position 0, and not every
    source numbers a session's messages from 0 (Hermes numbers them by row id).

    >>> m = lambda p: Message(session_id="s", position=p, role="user", content="x")
    >>> title = MessageHit(session_id="s", position=0, role="user", content="", score=1.0)
    >>> [h.position for h in placed((title,), (m(9), m(7)))]
    [7]
    """
    if all(hit.position for hit in hits):
        return tuple(hits)  # no hit to move: the messages are not looked at
    first: dict[str, int] = {}
    for message in messages:
        first[message.session_id] = min(message.position,
                                        first.get(message.session_id, message.position))
    return tuple(attrs.evolve(hit, position=first[hit.session_id])
                 if hit.position == 0 and first.get(hit.session_id, 0) > 0 else hit
                 for hit in hits)


def make_transcript(candidate: Candidate, lineage: Sequence[Session],
                    messages: Sequence[Message], parsed: ParsedQuery, *,
                    budget_chars: int = BUDGET_CHARS,
                    tool_output_chars: int = TOOL_OUTPUT_CHARS) -> Transcript:
    """Render a lineage and cut it to ``budget_chars`` around the candidate's hits.

    When no hit can be placed in the rendered text, the lines holding query terms
    are kept instead. A hit message (or line) longer than half the budget is replaced
    by the places inside it where query units occur, so the window lands on the match.
    """
    candidate = attrs.evolve(candidate, hits=placed(candidate.hits, messages))
    units = searched_units(parsed)
    # A long tool output is clipped to its head and tail, and to its matching place too.
    rendered = render_lineage(lineage, messages, tool_output_chars=tool_output_chars,
                              units=units)
    spans = hit_spans(rendered, candidate.hits) or locate_units(
        rendered.text, parsed.units, spellings=parsed.spellings)
    # A matched message too long to keep whole is cut around the words that matched.
    spans = focus_spans(rendered.text, spans, units,
                        longest=budget_chars // 2)
    text, truncated = cut_around(rendered.text, spans, budget_chars)
    return Transcript(candidate=attrs.evolve(candidate, lineage=tuple(lineage)), text=text,
                      full_chars=len(rendered.text), truncated=truncated,
                      preview=first_request(messages, candidate.root.id))


@attrs.frozen
class Load:
    """Load each candidate's lineage as a transcript of at most ``budget_chars``.

    Tool output longer than ``tool_output_chars`` keeps only its head and tail, and the
    place where the query first matches it.
    Candidates load together (a store call per generation of children, one for all
    messages); a store failure fails the stage.
    """

    budget_chars: int = attrs.field(default=BUDGET_CHARS, validator=attrs.validators.ge(1))
    tool_output_chars: int = attrs.field(default=TOOL_OUTPUT_CHARS,
                                         validator=attrs.validators.ge(0))

    def __call__(self, resolved: Resolved) -> Step[Loaded]:
        """Load every candidate of ``resolved``, keeping their order."""
        return with_store(lambda deps: self.load_all(deps.store, resolved))

    def load_all(self, store: SessionStore, resolved: Resolved
                 ) -> FutureResult[Loaded, StoreUnavailable]:
        """Load all candidates: their lineages a generation at a time, then every
        lineage's messages in one call (see :func:`fetch_lineages`)."""
        candidates = resolved.candidates

        def build(lineages: tuple[tuple[Session, ...], ...]
                  ) -> FutureResult[tuple[Transcript, ...], StoreUnavailable]:
            if not candidates:
                return FutureResult.from_value(())
            wanted = tuple(dict.fromkeys(s.id for lineage in lineages for s in lineage))
            # A huge message (a pasted log) is rendered from its start: read no more.
            return store.messages(wanted, LONGEST_READ).map(lambda messages: tuple(
                make_transcript(candidate, lineage, _of(lineage, messages), resolved.parsed,
                                budget_chars=self.budget_chars,
                                tool_output_chars=self.tool_output_chars)
                for candidate, lineage in zip(candidates, lineages, strict=True)))

        return fetch_lineages(store, [c.root for c in candidates]).bind(build).map(
            lambda transcripts: Loaded.after(resolved, transcripts=transcripts))


def _of(lineage: Sequence[Session], messages: Sequence[Message]) -> tuple[Message, ...]:
    """The messages of ``lineage``'s sessions, in the order given."""
    ids = frozenset(s.id for s in lineage)
    return tuple(m for m in messages if m.session_id in ids)
