"""The CLI as a PostgreSQL role granted only SELECT on a store's tables (a reader): it
reads as any role does, and a command that would write says in one line what the role
lacks and what to do, exit 1, writing nothing."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest

from tests.pipeline.test_cli_postgres import _one_line_failure
from tests.pipeline.test_import_cli import harkback
from tests.support.new_stores import store_locations, unique_name
from tests.support.one_session import ingest_one

url = store_locations("postgres")
"""The URL of a new, empty database on the run's server."""

SECRET = "AKIAIOSFODNN7EXAMPLE"


def _counts(url: str) -> tuple[int, int]:
    with psycopg.connect(url) as connection:
        sessions = connection.execute("SELECT count(*) FROM sessions").fetchone()
        secret = connection.execute("SELECT count(*) FROM messages WHERE content LIKE %s",
                                    (f"%{SECRET}%",)).fetchone()
    assert sessions is not None and secret is not None
    return int(sessions[0]), int(secret[0])


@pytest.mark.parametrize("command", ["ingest", "redact"])
def test_a_reader_told_what_it_lacks_to_write(url: str, tmp_path: Path, command: str) -> None:
    """``ingest`` and ``redact`` as a reader ended at "permission denied for table
    import_sources" (messages): no word of which rights it takes, or of the owner."""
    source = ingest_one(url, tmp_path, "--keep-secrets", text=f"the key is {SECRET}")
    reader = unique_name("reader")
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"CREATE ROLE {reader} LOGIN")
        connection.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {reader}")
    as_reader = url.replace("postgresql://harkback@", f"postgresql://{reader}@")
    found = harkback("search", "key", "--db", as_reader, "--json")
    assert found.returncode == 0, found.stderr
    assert [r["session_id"] for r in json.loads(found.stdout)["results"]] == ["k"]
    args = ("ingest", str(tmp_path / "s.jsonl")) if command == "ingest" else ("redact",)
    source.write_text(source.read_text().replace('"k"', '"k2"'))
    done = harkback(*args, "--db", as_reader)
    _one_line_failure(done, "permission denied for table", "storing or rewriting sessions "
                      "takes INSERT, UPDATE and DELETE on them too")
    assert _counts(url) == (1, 1)


def test_a_role_that_may_not_read_is_told_it_takes_select(url: str, tmp_path: Path) -> None:
    """A role granted nothing on the store's tables running ``recent`` was told that a role
    granted only SELECT reads the store and to have the owner grant INSERT, UPDATE and
    DELETE: the rights a write takes, not the SELECT a read lacks."""
    ingest_one(url, tmp_path)
    stranger = unique_name("stranger")
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"CREATE ROLE {stranger} LOGIN")
    done = harkback("recent", "--db", url.replace("postgresql://harkback@",
                                                  f"postgresql://{stranger}@"))
    _one_line_failure(done, "permission denied for table", "reading the store takes SELECT "
                      "on its tables")
