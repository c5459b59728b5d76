"""The CLI on a team's PostgreSQL database: harkback in a schema of its own beside the
application's tables (``?options=-csearch_path%3Dhb``), as an operator sets it up, and what
each wrong setting of the search path says. The application's tables are never read or
written."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import psycopg
import pytest
from psycopg import conninfo

from harkback.pipeline.sync_lock import PG_KEY
from harkback.stages.ingest_format import conversation_to_json
from tests.adapters.stores.test_postgres_migrations import _version_1
from tests.conftest import conversation
from tests.pipeline.test_cli import _write_sessions
from tests.pipeline.test_import_cli import harkback
from tests.support.new_stores import new_database, unique_name
from tests.support.postgres_server import PostgresServer

APP_ROWS = [("s1", "the application's own row")]


@pytest.fixture
def team(postgres_server: PostgresServer) -> str:
    """A team's database: the application's ``sessions`` table in ``public`` (a name
    harkback's tables use too), and an empty schema ``hb`` for harkback."""
    url = new_database(postgres_server, "team")
    with psycopg.connect(url) as connection:
        connection.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, note TEXT)")
        connection.cursor().executemany("INSERT INTO sessions VALUES (%s, %s)", APP_ROWS)
        connection.execute("CREATE SCHEMA hb")
    return url


def _in(url: str, path: str) -> str:
    """``url`` with the search path ``path``."""
    return f"{url}&options=-csearch_path%3D{path}"


def _app_rows(url: str) -> list[tuple[str, str]]:
    with psycopg.connect(url) as connection:
        return [(str(a), str(b)) for a, b in connection.execute(
            "SELECT id, note FROM public.sessions ORDER BY id")]


def _line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("harkback: "), lines
    return lines[0]


def _member(url: str, *grants: str) -> tuple[str, str]:
    """A new login role with a schema of its own name (first on its default search path
    ``"$user", public``) and these ``grants`` (``{role}`` stands for it): its name and URL."""
    role = unique_name("member")
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"CREATE ROLE {role} LOGIN")
        connection.execute(f"CREATE SCHEMA {role} AUTHORIZATION {role}")
        for grant in grants:
            connection.execute(grant.format(role=role))
    return role, url.replace("postgresql://harkback@", f"postgresql://{role}@")


def test_a_store_behind_another_schema_on_the_search_path_is_refused(
        team: str, tmp_path: Path) -> None:
    """With ``search_path=public,hb`` every statement named ``public.sessions``, the
    application's table: ``show`` read it (failing on its columns) and an ingest wrote
    there. Each command now refuses in one line, naming the order to give."""
    source = tmp_path / "sessions.jsonl"
    _write_sessions(source)
    assert harkback("ingest", str(source), "--db", _in(team, "hb")).returncode == 0
    behind = _in(team, "public,hb")
    for command in (("show", "s1"), ("search", "docker"), ("stats",),
                    ("ingest", str(source))):
        done = harkback(*command, "--db", behind)
        assert done.returncode == 1, (command, done.stdout, done.stderr)
        line = _line(done.stderr)
        assert "harkback's tables are in schema hb, behind schema public" in line, line
        assert "search_path%3Dhb" in line, line
    assert _app_rows(team) == APP_ROWS
    shown = harkback("show", "docker-fix", "--db", _in(team, "hb"))
    assert shown.returncode == 0, shown.stderr


def test_the_migrate_command_a_message_gives_reaches_the_store_of_the_schema(
        team: str, tmp_path: Path) -> None:
    """The URL a message named lost its options, so the `harkback migrate --db ...` it
    asked for went to the database's public schema (the application's tables) and was
    refused; pasted as given, it now migrates the store it was about."""
    source = tmp_path / "sessions.jsonl"
    _write_sessions(source)
    store = _in(team, "hb")
    assert harkback("ingest", str(source), "--db", store).returncode == 0
    with psycopg.connect(team) as connection:
        connection.execute("UPDATE hb.harkback_schema SET version = version - 1")
    done = harkback("search", "docker", "--db", store)
    asked = re.search(r"run `harkback migrate --db (.+?)` to bring it", _line(done.stderr))
    assert asked is not None, done.stderr
    migrated = harkback("migrate", "--db", *shlex.split(asked.group(1)))
    assert migrated.returncode == 0, migrated.stderr
    assert harkback("search", "docker", "--db", store).returncode == 0
    assert _app_rows(team) == APP_ROWS


def test_a_search_path_of_no_usable_schema_is_named(team: str, tmp_path: Path) -> None:
    """A schema that is not there (or this role may not use) read "no schema has been
    selected to create in", which names neither the search path nor what to do."""
    source = tmp_path / "sessions.jsonl"
    _write_sessions(source)
    done = harkback("ingest", str(source), "--db", _in(team, "nosuch"))
    assert done.returncode == 1
    assert "no schema on the search path (search_path=nosuch) exists" in _line(done.stderr)


def test_a_database_of_other_tables_is_told_how_to_give_harkback_a_schema(
        team: str, tmp_path: Path) -> None:
    """The refusal names the way to share the database; following it stores the sessions
    in that schema and leaves the application's tables as they were."""
    source = tmp_path / "sessions.jsonl"
    _write_sessions(source)
    done = harkback("ingest", str(source), "--db", team)
    line = _line(done.stderr)
    assert done.returncode == 1 and "holds tables that are not harkback's" in line
    # Written as told: the URL has a query (?host=...), and the option comes after "&".
    statement, parameter = re.findall(
        r"run (CREATE SCHEMA \w+ AUTHORIZATION [^;]+); then (\S+) in the URL\)", line)[0]
    with psycopg.connect(team) as connection:
        connection.execute(statement)
    again = harkback("ingest", str(source), "--db", team + parameter)
    assert again.returncode == 0, again.stderr
    assert _app_rows(team) == APP_ROWS


def test_a_role_that_may_not_create_the_store_is_told_what_to_ask_for(
        postgres_server: PostgresServer, tmp_path: Path) -> None:
    """On PostgreSQL 15 and later only a database's owner may create tables in ``public``:
    ``search`` offered to create the store with `harkback ingest`, which then failed with
    "permission denied for schema public". Both now name the grant; given, it works."""
    url = new_database(postgres_server, "team")
    role = unique_name("member")
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"CREATE ROLE {role} LOGIN")
        connection.execute(f"REVOKE CREATE ON SCHEMA public FROM PUBLIC, {role}")
    member = url.replace("postgresql://harkback@", f"postgresql://{role}@")
    source = tmp_path / "sessions.jsonl"
    _write_sessions(source)
    lines = [_line(harkback(*command, "--db", member).stderr)
             for command in (("search", "docker"), ("ingest", str(source)))]
    grant = f"GRANT CREATE ON SCHEMA public TO {role}"
    assert all(f"{role} may not create tables in schema public" in line and grant in line
               for line in lines), lines
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(grant)
    done = harkback("ingest", str(source), "--db", member)
    assert done.returncode == 0, done.stderr


def test_a_role_with_a_schema_of_its_own_reads_the_teams_store_in_public(
        postgres_server: PostgresServer, tmp_path: Path) -> None:
    """PostgreSQL's secure pattern gives each role a schema of its own name, first on the
    default search path ``"$user", public``: a member reading the team's store in
    ``public`` was refused as "behind schema member", a schema holding none of harkback's
    tables. Reads go on; a table of harkback's name in that schema still refuses them."""
    url = new_database(postgres_server, "team")
    source = tmp_path / "sessions.jsonl"
    _write_sessions(source)
    assert harkback("ingest", str(source), "--db", url).returncode == 0
    role, member = _member(url, "GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
    found = harkback("search", "docker", "--db", member)
    assert found.returncode == 0 and "docker-fix" in found.stdout, found.stderr
    for command in (("show", "docker-fix"), ("stats",), ("recent",)):
        done = harkback(*command, "--db", member)
        assert done.returncode == 0, (command, done.stderr)
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"CREATE TABLE {role}.sessions (id TEXT PRIMARY KEY)")
    shadowed = harkback("search", "docker", "--db", member)
    assert shadowed.returncode == 1
    assert (f"harkback's tables are in schema public, behind schema {role}"
            in _line(shadowed.stderr))


def test_a_role_with_a_schema_of_its_own_writes_to_the_teams_store_in_public(
        postgres_server: PostgresServer, tmp_path: Path) -> None:
    """A member granted writes on the team's store in ``public``, whose own schema leads
    the default search path and holds none of harkback's tables, ingests into it (it was
    refused as "behind schema member"), and takes the same sync lock as the owner: the
    lock is keyed by the store's schema, not the path's first."""
    url = new_database(postgres_server, "team")
    source = tmp_path / "sessions.jsonl"
    _write_sessions(source)
    assert harkback("ingest", str(source), "--db", url).returncode == 0
    role, member = _member(
        url, "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}",
        "GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {role}")
    more = tmp_path / "more.jsonl"
    note = conversation("member-note", ("user", "the quokka deployment was rolled back"))
    more.write_text(json.dumps(conversation_to_json(note)) + "\n", encoding="utf-8")
    added = harkback("ingest", str(more), "--db", member)
    assert added.returncode == 0, added.stderr
    found = harkback("search", "quokka", "--db", url)
    assert found.returncode == 0 and "member-note" in found.stdout, found.stderr
    with psycopg.connect(url) as owner, psycopg.connect(member) as other:
        assert (owner.execute(f"SELECT {PG_KEY}").fetchone()
                == other.execute(f"SELECT {PG_KEY}").fetchone())
        assert other.execute("SELECT current_schema()").fetchone() == (role,)


def test_a_role_with_a_schema_of_its_own_does_not_migrate_the_teams_store_into_it(
        postgres_server: PostgresServer, tmp_path: Path) -> None:
    """A migration makes its tables in the search path's first schema: a member whose own
    schema leads the path is refused it, told how to run it, and nothing is made there."""
    url = new_database(postgres_server, "team")
    _version_1(url)
    role, member = _member(url, "GRANT ALL ON ALL TABLES IN SCHEMA public TO {role}",
                           "GRANT CREATE ON SCHEMA public TO {role}")
    source = tmp_path / "sessions.jsonl"
    _write_sessions(source)
    refused = harkback("ingest", str(source), "--db", member)
    assert refused.returncode == 1
    assert (f"needs a migration, which would make its tables in schema {role}"
            in _line(refused.stderr))
    with psycopg.connect(url) as connection:
        made = connection.execute("SELECT count(*) FROM pg_catalog.pg_class AS c JOIN "
                                  "pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace "
                                  "WHERE n.nspname = %s", (role,)).fetchone()
        version = connection.execute("SELECT version FROM public.harkback_schema").fetchone()
    assert made == (0,) and version == (1,)


def test_the_option_reaching_the_schema_keeps_pgoptions(team: str, tmp_path: Path) -> None:
    """A URL missing the store's schema, run with ``$PGOPTIONS`` set (a setting of the
    user's, and a search path that misses it): the line said to add
    ``&options=-csearch_path%3Dhb``, and libpq reads no ``$PGOPTIONS`` once the URL has
    ``options=``, so the user's settings went with it. The option told keeps them, the
    search path it gives last; written into the URL as told, it reads the store."""
    source = tmp_path / "sessions.jsonl"
    _write_sessions(source)
    assert harkback("ingest", str(source), "--db", _in(team, "hb")).returncode == 0
    env = {"PGOPTIONS": "-cwork_mem=5MB -c search_path=public"}
    told = re.search(r"\((\S+) in the URL reaches it\)",
                     _line(harkback("recent", "--db", team, env=env).stderr))
    assert told is not None
    reaching = team + told.group(1)
    assert conninfo.conninfo_to_dict(reaching)["options"] == "-cwork_mem=5MB -csearch_path=hb"
    done = harkback("recent", "--db", reaching, "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert {r["session_id"] for r in json.loads(done.stdout)["results"]} == {"cors",
                                                                             "docker-fix"}
