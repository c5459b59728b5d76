"""No command prints the password of a PostgreSQL ``--db`` URL: the commands that name the
store (``config``, ``stats``, ``optimize``, ``migrate``, ``redact``) show it masked, as the
errors already do, on stdout, stderr and in ``--json`` (run through a subprocess against a
real server, whose trust login ignores the password)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from harkback.stages.shown_url import MASK
from tests.support.new_stores import new_database
from tests.support.postgres_server import USER, PostgresServer

SECRET = "s3cret-pw"


def harkback(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``harkback ARGS`` in a fresh interpreter."""
    return subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", *args],
                          capture_output=True, text=True, timeout=120, check=False, env=env)


def _store(postgres_server: PostgresServer, tmp_path: Path, secret: str) -> str:
    """A new harkback database on the server, named by a URL that carries ``secret``."""
    plain = new_database(postgres_server, "passwords")
    sessions = tmp_path / "in.jsonl"
    sessions.write_text(json.dumps({"id": "s1", "messages": [
        {"role": "user", "content": "the docker bridge drops packets"}]}) + "\n",
        encoding="utf-8")
    assert harkback("ingest", str(sessions), "--db", plain).returncode == 0
    return plain.replace(f"//{USER}@", f"//{USER}:{secret}@")


@pytest.fixture
def url(postgres_server: PostgresServer, tmp_path: Path) -> str:
    """A harkback database on the server, named by a URL that carries a password."""
    return _store(postgres_server, tmp_path, SECRET)


@pytest.mark.parametrize("command", [("stats",), ("optimize",), ("migrate",),
                                     ("redact", "--dry-run")])
def test_upkeep_commands_mask_the_password(url: str, command: tuple[str, ...]) -> None:
    """The store is named with the password masked, in the table and in --json."""
    for as_json in ((), ("--json",)):
        done = harkback(*command, "--db", url, *as_json)
        assert done.returncode == 0, done.stderr
        assert SECRET not in done.stdout + done.stderr
        assert f"{USER}:{MASK}@" in done.stdout + done.stderr


def test_config_masks_the_password_of_harkback_db(url: str) -> None:
    """``harkback config`` shows $HARKBACK_DB without its password, also as JSON."""
    env = {k: v for k, v in os.environ.items() if k != "HARKBACK_DB"}
    env["HARKBACK_DB"] = url
    table = harkback("config", env=env)
    payload = harkback("config", "--json", env=env)
    assert table.returncode == payload.returncode == 0, table.stderr
    assert SECRET not in table.stdout + payload.stdout
    assert json.loads(payload.stdout)["settings"]["db"]["value"] == url.replace(SECRET, MASK)


def test_an_error_masks_the_password_as_stats_does(postgres_server: PostgresServer) -> None:
    """One rule for every line naming the store: errors left the password out
    (``harkback@/db``) where stats, check and config showed ``harkback:********@/db``, so a
    user could not tell whether the URL gave one. Both ways of giving it (the user part,
    ``?password=``), on a line from the server (a database of another program's) and on one
    from the client (no server listening)."""
    foreign = new_database(postgres_server, "foreign")
    with psycopg.connect(foreign) as connection:
        connection.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY)")
    given = (foreign.replace(f"//{USER}@", f"//{USER}:{SECRET}@"),
             f"{foreign}&password={SECRET}",
             f"postgresql://{USER}:{SECRET}@127.0.0.1:1/h")
    for url in given:
        done = harkback("search", "docker", "--db", url)
        assert done.returncode == 1, done.stderr
        assert SECRET not in done.stdout + done.stderr
        assert f"postgresql://{USER}:{MASK}@" in done.stderr, done.stderr


def test_a_refused_optimize_does_not_print_the_password() -> None:
    """The line announcing the work comes before the connection fails: masked too."""
    done = harkback("optimize", "--db", f"postgresql://me:{SECRET}@127.0.0.1:1/h")
    assert done.returncode == 1
    assert SECRET not in done.stdout + done.stderr


@pytest.mark.parametrize("url", ["postgresql://me:pa ss@db.example/h",
                                 "postgresql://db.example/h?password=pa ss",
                                 "postgresql://me:pa ss@db.example/h?user=me@srv"])
def test_a_url_libpq_cannot_parse_keeps_its_password_out_of_the_error(url: str) -> None:
    """libpq quotes the piece it cannot read ('unexpected spaces found in "pa ss"'): the
    line said the password aloud, on stderr and in --json; and still did where an @ of
    the query (an Azure server's ``?user=me@srv``) was taken for the user part's end."""
    done = harkback("stats", "--db", url, "--json")
    assert done.returncode == 1
    assert "pa ss" not in done.stdout + done.stderr
    assert "unexpected spaces found in" in json.loads(done.stdout)["error"]


@pytest.mark.parametrize("secret", ["qa?zx#wv", "qa/zx-9", "12?zx-9"])
def test_a_password_holding_url_delimiters_is_never_printed(
        postgres_server: PostgresServer, tmp_path: Path, secret: str) -> None:
    """libpq reads ``me:a?b#c@host`` as the password ``a?b#c``; the masking cut the URL at
    its ``?`` and ``#`` first, so stats, config and search's `open:` line printed it whole.
    A ``/`` or ``@`` (a base64 password) makes libpq misread the URL (``me:pa/ss@...`` is
    host ``me``, port ``pa``), and the error line then printed the password: such a URL is
    now refused, saying how to write it."""
    url = _store(postgres_server, tmp_path, secret)
    env = {k: v for k, v in os.environ.items() if k != "HARKBACK_DB"}
    runs = [harkback(*command, "--db", url, env=env)
            for command in (("stats",), ("stats", "--json"), ("search", "docker"))]
    runs.append(harkback("config", env={**env, "HARKBACK_DB": url}))
    for done in runs:
        assert secret not in done.stdout + done.stderr, done.args
        assert "zx" not in done.stdout + done.stderr, done.args  # nor a piece of it
    if "/" in secret:
        assert runs[0].returncode == 1
        assert "write them percent-encoded, @ as %40 and / as %2F" in runs[0].stderr
    else:
        assert runs[0].returncode == 0, runs[0].stderr
        assert f"{USER}:{MASK}@" in runs[0].stdout and "open: harkback show" in runs[2].stdout


def test_a_password_holding_an_at_sign_is_refused_not_quoted() -> None:
    """libpq reads ``me:qa@zx-9@host`` as the password ``qa`` and the host ``zx-9@host``:
    the line said it could not resolve host 'zx-9@127.0.0.1', the rest of the password."""
    done = harkback("stats", "--db", "postgresql://me:qa@zx-9@127.0.0.1:1/h")
    assert done.returncode == 1
    assert "zx" not in done.stdout + done.stderr, done.stderr
    assert "write them percent-encoded, @ as %40" in done.stderr


def test_demo_masks_the_password(postgres_server: PostgresServer, url: str) -> None:
    """``harkback demo --db URL`` printed the URL as given, password and all: in "demo
    store: ..." on a new database, and in the line refusing one that holds other sessions."""
    fresh = new_database(postgres_server, "demo").replace(f"//{USER}@", f"//{USER}:{SECRET}@")
    made, refused = harkback("demo", "--db", fresh), harkback("demo", "--db", url)
    assert (made.returncode, refused.returncode) == (0, 2), made.stderr + refused.stderr
    for done in (made, refused):
        assert SECRET not in done.stdout + done.stderr
        assert f"{USER}:{MASK}@" in done.stdout + done.stderr
