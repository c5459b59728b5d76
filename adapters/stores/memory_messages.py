"""The memory store's messages read back: all of some sessions (the load stage), or a
window of one (``harkback show``, :mod:`~harkback.stages.message_window`).

:class:`MemoryMessages` is that part of :class:`~harkback.adapters.stores.memory.MemoryStore`,
kept apart so that each module holds one concept; it reads the store's own dictionaries,
which the store declares.

>>> import asyncio
>>> from harkback.adapters.stores.memory import MemoryStore
>>> from harkback.stages.message_window import WindowQuery
>>> query = WindowQuery(session_id="none", limit=20)
>>> asyncio.run(MemoryStore().message_window(query).awaitable())
<IOResult: <Success: MessageWindow(messages=(), offset=0, total=0, around_index=None)>>
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import attrs
from returns.future import FutureResult

from harkback.adapters.stores.memory_match import Indexed
from harkback.stages import long_text, records
from harkback.stages.errors import StoreUnavailable
from harkback.stages.id_hints import starts_alike
from harkback.stages.message_window import MessageWindow, WindowQuery, window_of

T = TypeVar("T")


def by_start(session: records.Session) -> tuple[bool, float, str]:
    """The order of sessions by start (an unknown start last), then id."""
    return (session.started_at is None, session.started_at or 0.0, session.id)


class MemoryMessages:
    """Reads of the memory store's messages, in position order within a session."""

    _sessions: dict[str, records.Session]
    _messages: dict[str, tuple[Indexed, ...]]

    def _run(self, work: Callable[[], T]) -> FutureResult[T, StoreUnavailable]:
        raise NotImplementedError

    def _in_order(self, session_id: str) -> list[records.Message]:
        return [item.message for item in sorted(self._messages.get(session_id, ()),
                                                key=lambda item: item.message.position)]

    def messages(self, session_ids: Sequence[str], longest: int | None = None
                 ) -> FutureResult[tuple[records.Message, ...], StoreUnavailable]:
        """All messages of these sessions, in session start order then position (see the port)."""
        def read(message: records.Message) -> records.Message:
            if longest is None or len(message.content) <= longest:
                return message
            return attrs.evolve(message, content=long_text.loaded_start(message.content, longest))

        def work() -> tuple[records.Message, ...]:
            found = sorted((self._sessions[i] for i in set(session_ids) if i in self._sessions),
                           key=by_start)
            return tuple(read(message) for session in found
                         for message in self._in_order(session.id))
        return self._run(work)

    def message_window(self, query: WindowQuery
                       ) -> FutureResult[MessageWindow, StoreUnavailable]:
        """A window of one session's messages and their count (see the port)."""
        return self._run(lambda: window_of(self._in_order(query.session_id), query))

    def ids_alike(self, session_id: str, limit: int
                  ) -> FutureResult[tuple[str, ...], StoreUnavailable]:
        """Stored ids starting with ``session_id``, ASCII case aside (see the port)."""
        return self._run(lambda: tuple(sorted(
            i for i in self._sessions if starts_alike(i, session_id))[:limit]))
