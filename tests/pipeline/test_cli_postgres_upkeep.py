"""``harkback sync`` and ``harkback redact`` against a real PostgreSQL server: a deleted
transcript's sessions leave the database, and a redacted secret leaves the tables' files."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import psycopg

from harkback.adapters.stores.postgres_migrations import SCHEMA_VERSION
from tests.pipeline.sync_home import CLAUDE_FILE, DONE_WITH_SKIPS, make_home
from tests.pipeline.test_cli_redact import AWS, _sessions
from tests.pipeline.test_import_cli import harkback
from tests.support.new_stores import store_locations, unique_name
from tests.support.postgres_server import PostgresServer

TABLES = ("messages", "sessions", "summary_cache")


url = store_locations("postgres")
"""The URL of a new, empty database on the run's server."""


def _search(url: str, query: str) -> list[str]:
    done = harkback("search", query, "--db", url, "--json", "--summarizer", "none")
    assert done.returncode == 0, done.stderr
    return [r["session_id"] for r in json.loads(done.stdout)["results"]]


def test_sync_removes_the_sessions_of_a_deleted_transcript(url: str, tmp_path: Path) -> None:
    """With --prune, a session and its sub-agent's go with their file; the others stay."""
    home = make_home(tmp_path / "home")
    env = {"HOME": str(home)}
    first = harkback("sync", "--db", url, "--json", env=env)
    assert first.returncode == DONE_WITH_SKIPS, first.stderr  # the fixtures hold a bad line
    assert _search(url, "refresh path untested") != []
    main_file = home / ".claude" / "projects" / CLAUDE_FILE
    main_file.unlink()
    shutil.rmtree(main_file.with_suffix(""))
    second = harkback("sync", "--db", url, "--json", "--prune", env=env)
    assert second.returncode == 0, second.stderr
    (claude,) = [s for s in json.loads(second.stdout)["sources"] if s["kind"] == "claude-code"]
    assert claude["sessions"]["removed"] == 2
    assert _search(url, "refresh path untested") == []
    assert _search(url, "NATS p99 latency") == ["5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a"]


def _table_bytes(server: PostgresServer, url: str) -> bytes:
    """The bytes of every file of the store's tables (with their TOAST tables and indexes),
    after a checkpoint wrote them out."""
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("CHECKPOINT")
        paths = [r[0] for r in connection.execute(
            "SELECT pg_relation_filepath(c.oid) FROM pg_class AS c "
            "WHERE c.oid = ANY(%s::regclass[]) OR c.oid IN (SELECT reltoastrelid FROM pg_class "
            "WHERE oid = ANY(%s::regclass[])) OR c.oid IN (SELECT indexrelid FROM pg_index "
            "WHERE indrelid = ANY(%s::regclass[]))", [list(TABLES)] * 3) if r[0]]
    data = server.folder / "data"
    return b"".join(path.read_bytes() for p in paths
                    for path in sorted(data.glob(f"{p}*")) if path.is_file())


def test_redact_takes_a_secret_out_of_the_tables_files(
        url: str, postgres_server: PostgresServer, tmp_path: Path) -> None:
    """After ``redact`` no search finds the secret and no table file holds it; a dry run
    writes nothing."""
    ingested = harkback("ingest", str(_sessions(tmp_path / "in.jsonl")), "--keep-secrets",
                        "--db", url)
    assert ingested.returncode == 0, ingested.stderr
    assert _search(url, AWS) == ["s1"]
    assert AWS.encode() in _table_bytes(postgres_server, url)
    dry = harkback("redact", "--dry-run", "--json", "--db", url)
    assert dry.returncode == 0, dry.stderr
    assert json.loads(dry.stdout)["secrets_redacted"] == {"aws-access-key": 2, "password": 1}
    assert _search(url, AWS) == ["s1"]
    done = harkback("redact", "--db", url)
    assert done.returncode == 0, done.stderr
    assert "3 secret(s) redacted" in done.stdout
    assert _search(url, AWS) == []
    assert AWS.encode() not in _table_bytes(postgres_server, url)


def test_stats_of_a_server_database(url: str, tmp_path: Path) -> None:
    """``harkback stats --db postgresql://…`` counts what the database holds."""
    ingested = harkback("ingest", str(_sessions(tmp_path / "in.jsonl")), "--db", url)
    assert ingested.returncode == 0, ingested.stderr
    done = harkback("stats", "--db", url, "--json")
    assert done.returncode == 0, done.stderr
    counted = json.loads(done.stdout)
    assert (counted["sessions"], counted["messages"], counted["schema_version"]) == (
        1, 2, SCHEMA_VERSION)
    assert counted["bytes_on_disk"] > 0


def test_optimize_by_a_role_that_may_not_vacuum_says_so(url: str, tmp_path: Path) -> None:
    """The server skips a table its role may not vacuum with a mere warning: ``optimize``
    as a role that may only read said "vacuumed and analysed" having done nothing. Now
    one line naming the tables and their owner, status 1; their owner optimizes."""
    ingested = harkback("ingest", str(_sessions(tmp_path / "in.jsonl")), "--db", url)
    assert ingested.returncode == 0, ingested.stderr
    reader = unique_name("reader")
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"CREATE ROLE {reader} LOGIN")
        connection.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {reader}")
    as_reader = url.replace("postgresql://harkback@", f"postgresql://{reader}@")
    done = harkback("optimize", "--db", as_reader)
    assert done.returncode == 1, done.stdout
    line = done.stderr.splitlines()[-1]  # after the line saying what it starts
    assert line.startswith("harkback: ")
    assert line.endswith(f"{reader} may not vacuum message_vectors (owner harkback), messages "
                         "(owner harkback), sessions (owner harkback); run optimize as their "
                         "owner (nothing was done)"), line
    assert "vacuumed" not in done.stdout
    owner = harkback("optimize", "--db", url)
    assert owner.returncode == 0, owner.stderr
    assert "vacuumed and analysed" in owner.stdout


def _may_write(url: str, role: str) -> str:
    """Let ``role`` read and write the tables of ``url`` (owning none); its URL."""
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "
                           f"public TO {role}")
        connection.execute(f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {role}")
    return url.replace("postgresql://harkback@", f"postgresql://{role}@")


def _secrets_and_a_writer(url: str, tmp_path: Path) -> tuple[str, str]:
    """Sessions holding secrets stored as they are, and a new role that may write the
    tables but not vacuum them: its name, and its URL."""
    ingested = harkback("ingest", str(_sessions(tmp_path / "in.jsonl")), "--keep-secrets",
                        "--db", url)
    assert ingested.returncode == 0, ingested.stderr
    writer = unique_name("writer")
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"CREATE ROLE {writer} LOGIN")
    return writer, _may_write(url, writer)


def test_redact_by_a_role_that_may_not_vacuum_says_what_copies_remain(
        url: str, postgres_server: PostgresServer, tmp_path: Path) -> None:
    """A role that may write the tables but not vacuum them: ``redact`` rewrote the rows,
    the server skipped the VACUUM FULL with a mere warning, and it said nothing while the
    old row versions still held the secret. It now names the tables, their owner and
    what stays in them, on stderr and in --json; their owner's redact then clears them."""
    writer, as_writer = _secrets_and_a_writer(url, tmp_path)
    done = harkback("redact", "--json", "--db", as_writer)
    assert done.returncode == 0, done.stderr
    assert _search(url, AWS) == []  # the rows are redacted
    assert AWS.encode() in _table_bytes(postgres_server, url)  # old versions are not
    note = (f"{writer} may not vacuum messages (owner harkback), sessions (owner harkback), "
            "summary_cache (owner harkback): the rows are redacted, but their old versions "
            "stay in those tables' files, secrets included, until their owner runs `harkback "
            "redact` on this store (its VACUUM FULL also ends this note)")
    assert done.stderr == f"harkback: note: {note}\n"
    payload = json.loads(done.stdout)
    assert payload["notes"] == [note]


def test_a_role_that_may_not_vacuum_is_told_each_run_until_the_owner_compacts(
        url: str, postgres_server: PostgresServer, tmp_path: Path) -> None:
    """The old row versions a writing role could not vacuum: its next redact, with nothing
    left to change, says so again (and its dry run that a compaction is pending) rather
    than nothing; the owner's redact, also finding nothing to change, compacts them, and
    the role is told nothing more."""
    writer, as_writer = _secrets_and_a_writer(url, tmp_path)
    assert harkback("redact", "--db", as_writer).returncode == 0
    again = harkback("redact", "--db", as_writer)
    dry = harkback("redact", "--dry-run", "--db", as_writer)
    assert f"{writer} may not vacuum messages" in again.stderr
    assert "a compaction is pending" in dry.stderr
    assert "until their owner runs `harkback redact` on this store" in dry.stderr
    owners = harkback("redact", "--db", url)
    assert owners.returncode == 0, owners.stderr
    assert AWS.encode() not in _table_bytes(postgres_server, url)
    after = harkback("redact", "--db", as_writer)
    assert (after.returncode, after.stderr) == (0, "")


def test_redact_rewrites_the_tables_only_after_a_change(url: str, tmp_path: Path) -> None:
    """``VACUUM FULL`` locks each table whole: a redact that found nothing to change leaves
    the tables' files as they were (a shared store's searchers are not stopped for nothing),
    one that changed rows rewrites them (a new file: the old row versions are gone)."""
    ingested = harkback("ingest", str(_sessions(tmp_path / "in.jsonl")), "--keep-secrets",
                        "--db", url)
    assert ingested.returncode == 0, ingested.stderr

    def files() -> list[int]:
        with psycopg.connect(url) as connection:
            row = connection.execute(
                "SELECT pg_relation_filenode('messages'), pg_relation_filenode('sessions'), "
                "pg_relation_filenode('summary_cache')").fetchone()
        assert row is not None
        return list(row)

    before = files()
    changed = harkback("redact", "--db", url)
    assert changed.returncode == 0, changed.stderr
    rewritten = files()
    assert all(old != new for old, new in zip(before, rewritten, strict=True))
    again = harkback("redact", "--db", url)  # nothing left to redact
    assert again.returncode == 0, again.stderr
    assert files() == rewritten


def test_a_new_server_store_is_not_said_to_be_migrated(url: str, tmp_path: Path) -> None:
    """The schema made in an empty database is the latest: no migration note."""
    done = harkback("ingest", str(_sessions(tmp_path / "in.jsonl")), "--db", url)
    assert (done.returncode, done.stderr) == (0, "")


def test_the_database_owner_may_vacuum_tables_it_does_not_own(
        postgres_server: PostgresServer, tmp_path: Path) -> None:
    """PostgreSQL lets a database's owner vacuum every table in it: ``redact`` by the
    owner of a database whose tables another role made said their old row versions stayed
    (and ``optimize`` refused), while the VACUUM FULL had in fact cleared them."""
    owner = unique_name("dbowner")
    name = unique_name("upkeep")
    with psycopg.connect(postgres_server.url(), autocommit=True) as connection:
        connection.execute(f"CREATE ROLE {owner} LOGIN")
        connection.execute(f"CREATE DATABASE {name} OWNER {owner}")
    url = postgres_server.url(name)  # the tables are made by harkback, a superuser
    ingested = harkback("ingest", str(_sessions(tmp_path / "in.jsonl")), "--keep-secrets",
                        "--db", url)
    assert ingested.returncode == 0, ingested.stderr
    as_owner = _may_write(url, owner)
    done = harkback("redact", "--json", "--db", as_owner)
    assert done.returncode == 0, done.stderr
    assert "may not vacuum" not in done.stderr
    assert json.loads(done.stdout).get("notes", []) == []
    assert AWS.encode() not in _table_bytes(postgres_server, url)  # the vacuum did clear them
    optimized = harkback("optimize", "--db", as_owner)
    assert optimized.returncode == 0, optimized.stderr
    assert "vacuumed and analysed" in optimized.stdout
