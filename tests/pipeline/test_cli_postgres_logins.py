"""The CLI's one line for a connection a PostgreSQL server refused, or that found no server,
names the next step after the server's reason: where the password goes, which role or
database to name, that no server listens there. The server here asks for passwords
(scram-sha-256) from every role but the tests' own (and ghost, which it does not have)."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import conninfo

from tests.pipeline.test_cli_postgres import _one_line_failure
from tests.pipeline.test_import_cli import harkback
from tests.support.postgres_server import USER, PostgresServer, start_server


def _asks_for_passwords(folder: Path) -> tuple[str, ...]:
    hba = folder / "hba.conf"
    # A role not there asks for a password too (the server does not say which roles it
    # has), unless let in on trust: as ghost is, so its refusal says it does not exist.
    hba.write_text(f"local all {USER} trust\nlocal all ghost trust\n"
                   "local all all scram-sha-256\n", encoding="utf-8")
    return ("-c", f"hba_file={hba}")


@pytest.fixture(scope="module")
def server() -> Iterator[PostgresServer]:
    """A server asking role ``me`` (password ``right``) for its password."""
    started = start_server(settings=_asks_for_passwords)
    try:
        with psycopg.connect(started.url(), autocommit=True) as connection:
            connection.execute("CREATE ROLE me LOGIN PASSWORD 'right'")
        yield started
    finally:
        started.stop()
        shutil.rmtree(started.folder, ignore_errors=True)


@pytest.mark.parametrize(("login", "env", "step"), [
    ("me:wrong@", {}, "(check the user and password the URL gives, a password's @ and / "
                      "percent-encoded as %40 and %2F, or those in $PGPASSWORD or ~/.pgpass)"),
    ("me@", {"PGPASSWORD": "wrong"}, "or those in $PGPASSWORD or ~/.pgpass)"),
    ("me@", {"PGPASSFILE": "/nonexistent"}, "(the server asks for a password: give it in "
                                            "the URL, as postgresql://USER:PASSWORD@HOST/"
                                            "DATABASE, in $PGPASSWORD or in ~/.pgpass)"),
    ("ghost@", {}, "(name a role the server has in the URL, as postgresql://ROLE@HOST/"
                   "DATABASE, or have its administrator create it)"),
])
def test_a_refused_login_names_where_the_login_is_given(
        server: PostgresServer, login: str, env: dict[str, str], step: str) -> None:
    """A wrong or missing password, an unknown role: the line ended at the server's reason
    ("password authentication failed for user "me"", "fe_sendauth: no password
    supplied"), naming no place a password or role is given."""
    url = server.url().replace(f"{USER}@", login)
    _one_line_failure(harkback("recent", "--db", url, env=env), " refused the connection: ",
                      step)


@pytest.mark.parametrize(("name", "written"), [("team%20db", '"team db"'),
                                              ("a%22b", '"a""b"'), ("a%22%22b", '"a""""b"')])
def test_a_missing_database_is_named_to_create(server: PostgresServer, name: str,
                                               written: str) -> None:
    """``database "team db" does not exist``: which statement makes it, quoted as SQL. The
    server quotes the name as it is, its own quotes not doubled: a name holding one was
    given no step, and ``a""b`` was told ``CREATE DATABASE "a""b"``, which makes ``a"b``."""
    _one_line_failure(harkback("recent", "--db", server.url(name)), " does not exist "
                      f"(have it created, CREATE DATABASE {written} by a role that may, or "
                      "name another database in the URL)")


def test_no_server_listening_says_start_it_or_correct_the_url(
        server: PostgresServer, tmp_path: Path) -> None:
    """A port or socket folder where no server listens: "Connection refused" or "No such
    file or directory" alone, with nothing to do."""
    step = ("(no server listens there: start it, or correct the host and port in the URL; "
            "a socket's host is the folder holding it)")
    for url in (f"postgresql://{USER}@127.0.0.1:1/h", f"postgresql://{USER}@/h?host={tmp_path}"):
        _one_line_failure(harkback("recent", "--db", url), "cannot reach the PostgreSQL "
                          "server", step)


@pytest.mark.parametrize("first", ["the server", "an empty folder"])
def test_a_url_naming_several_hosts_says_what_each_host_did(
        server: PostgresServer, tmp_path: Path, first: str) -> None:
    """One host refused (no database "nosuch"), the other has no server: whether the line
    said "refused the connection" was decided from libpq's whole message (any host's
    FATAL), while the reason it showed was the last host's, "No such file or directory";
    and the step was that of the reason shown. Now each host is named with what it did,
    its reason and its own step, in the order tried."""
    hosts = [str(server.socket_dir), str(tmp_path)]
    if first != "the server":
        hosts.reverse()
    url = server.url("nosuch").replace(f"host={server.socket_dir}", f"host={','.join(hosts)}")
    done = harkback("recent", "--db", url)
    said = {str(server.socket_dir): 'refused it: FATAL: database "nosuch" does not exist (have '
                                    "it created, CREATE DATABASE nosuch by a role that may, or "
                                    "name another database in the URL)",
            str(tmp_path): "could not be reached: No such file or directory (no server "
                           "listens there: start it, or correct the host and port in the URL; "
                           "a socket's host is the folder holding it)"}
    _one_line_failure(done, "took the connection: " + "; ".join(
        f"{host} {said[host]}" for host in hosts))
    assert "refused the connection" not in done.stderr


def test_a_url_pasted_from_a_line_with_its_password_masked_is_told_so(
        server: PostgresServer) -> None:
    """A line names the store with its password as ******** (a suggested command too);
    pasted as shown, libpq sends ******** as the password, which wins over $PGPASSWORD,
    and the refusal said to check the password the URL gives "or those in $PGPASSWORD",
    the line naming the URL just as for the right password: nothing said the mask was
    sent. Now the step says so."""
    first = harkback("recent", "--db", server.url().replace(f"{USER}@", "me:right@"))
    shown = re.search(r"postgresql://me:\*{8}@\S+", first.stderr)
    assert first.returncode == 1 and shown is not None, first.stderr
    pasted = harkback("recent", "--db", shown.group(0), env={"PGPASSWORD": "right"})
    _one_line_failure(pasted, 'password authentication failed for user "me" (the URL\'s '
                      "password is ********, as harkback's lines show every password, not the "
                      "password itself: put the real one in its place, or leave it out of the "
                      "URL and keep it in $PGPASSWORD or ~/.pgpass)")


def test_the_url_a_line_names_reads_as_the_url_given() -> None:
    """The URL a line names (a suggested `harkback migrate --db ...` too) was rebuilt from
    libpq's reading with the hosts and ports joined apart (``a,b:1,2``: libpq reads hosts
    a, b and 2) and the user unquoted (``me%40corp``, Azure's form, as ``me@corp``: the
    host ``corp``); pasted, it named other servers. Read back, it names the same ones."""
    given = "postgresql://me%40corp:pw@127.0.0.1:1,127.0.0.1:2/team%20db"
    done = harkback("recent", "--db", given)
    shown = re.search(r"server of (\S+) took the connection", done.stderr)
    assert done.returncode == 1 and shown is not None, done.stderr
    assert "pw" not in shown.group(1)
    assert conninfo.conninfo_to_dict(shown.group(1).replace("********", "pw")) == \
        conninfo.conninfo_to_dict(given) == {"user": "me@corp", "password": "pw", "host":
                                             "127.0.0.1,127.0.0.1", "port": "1,2",
                                             "dbname": "team db"}


def test_hosts_given_as_addresses_are_each_named_once() -> None:
    """Each host's reason is given after its name without libpq's "connection to server at
    ..." (a host name's was cut, an address's kept: the host named twice over)."""
    step = ("(no server listens there: start it, or correct the host and port in the URL; "
            "a socket's host is the folder holding it)")
    done = harkback("recent", "--db", f"postgresql://{USER}@127.0.0.1:1,127.0.0.1:2/h")
    _one_line_failure(done, f"took the connection: 127.0.0.1:1 could not be reached: "
                      f"Connection refused {step}; 127.0.0.1:2 could not be reached: "
                      f"Connection refused {step}")
