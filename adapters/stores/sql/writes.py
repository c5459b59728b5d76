"""An ingest's statements and its plan: which rows to keep, update, add and unindex.

>>> existing_sessions(["s1", "s1"]).params
('["s1"]',)
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from itertools import chain

import attrs

from harkback.adapters.stores.sql.rows import message_row
from harkback.adapters.stores.sql.schema import MESSAGE_COLUMNS, SESSION_COLUMNS
from harkback.adapters.stores.sql.statement import SqlValue, Statement, json_list
from harkback.stages.records import Conversation, Message
from harkback.stages.text.tokens import index_text

MAX_MESSAGE_ID = "SELECT COALESCE(MAX(id), 0) FROM messages"

UPSERT_SESSION = (
    f"INSERT INTO sessions ({SESSION_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in SESSION_COLUMNS.split(", ")[1:])
)

# A message kept by a re-ingest is updated in place, not deleted and inserted again: the
# triggers of schema.VECTOR_SCHEMA drop the vectors of deleted rows and of rows whose content
# changes, so an unchanged message keeps its vectors.
UPSERT_MESSAGE = (
    f"INSERT INTO messages (id, {MESSAGE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in MESSAGE_COLUMNS.split(", "))
)

ROWS_PER_UPSERT = 100
"""Message rows one :data:`UPSERT_MESSAGES` statement writes (900 values bound)."""

UPSERT_MESSAGES = UPSERT_MESSAGE.replace(
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ",
    f" VALUES {', '.join(['(?, ?, ?, ?, ?, ?, ?, ?, ?)'] * ROWS_PER_UPSERT)} ", 1)
""":data:`UPSERT_MESSAGE` of :data:`ROWS_PER_UPSERT` rows at once. SQLite runs the
``messages`` table's ``CHECK (role IN (...))`` by building a small lookup table once
per run of a statement, that is once per row when each row is its own run
(``executemany``): a third of the table's insert cost (benchmarks/README.md, "Speed at
scale")."""

INSERT_INDEXED = "INSERT INTO messages_fts (rowid, body) VALUES (?, ?)"

DELETE_INDEXED = "INSERT INTO messages_fts (messages_fts, rowid, body) VALUES ('delete', ?, ?)"


def index_body(text: str) -> str:
    """What the message index is given for ``text``: ASCII text as it is, any other text
    as its :func:`~harkback.stages.text.tokens.index_text` token stream.

    On ASCII, FTS5's ``unicode61`` tokenizer keeps exactly the runs of letters and digits,
    lower-cased, which are the tokens ``index_text`` gives, in the same order: the index
    holds the same postings either way, and splitting in SQLite's C costs less than in
    Python. FTS5 deletes a row by tokenizing the text it is given, so rows indexed from
    ``index_text`` (older files) are deleted by this text too.

    >>> index_body("Fix the CORS-error, v2!"), index_body("Café 上次")
    ('Fix the CORS-error, v2!', 'cafe 上次 次')
    """
    return text if text.isascii() else index_text(text)


def existing_sessions(ids: Iterable[str]) -> Statement:
    """The ids among ``ids`` that are already stored."""
    return Statement("SELECT id FROM sessions WHERE id IN (SELECT value FROM json_each(?))",
                     (json_list(ids),))


def stored_messages(session_ids: Iterable[str]) -> Statement:
    """Row id and fields of every message of these sessions (to unindex them)."""
    return Statement(
        f"SELECT id, {MESSAGE_COLUMNS} FROM messages "
        "WHERE session_id IN (SELECT value FROM json_each(?))",
        (json_list(session_ids),))


KEPT_BELOW = ("SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?), "
              "(SELECT COUNT(*) FROM messages WHERE session_id = ? AND position < ?)")
"""Whether a session is stored, and how many of its messages lie below a position (the
check of a tail write: see :class:`~harkback.stages.tails.TailWriter`)."""

MESSAGES_BELOW = (f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ? "
                  "AND position < ? ORDER BY position")
"""A session's messages below a position, in order (those a tail keeps: see
:class:`~harkback.stages.tails.TailWriter`)."""

MESSAGES_FROM = (f"SELECT id, {MESSAGE_COLUMNS} FROM messages "
                 "WHERE session_id = ? AND position >= ?")
"""Row id and fields of a session's messages from a position on (those a tail replaces)."""


@attrs.frozen
class WritePlan:
    """The rows an ingest writes: index rows to delete, message rows and index rows to insert."""

    unindex: tuple[tuple[int, str], ...]
    messages: tuple[tuple[SqlValue, ...], ...]
    index: tuple[tuple[int, str], ...]

    @property
    def dropped(self) -> tuple[int, ...]:
        """Row ids of stored messages that are not kept (every row that is unindexed)."""
        return tuple(row_id for row_id, _ in self.unindex)


def plan_write(batch: Iterable[Conversation], stored: Iterable[tuple[int, Message]],
               next_id: int) -> WritePlan:
    """Plan replacing the ``stored`` messages of the batch's sessions with the batch's messages.

    A message whose searchable text is unchanged keeps its row id and index row, so
    re-ingesting a session that only grew indexes only its new messages. ``next_id``
    must exceed every row id in use.

    >>> from harkback.stages.records import Session
    >>> old = Message(session_id="s", position=0, role="user", content="same")
    >>> new = Message(session_id="s", position=1, role="user", content="added")
    >>> plan = plan_write([Conversation(Session(id="s"), (old, new))], [(7, old)], next_id=9)
    >>> plan.unindex, [row[0] for row in plan.messages], plan.index
    ((), [7, 9], ((9, 'added'),))
    """
    previous = {(m.session_id, m.position): (row_id, m) for row_id, m in stored}
    kept: set[int] = set()
    rows: list[tuple[SqlValue, ...]] = []
    index: list[tuple[int, str]] = []
    for conversation in batch:
        for message in conversation.messages:
            text = message.text_for_search()
            old = previous.get((message.session_id, message.position)) if previous else None
            if old is not None and old[1].text_for_search() == text:
                row_id = old[0]
                kept.add(row_id)
            else:
                row_id = next_id
                next_id += 1
                index.append((row_id, index_body(text)))
            rows.append(message_row(row_id, message))
    unindex = tuple((row_id, index_body(m.text_for_search()))
                    for row_id, m in previous.values() if row_id not in kept)
    return WritePlan(unindex=unindex, messages=tuple(rows), index=tuple(index))


def upsert_message_runs(rows: Sequence[tuple[SqlValue, ...]]
                        ) -> tuple[list[list[SqlValue]], list[tuple[SqlValue, ...]]]:
    """``rows`` (of :data:`UPSERT_MESSAGE`) split into the values of whole
    :data:`UPSERT_MESSAGES` statements, and the rows left over (fewer than
    :data:`ROWS_PER_UPSERT`, each written by :data:`UPSERT_MESSAGE`), in order.

    >>> runs, rest = upsert_message_runs([(i,) * 9 for i in range(ROWS_PER_UPSERT + 2)])
    >>> [len(values) for values in runs], [row[0] for row in rest]
    ([900], [100, 101])
    """
    whole = len(rows) - len(rows) % ROWS_PER_UPSERT
    runs = [list(chain.from_iterable(rows[start:start + ROWS_PER_UPSERT]))
            for start in range(0, whole, ROWS_PER_UPSERT)]
    return runs, list(rows[whole:])


def delete_message_rows(row_ids: Iterable[int]) -> Statement:
    """Remove the messages with these row ids.

    >>> delete_message_rows([3, 5]).params
    ('[3, 5]',)
    """
    return Statement("DELETE FROM messages WHERE id IN (SELECT value FROM json_each(?))",
                     (json.dumps(list(row_ids)),))
