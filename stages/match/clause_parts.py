"""Each clause of a question read from the candidates as the whole question read them.

A question about several things ranks each clause on its own too
(:mod:`~harkback.stages.match.clauses`). A clause's scores must be the whole question's
over fewer units: each message read by the weights its own session was read by (one held
outside a CJK question's writing: the lifted English names, ``outside``), a title by its
own length normalization (:data:`~harkback.stages.match.titles.TITLE_B`), and only then the
messages of a lineage moved to its root. Read by its lineage's writing, a continuation in
English of a Chinese session weighed its names as a Chinese message.

>>> from harkback.stages.query import Term
>>> units = [RankUnit(Term(w), (w,), 2.0) for w in ("docker", "postgres")]
>>> hit = lambda sid: MessageHit(session_id=sid, position=0, role="user", content="docker",
...                              score=0.0)
>>> said = [Scored(hit("message"), 1.0, frozenset({0})), Scored(hit("title"), 1.0, frozenset({0}))]
>>> parts = clause_parts(said, units, (frozenset({0}), frozenset({1})), titles_from=1,
...                      read_as_own=lambda sid: True, outside=None, average=5.0,
...                      role_weights={})
>>> [[(s.hit.session_id, round(s.score, 2)) for s in part] for part in parts]
[[('message', 2.97), ('title', 2.97)], []]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from harkback.stages.match.counting import Counted
from harkback.stages.match.score import K1, B, RankUnit, Scored, part_scorer
from harkback.stages.match.titles import TITLE_B
from harkback.stages.records import MessageHit, Role  # noqa: F401  (MessageHit: the example's)


def clause_parts(scored: Sequence[Scored], units: Sequence[RankUnit],
                 groups: Sequence[frozenset[int]], *, titles_from: int,
                 read_as_own: Callable[[str], bool], outside: Sequence[RankUnit] | None,
                 average: float, role_weights: Mapping[Role, float],
                 k1: float = K1, b: float = B) -> list[list[Scored]]:
    """For each of ``groups`` (a clause's units), the candidates holding one of its units,
    scored over those units alone.

    ``scored`` are the candidates before their lineages were joined (their own session
    ids), titles from index ``titles_from`` on; ``read_as_own`` tells a session held in the
    question's writing (always true for a question in Latin script), whose messages are
    read by ``units``, the others by ``outside``. Each is read as the whole question counted
    it (:attr:`~harkback.stages.match.score.Scored.text`), not worked out again.
    """
    def reader(b_value: float) -> tuple[Counted[tuple[float, ...]], Counted[tuple[float, ...]]]:
        own = part_scorer(units, groups, average_length=average, k1=k1, b=b_value)
        other = own if outside is None else part_scorer(outside, groups, average_length=average,
                                                        k1=k1, b=b_value)
        return own, other

    messages = reader(b)
    titles = messages if b == TITLE_B else reader(TITLE_B)
    anywhere = frozenset().union(*groups)
    read: list[tuple[Scored, tuple[float, ...], float]] = []
    for index, s in enumerate(scored):
        if not s.covered & anywhere:
            continue
        own, other = titles if index >= titles_from else messages
        scorer = own if read_as_own(s.hit.session_id) else other
        read.append((s, scorer(s.text, s.hit.length),
                     role_weights.get(s.hit.role, 1.0)))
    return [[Scored(s.hit, parts[i] * weight, s.covered & group)
             for s, parts, weight in read if s.covered & group]
            for i, group in enumerate(groups)]
