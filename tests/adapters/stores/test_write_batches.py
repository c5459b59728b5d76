"""The bulk write's shortcuts write what the plain forms wrote: tool calls laid out as
``json.dumps`` lays them out, message rows a hundred to a statement as one at a time."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harkback.adapters.stores.sql import schema, writes
from harkback.adapters.stores.sql.statement import SqlValue
from harkback.adapters.stores.sql.tool_calls import encode_tool_calls
from harkback.stages.records import Conversation, Message, Session, ToolCall

TEXT = st.text(st.characters(codec="utf-8"), max_size=60)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(TEXT, TEXT, TEXT), max_size=3))
def test_tool_calls_are_the_text_json_dumps_gives(calls: list[tuple[str, str, str]]) -> None:
    """Quotes, backslashes, control characters and any Unicode come out as ``json.dumps``
    (``ensure_ascii=False``, compact) writes them, which older harkback stored."""
    records = tuple(ToolCall(id=i, name=n, arguments=a) for i, n, a in calls)
    expected = json.dumps(
        [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
         for c in records], ensure_ascii=False, separators=(",", ":")) if records else None
    assert encode_tool_calls(records) == expected


@contextmanager
def _messages_table() -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(":memory:", isolation_level=None)
    try:
        connection.execute(next(s for s in schema.SCHEMA if "TABLE messages (" in s))
        yield connection
    finally:
        connection.close()


def _rows(count: int, start: int = 1) -> list[tuple[SqlValue, ...]]:
    chat = Conversation(Session(id="s"), tuple(
        Message(session_id="s", position=p, role=("user", "assistant", "tool")[p % 3],
                content=f"message {p} ü", tool_calls=(ToolCall(id=f"c{p}", name="bash",
                                                               arguments='{"cmd": "ls"}'),)
                if p % 3 == 1 else (), timestamp=1.0e9 + p if p % 2 else None)
        for p in range(count)))
    return list(writes.plan_write([chat], [], start).messages)


def _write_batched(connection: sqlite3.Connection, rows: list[tuple[SqlValue, ...]]) -> None:
    runs, rest = writes.upsert_message_runs(rows)
    for values in runs:
        connection.execute(writes.UPSERT_MESSAGES, values)
    connection.executemany(writes.UPSERT_MESSAGE, rest)


@pytest.mark.parametrize("count", [0, 1, writes.ROWS_PER_UPSERT, 2 * writes.ROWS_PER_UPSERT + 37])
def test_batched_rows_store_what_row_at_a_time_stores(count: int) -> None:
    """New rows, then the same ids again with other values (a re-ingest's update in
    place): the table ends the same either way."""
    tables = []
    for batched in (False, True):
        with _messages_table() as connection:
            for rows in (_rows(count), [(r[0], *r[1:4], "edited " + str(r[0]), *r[5:])
                                        for r in _rows(count)]):
                if batched:
                    _write_batched(connection, rows)
                else:
                    connection.executemany(writes.UPSERT_MESSAGE, rows)
            tables.append(connection.execute("SELECT * FROM messages ORDER BY id").fetchall())
    assert tables[0] == tables[1]
    assert len(tables[0]) == count


def test_batched_rows_keep_the_table_s_checks() -> None:
    """A row the schema refuses (a role it does not know) fails its whole statement."""
    rows = _rows(writes.ROWS_PER_UPSERT)
    rows[40] = (*rows[40][:3], "narrator", *rows[40][4:])
    with _messages_table() as connection, pytest.raises(sqlite3.IntegrityError, match="CHECK"):
        _write_batched(connection, rows)
