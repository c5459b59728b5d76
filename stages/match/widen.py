"""More sessions when a few long ones fill a ranker's bounded search.

A ranker reads a bounded number of candidate messages (``scan_limit``), best first, or
newest first when every word is common. One long session about the question (1,000
messages of "kafka consumer lag") fills them all, and every other session about it goes
unseen: the answer is "1 of 1 matching session(s)". When a search comes back full from
fewer lineages than the request wants (a session, its continuations and its sub-agents are
one result: :mod:`~harkback.stages.lineage`), :func:`widened` asks the store again, leaving
out the sessions found so far (:attr:`~harkback.stages.ports.MatchQuery.exclude_sessions`),
``rows`` rows at a time, until the request has its lineages, the store has no more, or it
asked :data:`MORE_SEARCHES` times. A search that did not fill up is left as it is. Counted
by sessions, a conversation continued five times filled the search from six sessions, and
the answer was 1 result where 5 were asked and 7 matched. The lineages counted are those the
resolve stage keeps (:func:`~harkback.stages.resolve.group_by_root`): not the caller's own,
nor one whose root is of a hidden source. Counted, a long current conversation about the
question and four others were five, and 5 asked gave 4 results where 10 matched.

>>> from harkback.stages.query import Term
>>> from harkback.stages.ports import MatchQuery
>>> more_rows(MatchQuery(expression=Term("x"), roles=("user",), limit=300), want=10, least=3)
30
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs
from returns.future import FutureResult

from harkback.stages.errors import StoreUnavailable
from harkback.stages.lineage import load_links, root_of
from harkback.stages.ports import MatchQuery, SessionStore
from harkback.stages.records import MessageHit, SessionLink
from harkback.stages.request import SearchRequest
from harkback.stages.resolve import group_by_root

MORE_SEARCHES = 4
"""At most this many further searches. Each one passes again over every row of the sessions
it leaves out (a store reads the newest or best rows first, then drops theirs), so their cost
grows with the square of the sessions found: ten sessions of 10,000 look-alike messages took
161 ms of CPU in the match stage of a 200k-message SQLite store against 4 ms with none (nine
further searches, 3.5 to 31 ms each); four of them cost 37 ms there, ~5 ms for sessions of
1,000 messages."""


def wanted(request: SearchRequest) -> int:
    """How many sessions a request wants: its ``limit``, or the ``shortlist`` a reranker
    chooses among.

    >>> wanted(SearchRequest(query="x", limit=5)), wanted(SearchRequest(query="x", shortlist=30))
    (5, 30)
    """
    return max(request.limit, request.shortlist)


def more_rows(query: MatchQuery, *, want: int, least: int) -> int:
    """How many rows each further search reads: the first search's rows shared among the
    sessions wanted (its cost at most doubled), and no fewer than ``least`` (the hits a
    session may show)."""
    return max(least, query.limit // max(want, 1))


@attrs.frozen
class Widened:
    """What :func:`widened` found: the hits, and the links it read of their sessions, the
    caller's and their ancestors to count their lineages, for the ranker's walk and the
    resolve stage to read no second time (empty when it counted none)."""

    hits: tuple[MessageHit, ...]
    links: Mapping[str, SessionLink] = attrs.field(factory=dict)


def widened(store: SessionStore, query: MatchQuery, hits: Sequence[MessageHit], *,
            want: int, rows: int, also: Sequence[str] = (), current: str | None = None
            ) -> FutureResult[Widened, StoreUnavailable]:
    """``hits`` (what ``query`` found), then the hits of further searches for sessions
    not among them, when ``hits`` filled ``query.limit`` from fewer than ``want``
    lineages (a conversation and its continuations are one result) other than the
    ``current`` session's (the caller's, left out of the results). The links of
    ``also``'s sessions (a title search's) and of ``current`` are read with the found
    sessions' the first time those are counted.
    """
    if len(hits) < query.limit:
        return FutureResult.from_value(Widened(tuple(hits)))

    def enough(found: tuple[MessageHit, ...], sessions: tuple[str, ...], left: int,
               links: Mapping[str, SessionLink]
               ) -> FutureResult[Widened, StoreUnavailable]:
        # Fewer sessions than wanted are fewer lineages: links are read only once the
        # sessions would do, so a store whose sessions have no parents searches as often.
        if len(sessions) < want:
            return search(found, sessions, left, links)
        # The caller's session is read with them (the resolve stage asks it no more): its
        # lineage is no result.
        return load_links(store, (*sessions, *also, *((current,) if current else ())),
                          known=links).bind(
            lambda read: FutureResult.from_value(Widened(found, read))
            if _results(found, read, query.hidden_sources, current) >= want
            else search(found, sessions, left, read))

    def search(found: tuple[MessageHit, ...], sessions: tuple[str, ...], left: int,
               links: Mapping[str, SessionLink]
               ) -> FutureResult[Widened, StoreUnavailable]:
        if left < 1:
            return FutureResult.from_value(Widened(found, links))
        more = attrs.evolve(query, limit=rows,
                            exclude_sessions=(*query.exclude_sessions, *sessions))

        def then(extra: Sequence[MessageHit]) -> FutureResult[Widened, StoreUnavailable]:
            # A store that ignores the exclusion (a library caller's own) repeats no hit.
            new = tuple(h for h in extra if h.session_id not in sessions)
            # A search that did not fill up found every other matching row: no more to ask.
            if len(extra) < rows or not new:
                return FutureResult.from_value(Widened((*found, *new), links))
            return enough((*found, *new), (*sessions, *_sessions(new)), left - 1, links)

        return store.search(more).bind(then)

    return enough(tuple(hits), _sessions(hits), MORE_SEARCHES, {})


def _results(hits: Sequence[MessageHit], links: Mapping[str, SessionLink],
             hidden: Sequence[str], current: str | None) -> int:
    # How many results ``hits`` make, as the resolve stage groups them (a lineage each, not
    # the caller's, none of a hidden root or a session no longer held): one hit a session.
    mine = root_of(current, links) if current else None
    return len(group_by_root(tuple({h.session_id: h for h in hits}.values()), links,
                             exclude_root=mine.id if mine else None, hidden_sources=hidden,
                             exclude_descendants_of=current))


def _sessions(hits: Sequence[MessageHit]) -> tuple[str, ...]:
    # The sessions of ``hits``, each once, in the order they first appear.
    return tuple(dict.fromkeys(h.session_id for h in hits))


def joined(first: Sequence[MessageHit], then: Sequence[MessageHit]) -> tuple[MessageHit, ...]:
    """``first``, then the hits of ``then`` that are not in it (the same message).

    >>> hit = lambda sid, pos: MessageHit(session_id=sid, position=pos, role="user",
    ...                                   content="", score=0.0)
    >>> [(h.session_id, h.position) for h in joined([hit("a", 0)], [hit("a", 0), hit("a", 1)])]
    [('a', 0), ('a', 1)]
    """
    seen = {(h.session_id, h.position) for h in first}
    return (*first, *(h for h in then if (h.session_id, h.position) not in seen))
