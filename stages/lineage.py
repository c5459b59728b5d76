"""Lineage: walk ``parent_session_id`` links to the session a user remembers.

Delegated sub-agents and compression continuations are children of the session
that started them. The walk is cycle-safe, and a parent that is not stored ends
it (the last stored session is the root).

>>> chain = {s.id: s for s in (Session(id="a"), Session(id="b", parent_session_id="a"),
...                            Session(id="c", parent_session_id="b"))}
>>> root_of("c", chain).id
'a'
>>> loop = {s.id: s for s in (Session(id="x", parent_session_id="y"),
...                           Session(id="y", parent_session_id="x"))}
>>> root_of("x", loop).id
'y'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from returns.future import FutureResult

from harkback.stages.errors import StoreUnavailable
from harkback.stages.ports import SessionStore
from harkback.stages.records import Session

MAX_DEPTH = 64


def root_of(session_id: str, known: Mapping[str, Session]) -> Session | None:
    """The lineage root of ``session_id`` among ``known`` sessions (None if unknown)."""
    current = known.get(session_id)
    if current is None:
        return None
    seen = {current.id}
    while current.parent_session_id is not None:
        parent = known.get(current.parent_session_id)
        if parent is None or parent.id in seen:
            break
        seen.add(parent.id)
        current = parent
    return current


def load_ancestry(store: SessionStore, ids: Iterable[str], *,
                  known: Mapping[str, Session] | None = None, depth: int = 0
                  ) -> FutureResult[dict[str, Session], StoreUnavailable]:
    """Fetch ``ids`` and all their ancestors, one store round trip per generation."""
    have = dict(known or {})
    wanted = tuple(dict.fromkeys(i for i in ids if i not in have))
    if not wanted or depth >= MAX_DEPTH:
        return FutureResult.from_value(have)

    def next_generation(found: tuple[Session, ...]) -> FutureResult[dict[str, Session],
                                                                     StoreUnavailable]:
        merged = {**have, **{s.id: s for s in found}}
        parents = [s.parent_session_id for s in found if s.parent_session_id is not None]
        return load_ancestry(store, parents, known=merged, depth=depth + 1)

    return store.sessions(wanted).bind(next_generation)
