"""The PostgreSQL store's connections: checking a URL, a first connection that checks (and
for a writable open of an empty database creates) the schema, the pool, and errors
turned into one line each.

Nothing here prints a password: messages name the server by :func:`where`.

>>> where("postgresql://me:secret@db.example:5433/harkback")
'postgresql://me@db.example:5433/harkback'
>>> where("postgresql:///harkback?host=/tmp/pg&port=5433")
'postgresql:///harkback?host=/tmp/pg&port=5433'
>>> where("postgresql:///harkback?password=secret&sslmod=x")  # unparsable: shown masked
'postgresql:///harkback?password=********&sslmod=x'
"""

from __future__ import annotations

import logging
import re

import psycopg
from psycopg import conninfo
from psycopg_pool import ConnectionPool, PoolTimeout
from returns.result import Failure, Result, Success

from harkback.adapters.stores.migration import Migrated
from harkback.adapters.stores.postgres_migrations import SchemaProblem, bring_forward
from harkback.stages.errors import StoreUnavailable

CONNECT_TIMEOUT_S = 10
"""How long opening a connection may take before the server counts as unreachable."""

_PASSWORD = re.compile(r"(\bpassword=)[^&#]*", re.IGNORECASE)

# The pool logs each connection it drops or cannot open as a warning, which Python prints on
# stderr when logging is not set up (a command line): beside the one line the store's error
# becomes. An application that sets up logging still receives them.
logging.getLogger("psycopg.pool").addHandler(logging.NullHandler())

POOL_SIZE = 4
"""Connections the store may hold at once (one per concurrent statement)."""

READ_ONLY = "-c default_transaction_read_only=on"
"""Session option of a read-only store: the server itself refuses every write."""


def where(url: str) -> str:
    """The URL without its password (for messages); the text as given when unparsable."""
    try:
        parts = conninfo.conninfo_to_dict(url)
    except psycopg.Error:
        # Both the user part and the query may hold a password.
        scheme, found, rest = url.partition("://") if "://" in url else ("", "", url)
        masked = _PASSWORD.sub(r"\1********", rest.rpartition("@")[2])
        return f"{scheme}{found}{masked}"
    user = str(parts.get("user", ""))
    host = str(parts.get("host", ""))
    port = f":{parts['port']}" if "port" in parts else ""
    database = str(parts.get("dbname", ""))
    if host.startswith("/"):
        # The port names the socket's file: a message's `harkback migrate --db ...` needs it.
        socket_port = f"&port={parts['port']}" if "port" in parts else ""
        return (f"postgresql://{user + '@' if user else ''}/{database}?host={host}"
                f"{socket_port}")
    return f"postgresql://{user + '@' if user else ''}{host}{port}/{database}"


def first_line(error: BaseException) -> str:
    """An error's message on one line (libpq's messages carry a detail line or two)."""
    text = " ".join(str(error).split("\n")[0].split()) or type(error).__name__
    return text.removeprefix("connection failed: ")


def unavailable(url: str, error: BaseException) -> StoreUnavailable:
    """A database error as one line naming the server.

    >>> unavailable("postgresql:///h", PoolTimeout("couldn't get a connection")).reason
    "cannot reach the PostgreSQL server of postgresql:///h: couldn't get a connection"
    """
    if isinstance(error, PoolTimeout | psycopg.OperationalError):
        return StoreUnavailable(
            f"cannot reach the PostgreSQL server of {where(url)}: {first_line(error)}")
    return StoreUnavailable(f"{where(url)}: {first_line(error)}")


def check_url(url: str) -> StoreUnavailable | None:
    """Why ``url`` is not a usable connection URL, or None.

    >>> check_url("postgresql://host:notaport/db").reason.startswith("not a PostgreSQL URL")
    True
    """
    try:
        parts = conninfo.conninfo_to_dict(url)
        port = str(parts.get("port", "5432"))
        if not all(p.isdigit() for p in port.split(",")):
            raise psycopg.ProgrammingError(f"invalid port {port!r}")
    except psycopg.Error as error:
        return StoreUnavailable(
            f"not a PostgreSQL URL: {where(url)} ({_unquoted(first_line(error), url)})")
    return None


def _unquoted(detail: str, url: str) -> str:
    """libpq's complaint about ``url`` without the password it may quote ("unexpected
    spaces found in "pa ss"").

    >>> _unquoted('spaces found in "pa ss"', "postgresql://me:pa ss@h/db")
    'spaces found in "********"'
    """
    rest = url.partition("://")[2]
    secrets = [rest.rpartition("@")[0].partition(":")[2] if "@" in rest else "",
               *(m.group(0).partition("=")[2] for m in _PASSWORD.finditer(rest))]
    for secret in sorted(filter(None, secrets), key=len, reverse=True):
        detail = detail.replace(secret, "********")
    return detail


def _kwargs(readonly: bool) -> dict[str, str | int]:
    settings: dict[str, str | int] = {"connect_timeout": CONNECT_TIMEOUT_S}
    if readonly:
        settings["options"] = READ_ONLY
    return settings


def prepare(url: str, readonly: bool) -> Result[Migrated, StoreUnavailable]:
    """Connect once, check the database is a harkback store this version reads, and bring
    it to this version (:mod:`~harkback.adapters.stores.postgres_migrations`).

    A writable open of an empty database creates the schema, and one of an older version
    migrates it (one transaction); a read-only one, or a database holding other tables,
    changes nothing.
    """
    problem = check_url(url)
    if problem is not None:
        return Failure(problem)
    try:
        with psycopg.connect(conninfo.make_conninfo(url, **_kwargs(readonly))) as connection:
            return Success(bring_forward(connection, where(url), readonly=readonly))
    except SchemaProblem as refused:
        return Failure(StoreUnavailable(str(refused)))
    except psycopg.Error as error:
        return Failure(unavailable(url, error))


def pool(url: str, readonly: bool, timeout: float = CONNECT_TIMEOUT_S) -> ConnectionPool:
    """An open pool of up to :data:`POOL_SIZE` connections; a connection that died while
    idle (a restarted server) is replaced before use, and a statement waits at most
    ``timeout`` seconds for a connection.

    Statements are never prepared: a prepared full-text search soon runs a generic plan
    that cannot see how rare its words are, and scans the whole table (seconds, where the
    index takes milliseconds)."""
    opened: ConnectionPool = ConnectionPool(
        url, min_size=1, max_size=POOL_SIZE,
        kwargs={**_kwargs(readonly), "prepare_threshold": None}, open=False,
        timeout=timeout, check=ConnectionPool.check_connection, name="harkback")
    opened.open(wait=True, timeout=timeout)
    return opened
