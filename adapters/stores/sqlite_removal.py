"""Removing whole sessions from the SQLite store, in one transaction.

A removed session's messages leave the full-text index (deleted by recomputing the
text they were indexed with, as an ingest that replaces them does), their rows go
(the schema's triggers drop their vectors), and so do the session's title index row,
its row and the summaries cached for it as a root.

>>> import sqlite3
>>> connection = sqlite3.connect(":memory:", isolation_level=None)
>>> remove(connection, [])
0
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from harkback.adapters.stores import sqlite_titles
from harkback.adapters.stores.damaged_rows import read_row
from harkback.adapters.stores.sql import titles, writes
from harkback.adapters.stores.sql.rows import message_from_row
from harkback.adapters.stores.sql.statement import Statement, json_list
from harkback.adapters.stores.sqlite_connection import execute
from harkback.adapters.stores.sqlite_transaction import immediate
from harkback.stages.text.tokens import index_text

_OF_IDS = "IN (SELECT value FROM json_each(?))"
HAS_SUMMARY_CACHE = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'summary_cache'"


def remove(connection: sqlite3.Connection, ids: Sequence[str]) -> int:
    """Remove the stored sessions among ``ids``; returns how many there were."""
    if not ids:
        return 0
    with immediate(connection):
        found = sorted({row[0] for row in execute(connection, writes.existing_sessions(ids))})
        if not found:
            return 0
        # A row that reads as no message stops the removal, rolled back, in one line.
        stored = [(row[0], read_row(message_from_row, row[1:]))
                  for row in execute(connection, writes.stored_messages(found))]
        connection.executemany(writes.DELETE_INDEXED, [
            (row_id, index_text(message.text_for_search())) for row_id, message in stored])
        execute(connection, writes.delete_message_rows(row_id for row_id, _ in stored))
        if sqlite_titles.has_title_schema(connection):
            execute(connection, titles.unindex(found))
            execute(connection, titles.forget(found))
        execute(connection, Statement(f"DELETE FROM sessions WHERE id {_OF_IDS}",
                                      (json_list(found),)))
        if connection.execute(HAS_SUMMARY_CACHE).fetchone() is not None:
            execute(connection, Statement(
                f"DELETE FROM summary_cache WHERE root_session_id {_OF_IDS}",
                (json_list(found),)))
    return len(found)
