"""``harkback check`` on a PostgreSQL store: its schema version and whether its counts
agree (the BM25 totals every ingest keeps against the rows themselves), read in one
read-only transaction. The pages and indexes themselves are the server's to check
(``amcheck``) and rebuild (``REINDEX``): :data:`REPAIR_LINE`.

>>> REPAIR_LINE[:46]
'harkback rebuilds no index of a PostgreSQL sto'
"""

from __future__ import annotations

import os
from typing import Any

import psycopg
from returns.result import Failure

from harkback.adapters.stores.postgres_connection import (
    Bounds,
    answers,
    connector,
    unavailable,
)
from harkback.adapters.stores.postgres_migrations import (
    SCHEMA_VERSION,
    NoStoreYet,
    SchemaProblem,
    bring_forward,
)
from harkback.adapters.stores.postgres_watchdog import Unanswered, Watchdog
from harkback.adapters.stores.store_check import Diagnosis
from harkback.stages.errors import NoStore, StoreUnavailable
from harkback.stages.shown_url import shown_url

REPAIR_LINE = ("harkback rebuilds no index of a PostgreSQL store: the server's administrator "
               "does, with REINDEX (and checks pages with the amcheck extension)")

_WAY_OUT = ("restore the database from the server's backup, or import the agents' histories "
            "again into a new database (harkback sync --db NEW_URL)")

_COUNTS = ("SELECT (SELECT COUNT(*) FROM messages), (SELECT messages FROM index_totals), "
           "(SELECT COUNT(*) FROM sessions), (SELECT sessions FROM index_totals), "
           "(SELECT COUNT(*) FROM sessions AS s "
           "WHERE NOT EXISTS (SELECT 1 FROM messages AS m WHERE m.session_id = s.id))")

# The mark of a redact whose VACUUM FULL has not cleared its old row versions (from
# schema version 8: see postgres_rewrite).
_MARKED = "SELECT unvacuumed > 0 FROM index_totals"


def check(url: str) -> Diagnosis | StoreUnavailable:
    """Check the store at ``url`` (see the module); a server out of reach is said as any
    command says it."""
    shown = shown_url(url)
    bounds = Bounds.of(url, os.environ)  # a setting that is no number: said as every
    if isinstance(bounds, Failure):      # command says it (the connection reads them)
        wrong: StoreUnavailable = bounds.failure()
        return wrong
    limits = bounds.unwrap()
    # As a search's: a statement the server leaves unanswered (frozen, out of reach) is
    # given up on, and one running past the read bound (a table another session locked)
    # cancelled; lock_timeout alone let it wait five minutes, or for good when set to 0.
    watchdog = Watchdog(lambda within: answers(url, within),
                        patience=limits.connect or float("inf"))
    try:
        with connector(url, True, os.environ)() as connection, \
                watchdog.watching(connection, limits.read):
            found = connection.execute(
                "SELECT to_regclass('harkback_schema') IS NOT NULL").fetchone()
            if not (found and found[0]):
                # Not damage: nothing was made there, the URL misses the store's schema, or
                # the database is another application's. Said as every command's open says
                # it: "import sessions into it" on another application's tables sent the
                # user to a sync that refuses them.
                return _absent(connection, url)
            version_row = connection.execute("SELECT version FROM harkback_schema").fetchone()
            counts = connection.execute(_COUNTS).fetchone()
            version = version_row[0] if version_row else None
            marked = (connection.execute(_MARKED).fetchone()
                      if isinstance(version, int) and version >= 8 else None)
    except (psycopg.Error, Unanswered) as error:
        return unavailable(url, error)
    finally:
        watchdog.close()
    return _judged(shown, version, counts or (), pending=bool(marked and marked[0]))


def _absent(connection: psycopg.Connection[Any], url: str) -> StoreUnavailable:
    """Why the database at ``url`` holds no store: a read-only open's own line."""
    try:
        bring_forward(connection, url, readonly=True,
                      pgoptions=os.environ.get("PGOPTIONS", ""))
    except NoStoreYet as absent:
        return NoStore(str(absent))
    except SchemaProblem as refused:
        return StoreUnavailable(str(refused))
    raise AssertionError("bring_forward opened a database holding no store")


def _judged(db: str, version: int | None, counts: tuple[Any, ...], *,
            pending: bool = False) -> Diagnosis:
    """The findings of :func:`check` in words (``pending``: a redact's compaction).

    >>> _judged("pg", SCHEMA_VERSION, (5, 4, 2, 2, 0)).damaged
    ('the index totals count 4 messages where 5 are stored',)
    """
    fine: list[str] = []
    damaged: list[str] = []
    advice = None
    if version == SCHEMA_VERSION:
        fine.append(f"schema version {version} (this harkback's)")
    elif version is not None and version < SCHEMA_VERSION:
        fine.append(f"schema version {version}, older than this harkback's ({SCHEMA_VERSION})")
        advice = "harkback migrate --db URL, then check again"
    else:
        damaged.append(f"schema version {version} is not one this harkback reads "
                       f"({SCHEMA_VERSION})")
        advice = "check it with the harkback that wrote it"
    messages, counted_messages, sessions, counted_sessions, empty = counts
    for stored, counted, what in ((messages, counted_messages, "messages"),
                                  (sessions, counted_sessions, "sessions")):
        if stored == counted:
            fine.append(f"the index totals count all {stored} {what}")
        else:
            damaged.append(f"the index totals count {counted} {what} where {stored} are "
                           f"stored")
            advice = advice or _WAY_OUT
    if empty:
        fine.append(f"{empty} sessions hold no messages (kept as their source had them)")
    if pending:  # not damage: the rows are redacted; their old versions are not yet gone
        fine.append("a redact's compaction is pending: old row versions of what it rewrote, "
                    "secrets included, stay in the tables' files")
        advice = advice or ("harkback redact --db URL, as the owner of the tables: its "
                            "VACUUM FULL takes them out of the files")
    return Diagnosis(tuple(fine), tuple(damaged), False, db, advice)
