"""A PostgreSQL store whose server's disk fills up mid-ingest: one line saying the disk is
full (the server answered; nothing is wrong with reaching it), the sessions committed
before it kept, and the store usable afterwards.

The disk is a small tmpfs, mounted for the test (root, as CI runs) and made a tablespace of
the throwaway server; the store's database lives there.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from tests.faults.test_full_disk import random_sessions
from tests.pipeline.test_import_cli import harkback
from tests.support.new_stores import unique_name
from tests.support.postgres_server import PostgresServer, _as_server_user


@pytest.fixture
def small_disk_url(postgres_server: PostgresServer) -> Iterator[str]:
    """The URL of a new database kept on a 6 MiB tmpfs."""
    folder = Path(tempfile.mkdtemp(prefix="harkback-small-disk-", dir="/tmp"))
    folder.chmod(0o755)
    _, uid, gid = _as_server_user()
    owner = f",uid={uid},gid={gid}" if uid is not None else ""
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size=6m,mode=0700{owner}",
                              "tmpfs", str(folder)], capture_output=True, check=False)
    if mounted.returncode != 0:
        folder.rmdir()
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    name = unique_name("small")
    admin = psycopg.connect(postgres_server.url(), autocommit=True)
    try:
        admin.execute(sql.SQL("CREATE TABLESPACE {} LOCATION {}").format(
            sql.Identifier(name), sql.Literal(str(folder))))
        admin.execute(sql.SQL("CREATE DATABASE {} TABLESPACE {}").format(
            sql.Identifier(name), sql.Identifier(name)))
        yield postgres_server.url(name)
    finally:
        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
            sql.Identifier(name)))
        admin.execute(sql.SQL("DROP TABLESPACE IF EXISTS {}").format(sql.Identifier(name)))
        admin.close()
        subprocess.run(["umount", str(folder)], check=True)
        shutil.rmtree(folder, ignore_errors=True)


def test_a_full_server_disk_is_named_as_full(small_disk_url: str, tmp_path: Path) -> None:
    """ingest past the disk's end: exit 1, one line naming the full disk (not "cannot
    reach the server"); the first ingest's sessions all there; stats still answers."""
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    random_sessions(first, "a", 20, words_per_message=200)
    random_sessions(second, "b", 3000, words_per_message=200)  # far more than the disk holds
    assert harkback("ingest", str(first), "--db", small_disk_url).returncode == 0
    done = harkback("ingest", str(second), "--db", small_disk_url, "--no-progress")
    assert done.returncode == 1, done.stdout
    [line] = done.stderr.splitlines()
    assert "the disk is full" in line and "cannot reach" not in line, line
    with psycopg.connect(small_disk_url) as connection:
        ids = {row[0] for row in connection.execute("SELECT id FROM sessions")}
    assert {f"a{i}" for i in range(20)} <= ids
    assert harkback("stats", "--db", small_disk_url).returncode == 0
