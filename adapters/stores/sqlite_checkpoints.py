"""A writable SQLite store's checkpoints after large writes, on a second connection and thread.

A write in WAL mode appends its pages to the ``-wal`` file; a checkpoint copies them into the
database so the log can start over. SQLite does it in the committing connection once the log
holds 1,000 pages: for a bulk ingest ~4 µs of every ~35 µs a message, on the store's thread.
Copying pages needs no lock a writer holds, so after a large write it runs on a connection
of its own, on another thread (and core), while the caller reads and prepares the next
batch. The store's thread waits for it only before its next large write (so the log is
bounded as before: it starts over once all of it was copied), a rewrite and the close.
Small writes keep SQLite's own checkpoints, and so do all writes once a checkpoint failed
(the file moved or deleted since the open, another file in its place) or its thread could
not be started: each write would otherwise leave its pages in the log. Each checkpoint is
SQLite's own ``PASSIVE`` one: crash safety is SQLite's.

>>> import sqlite3, tempfile, pathlib
>>> with tempfile.TemporaryDirectory() as tmp:
...     path = pathlib.Path(tmp) / "h.db"
...     writer = sqlite3.connect(path, isolation_level=None)
...     _ = writer.execute("PRAGMA journal_mode = WAL")
...     checkpoints = Checkpoints(path)
...     with checkpoints.large_write(writer):
...         _ = writer.execute("CREATE TABLE t (x)")
...     checkpoints.close()
...     checkpoints.done, writer.close()
(1, None)
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from harkback.adapters.stores.sqlite_errors import unavailable
from harkback.adapters.thread_room import one_thread_pool
from harkback.stages.errors import StoreUnavailable

AUTOCHECKPOINT_PAGES = 1000
"""SQLite's own threshold (pages in the log, its default), which small writes keep."""


class Checkpoints:
    """Checkpoints of the file at ``path`` after large writes, off the writer's thread.

    Made by the writer's thread and used from it only (as its connection is); the
    checkpointing connection is opened, used and closed on its own thread.
    """

    def __init__(self, path: Path) -> None:
        """Nothing is opened until the first large write is done."""
        # mode=rw: never create a file that was removed meanwhile. Resolved now: the
        # working folder may change before the first checkpoint.
        self._path = path.resolve()
        self._file = _identity(path)  # the writer's file, opened just before
        self._failed = False  # set on the checkpoint thread, read after wait()
        self._executor: ThreadPoolExecutor | None = None
        self._connection: sqlite3.Connection | None = None  # on the checkpoint thread only
        self._pending: Future[None] | None = None
        self._closed = False
        self.done = 0
        """Checkpoints run (or tried) so far."""

    @contextlib.contextmanager
    def large_write(self, writer: sqlite3.Connection) -> Iterator[None]:
        """Around one large write transaction on ``writer``: the last checkpoint finished
        first, SQLite's own left out of its commit, and a checkpoint started after it."""
        self.wait()  # the log starts over only if all of it was copied when the write begins
        if self._closed or self._failed:  # SQLite's own checkpoints, in the commit
            yield
            return
        pages = int(writer.execute("PRAGMA wal_autocheckpoint").fetchone()[0])
        writer.execute("PRAGMA wal_autocheckpoint = 0")
        try:
            yield
        finally:
            writer.execute(f"PRAGMA wal_autocheckpoint = {pages}")
        try:
            if self._executor is None:
                self._executor = one_thread_pool("harkback-checkpoint")
            self._pending = self._executor.submit(self._checkpoint)
        except RuntimeError:
            # No thread to run it on (none can be started, or the interpreter is exiting):
            # the write has committed, and later ones keep SQLite's own checkpoints, as
            # after a checkpoint that failed.
            self._failed = True

    def wait(self) -> None:
        """Until the checkpoint in flight, if any, is done."""
        if self._pending is not None:
            self._pending.result()
            self._pending = None

    def close(self) -> None:
        """Finish the checkpoint in flight and close its connection (closing twice is harmless);
        later writes keep SQLite's own checkpoints."""
        self._closed = True
        self.wait()
        if self._executor is not None:
            # A thread that could not start opened no connection: nothing to close there.
            with contextlib.suppress(RuntimeError):
                self._executor.submit(self._close_connection).result()
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None

    def _checkpoint(self) -> None:
        self.done += 1
        # A failure leaves the pages in the log, and the later writes to SQLite's own
        # checkpoints: nothing is lost, and the write has succeeded. (Another process
        # checkpointing is no failure: SQLite says busy in the row, the next one copies.)
        try:
            if self._connection is None:
                connection = sqlite3.connect(self._path.as_uri() + "?mode=rw", uri=True,
                                             isolation_level=None)
                if self._file is None or _identity(self._path) != self._file:
                    connection.close()  # another file: checkpointing it leaves ours growing
                    raise sqlite3.OperationalError("the store's file is no longer there")
                self._connection = connection
                self._connection.execute("PRAGMA synchronous = NORMAL")  # as the writer's
            self._connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        except sqlite3.Error:
            self._failed = True

    def _close_connection(self) -> None:
        if self._connection is not None:
            with contextlib.suppress(sqlite3.Error):
                self._connection.close()
            self._connection = None


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return (found.st_dev, found.st_ino)


def left_in_log(path: Path) -> StoreUnavailable | None:
    """After a store's connection closed: why the commits its closing checkpoint left in
    the ``-wal`` cannot be copied into the file now either (``ulimit -f``, a full disk);
    None when it left no log, or all of it could be copied, or another process's open
    connection keeps it (a passive checkpoint then copies what it can, or is busy).

    SQLite's close checkpoints and removes the log, and says nothing when it cannot: the
    store is whole either way (a read reads the log), but its file is not what it says.

    >>> left_in_log(Path("/nowhere/h.db")) is None
    True
    """
    try:
        if os.stat(f"{path}-wal").st_size == 0:
            return None
    except OSError:
        return None
    try:
        # mode=rw: never create a file that was removed meanwhile.
        connection = sqlite3.connect(path.resolve().as_uri() + "?mode=rw", uri=True,
                                     isolation_level=None)
    except sqlite3.Error as error:
        return unavailable(path, error)
    try:
        connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    except sqlite3.Error as error:
        return unavailable(path, error)
    finally:
        connection.close()
    return None
