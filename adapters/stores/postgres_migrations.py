"""The PostgreSQL store's schema versions: the forward steps from its first layout, in order,
and bringing a database to this harkback's version (the pattern of
:mod:`~harkback.adapters.stores.migration`, as the SQLite store follows it).

Version 1 is :data:`~harkback.adapters.stores.postgres_schema.SCHEMA`. A new database is
made at version 1 and brought forward by these same steps, so a new database and a
migrated one cannot differ. The version lives in the ``harkback_schema`` row and changes in
the same transaction as the steps (PostgreSQL's DDL is transactional), under the store's
write lock: a kill at any point leaves the database at its old version or its new one, and
writers wait for a migration rather than write beside it. A read-only connection cannot
create even temporary views, so no step has a read view: a read-only open of an older
database asks for ``harkback migrate``.

To change the schema, or the tokens a text is given, add a step at the end; never edit
one that shipped. A step may rewrite rows in Python in the same transaction (version 5
tokenizes again the texts whose tokens changed; version 9 the titles of the sessions with
a project, whose name is now searched beside the title).

>>> from harkback.adapters.stores.migration import check_order
>>> check_order(MIGRATIONS) is None, SCHEMA_VERSION
(True, 9)
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg import sql

from harkback.adapters.stores import postgres_project_titles, postgres_voicing
from harkback.adapters.stores import postgres_schema as schema
from harkback.adapters.stores.migration import (
    FIRST_VERSION,
    Migrated,
    Migration,
    latest,
    needs_migrate,
    pending,
    too_new,
)
from harkback.adapters.stores.postgres_reach import identifier, reaching
from harkback.adapters.stores.postgres_where import where
from harkback.adapters.stores.sql.migrations import DATE_UNDATED, DATED_ABOUT, SOURCE_INDEX
from harkback.stages.shell_words import shell_quoted

Connection = psycopg.Connection[Any]

MIGRATIONS: tuple[Migration[Connection], ...] = (
    Migration(
        version=2,
        about="sessions.project: the folder a session worked in; import_mark_sessions: the "
              "sessions read from each imported item",
        # A column with a constant default rewrites no row: instant at any size.
        statements=("ALTER TABLE sessions ADD COLUMN project TEXT NOT NULL DEFAULT ''",
                    schema.from_sqlite(schema.ledger_table("import_mark_sessions"))),
    ),
    Migration(
        version=3,
        about="the full-text columns keep statistics of 1,000 words (not 100), so the "
              "planner tells a rare word from a common one in a large store",
        # A catalog change (no row is rewritten); the next ANALYZE (optimize, autovacuum)
        # gathers them. With 100, any word outside the 100 most common is guessed at about
        # 3,000 rows per million, and a search for a rare word joins every session by hash.
        statements=tuple(f"ALTER TABLE {table} ALTER COLUMN tokens SET STATISTICS 1000"
                         for table in ("messages", "sessions")),
    ),
    Migration(
        version=4,
        about="index_totals.rewrites: moves when message rows are deleted or their words "
              "change, so a reader can bring its counts forward by the rows appended since",
        # Triggers, not the store's own writes, move it: a removal by any means (an older
        # writer, psql) is seen. Once per statement, whatever it deleted (no copy of the
        # rows is kept for it), so the ingest runs its DELETE only when it drops rows; its
        # UPDATE of kept rows never names these columns.
        statements=(
            "ALTER TABLE index_totals ADD COLUMN rewrites BIGINT NOT NULL DEFAULT 0",
            "CREATE FUNCTION harkback_rewritten() RETURNS trigger LANGUAGE plpgsql AS $$ "
            "BEGIN UPDATE index_totals SET rewrites = rewrites + 1; RETURN NULL; END $$",
            *(f"CREATE TRIGGER messages_{name} AFTER {event} ON messages FOR EACH STATEMENT "
              "EXECUTE FUNCTION harkback_rewritten()"
              for name, event in (("deleted", "DELETE"), ("truncated", "TRUNCATE"),
                                  ("rewritten", "UPDATE OF id, tokens, length"))),
        ),
    ),
    Migration(
        version=postgres_voicing.VOICED_VERSION, about=postgres_voicing.ABOUT, statements=(),
        rewrite=postgres_voicing.reindex,
    ),
    Migration(version=6, about=DATED_ABOUT, statements=(DATE_UNDATED,)),
    Migration(
        version=schema.KEYED_WRITES,
        about="harkback_rewritten() finds index_totals beside the messages it fires for, "
              "whatever the search path of the one deleting; sessions_source indexes the "
              "sessions by source; writers lock their own schema only",
        statements=(
            # Not the caller's search path (psql's may not hold the store, or hold another
            # index_totals), and not a path or schema name fixed now: a schema renamed, or
            # dumped and restored under another name, would keep the old one. The trigger's
            # own table tells where it lives; the function's path is pinned to the catalog.
            "CREATE OR REPLACE FUNCTION harkback_rewritten() RETURNS trigger "
            "LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $$ BEGIN "
            "EXECUTE format('UPDATE %I.index_totals SET rewrites = rewrites + 1', "
            "TG_TABLE_SCHEMA); RETURN NULL; END $$",
            SOURCE_INDEX,
        ),
    ),
    Migration(
        version=8,
        about="index_totals.unvacuumed: set by each chunk a redact writes and cleared by its "
              "VACUUM FULL, so a redact stopped between them compacts when run again",
        # The mark must outlive the run: a redact stopped otherwise than by Ctrl-C (the
        # server gone, a kill) and run again found nothing to change, and skipped the
        # VACUUM FULL that takes the old row versions, secrets included, out of the files.
        # A constant default rewrites no row; IF NOT EXISTS, as a version set back by hand
        # may hold it.
        statements=("ALTER TABLE index_totals ADD COLUMN IF NOT EXISTS "
                    "unvacuumed BIGINT NOT NULL DEFAULT 0",),
    ),
    Migration(
        version=9, about=postgres_project_titles.ABOUT, statements=(),
        rewrite=postgres_project_titles.reindex,
    ),
)
"""Every step, oldest first; step *n* leads to version *n + 1*."""

SCHEMA_VERSION = latest(MIGRATIONS)
"""The version this harkback reads and writes."""


class SchemaProblem(Exception):
    """A database this harkback must not use as it is; the message is the line to show
    (raised inside the opening transaction, so nothing it began is kept)."""


class NoStoreYet(SchemaProblem):
    """The database holds no harkback store, and this open may not make one."""


def no_store_yet(url: str, elsewhere: Sequence[str] = (), *, barred: Sequence[str] = (),
                 role: str = "", pgoptions: str = "") -> str:
    """What a command that needs a store says of the database at ``url`` holding none on
    its search path, naming how to make one (the words a SQLite file no one made yet
    gets), or the schema ``elsewhere`` holding one, which a URL without its search path
    misses, and the option reaching it in that URL, ``pgoptions`` kept (and, for one of
    them ``barred`` to ``role``, the grant it lacks).

    >>> no_store_yet("postgresql:///h").split("; ")[0]
    'postgresql:///h holds no harkback store'
    >>> for part in no_store_yet("postgresql:///h", ["hb", "My Store"]).split("; "):
    ...     print(part)
    postgresql:///h holds no harkback store on its search path
    schema hb holds one (?options=-csearch_path%3Dhb in the URL reaches it), and so does \
schema "My Store" (?options=-csearch_path%3D%22My%5C%20Store%22 in the URL)
    >>> no_store_yet("postgresql:///h?sslmode=disable", ["hb"]).split("; ", 1)[1]
    'schema hb holds one (&options=-csearch_path%3Dhb in the URL reaches it)'
    >>> no_store_yet("postgresql:///h", ["hb"], barred=["hb"], role="ann").split("; ", 1)[1]
    'schema hb holds one, which ann may not use (its owner may GRANT USAGE ON SCHEMA hb TO \
ann; then ?options=-csearch_path%3Dhb in the URL reaches it)'
    """
    shown = where(url)
    if elsewhere:
        first, *more = elsewhere
        how = functools.partial(_how, url=url, barred=barred, role=role, pgoptions=pgoptions)
        return (f"{shown} holds no harkback store on its search path; schema "
                f"{identifier(first)} holds one{how(first, reaches=' reaches it')}"
                + "".join(f", and so does schema {identifier(name)}{how(name)}"
                          for name in more))
    return (f"{shown} holds no harkback store; import sessions into it first: harkback sync "
            "--db URL (the Claude Code, Codex and Hermes histories on this machine), or "
            "harkback ingest FILE --db URL (a JSON-lines file); harkback migrate --db URL "
            "makes an empty one")


def _how(name: str, *, url: str, barred: Sequence[str], role: str, pgoptions: str,
         reaches: str = "") -> str:
    """How the store in schema ``name`` is reached: the option of ``url`` (``pgoptions``
    kept), after the grant a role it is ``barred`` to lacks (told only the option, it was
    then told no schema on its search path exists that it may use, or the same option
    again)."""
    option = reaching(name, url, pgoptions)
    if name not in barred:
        return f" ({option}{reaches})"
    return (f", which {role} may not use (its owner may GRANT USAGE ON SCHEMA "
            f"{identifier(name)} TO {identifier(role)}; then {option} reaches it)")


def stores_elsewhere(connection: Connection) -> tuple[list[str], list[str]]:
    """The schemas off the search path that hold a harkback store (at most 3), and those
    of them this role may not use."""
    rows = connection.execute(sql.SQL(schema.STORES_ELSEWHERE)).fetchall()
    return [str(name) for name, _ in rows], [str(name) for name, usable in rows if not usable]


def _scalar(connection: Connection, statement: str) -> Any:
    row = connection.execute(sql.SQL(statement)).fetchone()
    return None if row is None else row[0]


def _shadowing(connection: Connection, held_in: str) -> str | None:
    """The schema ahead of ``held_in`` on the search path holding a table of harkback's
    name, which the store's unqualified statements would read instead (None: none)."""
    row = connection.execute(schema.SHADOWED, (list(schema.TABLES), held_in)).fetchone()
    return None if row is None else str(row[0])


def _behind(url: str, held_in: str, first: str | None, path: str, pgoptions: str = "") -> str:
    """Why a store behind another schema on the search path is not opened: its statements
    name its tables unqualified, so a table of the same name in the schema ahead (a team
    application's ``sessions``) would be read and written instead, and a migration would
    create tables there.

    >>> _behind("postgresql:///team", "hb", "public", "public, hb")[:70]
    "postgresql:///team: harkback's tables are in schema hb, behind schema "
    """
    return (f"{where(url)}: harkback's tables are in schema {held_in}, behind schema "
            f"{first} on the search path (search_path={path}), whose tables harkback would "
            f"read and write instead; put {held_in} first "
            f"({reaching(held_in, url, pgoptions)})")


def _wait_for_older_writers(connection: Connection) -> None:
    """Also take the database-wide write lock of the harkbacks before schema version
    :data:`~harkback.adapters.stores.postgres_schema.KEYED_WRITES` when the store is older
    than it (or not made yet): one of them that checked the version before this migration
    commits may be writing, and must finish first; once it commits, they refuse to write."""
    if (connection.execute(schema.HAS_STORE).fetchone() == (True,)
            and int(_scalar(connection, schema.VERSION)) >= schema.KEYED_WRITES):
        return
    connection.execute("SELECT pg_advisory_xact_lock(%s)", (schema.WRITE_LOCK,))


def _owners(where: str, found: int, owners: Sequence[str], refused: psycopg.Error) -> str:
    """Why a role may not migrate the store: a step changes its tables, which only their
    owner (or a member of the owner's role) may do; of tables with several owners, only a
    role holding the rights of each.

    >>> _owners("postgresql:///team", 6, ["admin"], psycopg.Error("must be owner of x"))[-59:]
    'must be owner of x); have role admin run `harkback migrate`'
    >>> _owners("postgresql:///team", 6, ["admin", "ops"], psycopg.Error("x"))[54:125]
    'only a role holding the rights of each owner of its tables (admin, ops)'
    """
    if len(owners) == 1:
        return (f"{where} has harkback schema version {found}, and only the owner of its "
                f"tables ({owners[0]}) may migrate it to {SCHEMA_VERSION} ({refused}); have "
                f"role {owners[0]} run `harkback migrate`")
    return (f"{where} has harkback schema version {found}, and only a role holding the rights "
            f"of each owner of its tables ({', '.join(owners)}) may migrate it to "
            f"{SCHEMA_VERSION} ({refused}); have such a role run `harkback migrate`")


def _owners_of(connection: Connection) -> tuple[tuple[str, bool], ...]:
    """Each role owning some of the store's tables, and whether this role holds its rights
    (the owner of ``sessions`` alone was named: a migration altering a table another role
    owns was refused, and that role went unnamed)."""
    return tuple((str(owner), bool(held)) for owner, held in connection.execute(
        schema.OWNERS, (list(schema.TABLES),)).fetchall())


def _asks_for_migrate(connection: Connection, where: str, found: int) -> str:
    """The line refusing a read-only open of an older store: it names the owners of the
    tables to run ``harkback migrate`` when this role does not hold the rights of each (a
    reader's own `harkback migrate` would only be refused in turn)."""
    owners = _owners_of(connection)
    if all(held for _, held in owners):
        return needs_migrate(where, found, SCHEMA_VERSION)
    run = f"run `harkback migrate --db {shell_quoted(where)}`"
    said = f"{where} has harkback schema version {found}, and this harkback reads only " \
           f"{SCHEMA_VERSION}: have"
    if len(owners) == 1:
        return f"{said} role {owners[0][0]} (the owner of its tables) {run}"
    return (f"{said} a role holding the rights of each of {', '.join(o for o, _ in owners)} "
            f"(its tables have several owners) {run}")


def bring_forward(connection: Connection, url: str, *, readonly: bool,
                  create: bool = True, pgoptions: str = "") -> Migrated:
    """Check the database at ``connection`` and, when writable, make its first schema (only
    with ``create``: an upkeep command needs a store, and made an empty one where the URL
    missed the store's schema) or migrate it, in one transaction (see the module). Its
    messages name the database as :func:`where` shows ``url``, and the options they tell
    to write in it keep ``pgoptions``, the ``$PGOPTIONS`` the connection was made with."""
    shown = where(url)
    with connection.transaction():
        if not readonly:
            # Two first opens of one empty database: one creates, the other then sees it.
            connection.execute(f"SELECT pg_advisory_xact_lock({schema.WRITE_KEYS})")
            _wait_for_older_writers(connection)
        held_in, first, path, role, may_create = connection.execute(
            schema.PLACES).fetchone() or (None,) * 5
        path = str(path)
        if held_in is not None and held_in != first:
            # Wrong only where a table of harkback's name comes first: a role's own schema
            # ("$user" on the default path) mostly holds none, and the statements then
            # reach the store's tables. A migration would create its tables in that first
            # schema: see below.
            ahead = _shadowing(connection, held_in)
            if ahead is not None:
                raise SchemaProblem(_behind(url, held_in, ahead, path, pgoptions))
        if held_in is None:
            # Looked at first, read-only too: offering to create a store where a writable
            # open would refuse to sends the user round in a circle.
            others = first is not None and int(_scalar(connection, schema.OTHER_TABLES)) > 0
            elsewhere, barred = stores_elsewhere(connection)
            if elsewhere:
                # The URL left out the store's schema: "grant CREATE", "a schema of its
                # own" or "import into it" would send the user to make a second, empty
                # store. NoStore only where a writable open would make one here: a dry
                # run reads it as empty, and the sync would make it.
                problem = no_store_yet(url, elsewhere, barred=barred, role=str(role),
                                       pgoptions=pgoptions)
                if first is None or others or not may_create:
                    raise SchemaProblem(problem)
                if readonly or not create:
                    raise NoStoreYet(problem)
            if first is None:
                raise SchemaProblem(
                    f"{shown}: no schema on the search path (search_path={path}) exists "
                    "that this role may use; create it, or grant this role USAGE and "
                    "CREATE on it")
            if others:
                # AUTHORIZATION: made by another role (a superuser, as the role itself
                # often may not), a bare CREATE SCHEMA was that role's, where this one
                # may not create tables.
                raise SchemaProblem(
                    f"{shown} holds tables that are not harkback's; harkback writes only to "
                    "an empty database or its own, or to a schema of its own (as "
                    f"{identifier(str(role))} given CREATE on the database, or as a "
                    "superuser, run CREATE SCHEMA harkback AUTHORIZATION "
                    f"{identifier(str(role))}; then {reaching('harkback', url, pgoptions)})")
            if not may_create:
                # PostgreSQL 15 on: only the database's owner may create in public.
                raise SchemaProblem(
                    f"{shown} holds no harkback store, and {role} may not create tables in "
                    f"schema {first}: have the database's owner run GRANT CREATE ON SCHEMA "
                    f"{first} TO {role}, or create the store as a role that may")
            if readonly or not create:
                raise NoStoreYet(no_store_yet(url))
            for statement in (*schema.SCHEMA, *schema.FIRST_ROWS):
                connection.execute(sql.SQL(statement))
            before = 0
        else:
            before = int(_scalar(connection, schema.VERSION))
        found = max(before, FIRST_VERSION)
        if found > SCHEMA_VERSION:
            raise SchemaProblem(too_new(shown, found, SCHEMA_VERSION))
        steps = pending(MIGRATIONS, found)
        if steps and readonly:
            raise SchemaProblem(_asks_for_migrate(connection, shown, found))
        if steps and held_in is not None and held_in != first:
            raise SchemaProblem(
                f"{shown}: the store in schema {held_in} needs a migration, which would make "
                f"its tables in schema {first}, first on the search path "
                f"(search_path={path}); migrate it with {held_in} first "
                f"({reaching(held_in, url, pgoptions)})")
        owners = [o for o, _ in _owners_of(connection)] if steps and before else []
        try:
            for step in steps:
                for statement in step.statements:
                    connection.execute(sql.SQL(statement))
                if step.rewrite is not None and before:
                    step.rewrite(connection)  # a new database has no row to rewrite
        except psycopg.errors.InsufficientPrivilege as refused:
            # A team's member role, granted the rows but not the tables (a step's DDL).
            raise SchemaProblem(_owners(shown, found, owners, refused)) from refused
        if steps:
            connection.execute(schema.SET_VERSION, (SCHEMA_VERSION,))
    return Migrated(before, SCHEMA_VERSION,
                    tuple(step.about for step in steps) if before else (), latest=SCHEMA_VERSION)
