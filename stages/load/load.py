"""The load stage: render each candidate's whole lineage and cut it around the hits.

>>> Load().budget_chars
100000
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
from returns.future import FutureResult

from harkback.stages.errors import StoreUnavailable
from harkback.stages.flow import Loaded, Resolved
from harkback.stages.load.render import TOOL_OUTPUT_CHARS, Rendered, order_lineage, render_lineage
from harkback.stages.load.truncate import Span, cut_around, focus_spans, locate_units
from harkback.stages.ports import SessionStore
from harkback.stages.query import ParsedQuery
from harkback.stages.records import Candidate, Message, MessageHit, Session, Transcript
from harkback.stages.stage import Step, gather, with_store

BUDGET_CHARS = 100_000


def fetch_lineage(store: SessionStore, root: Session
                  ) -> FutureResult[tuple[Session, ...], StoreUnavailable]:
    """The root and all of its descendants, root first, then by start time.

    Asks the store for one generation of children at a time; a session seen before
    is not asked about again, so a parent cycle cannot loop.
    """
    def grow(found: dict[str, Session], frontier: tuple[str, ...]
             ) -> FutureResult[tuple[Session, ...], StoreUnavailable]:
        if not frontier:
            return FutureResult.from_value(order_lineage(root, tuple(found.values())))

        def add(children: tuple[Session, ...]
                ) -> FutureResult[tuple[Session, ...], StoreUnavailable]:
            new = {c.id: c for c in children if c.id not in found}
            return grow({**found, **new}, tuple(new))

        return store.children(frontier).bind(add)

    return grow({root.id: root}, (root.id,))


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


def make_transcript(candidate: Candidate, lineage: Sequence[Session],
                    messages: Sequence[Message], parsed: ParsedQuery, *,
                    budget_chars: int = BUDGET_CHARS,
                    tool_output_chars: int = TOOL_OUTPUT_CHARS) -> Transcript:
    """Render a lineage and cut it to ``budget_chars`` around the candidate's hits.

    When no hit can be placed in the rendered text, the lines holding query terms
    are kept instead. A hit message (or line) longer than half the budget is replaced
    by the places inside it where query units occur, so the window lands on the match.
    """
    rendered = render_lineage(lineage, messages, tool_output_chars=tool_output_chars)
    spans = hit_spans(rendered, candidate.hits) or locate_units(rendered.text, parsed.units)
    # A matched message too long to keep whole is cut around the words that matched.
    spans = focus_spans(rendered.text, spans, parsed.units, longest=budget_chars // 2)
    text, truncated = cut_around(rendered.text, spans, budget_chars)
    return Transcript(candidate=attrs.evolve(candidate, lineage=tuple(lineage)), text=text,
                      full_chars=len(rendered.text), truncated=truncated)


@attrs.frozen
class Load:
    """Load each candidate's lineage as a transcript of at most ``budget_chars``.

    Tool output longer than ``tool_output_chars`` keeps only its head and tail.
    Candidates load concurrently; a store failure fails the stage.
    """

    budget_chars: int = attrs.field(default=BUDGET_CHARS, validator=attrs.validators.ge(1))
    tool_output_chars: int = attrs.field(default=TOOL_OUTPUT_CHARS,
                                         validator=attrs.validators.ge(0))

    def __call__(self, resolved: Resolved) -> Step[Loaded]:
        """Load every candidate of ``resolved``, keeping their order."""
        return with_store(lambda deps: self.load_all(deps.store, resolved))

    def load_one(self, store: SessionStore, candidate: Candidate, parsed: ParsedQuery
                 ) -> FutureResult[Transcript, StoreUnavailable]:
        """Fetch one candidate's lineage and messages and build its transcript."""
        def build(lineage: tuple[Session, ...]
                  ) -> FutureResult[Transcript, StoreUnavailable]:
            return store.messages([s.id for s in lineage]).map(
                lambda messages: make_transcript(
                    candidate, lineage, messages, parsed, budget_chars=self.budget_chars,
                    tool_output_chars=self.tool_output_chars))

        return fetch_lineage(store, candidate.root).bind(build)

    def load_all(self, store: SessionStore, resolved: Resolved
                 ) -> FutureResult[Loaded, StoreUnavailable]:
        """Load all candidates concurrently."""
        return gather([self.load_one(store, c, resolved.parsed) for c in resolved.candidates]
                      ).map(lambda transcripts: Loaded(
                          request=resolved.request, parsed=resolved.parsed,
                          transcripts=transcripts, sessions_searched=resolved.sessions_searched,
                          rerank=resolved.rerank))
