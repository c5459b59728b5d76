"""Lineages as one conversation: a session's continuations and delegated children rank
with it.

To the person asking, a session compressed into a continuation, or one that handed work
to a sub-agent, is one conversation. Ranked apart, its evidence was split: the demo's
Docker network fix, held in a session and two continuations, scored 1.335, 1.289 and
1.227 where the three together score 1.396 (a short explainer holding the question's
words in its title and first message still scores 1.529: titles.TITLE_B). So the ranker
scores a lineage from the messages of all its sessions together (its best few messages
and the share of the question they cover, :func:`~harkback.stages.match.sessions.rank_sessions`)
and hands on every session's hits in that order; the resolve stage then names the root.

>>> hit = lambda sid, score: Scored(MessageHit(session_id=sid, position=0, role="user",
...                                            content="", score=0.0), score, frozenset({0}))
>>> scored = [hit("child", 3.0), hit("root", 1.0), hit("other", 2.0)]
>>> roots = {"child": "root"}
>>> [s.hit.session_id for s in as_lineages(scored, roots, {})]
['root', 'root', 'other']
>>> by_members((("root", 1.5), ("other", 1.2)), scored, roots)
(('child', 1.5), ('root', 1.5), ('other', 1.2))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from harkback.stages.lineage import root_of
from harkback.stages.match.score import Scored
from harkback.stages.match.sessions import rescored
from harkback.stages.records import MessageHit, SessionLink, TitleHit
from harkback.stages.when import closeness


def lineage_roots(ids: Iterable[str], known: Mapping[str, SessionLink]) -> dict[str, str]:
    """The lineage root of each of ``ids`` that has one other than itself (the walk of
    :func:`~harkback.stages.lineage.root_of`, so a loop of parents names one root).

    >>> known = {s.id: s for s in (SessionLink("a"), SessionLink("b", parent_session_id="a"))}
    >>> lineage_roots(["a", "b", "unknown"], known)
    {'b': 'a'}
    """
    out = {}
    for session_id in ids:
        root = root_of(session_id, known)
        if root is not None and root.id != session_id:
            out[session_id] = root.id
    return out


def looked_up(hits: Sequence[MessageHit], titles: Sequence[TitleHit]) -> list[str]:
    """The sessions whose lineages are looked up: every candidate's, once each.

    Not only those of the best few: a session continued 60 times had parts whose best
    message was not among the 60 best the ranker once read the lineages of, each ranked
    on its own, and together they took every hit the ranker hands on (no other session
    came back). Reading them all is one store call for a few hundred ids, of their links
    alone (:func:`~harkback.stages.lineage.load_links`), and the resolve stage then asks
    for none of them again (:attr:`~harkback.stages.flow.Matched.lineage`): x1.03 CPU a
    search against reading the 60 best's (``benchmarks.search_cpu --against``, 100k
    messages, 8 rounds; those 60 and a ranking again when a session handed on turned out
    to be a lineage's part cost x1.10, x1.2 on the prefix and Chinese queries).

    >>> h = lambda sid: MessageHit(session_id=sid, position=0, role="user", content="",
    ...                            score=0.0)
    >>> looked_up([h("a"), h("b"), h("a")], [TitleHit(session_id="c", title="t", score=1.0)])
    ['a', 'b', 'c']
    """
    return list(dict.fromkeys([*(h.session_id for h in hits),
                               *(t.session_id for t in titles)]))


def as_lineages(scored: Sequence[Scored], roots: Mapping[str, str],
                known: Mapping[str, SessionLink]) -> list[Scored]:
    """``scored`` with each hit moved to its lineage's root (``roots``: a session's root
    when it is not its own), so a lineage is scored as one session; the rest as given.

    A moved hit takes its root's source (``known``), as resolve hides a lineage by its
    root's: a cron job's sub-agents are demoted with it, whichever member's hit came
    first (the ranker demotes a session by its first hit's source).

    >>> known = {"job": SessionLink("job", source="cron")}
    >>> hit = Scored(MessageHit(session_id="sub", position=0, role="user", content="",
    ...                         score=0.0, source="subagent"), 1.0, frozenset({0}))
    >>> [(s.hit.session_id, s.hit.source) for s in as_lineages([hit], {"sub": "job"}, known)]
    [('job', 'cron')]
    """
    if not roots:
        return list(scored)
    return [s if (root := roots.get(s.hit.session_id)) is None
            else Scored(_moved(s.hit, root, known[root].source if root in known
                               else s.hit.source), s.score, s.covered, s.read)
            for s in scored]


def nearest_times(times: Mapping[str, float], roots: Mapping[str, str],
                  windows: Sequence[tuple[float, float]]) -> dict[str, float]:
    """Each lineage's time (by root) as the question's ``windows`` read it: that of its
    session (``times``) nearest to one of them. A fix made two weeks ago and continued
    today is from "two weeks ago" too; by its newest session alone, it was not.

    >>> day = 86400.0
    >>> nearest_times({"root": 14 * day, "cont": 28 * day, "solo": 27 * day},
    ...               {"cont": "root"}, [(13 * day, 15 * day)])
    {'root': 1209600.0, 'solo': 2332800.0}
    """
    def near(moment: float) -> float:
        return max((closeness(moment, window) for window in windows), default=0.0)

    out: dict[str, float] = {}
    for session_id, moment in times.items():
        root = roots.get(session_id, session_id)
        if root not in out or near(moment) > near(out[root]):
            out[root] = moment
    return out


def by_members(ranked: Sequence[tuple[str, float]], scored: Sequence[Scored],
               roots: Mapping[str, str]) -> tuple[tuple[str, float], ...]:
    """Lineages ranked (by root) as the sessions that hold their hits, each at its
    lineage's score, a lineage's sessions by their best message first."""
    if not roots:
        return tuple(ranked)
    best: dict[str, float] = {}
    for s in scored:
        best[s.hit.session_id] = max(s.score, best.get(s.hit.session_id, s.score))
    members: dict[str, list[str]] = {}
    for session_id in sorted(best, key=lambda sid: -best[sid]):
        members.setdefault(roots.get(session_id, session_id), []).append(session_id)
    return tuple((member, score) for root, score in ranked
                 for member in members.get(root, (root,)))


def lineage_hits(scored: Sequence[Scored], ranked: Sequence[tuple[str, float]],
                 roots: Mapping[str, str], *, per_session: int, limit: int
                 ) -> tuple[MessageHit, ...]:
    """Hits grouped by lineage in ``ranked`` order (by root), each lineage's best first:
    at most ``per_session`` from one session and twice that from a lineage, so a session
    continued 25 times is one result among the others, not the only one ``limit`` hits
    reach (a lineage of one session gives what it gave before lineages ranked as one).
    A lineage's other hits (``per_session`` a session) fill what room the others leave,
    after them: its result still names every session that matched
    (``matched_sessions``), and the load stage cuts its transcript around them.

    >>> hit = lambda sid, pos, score: Scored(MessageHit(session_id=sid, position=pos,
    ...     role="user", content="", score=0.0), score, frozenset({0}))
    >>> scored = [hit(f"part-{i}", p, 10.0 - i) for i in range(4) for p in range(3)]
    >>> roots = {f"part-{i}": "part-0" for i in range(1, 4)}
    >>> scored.append(hit("other", 0, 1.0))
    >>> ranked = [("part-0", 2.0), ("other", 1.0)]
    >>> [f"{h.session_id}:{h.position}" for h in lineage_hits(scored, ranked, roots,
    ...                                                       per_session=2, limit=7)]
    ['part-0:0', 'part-0:1', 'part-1:0', 'part-1:1', 'other:0', 'part-2:0', 'part-2:1']
    """
    grouped: dict[str, list[Scored]] = {}
    for s in scored:
        grouped.setdefault(roots.get(s.hit.session_id, s.hit.session_id), []).append(s)

    def best(root: str) -> list[MessageHit]:
        taken: dict[str, int] = {}
        out = []
        for s in sorted(grouped.get(root, ()), key=lambda s: -s.score):
            if taken.get(s.hit.session_id, 0) < per_session:
                taken[s.hit.session_id] = taken.get(s.hit.session_id, 0) + 1
                out.append(rescored(s.hit, s.score))
        return out

    return shared_out(((root, best(root)) for root, _ in ranked), share=2 * per_session,
                      limit=limit)


def shared_out(groups: Iterable[tuple[str, Sequence[MessageHit]]], *, share: int, limit: int
               ) -> tuple[MessageHit, ...]:
    """``limit`` hits from ``groups`` (a lineage's root and hits, best group first; a root
    may come back), at most ``share`` from one root before the other groups' hits, its
    others after them, in the room they leave.

    >>> h = lambda sid, pos: MessageHit(session_id=sid, position=pos, role="user",
    ...                                 content="", score=0.0)
    >>> groups = [("a", [h("a", 0), h("a", 1)]), ("b", [h("b", 0)]), ("a", [h("a2", 0)])]
    >>> [f"{x.session_id}:{x.position}" for x in shared_out(groups, share=2, limit=4)]
    ['a:0', 'a:1', 'b:0', 'a2:0']
    >>> [f"{x.session_id}:{x.position}" for x in shared_out(groups, share=1, limit=3)]
    ['a:0', 'b:0', 'a:1']
    """
    out: list[MessageHit] = []
    more: list[MessageHit] = []  # a root's hits past its share: after the others
    taken: dict[str, int] = {}
    for root, hits in groups:
        room = max(share - taken.get(root, 0), 0)
        out.extend(hits[:room])
        more.extend(hits[room:])
        taken[root] = taken.get(root, 0) + min(room, len(hits))
        if len(out) >= limit:
            break
    return (*out[:limit], *more[:max(limit - len(out), 0)])


def _moved(hit: MessageHit, session_id: str, source: str) -> MessageHit:
    # The hit as its root's (of the root's source), everything else kept.
    return MessageHit(session_id=session_id, position=hit.position, role=hit.role,
                      content=hit.content, score=hit.score, timestamp=hit.timestamp,
                      source=source, length=hit.length)
