"""The PostgreSQL store's connections: checking a URL, a first connection that checks (and
for a writable open of an empty database creates) the schema, how long each wait may take
(:class:`Bounds`), and errors turned into one line each.

Nothing here prints a password: messages name the server by
:func:`~harkback.adapters.stores.postgres_where.where`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import Any

import attrs
import psycopg
from psycopg import conninfo
from returns.result import Failure, Result, Success

from harkback.adapters.stores.damaged_rows import DamagedRecord
from harkback.adapters.stores.migration import Migrated
from harkback.adapters.stores.postgres_cut import CUT_SHORT, cut_short
from harkback.adapters.stores.postgres_migrations import (
    NoStoreYet,
    SchemaProblem,
    bring_forward,
)
from harkback.adapters.stores.postgres_reach import timeout_lifted
from harkback.adapters.stores.postgres_refusals import attempts, crowded, next_step, refused
from harkback.adapters.stores.postgres_watchdog import Overran, Unanswered, Watchdog
from harkback.adapters.stores.postgres_where import misread, unquoted
from harkback.adapters.stores.postgres_where import where as where  # still imported from here
from harkback.stages.errors import NoStore, StoreUnavailable
from harkback.stages.shown_number import shown_given

CONNECT_TIMEOUT_S = 10
"""How long opening a connection may take before the server counts as unreachable, unless
the URL (``?connect_timeout=N``) or ``$PGCONNECT_TIMEOUT`` says otherwise."""

READ_TIMEOUT_ENV = "HARKBACK_PG_READ_TIMEOUT"
READ_TIMEOUT_S = 60.0
"""How long the statements of a search, ``recent`` or ``show`` may run (0: no limit)."""

WRITE_TIMEOUT_ENV = "HARKBACK_PG_WRITE_TIMEOUT"
"""How long a write or upkeep may run (ingest's batches, optimize, redact, sync's removals,
stats); no limit by default: their time grows with the store."""

LOCK_TIMEOUT_ENV = "HARKBACK_PG_LOCK_TIMEOUT"
LOCK_TIMEOUT_S = 300.0
"""How long a statement may wait for a lock another connection holds (0: no limit): another
harkback's write batch or ``VACUUM FULL`` takes turns within it, while a transaction someone
left open (a ``LOCK TABLE`` in a forgotten psql) held every writer, and ``stats``, for good."""

LOCK_TIMEOUT_MOST_S = 2_147_483
"""The longest lock wait the server takes (``lock_timeout`` is a 32-bit count of ms)."""

POOL_SIZE = 4
"""Connections the store may hold at once (one per concurrent statement)."""

READ_ONLY = "-c default_transaction_read_only=on"
"""Session option of a read-only store: the server itself refuses every write."""

NO_JIT = "-c jit=off"
"""Session option of every store: no JIT compilation of its statements. A server built
with LLVM (Debian's and others' packages) compiles any statement the planner costs past
``jit_above_cost``, and ``recent``'s test of a root (a walk per row) is costed far past it
at any size: 0.6-1.1 s of compiling for a statement that runs in 0.1-40 ms. A URL's own
``options`` (or ``$PGOPTIONS``), which come after it, may turn it back on."""

IDLE_IN_TRANSACTION = "-c idle_in_transaction_session_timeout=600s"
"""Session option of every store: a transaction left idle for 10 minutes (its client frozen
or cut off) is ended by the server, so the write lock it holds does not stop every other
writer for good. harkback never leaves one idle for more than moments."""


def first_line(error: BaseException) -> str:
    """An error's message on one line (libpq's messages carry a detail line or two)."""
    text = " ".join(str(error).split("\n")[0].split()) or type(error).__name__
    return text.removeprefix("connection failed: ")


_BAD_SETTING = re.compile(r"connection is bad: (invalid [\w ]+ (?:value|number): .*)")
"""A setting of the URL libpq refused before trying any server (``port=99999``,
``sslmode=bogus``): the URL is wrong, no server was out of reach."""

_UNTRUSTED = re.compile(r"certificate|private key|SSL was required|does not support SSL"
                        r"|(?:ssl|tls)v\d+ alert", re.IGNORECASE)
"""A server reached that the TLS settings do not let us talk to: its certificate fails
verification (expired, replaced, another CA), a file of ours is missing or unreadable, or
the two sides refuse each other's TLS. Not a network fault: someone must act."""

_PASSING_STATES = frozenset({"57P01", "57P02", "57P03", "57P05", "53300", "55P03", "40001",
                             "40P01"})
"""The SQLSTATEs (besides class 08, the connection's) of errors that pass by themselves: the
server shut down by its administrator, crashed, starting or stopping, a session ended
for being idle, every connection taken, a lock held past the lock wait, a conflict or a
deadlock the server broke by rolling this transaction back. Not a statement cancelled for
its time, nor a limit the same statement meets again (a tsvector too long, out of memory):
a source's failure, tried again in its turn."""


def _passes(error: BaseException) -> bool:
    """Whether ``error``, an error of the connection or of a statement on it, passes by
    itself: one without a SQLSTATE is the connection's own (refused, reset, closed, no
    answer, a host name that does not resolve now: a container's name is gone from
    Docker's or Kubernetes' DNS while it restarts), unless TLS refused it; else as its
    SQLSTATE says (:data:`_PASSING_STATES`)."""
    state = getattr(error, "sqlstate", None)
    if not isinstance(state, str):
        return not _UNTRUSTED.search(str(error))
    return state.startswith("08") or state in _PASSING_STATES


def unavailable(url: str, error: BaseException, *, limit: str = READ_TIMEOUT_ENV,
                environ: Mapping[str, str] = os.environ) -> StoreUnavailable:
    """A database error as one line naming the server (and the ``limit`` a statement
    cancelled for running too long ran into), ``transient`` when trying again later may
    go through (see :func:`passing`). ``environ``: the one the connections were made
    with, whose ``$PGOPTIONS`` a statement_timeout's hint keeps.

    >>> unavailable("postgresql:///h", Unanswered("no answer for 10 s")).reason
    'cannot reach the PostgreSQL server of postgresql:///h: no answer for 10 s'
    >>> unavailable("postgresql:///h", psycopg.OperationalError(
    ...     'connection to server on socket "/s" failed: FATAL:  password authentication '
    ...     'failed for user "me"')).reason[:69]
    'the PostgreSQL server of postgresql:///h refused the connection: conn'
    >>> unavailable("postgresql:///h", psycopg.OperationalError(
    ...     'connection to server on socket "/s" failed: FATAL:  the database system is '
    ...     'shutting down')).reason[:42]
    'cannot reach the PostgreSQL server of post'
    >>> unavailable("postgresql:///h?sslmode=x", psycopg.OperationalError(
    ...     'connection is bad: invalid sslmode value: "x"')).reason
    'not a PostgreSQL URL: postgresql:///h (invalid sslmode value: "x")'
    >>> unavailable("postgresql:///h", psycopg.errors.ProgramLimitExceeded(
    ...     'index row size 4024 exceeds btree version 4 maximum 2704')).reason[:64]
    'the PostgreSQL server of postgresql:///h refused the statement: '
    """
    text = str(error)
    if isinstance(error, Overran):
        # The same statement on the same rows runs as long when tried again.
        return StoreUnavailable(f"{where(url)}: {error} (${limit} sets the limit)")
    if isinstance(error, psycopg.errors.LockNotAvailable):
        return StoreUnavailable(
            f"{where(url)}: gave up waiting for a lock another connection holds on the "
            f"store's tables (another harkback's write or upkeep, or a transaction left "
            f"open; ${LOCK_TIMEOUT_ENV} sets how long to wait)", transient=True)
    hosts = attempts(text) if isinstance(error, psycopg.OperationalError) else []
    if hosts:
        return _several(url, hosts)
    if isinstance(error, psycopg.OperationalError) and refused(text):
        # The server answered and said no (a wrong password or role, no such database):
        # "cannot reach" would send the user to look at the network instead.
        return StoreUnavailable(
            f"the PostgreSQL server of {where(url)} refused the connection: "
            f"{first_line(error)}{next_step(text, url)}", transient=crowded(text))
    setting = _BAD_SETTING.fullmatch(first_line(error))
    if isinstance(error, psycopg.OperationalError) and setting:
        return StoreUnavailable(
            f"not a PostgreSQL URL: {where(url)} ({unquoted(setting.group(1), url)})")
    if isinstance(error, psycopg.OperationalError) and (error.sqlstate or "").startswith("54"):
        # Class 54, a program limit (a value too long for an index entry): the server
        # answered, and the same statement fails again however long a watch waits for it.
        return StoreUnavailable(f"the PostgreSQL server of {where(url)} refused the "
                                f"statement: {first_line(error)}")
    if isinstance(error, psycopg.errors.DiskFull):
        # An OperationalError too, but the server answered: its disk has no room left.
        return StoreUnavailable(f"the disk is full: the PostgreSQL server of {where(url)} "
                                f"could not write ({first_line(error)})")
    if isinstance(error, psycopg.errors.QueryCanceled):
        # The server answered: it cancelled the statement (its own statement_timeout, or
        # pg_cancel_backend); "cannot reach" sent the user to look at the network.
        return StoreUnavailable(f"the PostgreSQL server of {where(url)} cancelled a "
                                f"statement: {first_line(error)}"
                                f"{timeout_lifted(text, url, environ)}")
    if cut_short(error):
        # The server was reached: "cannot reach" with no step left the user to guess
        # whether anything was written, and what to do.
        return StoreUnavailable(
            f"the PostgreSQL server of {where(url)} ended the connection in the middle of "
            f"a statement: {first_line(error)} ({CUT_SHORT})", transient=_passes(error))
    if isinstance(error, Unanswered | psycopg.OperationalError):
        return StoreUnavailable(
            f"cannot reach the PostgreSQL server of {where(url)}: {first_line(error)}"
            f"{next_step(text)}", transient=_passes(error))
    if isinstance(error, psycopg.errors.InsufficientPrivilege):
        return StoreUnavailable(f"{where(url)}: {first_line(error)} ({NO_RIGHT})")
    return StoreUnavailable(f"{where(url)}: {first_line(error)}")


def _several(url: str, hosts: list[tuple[str, str, str]]) -> StoreUnavailable:
    """A URL naming several hosts, none of which took the connection: each host's reason
    and step, whether it refused or was not reached decided for that host (from libpq's
    whole message, a host that refused made "refused the connection" of the line while
    the reason shown was another's "No such file or directory"); ``transient`` when each
    host's failure may pass by itself (a host that refused the login wants the user).

    >>> several = ("x\\nMultiple connection attempts failed. All failures were:\\n- host: 'a',"
    ...            " port: None, hostaddr: None: connection is bad: Connection refused\\n")
    >>> passing(psycopg.OperationalError(several + several.split("\\n")[-2]))
    True
    >>> passing(psycopg.OperationalError(several + "- host: 'b', port: None, hostaddr: "
    ...                                  "None: failed: FATAL:  role 'me' does not exist"))
    False
    """
    said, transient = [], True
    for host, first, reason in hosts:
        no = refused(first)
        transient &= crowded(first) if no else _passes(psycopg.OperationalError(first))
        said.append(f"{host} {'refused it' if no else 'could not be reached'}: {reason}"
                    f"{next_step(first, url)}")
    return StoreUnavailable(f"no PostgreSQL server of {where(url)} took the connection: "
                            + "; ".join(said), transient=transient)


NO_RIGHT = ("reading the store takes SELECT on its tables; storing or rewriting sessions "
            "takes INSERT, UPDATE and DELETE on them too: have their owner grant what the "
            "command needs, or run it as the owner")


def passing(error: BaseException) -> bool:
    """Whether ``error`` says only that the server cannot be reached now (stopped, starting,
    not answering, its connections all taken) or that another connection holds a lock: what
    passes by itself, unlike a refusal, a wrong URL or a certificate that fails verification.

    >>> passing(psycopg.OperationalError('connection to server on socket "/s" failed: '
    ...                                  'FATAL:  the database system is shutting down'))
    True
    >>> passing(psycopg.OperationalError('connection to server on socket "/s" failed: '
    ...                                  'FATAL:  role "me" does not exist'))
    False
    >>> passing(psycopg.OperationalError('connection to server at "db" (10.0.0.5), port '
    ...                                  '5432 failed: SSL error: certificate verify failed'))
    False
    """
    return unavailable("", error).transient


def check_url(url: str) -> StoreUnavailable | None:
    """Why ``url`` is not a usable connection URL, or None.

    >>> check_url("postgresql://host:notaport/db").reason.startswith("not a PostgreSQL URL")
    True
    """
    try:
        parts = conninfo.conninfo_to_dict(url)
        if misread(parts):
            raise psycopg.ProgrammingError(
                "an @ or / of its password is written as is: write them percent-encoded, "
                "@ as %40 and / as %2F")
        port = str(parts.get("port", "5432"))
        if not all(p.isdigit() for p in port.split(",")):
            raise psycopg.ProgrammingError(f"invalid port {port!r}")
    except psycopg.Error as error:
        return StoreUnavailable(
            f"not a PostgreSQL URL: {where(url)} ({unquoted(first_line(error), url)})")
    return None


def _seconds(text: str, variable: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise ValueError(f"{variable} is not a number of seconds: {shown_given(text)}")
    return value


@attrs.frozen
class Bounds:
    """How long the store waits for its server, in seconds (None: no limit).

    ``connect``: opening a connection, and how long a statement may go unanswered before
    the server is checked (then a new connection must open within it, or the statement
    fails, see :mod:`~harkback.adapters.stores.postgres_watchdog`); ``read``: a statement
    of a search, ``recent`` or ``show``; ``write``: a write or upkeep.

    >>> Bounds.of("postgresql:///h?connect_timeout=3", {"HARKBACK_PG_WRITE_TIMEOUT": "900"})
    <Success: Bounds(connect=3.0, read=60.0, write=900.0)>
    >>> Bounds.of("postgresql:///h", {"PGCONNECT_TIMEOUT": "0", "HARKBACK_PG_READ_TIMEOUT": "0"})
    <Success: Bounds(connect=None, read=None, write=None)>
    >>> Bounds.of("postgresql:///h", {"HARKBACK_PG_READ_TIMEOUT": "1m"}).failure().reason
    "HARKBACK_PG_READ_TIMEOUT is not a number of seconds: '1m'"
    >>> Bounds.of("postgresql:///h", {"HARKBACK_PG_LOCK_TIMEOUT": "x"}).failure().reason
    "HARKBACK_PG_LOCK_TIMEOUT is not a number of seconds: 'x'"
    >>> Bounds.of("postgresql:///h", {"HARKBACK_PG_READ_TIMEOUT": "9s" * 99}).failure().reason[-5:]
    "s9s…'"
    """

    connect: float | None
    read: float | None
    write: float | None

    @classmethod
    def of(cls, url: str, environ: Mapping[str, str]) -> Result[Bounds, StoreUnavailable]:
        """The bounds a URL and an environment set (see the constants), or which value is
        not a number of seconds."""
        given = conninfo.conninfo_to_dict(url).get("connect_timeout")
        text = str(given) if given is not None else environ.get("PGCONNECT_TIMEOUT", "")
        read = environ.get(READ_TIMEOUT_ENV, "").strip()
        write = environ.get(WRITE_TIMEOUT_ENV, "").strip()
        try:
            lock_wait(environ)  # checked here; the connections' settings carry it
            connect = _seconds(text, "connect_timeout") if text.strip() else CONNECT_TIMEOUT_S
            return Success(cls(
                # libpq waits without end for 0, and takes 1 as 2.
                connect=max(2.0, connect) if connect > 0 else None,
                read=(_seconds(read, READ_TIMEOUT_ENV) or None) if read else READ_TIMEOUT_S,
                write=(_seconds(write, WRITE_TIMEOUT_ENV) or None) if write else None))
        except ValueError as wrong:
            return Failure(StoreUnavailable(str(wrong)))


def lock_wait(environ: Mapping[str, str]) -> float | None:
    """How long a statement may wait for a lock (see :data:`LOCK_TIMEOUT_S`; None: no limit).

    >>> lock_wait({}), lock_wait({"HARKBACK_PG_LOCK_TIMEOUT": "0"})
    (300.0, None)
    >>> Bounds.of("postgresql:///h", {"HARKBACK_PG_LOCK_TIMEOUT": "3e6"}).failure().reason[:69]
    'HARKBACK_PG_LOCK_TIMEOUT is more than the 2,147,483 seconds (about 24'
    """
    text = environ.get(LOCK_TIMEOUT_ENV, "").strip()
    lock = _seconds(text, LOCK_TIMEOUT_ENV) if text else LOCK_TIMEOUT_S
    if lock > LOCK_TIMEOUT_MOST_S:  # the server refused the connection; 1e308: exit 70
        raise ValueError(f"{LOCK_TIMEOUT_ENV} is more than the {LOCK_TIMEOUT_MOST_S:,} seconds "
                         f"(about 24 days) PostgreSQL's lock_timeout takes: {text!r}; 0 is "
                         "no limit")
    return lock or None


def _settings(url: str, readonly: bool, environ: Mapping[str, str]) -> dict[str, Any]:
    """libpq settings added to the URL's: its own options (or ``$PGOPTIONS``, which libpq
    would read only when none are given) come first, but for the lock wait and JIT, which
    they may set themselves."""
    parts = conninfo.conninfo_to_dict(url)
    lock = lock_wait(environ)
    options = [NO_JIT, f"-c lock_timeout={max(1, round(lock * 1000))}" if lock else "",
               str(parts.get("options") or environ.get("PGOPTIONS", "")), IDLE_IN_TRANSACTION]
    if readonly:
        options.append(READ_ONLY)
    settings: dict[str, Any] = {"options": " ".join(o for o in options if o)}
    if "connect_timeout" not in parts and not environ.get("PGCONNECT_TIMEOUT", "").strip():
        settings["connect_timeout"] = CONNECT_TIMEOUT_S
    return settings


def connector(url: str, readonly: bool, environ: Mapping[str, str]
              ) -> Callable[[], psycopg.Connection[tuple[Any, ...]]]:
    """A function opening a new connection of the store (see :func:`_settings`).

    Statements are never prepared: a prepared full-text search soon runs a generic plan
    that cannot see how rare its words are, and scans the whole table (seconds, where the
    index takes milliseconds)."""
    target = conninfo.make_conninfo(url, **_settings(url, readonly, environ))
    return lambda: psycopg.connect(target, prepare_threshold=None)


def answers(url: str, timeout: float) -> bool:
    """Whether the server at ``url`` accepts a new connection within ``timeout`` seconds,
    or refuses it with a reason of its own (too many clients, a login refused): either way
    it is running and reachable."""
    try:
        psycopg.connect(conninfo.make_conninfo(url, connect_timeout=max(2, round(timeout)))
                        ).close()
    except psycopg.Error as error:
        return getattr(error, "sqlstate", None) is not None
    return True


def prepare(url: str, readonly: bool, environ: Mapping[str, str], watchdog: Watchdog,
            *, create: bool = True) -> Result[Migrated, StoreUnavailable]:
    """Connect once, check the database is a harkback store this version reads, and bring
    it to this version (:mod:`~harkback.adapters.stores.postgres_migrations`), its
    statements under ``watchdog``.

    A writable open of an empty database creates the schema (unless not ``create``: then,
    as read-only, it fails with :class:`NoStore`), and one of an older version migrates it
    (one transaction); a read-only one, or a database holding other tables, changes nothing.
    """
    problem = check_url(url)
    if problem is not None:
        return Failure(problem)
    try:
        with connector(url, readonly, environ)() as connection, \
                watchdog.watching(connection, None):
            return Success(bring_forward(connection, url, readonly=readonly, create=create,
                                         pgoptions=environ.get("PGOPTIONS", "")))
    except NoStoreYet as absent:
        return Failure(NoStore(str(absent)))
    except SchemaProblem as refused:
        return Failure(StoreUnavailable(str(refused)))
    except (psycopg.Error, Unanswered, DamagedRecord) as error:  # a migration reads rows too
        return Failure(unavailable(url, error, environ=environ))
