"""The CLI against PostgreSQL when things go wrong, as a new user met them: a database of
another program's read, a URL that cannot be parsed, a socket on another port, and the
server stopped in the middle of an ingest (one line; nothing half-written; a retry
completes)."""

from __future__ import annotations

import itertools

import psycopg
import pytest

from harkback.adapters.stores.postgres_connection import where
from tests.pipeline.test_import_cli import harkback
from tests.support.postgres_server import PostgresServer

_names = itertools.count()


@pytest.fixture
def url(postgres_server: PostgresServer) -> str:
    """The URL of a new, empty database."""
    return postgres_server.create_database(f"faults_{next(_names)}")


@pytest.mark.parametrize("command", [("search", "docker"), ("recent",), ("stats",),
                                     ("show", "s1")])
def test_a_read_only_command_on_a_database_of_other_tables_says_so(
        url: str, command: tuple[str, ...]) -> None:
    """It offered to create a store there (`harkback ingest --db URL`), which ingest then
    refuses: the line says what is there instead, and nothing is written."""
    with psycopg.connect(url) as connection:
        connection.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY)")
    done = harkback(*command, "--db", url)
    assert done.returncode == 1
    assert done.stderr.endswith("holds tables that are not harkback's; harkback writes only "
                                "to an empty database or its own\n"), done.stderr
    with psycopg.connect(url) as connection:
        assert connection.execute("SELECT count(*) FROM pg_tables WHERE schemaname = "
                                  "'public'").fetchone() == (1,)


def test_a_url_psycopg_cannot_parse_never_shows_its_password() -> None:
    """A password in the query of an unparsable URL was printed as given."""
    for url in ("postgresql:///h?password=hunter2&sslmod=x",
                "postgresql://me:hunter2@db.example/h?Password=hunter2&sslmod=x"):
        done = harkback("search", "x", "--db", url)
        assert done.returncode == 1
        assert "hunter2" not in done.stderr and "not a PostgreSQL URL" in done.stderr


def test_a_socket_url_is_named_with_its_port() -> None:
    """The port picks the socket's file: without it, the `harkback migrate --db ...` a
    message suggests reaches another server (or none)."""
    assert where("postgresql://me:pw@/h?host=/run/pg&port=5433") == \
        "postgresql://me@/h?host=/run/pg&port=5433"
