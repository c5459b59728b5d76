"""The match stage: full-text hits ranked by how much of the query each message covers.

FTS5's default AND made natural questions return nothing; a plain OR lets one
common word flood the top rows. The default matcher asks the store for an OR of
the query's topic words (a few hundred rows, BM25 order), then ranks each
message first by the share of query units it covers, then by BM25. Sources that
produce repetitive noise (cron reports) are scaled down rather than dropped.

>>> ranked = rank_by_coverage(
...     (_hit("a", "docker logs", 9.0), _hit("b", "docker bridge network", 1.0)),
...     parse_query("docker bridge network").units)
>>> [h.session_id for h in ranked]
['b', 'a']
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from harkback.stages.flow import Matched
from harkback.stages.ports import MatchQuery
from harkback.stages.query import Unit, parse_query, unit_matches
from harkback.stages.records import MessageHit
from harkback.stages.request import SearchRequest
from harkback.stages.stage import Step, pure, with_store
from harkback.stages.text import index_tokens


def coverage(content: str, units: Sequence[Unit]) -> float:
    """The share of query units found in ``content`` (0.0 to 1.0).

    >>> coverage("the bridge network is down", parse_query("bridge network dns").units)
    0.6666666666666666
    """
    if not units:
        return 0.0
    toks = index_tokens(content)
    token_set = frozenset(toks)
    found = sum(1 for unit in units if unit_matches(unit, toks, token_set))
    return found / len(units)


def rank_by_coverage(hits: Sequence[MessageHit], units: Sequence[Unit], *,
                     demoted_sources: tuple[str, ...] = (), demotion: float = 0.5
                     ) -> tuple[MessageHit, ...]:
    """Re-score store hits: coverage dominates, BM25 (scaled to below 1) breaks ties.

    Returned hits carry the new score; order is best first and stable for equal scores.
    """
    if not hits:
        return ()
    top_bm25 = max(max(h.score for h in hits), 1e-9)
    rescored = []
    for hit in hits:
        score = 2.0 * coverage(hit.content, units) + max(hit.score, 0.0) / top_bm25
        if hit.source in demoted_sources:
            score *= demotion
        rescored.append(attrs.evolve(hit, score=score))
    return tuple(sorted(rescored, key=lambda h: -h.score))


@attrs.frozen
class CoverageMatch:
    """Default matcher: OR of topic words from the store, re-ranked by query coverage.

    ``hit_limit`` hits leave the stage; ``scan_limit`` rows are read from the store.
    """

    hit_limit: int = attrs.field(default=50, validator=attrs.validators.ge(1))
    scan_limit: int = attrs.field(default=300, validator=attrs.validators.ge(1))
    demoted_sources: tuple[str, ...] = ("cron",)

    def __call__(self, request: SearchRequest) -> Step[Matched]:
        """Search the store for ``request.query``."""
        parsed = parse_query(request.query)
        if parsed.expression is None:
            return pure(Matched(request=request, parsed=parsed, hits=()))
        query = MatchQuery(expression=parsed.expression, roles=request.roles,
                           limit=max(self.scan_limit, self.hit_limit), since=request.since,
                           until=request.until, hidden_sources=request.hidden_sources)

        def ranked(hits: tuple[MessageHit, ...]) -> Matched:
            best = rank_by_coverage(hits, parsed.units, demoted_sources=self.demoted_sources)
            return Matched(request=request, parsed=parsed, hits=best[:self.hit_limit])

        return with_store(lambda deps: deps.store.search(query)).map(ranked)


@attrs.frozen
class Bm25Match:
    """Plain BM25 (the baseline): the store's order, one row per message, nothing re-ranked."""

    hit_limit: int = attrs.field(default=50, validator=attrs.validators.ge(1))

    def __call__(self, request: SearchRequest) -> Step[Matched]:
        """Search the store for ``request.query``."""
        parsed = parse_query(request.query)
        if parsed.expression is None:
            return pure(Matched(request=request, parsed=parsed, hits=()))
        query = MatchQuery(expression=parsed.expression, roles=request.roles,
                           limit=self.hit_limit, since=request.since, until=request.until,
                           hidden_sources=request.hidden_sources)
        return with_store(lambda deps: deps.store.search(query)).map(
            lambda hits: Matched(request=request, parsed=parsed, hits=hits))


def _hit(session_id: str, content: str, score: float) -> MessageHit:
    """A hit for examples and tests."""
    return MessageHit(session_id=session_id, position=0, role="user", content=content,
                      score=score)
