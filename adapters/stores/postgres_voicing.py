"""PostgreSQL stores indexed before kana kept their voicing: the ``tokens`` of the rows that
hold a voiced kana, made again by the migration to schema version 5.

Until then ``tokens`` held バケット (bucket) and パケット (packet) both as ハケット
(:mod:`~harkback.stages.text.voicing`). Only the messages and sessions (title, source)
whose text holds a voiced kana or a voicing mark can have other tokens now; they are
found by a regular expression on the server and written again in the migration's
transaction. The word counts and estimates readers keep (:mod:`postgres_memo`) are
forgotten as after any rewrite (the ``messages_rewritten`` trigger moves
``index_totals.rewrites``; the generation moves too), and the planner's per-word
statistics, which ``far_above`` trusts, are gathered again (``ANALYZE``).
"""

from __future__ import annotations

from typing import Any

import psycopg

from harkback.adapters.stores.postgres_text import tsvector_literal
from harkback.adapters.stores.postgres_writes import (
    MESSAGE_COLUMNS,
    read_text,
    stored_message,
    title_tokens,
)
from harkback.stages.records import Session
from harkback.stages.text.tokens import index_tokens
from harkback.stages.text.voicing import devoiced, voicing_class

Connection = psycopg.Connection[Any]

VOICED_VERSION = 5
"""The first schema version whose ``tokens`` keep the kana's voicing marks."""

ABOUT = ("the full-text columns keep the voiced sound marks of kana (バケット is no longer "
         "パケット or ハケット): the messages and titles holding them are tokenized again")
"""What the migration step says it did."""

_MESSAGES = (f"SELECT id, {MESSAGE_COLUMNS}, length FROM messages "
             "WHERE content ~ %(class)s OR tool_name ~ %(class)s OR tool_calls ~ %(class)s")
_SESSIONS = ("SELECT id, title, source, length FROM sessions "
             "WHERE title ~ %(class)s OR source ~ %(class)s")
# One statement per batch: an UPDATE per row took 17 s for 20,000 messages.
_UPDATES = {
    "messages": "UPDATE messages AS m SET tokens = v.tokens::tsvector, length = v.length "
                "FROM unnest(%s::text[], %s::int[], %s::bigint[]) AS v(tokens, length, id) "
                "WHERE m.id = v.id",
    "sessions": "UPDATE sessions AS s SET tokens = v.tokens::tsvector, length = v.length "
                "FROM unnest(%s::text[], %s::int[], %s::text[]) AS v(tokens, length, id) "
                "WHERE s.id = v.id"}
_BATCH = 5000
_TOTALS = ("UPDATE index_totals SET message_tokens = message_tokens + %s, "
           "session_tokens = session_tokens + %s, generation = generation + 1")


def _changed(tokens: tuple[str, ...]) -> bool:
    # Rows found by the class may still tokenize as before (a mark no kana took).
    return any(devoiced(token) != token for token in tokens)


def reindex(connection: Connection) -> None:
    """Tokenize again every message and session whose tokens changed (inside the
    migration's transaction), keep the totals exact, and gather statistics again."""
    found = {"class": voicing_class()}
    messages: list[tuple[str, int, int]] = []
    grown = 0
    for row in connection.execute(_MESSAGES, found).fetchall():
        tokens = index_tokens(stored_message(row[1:-1]).text_for_search())
        if _changed(tokens):
            messages.append((tsvector_literal(tokens), len(tokens), row[0]))
            grown += len(tokens) - row[-1]
    sessions: list[tuple[str, int, str]] = []
    titled = 0
    for row in connection.execute(_SESSIONS, found).fetchall():
        (key, title, source), length = read_text(row[:3]), row[3]
        tokens = title_tokens(Session(id=key, title=title, source=source))
        if _changed(tokens):
            sessions.append((tsvector_literal(tokens), len(tokens), row[0]))
            titled += len(tokens) - length
    if not messages and not sessions:
        return
    for table, rows in (("messages", messages), ("sessions", sessions)):
        for start in range(0, len(rows), _BATCH):
            columns = zip(*rows[start:start + _BATCH], strict=True)
            connection.execute(_UPDATES[table], tuple(list(column) for column in columns))
    connection.execute(_TOTALS, (grown, titled))
    connection.execute("ANALYZE messages, sessions")
