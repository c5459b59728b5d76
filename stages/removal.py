"""The port for taking whole sessions out of a store (``harkback sync --prune`` removes what
was deleted at its source).

A store that can remove sessions gives a :class:`SessionRemover`
(:meth:`~harkback.stages.ports.SessionStore.session_remover`). Removing a session takes
its messages, their index rows and vectors, its title and its cached summaries with it;
a child whose parent is removed stays and becomes a root (its parent is not stored),
as for a child imported without its parent.

>>> isinstance(SessionRemover, type)
True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from returns.future import FutureResult

from harkback.stages.errors import StoreUnavailable


class SessionRemover(Protocol):
    """Takes sessions out of a store, in one transaction; unknown ids are ignored."""

    def remove_sessions(self, ids: Sequence[str]) -> FutureResult[int, StoreUnavailable]:
        """Remove the sessions with these ids; returns how many were stored."""
        ...
