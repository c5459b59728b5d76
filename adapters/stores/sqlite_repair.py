"""``harkback check --repair`` on a SQLite store: rebuild what harkback derives from the
stored messages (the full-text index, the titles' index, the B-tree indexes), in one
transaction, then check again.

Only when the check found damage in those alone
(:attr:`~harkback.adapters.stores.store_check.Diagnosis.rebuildable`): damaged sessions or
messages are not written over (a write into a damaged file may spread the damage); the
check's next step then names the ways out. A kill midway leaves the file as it was: the
transaction is rolled back by the next open, as any killed write.

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as folder:
...     repair(Path(folder) / "none.db").done
()
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import attrs

from harkback.adapters.sqlite_files import is_undecodable, read_replacing
from harkback.adapters.stores import sqlite_titles
from harkback.adapters.stores.sql.rows import message_from_row
from harkback.adapters.stores.sql.schema import MESSAGE_COLUMNS
from harkback.adapters.stores.sql.writes import INSERT_INDEXED, index_body
from harkback.adapters.stores.sqlite_check import check
from harkback.adapters.stores.sqlite_transaction import immediate
from harkback.adapters.stores.store_check import Diagnosis
from harkback.adapters.stores.write_turns import TURNS, Patience, patiently
from harkback.stages.records import Session

BATCH = 2000
"""Messages read and indexed at a time: a million are never held at once."""

_EMPTIED = "INSERT INTO {0}({0}) VALUES('delete-all')"
_ROWS = "SELECT (SELECT COUNT(*) FROM messages), (SELECT COUNT(*) FROM sessions)"
_ORPHANS = "DELETE FROM message_vectors WHERE message_id NOT IN (SELECT id FROM messages)"


class DamagedRow(Exception):
    """A stored message or session that reads as none: a role outside its CHECK, a text
    typed as a blob (one flipped bit in its record's header). A read-only integrity_check
    looks at neither, so the check called the file rebuildable."""


@attrs.frozen
class Repair:
    """What a repair found (``before``), did (``done``, empty when it wrote nothing) and
    what the check found after it (``after``; ``before`` again when nothing was done)."""

    before: Diagnosis
    done: tuple[str, ...]
    after: Diagnosis
    failed: str | None = None
    """Why the rebuild stopped (rolled back: the file is as it was), if it did."""


def repair(path: Path, *, busy_timeout: float = 5.0,
           say: Callable[[str], None] = lambda line: None) -> Repair:
    """Check ``path``; rebuild its indexes when that mends all it found (see the module).
    ``say`` is given a line as the rebuild starts (what, how many rows) and one when it
    is done: it holds off every sync meanwhile (about 30 s a million messages)."""
    before = check(path)
    if before.healthy or not before.rebuildable or before.advice is not None:
        return Repair(before, (), before)
    # The file the check read, by its URI: a relative name starting ``file:`` would be
    # read as one and open another file; ``mode=rw`` creates none if it went meanwhile.
    uri = f"{path.resolve().as_uri()}?mode=rw"
    try:
        with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=busy_timeout,
                                                isolation_level=None)) as connection:
            # A sync holding the file: waited for as long as any writer waits its turn.
            started = time.monotonic()
            done = patiently(partial(_rebuilt, say=say),
                             Patience(total_s=TURNS * busy_timeout))(connection)
    except sqlite3.Error as error:  # SchemaMoved too: a migration came between
        return Repair(before, (), before, failed=f"the rebuild stopped and changed nothing "
                                                 f"({error})")
    except DamagedRow as error:  # its table is damaged after all
        return Repair(before, (), before, failed=f"the rebuild stopped and changed nothing: "
                                                 f"{error}")
    say(f"rebuilt the indexes in {time.monotonic() - started:.1f} s; checking again")
    return Repair(before, done, check(path))


def _rebuilt(connection: sqlite3.Connection, *, say: Callable[[str], None]
             ) -> tuple[str, ...]:
    """Every index rebuilt in one transaction; what was done. A stored text that is not
    UTF-8 (a flipped bit, which no check looks at) is read as every read of the store
    reads it, as U+FFFD (:func:`~harkback.adapters.sqlite_files.read_replacing`): it
    stopped the rebuild, and the index the check sent the user to mend stayed broken."""
    try:
        return _rebuilt_once(connection, say=say)
    except sqlite3.OperationalError as error:
        if not is_undecodable(error):
            raise
        # Rolled back; read again, replacing, only now: it costs a microsecond a value.
        return read_replacing(connection, partial(_rebuilt_once, say=lambda line: None))


def _rebuilt_once(connection: sqlite3.Connection, *, say: Callable[[str], None]
                  ) -> tuple[str, ...]:
    done: list[str] = []
    with immediate(connection):
        messages, sessions = connection.execute(_ROWS).fetchone()
        say(f"rebuilding the indexes of {messages} messages and {sessions} sessions in one "
            f"transaction (a sync waits for it; a million messages take about 30 s)...")
        done.append(_messages(connection))
        if sqlite_titles.has_title_schema(connection):
            done.append(_titles(connection))
        removed = connection.execute(_ORPHANS).rowcount
        if removed:
            done.append(f"removed {removed} vectors of messages no longer stored")
        # Each B-tree index emptied and filled again from its table.
        connection.execute("REINDEX")
        done.append("rebuilt every B-tree index (REINDEX)")
    return tuple(done)


def _messages(connection: sqlite3.Connection) -> str:
    """The message index emptied and given each message's text again, as an ingest
    gives it (:func:`~harkback.adapters.stores.sql.writes.index_body`)."""
    connection.execute(_EMPTIED.format("messages_fts"))
    rows = connection.execute(f"SELECT id, {MESSAGE_COLUMNS} FROM messages")
    indexed = 0
    while batch := rows.fetchmany(BATCH):
        connection.executemany(INSERT_INDEXED, [_indexed(row) for row in batch])
        indexed += len(batch)
    return f"rebuilt the full-text index of {indexed} messages"


def _indexed(row: tuple[Any, ...]) -> tuple[int, str]:
    """A stored message's row id and index text, as an ingest gives it.

    >>> _indexed((7, "s1", 0, "user", "hi", "", "", None, None))
    (7, 'hi')
    >>> try:
    ...     _indexed((7, "s1", 0, "user", b"hi", "", "", None, None))
    ... except DamagedRow as error:
    ...     print(error)
    a stored message is damaged (message 7: its text is stored as bytes, not as text)
    """
    try:
        return row[0], index_body(message_from_row(row[1:]).text_for_search())
    except (ValueError, TypeError) as error:  # what Message and its text make of bad values
        raise DamagedRow(f"a stored message is damaged (message {row[0]}: {error})"
                         ) from error


def _titles(connection: sqlite3.Connection) -> str:
    """The titles' index emptied and every session's title indexed again, as an ingest
    does (:func:`~harkback.adapters.stores.sqlite_titles.replace`)."""
    connection.execute(_EMPTIED.format("session_titles_fts"))
    connection.execute("DELETE FROM session_titles")
    try:
        sessions = [Session(id=row[0], title=row[1], source=row[2], project=row[3])
                    for row in connection.execute(
                        "SELECT id, title, source, project FROM sessions")]
        sqlite_titles.replace(connection, sessions)
    except (ValueError, TypeError) as error:  # an id, title, source or project not text
        raise DamagedRow(f"a stored session is damaged ({error})") from error
    return f"rebuilt the titles' index of {len(sessions)} sessions"
