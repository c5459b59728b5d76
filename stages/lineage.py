"""Lineage: walk ``parent_session_id`` links to the session a user remembers.

Delegated sub-agents and compression continuations are children of the session
that started them. A parent that is not stored ends the walk (the last stored session
is the root). The walk is cycle-safe: sessions a damaged store links in a loop all
resolve to one root, the loop's earliest session, so the loop comes back once.

>>> chain = {s.id: s for s in (Session(id="a"), Session(id="b", parent_session_id="a"),
...                            Session(id="c", parent_session_id="b"))}
>>> root_of("c", chain).id
'a'
>>> loop = {s.id: s for s in (Session(id="x", parent_session_id="y", started_at=2.0),
...                           Session(id="y", parent_session_id="x", started_at=1.0))}
>>> root_of("x", loop).id, root_of("y", loop).id
('y', 'y')
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Protocol, TypeVar

from returns.future import FutureResult
from returns.io import IOSuccess
from returns.result import Failure, Result, Success
from returns.unsafe import unsafe_perform_io

from harkback.stages.errors import StoreUnavailable
from harkback.stages.ports import SessionStore
from harkback.stages.records import Session, SessionLink


class Linked(Protocol):
    """What a walk of parents reads of a session: a :class:`Session` or its
    :class:`SessionLink`."""

    @property
    def source(self) -> str:
        """Where it came from (a lineage is hidden by its root's)."""
        ...

    @property
    def id(self) -> str:
        """The session's id."""
        ...

    @property
    def parent_session_id(self) -> str | None:
        """The session it continues or was delegated by, if any."""
        ...

    @property
    def started_at(self) -> float | None:
        """When it started, if known (a loop of parents is rooted at its earliest)."""
        ...


LinkedT = TypeVar("LinkedT", bound=Linked)
"""A session or its link: what a walk of parents gives back of the kind it was given."""


def root_of(session_id: str, known: Mapping[str, LinkedT]) -> LinkedT | None:
    """The lineage root of ``session_id`` among ``known`` sessions (None if unknown)."""
    current = known.get(session_id)
    if current is None:
        return None
    path = [current]
    places = {current.id: 0}  # where each walked session is in ``path``: a loop is seen at once
    while current.parent_session_id is not None:
        parent = known.get(current.parent_session_id)
        if parent is None:
            break
        start = places.get(parent.id)
        if start is not None:
            # Whichever member the walk starts from, the loop must name one root, or a
            # lineage would come back once per member hit.
            return min(path[start:], key=_loop_order)
        places[parent.id] = len(path)
        path.append(parent)
        current = parent
    return current


def first_of_loop(session: Session, known: Mapping[str, Session]) -> bool:
    """Whether ``session`` is the member of a loop of parents that :func:`root_of` names
    (the earliest), as the SQL stores test it (``sql/loops.py``): its parents are walked
    only while each comes after it, so a continuation (its parent earlier) costs one step,
    not a walk to its lineage's root.

    >>> known = {"a": Session(id="a", started_at=1.0, parent_session_id="b"),
    ...          "b": Session(id="b", started_at=2.0, parent_session_id="a")}
    >>> first_of_loop(known["a"], known), first_of_loop(known["b"], known)
    (True, False)
    """
    seen = {session.id}
    current = known.get(session.parent_session_id or "")
    while current is not None and _loop_order(current) > _loop_order(session):
        if current.id in seen:
            return False  # a loop the walk entered from outside
        seen.add(current.id)
        current = known.get(current.parent_session_id or "")
    return current is not None and current.id == session.id


def is_root(session: Session, known: Mapping[str, Session]) -> bool:
    """Whether ``session`` is a lineage root among ``known`` (what recent lists): it has no
    parent, a parent not stored, or it is the first of a loop of parents.

    >>> known = {"a": Session(id="a"), "b": Session(id="b", parent_session_id="a")}
    >>> is_root(known["a"], known), is_root(known["b"], known)
    (True, False)
    """
    return (session.parent_session_id is None or session.parent_session_id not in known
            or first_of_loop(session, known))


def descends_from(session_id: str, ancestor_id: str, known: Mapping[str, Linked]) -> bool:
    """Whether ``session_id``'s chain of parents reaches ``ancestor_id``, stored or not (a
    live session's sub-agents are stored before the session itself).

    >>> known = {"sub": Session(id="sub", parent_session_id="live")}
    >>> descends_from("sub", "live", known), descends_from("sub", "other", known)
    (True, False)
    """
    seen: set[str] = set()
    current = known.get(session_id)
    while current is not None and current.parent_session_id is not None:
        if current.parent_session_id == ancestor_id:
            return True
        if current.parent_session_id in seen:
            return False
        seen.add(current.parent_session_id)
        current = known.get(current.parent_session_id)
    return False


def with_ancestors(ids: Iterable[str], known: Mapping[str, Session]) -> set[str]:
    """``ids`` and every parent id their chains of ``known`` sessions name (a loop ends
    the walk): the roots a summary of any of them may have been cached under.

    >>> known = {"b": Session(id="b", parent_session_id="a"), "a": Session(id="a")}
    >>> sorted(with_ancestors(["b"], known))
    ['a', 'b']
    """
    found: set[str] = set()
    wanted = list(ids)
    while wanted:
        current = wanted.pop()
        if current in found:
            continue
        found.add(current)
        parent = known[current].parent_session_id if current in known else None
        if parent is not None:
            wanted.append(parent)
    return found


def _loop_order(session: Linked) -> tuple[bool, float, str]:
    """Earliest first; sessions without a start time after those with one, then by id."""
    return (session.started_at is None, session.started_at or 0.0, session.id)


def load_ancestry(store: SessionStore, ids: Iterable[str], *,
                  known: Mapping[str, Session] | None = None
                  ) -> FutureResult[dict[str, Session], StoreUnavailable]:
    """Fetch ``ids`` and all their ancestors, one store round trip per generation.

    The generations are walked in a loop, each session asked for once (a parent cycle
    ends the walk), to the lineage's true root however deep it is: a cap left a chain
    longer than it rooted at a different session per hit, one lineage shown many times.
    """
    return _ancestry(store.sessions, ids, known)


def load_links(store: SessionStore, ids: Iterable[str], *,
               known: Mapping[str, SessionLink] | None = None
               ) -> FutureResult[dict[str, SessionLink], StoreUnavailable]:
    """:func:`load_ancestry`, reading only each session's link (``session_links``): what
    the ranker and the resolve stage walk, a few hundred sessions a search. On the 100k
    store 348 whole sessions (the common-word query's candidates) cost 1.85 ms of CPU
    through the store, their links 0.93 ms.

    A caller's own store written before the port named ``session_links`` is read through
    ``sessions``.
    """
    links = getattr(store, "session_links", None)
    if links is None:
        def links(wanted: Sequence[str]
                  ) -> FutureResult[tuple[SessionLink, ...], StoreUnavailable]:
            return store.sessions(wanted).map(lambda found: tuple(map(SessionLink.of, found)))
    return _ancestry(links, ids, known)


Fetch = Callable[[Sequence[str]], FutureResult[tuple[LinkedT, ...], StoreUnavailable]]


def _ancestry(fetch: Fetch[LinkedT], ids: Iterable[str], known: Mapping[str, LinkedT] | None
              ) -> FutureResult[dict[str, LinkedT], StoreUnavailable]:
    # The walk of load_ancestry and load_links, by what ``fetch`` reads of a session.
    async def walk() -> Result[dict[str, LinkedT], StoreUnavailable]:
        have = dict(known or {})
        wanted = tuple(dict.fromkeys(i for i in ids if i not in have))
        while wanted:
            fetched = await fetch(wanted)
            if not isinstance(fetched, IOSuccess):
                return Failure(unsafe_perform_io(fetched.failure()))
            found = unsafe_perform_io(fetched.unwrap())
            have.update((s.id, s) for s in found)
            wanted = tuple(dict.fromkeys(s.parent_session_id for s in found
                                         if s.parent_session_id is not None
                                         and s.parent_session_id not in have))
        return Success(have)

    return FutureResult(walk())
