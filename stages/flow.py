"""The records passed from one stage to the next.

Each stage takes one of these and returns the next inside a
``RequiresContextFutureResult[..., RecallError, Deps]``:
``SearchRequest → Matched → Resolved → Loaded → Summarized → RecallResult``; the
optional rerank stage takes a ``Resolved`` and returns one.
"""

from __future__ import annotations

from typing import Any, Self

import attrs

from harkback.stages.query import ParsedQuery
from harkback.stages.records import (
    Candidate,
    MessageHit,
    RerankReport,
    SessionLink,
    Summarized,
    Transcript,
)
from harkback.stages.request import SearchRequest


@attrs.frozen(kw_only=True)
class Matched:
    """The match stage's output: ranked message hits, and the score each ranked session
    got when the ranker scores sessions (best first; empty when it does not), which the
    hybrid ranker weighs meaning against, and notes for people on what the ranking left
    out (meaning, when the embedder failed); later stages pass the notes on."""

    request: SearchRequest
    parsed: ParsedQuery
    hits: tuple[MessageHit, ...]
    session_scores: tuple[tuple[str, float], ...] = ()
    notes: tuple[str, ...] = ()
    lineage: tuple[SessionLink, ...] = ()
    """The links of the sessions the ranker read with their ancestors (empty when it read
    none): the resolve stage walks them to their roots without asking the store again."""


@attrs.frozen(kw_only=True)
class Found:
    """What every stage after resolve passes on: the request, its parse, how many
    distinct sessions (lineage roots) the match stage found, and what a rerank stage
    did (None when none ran)."""

    request: SearchRequest
    parsed: ParsedQuery
    sessions_searched: int = attrs.field(validator=attrs.validators.ge(0))
    rerank: RerankReport | None = None
    notes: tuple[str, ...] = ()

    @classmethod
    def after(cls, prior: Found, **own: Any) -> Self:
        """The next stage's record: every field of :class:`Found` carried on from
        ``prior``, and ``own``, the fields the stage adds. A field added to ``Found``
        is then carried by every stage without touching them.

        >>> from harkback.stages.query import parse_query
        >>> found = Resolved(request=SearchRequest(query="nginx"), parsed=parse_query("nginx"),
        ...                  sessions_searched=7, notes=("words alone",), candidates=())
        >>> loaded = Loaded.after(found, transcripts=())
        >>> loaded.sessions_searched, loaded.notes, loaded.request.query
        (7, ('words alone',), 'nginx')
        """
        carried = {field.name: getattr(prior, field.name) for field in attrs.fields(Found)}
        return cls(**carried, **own)


@attrs.frozen(kw_only=True)
class Resolved(Found):
    """The resolve stage's output: one candidate per lineage root, best first."""

    candidates: tuple[Candidate, ...]


@attrs.frozen(kw_only=True)
class Loaded(Found):
    """The load stage's output: each candidate's transcript, cut to its budget around
    the matches."""

    transcripts: tuple[Transcript, ...]


@attrs.frozen(kw_only=True)
class SummarizedSet(Found):
    """The summarize stage's output: each transcript with its summary."""

    items: tuple[Summarized, ...]
