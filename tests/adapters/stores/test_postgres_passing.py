"""Which PostgreSQL errors the store flags as passing by themselves
(:attr:`~harkback.stages.errors.StoreUnavailable.transient`), from a real server: what
``sync --watch`` waits for, and what ends it."""

from __future__ import annotations

import os
import re
import threading

import psycopg
import pytest

from harkback.adapters.stores.postgres import PostgresStore
from harkback.adapters.stores.postgres_connection import connector, unavailable
from tests.adapters.stores.store_contract import failed
from tests.support.postgres_server import USER, PostgresServer


def test_a_deadlock_the_server_broke_passes(postgres_server: PostgresServer) -> None:
    """Two writers that each wait for the other: the server rolls one back, and the same
    write tried again goes through, so it is flagged as passing (its line unchanged)."""
    url = postgres_server.create_database("deadlocked")
    with psycopg.connect(url, autocommit=True) as setup:
        setup.execute("CREATE TABLE t (id int PRIMARY KEY, n int)")
        setup.execute("INSERT INTO t VALUES (1, 0), (2, 0)")
    first, second = psycopg.connect(url), psycopg.connect(url)
    raised: list[psycopg.Error] = []
    both_hold = threading.Barrier(2)

    def cross(connection: psycopg.Connection[tuple[object, ...]], mine: int, theirs: int
              ) -> None:
        try:
            connection.execute("UPDATE t SET n = n + 1 WHERE id = %s", (mine,))
            both_hold.wait()
            connection.execute("UPDATE t SET n = n + 1 WHERE id = %s", (theirs,))
        except psycopg.Error as error:
            raised.append(error)
        connection.rollback()
    threads = [threading.Thread(target=cross, args=(first, 1, 2)),
               threading.Thread(target=cross, args=(second, 2, 1))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    first.close()
    second.close()
    (error,) = raised
    told = unavailable(url, error)
    assert isinstance(error, psycopg.errors.DeadlockDetected)
    assert told.transient and "deadlock detected" in told.reason, told


def test_a_database_that_is_not_there_does_not_pass(postgres_server: PostgresServer) -> None:
    """A connection the server refuses (no such database: dropped) is no outage: waiting
    does not bring it back."""
    with pytest.raises(psycopg.OperationalError) as refused:
        psycopg.connect(postgres_server.url("never_made")).close()
    told = unavailable(postgres_server.url("never_made"), refused.value)
    assert not told.transient and "refused the connection" in told.reason, told


def test_a_limit_the_statement_meets_again_does_not_pass(postgres_server: PostgresServer
                                                          ) -> None:
    """A statement past a limit of the server (a tsvector of over 1 MB) fails alike when
    tried again: it was read as the server out of reach, which a watch waits on for ever
    rather than name it as the source's failure. It is not flagged as passing."""
    with psycopg.connect(postgres_server.url()) as connection, \
            pytest.raises(psycopg.OperationalError) as limited:
        connection.execute("SELECT string_agg(i::text, ' ')::tsvector "
                           "FROM generate_series(1, 300000) AS i")
    told = unavailable(postgres_server.url(), limited.value)
    assert limited.value.sqlstate == "54000", limited.value
    assert not told.transient, told


def test_a_statement_the_server_timed_out_is_not_called_out_of_reach(
        postgres_server: PostgresServer) -> None:
    """A role or database with a ``statement_timeout`` (50 ms, as set for a web
    application) cancels a long statement: the server answered, so the line said "cannot
    reach the PostgreSQL server", which sent the user to the network. It names the setting
    and how to lift it for harkback, and does not count as passing."""
    with psycopg.connect(postgres_server.url()) as connection, \
            pytest.raises(psycopg.OperationalError) as cancelled:
        connection.execute("SET statement_timeout = 50")
        connection.execute("SELECT pg_sleep(5)")
    told = unavailable(postgres_server.url(), cancelled.value)
    assert cancelled.value.sqlstate == "57014", cancelled.value
    assert "cannot reach" not in told.reason, told
    assert told.reason.startswith(f"the PostgreSQL server of {postgres_server.url()} "
                                  "cancelled a statement: canceling statement due to "
                                  "statement timeout"), told
    assert "options=-cstatement_timeout%3D0" in told.reason, told
    assert not told.transient, told


def test_the_way_out_of_a_statement_timeout_keeps_the_urls_own_options(
        postgres_server: PostgresServer) -> None:
    """A URL with its own ``options`` (here a search_path and the timeout itself): the hint
    said to add ``options=-cstatement_timeout%3D0``, and a second ``options=`` replaces
    the first (libpq keeps the last), so the search_path was lost. The hinted options, put
    in the place of the URL's, as the line says, lift the timeout and keep the search_path."""
    own = "options=-csearch_path%3Dpg_catalog%20-cstatement_timeout%3D50"
    url = f"{postgres_server.url()}&{own}"
    with psycopg.connect(url) as connection, \
            pytest.raises(psycopg.errors.QueryCanceled) as cancelled:
        connection.execute("SELECT pg_sleep(5)")
    told = unavailable(url, cancelled.value).reason
    hinted = re.search(r"(options=\S+) in place of the URL's options lifts it", told)
    assert hinted is not None, cancelled.value
    with connector(url.replace(own, hinted.group(1)), False, {})() as connection:
        connection.execute("SELECT pg_sleep(0.2)")
        shown = [connection.execute(f"SHOW {name}").fetchone()
                 for name in ("statement_timeout", "search_path")]
    assert shown == [("0",), ("pg_catalog",)], hinted.group(1)


def test_the_way_out_of_a_statement_timeout_keeps_pgoptions(
        postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings in ``$PGOPTIONS`` (here a search_path and the timeout itself) and none in
    the URL: libpq reads ``$PGOPTIONS`` only when the URL has no ``options``, so the hinted
    ``options=-cstatement_timeout%3D0`` dropped the search_path. The hinted options, added
    to the URL as harkback connects, lift the timeout and keep the search_path."""
    monkeypatch.setenv("PGOPTIONS", "-csearch_path=pg_catalog -cstatement_timeout=50")
    url = postgres_server.url()
    with psycopg.connect(url) as connection, \
            pytest.raises(psycopg.errors.QueryCanceled) as cancelled:
        connection.execute("SELECT pg_sleep(5)")
    told = unavailable(url, cancelled.value).reason
    hinted = re.search(r"(options=\S+) in the URL lifts it", told)
    assert hinted is not None, told
    with connector(f"{url}&{hinted.group(1)}", False, os.environ)() as connection:
        connection.execute("SELECT pg_sleep(0.2)")
        shown = [connection.execute(f"SHOW {name}").fetchone()
                 for name in ("statement_timeout", "search_path")]
    assert shown == [("0",), ("pg_catalog",)], told


@pytest.mark.parametrize("limited", ["ROLE", "DATABASE"])
def test_a_connection_limit_others_hold_passes(postgres_server: PostgresServer,
                                               limited: str) -> None:
    """A role's or a database's CONNECTION LIMIT reached (SQLSTATE 53300, as "too many
    clients" is): the connection is let in once another leaves, so it is flagged as
    passing, as the server's own limit is."""
    name = f"capped_{limited.lower()}"
    url = postgres_server.create_database(name)
    with psycopg.connect(postgres_server.url(), autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {name} LOGIN")
        admin.execute(f"GRANT ALL ON DATABASE {name} TO {name}")
        admin.execute(f"ALTER {limited} {name} CONNECTION LIMIT 1")
    url = url.replace(f"postgresql://{USER}@", f"postgresql://{name}@")
    with psycopg.connect(url), pytest.raises(psycopg.OperationalError) as crowded:
        psycopg.connect(url).close()
    told = unavailable(url, crowded.value)
    assert "too many connections" in str(crowded.value), crowded.value
    assert told.transient, told


@pytest.mark.parametrize("alert", ["sslv3 alert handshake failure", "tlsv1 alert unknown ca",
                                   "tlsv13 alert missing extension"])
def test_a_tls_alert_is_not_waited_on(alert: str) -> None:
    """A server that refuses our TLS (an alert of any TLS version, TLS 1.3's "tlsv13" too)
    will refuse it again: the watch ends rather than waiting for ever."""
    error = psycopg.OperationalError(
        f'connection to server at "db" (10.0.0.5), port 5432 failed: SSL error: {alert}')
    assert not unavailable("postgresql://db/h", error).transient


async def test_a_store_opened_with_its_own_environment_hints_its_pgoptions(
        postgres_server: PostgresServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """``PostgresStore.open(environ=...)`` connects with that mapping's ``$PGOPTIONS``, not
    the process's: the statement_timeout hint read the process's (none here), and its
    ``options=`` would have dropped the store's own settings (work_mem)."""
    monkeypatch.delenv("PGOPTIONS", raising=False)
    url = postgres_server.create_database("own_environment")
    PostgresStore.open(url).unwrap().close()  # the schema, made without the timeout
    environ = {"PGOPTIONS": "-cwork_mem=5MB -cstatement_timeout=1000"}
    with PostgresStore.open(url, readonly=True, environ=environ).unwrap() as store:
        told = (await failed(store.run(lambda c: c.execute("SELECT pg_sleep(5)")))).reason
    hinted = re.search(r"(options=\S+) in the URL lifts it", told)
    assert hinted is not None, told
    with connector(f"{url}&{hinted.group(1)}", False, environ)() as connection:
        connection.execute("SELECT pg_sleep(1.2)")
        shown = [connection.execute(f"SHOW {name}").fetchone()
                 for name in ("statement_timeout", "work_mem")]
    assert shown == [("0",), ("5MB",)], told
