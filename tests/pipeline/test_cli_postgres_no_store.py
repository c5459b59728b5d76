"""The CLI on a PostgreSQL database that holds no harkback store (an empty database, or
one whose store is in a schema the URL does not name): commands that need a store say
so in one line and make none; ``sync --dry-run`` counts what a sync would add, writing
nothing, as it does for a SQLite file not made yet."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import quote

import psycopg
import psycopg.sql
import pytest

from tests.pipeline.sync_home import DONE_WITH_SKIPS
from tests.pipeline.test_cli_postgres import _one_line_failure, _tables
from tests.pipeline.test_import_cli import FIXTURES, harkback
from tests.support.new_stores import store_locations, unique_name
from tests.support.one_session import ingest_one

url = store_locations("postgres")
"""The URL of a new, empty database on the run's server."""

SECRET = "AKIAIOSFODNN7EXAMPLE"
NO_ENDPOINT = "openai:x@http://127.0.0.1:9/v1"
"""An embedder no call reaches: a command that needs a store stops before asking it."""


def _schemas_tables(url: str) -> dict[str, int]:
    with psycopg.connect(url) as connection:
        return {str(schema): int(count) for schema, count in connection.execute(
            "SELECT schemaname, count(*) FROM pg_tables WHERE schemaname NOT IN "
            "('pg_catalog', 'information_schema') GROUP BY schemaname")}


@pytest.mark.parametrize("command", [("redact",), ("optimize",),
                                     ("embed", "--embedder", NO_ENDPOINT), ("recent",),
                                     ("check",)])
def test_upkeep_on_a_url_missing_the_stores_schema_makes_no_store(
        url: str, tmp_path: Path, command: tuple[str, ...]) -> None:
    """The team's store is in schema hb; the URL left out its search path. ``redact`` made
    an empty store in ``public`` and said "no secrets found" (exit 0) while hb kept the
    key; ``optimize`` and ``embed`` said they had vacuumed and embedded it; ``recent``
    offered to make a store; ``check`` called the store damaged. Now each says
    the search path holds no store and names the schema that does, writing nothing
    ("import sessions into it first" would have made a second store)."""
    with psycopg.connect(url) as connection:
        connection.execute("CREATE SCHEMA hb")
    in_hb = f"{url}&options=-csearch_path%3Dhb"
    ingest_one(in_hb, tmp_path, "--keep-secrets", text=f"the key is {SECRET}")
    done = harkback(*command, "--db", url)
    # The run's URLs have a query (?host=...): the option is added with "&".
    _one_line_failure(done, "holds no harkback store on its search path; schema hb holds "
                      "one (&options=-csearch_path%3Dhb in the URL reaches it)")
    assert _schemas_tables(url) == {"hb": 10}
    assert done.stdout == ""


@pytest.mark.parametrize("command", [("recent",), ("redact",), ("optimize",),
                                     ("embed", "--embedder", NO_ENDPOINT), ("check",)])
def test_a_command_needing_a_store_names_how_to_make_it(
        url: str, command: tuple[str, ...]) -> None:
    """On an empty database ``recent`` said `harkback ingest --db URL`, a usage error
    (ingest reads a FILE), and never named ``sync``, which imports the agents' histories;
    ``redact``, ``optimize`` and ``embed`` made an empty store and said they had done
    their work on it; ``check`` called the database damaged, to be given another URL."""
    done = harkback(*command, "--db", url)
    _one_line_failure(done, "holds no harkback store; import sessions into it first: "
                      "harkback sync --db URL", "harkback ingest FILE --db URL")
    assert _tables(url) == []


def test_sync_dry_run_on_an_empty_database_counts_what_a_sync_adds(
        url: str, tmp_path: Path) -> None:
    """A dry run before the first sync was refused ("holds no harkback store; create it
    first"); on a SQLite file not made yet it counts every session as new. Now the empty
    database reads as an empty store, and still nothing is written."""
    home = {"HOME": str(tmp_path / "home")}
    projects = str(FIXTURES / "claude-code" / "projects")
    done = harkback("sync", "--dry-run", "--json", "--claude-code", projects, "--db", url,
                    env=home)
    assert done.returncode == DONE_WITH_SKIPS, done.stderr  # a fixture's damaged line
    (claude,) = [s for s in json.loads(done.stdout)["sources"] if s["kind"] == "claude-code"]
    assert _tables(url) == []
    synced = harkback("sync", "--json", "--claude-code", projects, "--db", url, env=home)
    assert synced.returncode == DONE_WITH_SKIPS, synced.stderr
    (stored,) = [s for s in json.loads(synced.stdout)["sources"] if s["kind"] == "claude-code"]
    assert claude["sessions"]["new"] == stored["sessions"]["new"] > 0


@pytest.mark.parametrize("name", ["My Store", "back\\slash"])
def test_the_option_named_for_an_odd_schema_reaches_its_store(url: str, tmp_path: Path,
                                                              name: str) -> None:
    """The option named for a schema with a space in its name was refused by the server
    (invalid value for parameter "search_path": ""My"): it splits options at whitespace
    unless a backslash escapes it. Now the option named, put in the URL, reaches the store
    (written as told: "&options=" after the URL's own query, where "?options=" was told)."""
    with psycopg.connect(url) as connection:
        connection.execute(psycopg.sql.SQL("CREATE SCHEMA {}").format(
            psycopg.sql.Identifier(name)))
    quoted = '"' + name.replace("\\", "\\\\").replace(" ", "\\ ") + '"'
    ingest_one(f"{url}&options=-csearch_path%3D" + quote(quoted, safe=""), tmp_path)
    done = harkback("recent", "--db", url)
    assert done.returncode == 1, done.stderr
    option = re.search(r"\((\S+) in the URL reaches it", done.stderr)
    assert option is not None, done.stderr
    listed = harkback("recent", "--json", "--db", url + option.group(1))
    assert listed.returncode == 0, listed.stderr
    assert [s["session_id"] for s in json.loads(listed.stdout)["results"]] == ["k"]


def test_check_on_another_applications_database_says_what_every_command_says(
        url: str) -> None:
    """``check`` on a database holding another application's tables told the user to
    import sessions into it (harkback sync --db URL), which refuses such a database; now
    it says what ``recent`` says: the tables are not harkback's, and where a store may go."""
    with psycopg.connect(url) as connection:
        connection.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY)")
    checked = harkback("check", "--db", url)
    _one_line_failure(checked, "holds tables that are not harkback's",
                      "CREATE SCHEMA harkback")
    listed = harkback("recent", "--db", url)
    assert listed.returncode == 1
    assert listed.stderr.replace("session store unavailable: ", "") == checked.stderr
    assert _schemas_tables(url) == {"public": 1}


def _store_in_hb(url: str, tmp_path: Path) -> None:
    with psycopg.connect(url) as connection:
        connection.execute("CREATE SCHEMA hb")
    ingest_one(f"{url}&options=-csearch_path%3Dhb", tmp_path)


def test_a_teams_url_missing_the_stores_schema_is_told_where_it_is(
        url: str, tmp_path: Path) -> None:
    """The team's application has its tables in public, harkback's store is in hb (as the
    README sets a shared database up), and the URL left out hb: every command said the
    tables are not harkback's and to CREATE SCHEMA harkback, a second, empty store. Now
    each names hb and the option that reaches it."""
    _store_in_hb(url, tmp_path)
    with psycopg.connect(url) as connection:
        connection.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY)")
    for command in (("recent",), ("check",), ("sync", "--dry-run", "--claude-code",
                                               str(FIXTURES / "claude-code" / "projects"))):
        done = harkback(*command, "--db", url, env={"HOME": str(tmp_path / "home")})
        _one_line_failure(done, "schema hb holds one (&options=-csearch_path%3Dhb in the "
                          "URL reaches it)")
    assert _schemas_tables(url) == {"hb": 10, "public": 1}


def test_a_role_that_may_not_use_the_stores_schema_is_told_the_grant(
        url: str, tmp_path: Path) -> None:
    """A role without USAGE on the store's schema, its URL naming that schema, was told to
    put ?options=-csearch_path%3Dhb in the URL, which it had; now it is told the grant."""
    _store_in_hb(url, tmp_path)
    outsider = unique_name("outsider")
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"CREATE ROLE {outsider} LOGIN")
    as_outsider = url.replace("postgresql://harkback@", f"postgresql://{outsider}@")
    done = harkback("recent", "--db", f"{as_outsider}&options=-csearch_path%3Dhb,public")
    _one_line_failure(done, f"schema hb holds one, which {outsider} may not use (its owner "
                      f"may GRANT USAGE ON SCHEMA hb TO {outsider}")


def test_a_dry_run_is_refused_where_the_sync_is(url: str, tmp_path: Path) -> None:
    """A role that may not create in public, its URL missing the store's schema: the dry
    run counted every session as new, and the sync it previewed was refused. Now both
    are refused in the same words, naming the schema that holds the store."""
    _store_in_hb(url, tmp_path)
    member = unique_name("member")
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"CREATE ROLE {member} LOGIN")
        connection.execute(f"REVOKE CREATE ON SCHEMA public FROM PUBLIC, {member}")
        connection.execute(f"GRANT USAGE ON SCHEMA hb TO {member}")
    as_member = url.replace("postgresql://harkback@", f"postgresql://{member}@")
    sync = ("sync", "--claude-code", str(FIXTURES / "claude-code" / "projects"), "--db",
            as_member)
    home = {"HOME": str(tmp_path / "home")}
    previewed, synced = harkback(*sync, "--dry-run", env=home), harkback(*sync, env=home)
    assert synced.returncode == previewed.returncode == 1, previewed.stdout
    assert "schema hb holds one" in previewed.stderr, previewed.stderr
    assert previewed.stderr.splitlines()[-1] == synced.stderr.splitlines()[-1]


@pytest.mark.parametrize("runner", ["the role", "a superuser"])
def test_the_schema_a_database_of_other_tables_is_told_to_make_works_as_pasted(
        url: str, tmp_path: Path, runner: str) -> None:
    """A team's database, the application's tables in public, harkback connecting as a
    role of its own (no superuser, its name quoted in SQL). The line told to run CREATE
    SCHEMA harkback: run by a superuser (the role itself often may not create a schema),
    the schema was the superuser's, and every harkback command then said the role may not
    create tables in it. Now the statement names the role (AUTHORIZATION); pasted as it
    is, by the role given CREATE on the database or by a superuser, and the option added
    to the URL as told, an ingest stores there and the application's tables are left as
    they were."""
    role = unique_name("Team-App")
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY)")
        admin.execute(psycopg.sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER").format(
            psycopg.sql.Identifier(role)))
        if runner == "the role":
            admin.execute(psycopg.sql.SQL("GRANT CREATE ON DATABASE {} TO {}").format(
                psycopg.sql.Identifier(admin.info.dbname), psycopg.sql.Identifier(role)))
    as_role = url.replace("postgresql://harkback@", f"postgresql://{role}@")
    source = tmp_path / "s.jsonl"
    source.write_text(json.dumps({"id": "k", "messages": [
        {"role": "user", "content": "the okapi relay"}]}) + "\n")
    refused = harkback("ingest", str(source), "--db", as_role)
    # Read as the line words it before and after (", then" / "; then"): what is run is
    # the statement as told.
    told = re.search(r"(CREATE SCHEMA harkback[^;,]*)[;,] then (\S+) in the URL", refused.stderr)
    assert refused.returncode == 1 and told is not None, refused.stderr
    with psycopg.connect(as_role if runner == "the role" else url, autocommit=True) as pasted:
        pasted.execute(psycopg.sql.SQL(told.group(1)))
    stored = harkback("ingest", str(source), "--db", as_role + told.group(2))
    assert stored.returncode == 0, stored.stderr
    found = harkback("search", "okapi", "--json", "--db", as_role + told.group(2))
    assert [r["session_id"] for r in json.loads(found.stdout)["results"]] == ["k"]
    assert _schemas_tables(url) == {"harkback": 10, "public": 1}


def test_the_grant_told_to_a_role_needing_quotes_works_as_pasted(
        url: str, tmp_path: Path) -> None:
    """The grant for a role without USAGE on the store's schema named the role as it is
    (GRANT USAGE ON SCHEMA hb TO Team-App_N), a syntax error where pasted; now it is
    quoted as SQL needs, and the grant pasted gives the role the schema."""
    _store_in_hb(url, tmp_path)
    role = unique_name("Team-App")
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(psycopg.sql.SQL("CREATE ROLE {} LOGIN").format(
            psycopg.sql.Identifier(role)))
    as_role = url.replace("postgresql://harkback@", f"postgresql://{quote(role)}@")
    done = harkback("recent", "--db", f"{as_role}&options=-csearch_path%3Dhb,public")
    told = re.search(r"may (GRANT USAGE ON SCHEMA hb TO [^;]+);", done.stderr)
    assert done.returncode == 1 and told is not None, done.stderr
    with psycopg.connect(url, autocommit=True) as owner:
        owner.execute(psycopg.sql.SQL(told.group(1)))
        assert owner.execute("SELECT has_schema_privilege(%s, 'hb', 'USAGE')",
                             (role,)).fetchone() == (True,)
