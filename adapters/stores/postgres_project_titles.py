"""PostgreSQL stores whose titles were tokenized without the project's name: the sessions
with a project, tokenized again by the migration to schema version 9.

Since then a session's ``tokens`` hold its title, source and project's name
(:meth:`~harkback.stages.records.Session.text_for_search`): ``search mobile-app`` finds
the sessions of /home/me/code/mobile-app as ``search --project mobile-app`` lists them.
Only a session with a project can have other tokens; each is written again in the
migration's transaction, the title totals kept exact, and the planner's statistics
gathered again (as :mod:`postgres_voicing` does).
"""

from __future__ import annotations

from typing import Any

import psycopg

from harkback.adapters.stores.postgres_text import tsvector_literal
from harkback.adapters.stores.postgres_writes import read_text, title_tokens
from harkback.stages.records import Session, project_name

Connection = psycopg.Connection[Any]

PROJECT_VERSION = 9
"""The first schema version whose session ``tokens`` hold the project's name."""

ABOUT = ("the title index holds each session's project name (what --project matches), so a "
         "search finds a session by it: the sessions with a project are tokenized again")
"""What the migration step says it did."""

_SESSIONS = "SELECT id, title, source, project, length FROM sessions WHERE project <> ''"
# One statement per batch, as postgres_voicing writes them.
_UPDATE = ("UPDATE sessions AS s SET tokens = v.tokens::tsvector, length = v.length "
           "FROM unnest(%s::text[], %s::int[], %s::text[]) AS v(tokens, length, id) "
           "WHERE s.id = v.id")
_BATCH = 5000
_TOTALS = ("UPDATE index_totals SET session_tokens = session_tokens + %s, "
           "generation = generation + 1")


def reindex(connection: Connection) -> None:
    """Tokenize again every session with a project's name (inside the migration's
    transaction), keep the title totals exact, and gather statistics again."""
    rows: list[tuple[str, int, str]] = []
    grown = 0
    for row in connection.execute(_SESSIONS).fetchall():
        (key, title, source, project), length = read_text(row[:4]), row[4]
        if not project_name(project):
            continue
        tokens = title_tokens(Session(id=key, title=title, source=source, project=project))
        rows.append((tsvector_literal(tokens), len(tokens), row[0]))
        grown += len(tokens) - length
    if not rows:
        return
    for start in range(0, len(rows), _BATCH):
        columns = zip(*rows[start:start + _BATCH], strict=True)
        connection.execute(_UPDATE, tuple(list(column) for column in columns))
    connection.execute(_TOTALS, (grown,))
    connection.execute("ANALYZE sessions")
