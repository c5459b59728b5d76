"""The CLI as a role whose ``statement_timeout`` the server enforces (a web application's
role, often tens of milliseconds): the one line names the URL's ``options`` that lift it
for harkback alone, written where they go, and that URL, as the line says, works."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest

from tests.pipeline.test_cli_postgres import _one_line_failure
from tests.pipeline.test_import_cli import harkback
from tests.support.new_stores import store_locations, unique_name
from tests.support.one_session import ingest_one

url = store_locations("postgres")
"""The URL of a new, empty database on the run's server."""


def _timed_role(url: str, tmp_path: Path) -> str:
    """A store at ``url`` holding session ``k``, and a new role granted its rows whose
    statements the server cancels after 200 ms; that role's URL."""
    ingest_one(url, tmp_path)
    role = unique_name("timed")
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(f"CREATE ROLE {role} LOGIN")
        connection.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
        connection.execute(f"ALTER ROLE {role} SET statement_timeout = '200ms'")
    return url.replace("postgresql://harkback@", f"postgresql://{role}@")


@pytest.mark.parametrize("query", [True, False], ids=["with-query", "no-query"])
@pytest.mark.parametrize("pgoptions", ["", "-cwork_mem=5MB", "-c statement_timeout=150"],
                         ids=["", "pgoptions", "pgoptions-timeout"])
def test_the_hinted_options_appended_as_written_lift_the_timeout(
        url: str, tmp_path: Path, query: bool, pgoptions: str) -> None:
    """A statement the role's timeout cancels (it waits on a lock held here) is named with
    the options that lift it, "options=... in the URL": appended to a URL that has a query
    (a socket's ``?host=``, ``?sslmode=require``) that made ``?host=/s/options=...``, which
    libpq reads as the host's value, and the user had to know to write ``&``. The line
    gives the separator (``&options=``, or ``?options=`` for a URL with no query, its host
    in ``$PGHOST``), and the URL with it appended reads the store, ``$PGOPTIONS`` kept.
    ``$PGOPTIONS`` is named as where the timeout may be set only when it sets one (a
    work_mem there was named so too)."""
    timed = _timed_role(url, tmp_path)
    env = {"PGOPTIONS": pgoptions}
    if not query:  # the socket's folder from the environment: a URL with no query
        parts = urlsplit(timed)
        env["PGHOST"] = parts.query.removeprefix("host=")
        timed = parts._replace(query="").geturl()
    with psycopg.connect(url) as holder:
        holder.execute("LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE")
        done = harkback("recent", "--db", timed, env=env)
    _one_line_failure(done, "cancelled a statement", "statement timeout")
    assert ("or in $PGOPTIONS" in done.stderr) == ("timeout" in pgoptions), done.stderr
    hinted = re.search(r"; (\S+) in the URL lifts it for harkback alone", done.stderr)
    assert hinted is not None, done.stderr
    lifted = harkback("recent", "--db", timed + hinted.group(1), "--json", env=env)
    assert lifted.returncode == 0, (hinted.group(1), lifted.stderr)
    assert [s["session_id"] for s in json.loads(lifted.stdout)["results"]] == ["k"]
