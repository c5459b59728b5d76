"""The records passed from one stage to the next.

Each stage takes one of these and returns the next inside a
``RequiresContextFutureResult[..., RecallError, Deps]``:
``SearchRequest → Matched → Resolved → Loaded → Summarized → RecallResult``.
"""

from __future__ import annotations

import attrs

from harkback.stages.query import ParsedQuery
from harkback.stages.records import Candidate, MessageHit, Summarized, Transcript
from harkback.stages.request import SearchRequest


@attrs.frozen(kw_only=True)
class Matched:
    """The match stage's output: ranked message hits."""

    request: SearchRequest
    parsed: ParsedQuery
    hits: tuple[MessageHit, ...]


@attrs.frozen(kw_only=True)
class Resolved:
    """The resolve stage's output: one candidate per lineage root, best first."""

    request: SearchRequest
    parsed: ParsedQuery
    candidates: tuple[Candidate, ...]
    sessions_searched: int


@attrs.frozen(kw_only=True)
class Loaded:
    """The load stage's output: each candidate's transcript, cut to budget."""

    request: SearchRequest
    parsed: ParsedQuery
    transcripts: tuple[Transcript, ...]
    sessions_searched: int


@attrs.frozen(kw_only=True)
class SummarizedSet:
    """The summarize stage's output: each transcript with its summary."""

    request: SearchRequest
    parsed: ParsedQuery
    items: tuple[Summarized, ...]
    sessions_searched: int
