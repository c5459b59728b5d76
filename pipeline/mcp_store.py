"""The store of a long-running ``harkback mcp``: opened at a call, kept or closed after it.

It is opened as ``harkback search`` opens it: read-only, or writable when a model is
configured, so its summaries are cached and an agent asking again pays nothing (a file
that cannot be written, or of an older schema, stays read-only). Either connection sees
what later imports commit.

SQLite reads and writes the file it opened, whatever its name leads to later, and a
writable connection keeps the file's ``-wal`` and ``-shm`` beside the name while it is
open. A store rebuilt or restored under a server that kept one open (deleted and made
again, or another file moved over it) was never seen: its calls were answered from the
old file, its summaries written there, and ``harkback import`` into the new file failed
with "disk I/O error" on the old file's ``-wal``. So a writable SQLite file is closed as
soon as no call uses it (an open costs ~5 ms, beside a model's seconds), and a read-only
one, kept, is opened again when its name leads to another file
(:class:`~harkback.pipeline.store_guard.StoreFile`, looked at before each call).

>>> async def first_call() -> str:
...     async with LazyStore("/no/such/folder/h.db").lease() as opened:
...         return opened.failure()
>>> print(asyncio.run(first_call()))
session store unavailable: no harkback database at /no/such/folder/h.db...
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from returns.result import Failure, Result, Success

from harkback.pipeline import wiring
from harkback.pipeline.command_basics import error_line
from harkback.pipeline.store_guard import StoreFile
from harkback.stages.ports import SessionStore


class LazyStore:
    """The store of ``db`` (see the module): read-only, or as a recall wired by ``recall``
    (whose ``db`` is ``db``) opens it, writable to cache model summaries."""

    def __init__(self, db: str, recall: wiring.RecallSettings | None = None) -> None:
        self.db = db
        self.recall = recall
        self._store: SessionStore | None = None
        self._file: StoreFile | None = None
        self._users: dict[int, int] = {}  # by id() of a store: the calls using it
        self._opening = asyncio.Lock()

    async def get(self) -> Result[SessionStore, str]:
        """The open store, or why it cannot be opened (tried again next time).

        Opened in a worker thread: opening waits on the disk or the network (up to
        ``connect_timeout`` for a PostgreSQL server that does not answer), and on the
        event loop that wait held up every other call, cancellation and listing."""
        async with self._opening:  # calls arriving together open it once
            if self._store is not None and self._file is not None and self._file.problem():
                self._retire(self._store)
            if self._store is None:
                file = StoreFile.of(self.db)  # before opening: a file replaced meanwhile is seen
                opened = await asyncio.to_thread(self._open)
                if isinstance(opened, Failure):
                    return opened
                self._store, self._file = opened.unwrap(), file
            return Success(self._store)

    def _open(self) -> Result[SessionStore, str]:
        try:
            opened = (wiring.open_store(self.db, readonly=True) if self.recall is None
                      else wiring.open_for_recall(self.recall))
        except OSError as error:  # in a folder that cannot be entered: is_file() raises
            return Failure(f"{error.filename or self.db}: {error.strerror or error}")
        return opened.alt(error_line)

    @asynccontextmanager
    async def lease(self) -> AsyncIterator[Result[SessionStore, str]]:
        """The store for one call (:meth:`get`); a writable file, or a store replaced
        while calls used it, is closed when the last of them ends."""
        opened = await self.get()
        if isinstance(opened, Failure):
            yield opened
            return
        store = opened.unwrap()
        self._users[id(store)] = self._users.get(id(store), 0) + 1
        try:
            yield opened
        finally:
            self._users[id(store)] -= 1
            if store is not self._store or (self._closed_after_use(store)
                                            and not self._users[id(store)]):
                self._retire(store)

    def _closed_after_use(self, store: SessionStore) -> bool:
        # A writable SQLite file (see the module); a server's store (PostgreSQL) is kept.
        return self._file is not None and getattr(store, "readonly", True) is False

    def _retire(self, store: SessionStore) -> None:
        # No longer the store: closed now, or by the last call still using it.
        if store is self._store:
            self._store = self._file = None
        if not self._users.get(id(store)):
            self._users.pop(id(store), None)
            store.close()

    def close(self) -> None:
        """Close the store if it was opened."""
        if self._store is not None:
            self._retire(self._store)
