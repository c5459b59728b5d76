"""The match stage and its swappable rankers, chosen by name from :data:`RANKERS`.

A ranker is a ``match`` stage: it turns a request into message hits, best first, and
the resolve stage keeps the first hit of each lineage, so the order of hits *is* the
session ranking. The default is :class:`~harkback.stages.match.lexical.LexicalMatch`; the
others are baselines and earlier designs kept for comparison:

- ``bm25``: the store's BM25 order, one row per message, nothing re-ranked;
- ``reference``: the reference system: every word required, an OR of them only when
  that finds nothing;
- ``coverage``: messages ranked by the share of query words they hold, then BM25;
- ``hybrid``: the lexical ranking fused with a dense one (needs an embedder and stored
  vectors; without them it is the lexical ranking).

>>> sorted(RANKERS)
['bm25', 'coverage', 'hybrid', 'lexical', 'reference']
>>> ranked = rank_by_coverage(
...     (_hit("a", "docker logs", 9.0), _hit("b", "docker bridge network", 1.0)),
...     parse_query("docker bridge network").units)
>>> [h.session_id for h in ranked]
['b', 'a']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs
from returns.future import FutureResult

from harkback.stages.errors import StoreUnavailable
from harkback.stages.flow import Matched
from harkback.stages.match.hybrid import HybridMatch
from harkback.stages.match.lexical import LexicalMatch
from harkback.stages.match.plan import store_query
from harkback.stages.ports import Deps, MatchQuery
from harkback.stages.query import AllOf, AnyOf, Node, Term, Unit, parse_query, unit_matches
from harkback.stages.records import MessageHit
from harkback.stages.request import SearchRequest
from harkback.stages.stage import Stage, Step, pure, with_store
from harkback.stages.text.tokens import index_tokens, tokens


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
    """Coverage matcher: OR of topic words from the store, re-ranked by query coverage.

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
        query = store_query(request, parsed.expression,
                            limit=max(self.scan_limit, self.hit_limit))

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
        query = store_query(request, parsed.expression, limit=self.hit_limit)
        return with_store(lambda deps: deps.store.search(query)).map(
            lambda hits: Matched(request=request, parsed=parsed, hits=hits))


def all_words(text: str) -> Node | None:
    """Every word of ``text``, stopwords included, all required (FTS5's implicit AND).

    >>> all_words("fix the bridge")
    AllOf(items=(Term(text='fix', prefix=False), Term(text='the', prefix=False), \
Term(text='bridge', prefix=False)))
    """
    words = tuple(Term(t) for t in dict.fromkeys(tokens(text)))
    if not words:
        return None
    return words[0] if len(words) == 1 else AllOf(words)


@attrs.frozen
class ReferenceMatch:
    """The reference system's search: all words required; their OR only when that is empty.

    FTS syntax is kept as written. Every matching row is scored (no bound on work).
    """

    hit_limit: int = attrs.field(default=50, validator=attrs.validators.ge(1))

    def __call__(self, request: SearchRequest) -> Step[Matched]:
        """Search the store for ``request.query``."""
        parsed = parse_query(request.query)
        strict = parsed.expression if parsed.advanced else all_words(request.query)
        if parsed.expression is None or strict is None:
            return pure(Matched(request=request, parsed=parsed, hits=()))

        def query(expression: Node) -> MatchQuery:
            return store_query(request, expression, limit=self.hit_limit, max_scored=None)

        def fallback(hits: tuple[MessageHit, ...], deps: Deps
                     ) -> FutureResult[tuple[MessageHit, ...], StoreUnavailable]:
            if hits or not isinstance(strict, AllOf):
                return FutureResult.from_value(hits)
            return deps.store.search(query(AnyOf(strict.items)))

        return with_store(lambda deps: deps.store.search(query(strict)).bind(
            lambda hits: fallback(hits, deps))).map(
            lambda hits: Matched(request=request, parsed=parsed, hits=hits))


RANKERS: Mapping[str, Stage[SearchRequest, Matched]] = {
    "lexical": LexicalMatch(),
    "bm25": Bm25Match(),
    "reference": ReferenceMatch(),
    "coverage": CoverageMatch(),
    "hybrid": HybridMatch(),
}
"""Match stages by name, for ``--ranker`` and ``Pipeline(match=RANKERS[name])``."""


def _hit(session_id: str, content: str, score: float) -> MessageHit:
    """A hit for examples and tests."""
    return MessageHit(session_id=session_id, position=0, role="user", content=content,
                      score=score)
