"""A throwaway PostgreSQL server for the tests: ``initdb`` into a temporary folder, then
``postgres`` listening on a Unix socket in that folder only (no TCP port unless asked
for: then 127.0.0.1 too, on a free port), stopped after.

The binaries are found on ``PATH``, through ``pg_config --bindir``, in
``/usr/lib/postgresql/*/bin``, or else in the ``pgserver`` wheel (a PostgreSQL build that
the test command installs), so a machine with only Python gets a server too. PostgreSQL
refuses to run as root, so under root (as in CI) the server runs as ``nobody``, owning the
folder. A machine without the server fails the
tests that need it with how to install it; they never skip.
"""

from __future__ import annotations

import contextlib
import glob
import importlib.util
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from pathlib import Path

import attrs
import psycopg
import pytest
from psycopg import sql

from harkback.adapters.stores import postgres_schema as schema
from tests.support.processes import children

INSTALL_HINT = ("PostgreSQL's server (initdb, postgres) is needed by these tests and was not "
                "found on PATH, via pg_config, in /usr/lib/postgresql/*/bin or in the pgserver "
                "package (pip install -e '.[dev]' brings it): install one "
                "(Debian/Ubuntu: apt-get install postgresql; macOS: brew install postgresql)")
USER = "harkback"
START_TIMEOUT_S = 60.0


def server_binaries() -> Path | None:
    """The folder holding ``initdb`` and ``postgres``, or None when there is none."""
    candidates: list[Path] = []
    found = shutil.which("postgres")
    if found:
        candidates.append(Path(found).parent)
    if shutil.which("pg_config"):
        done = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True,
                              check=False)
        if done.returncode == 0 and done.stdout.strip():
            candidates.append(Path(done.stdout.strip()))
    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)]
    # Last, the build inside the pgserver wheel (the dev extra): its binaries only, never its
    # Python code, which would manage a server of its own.
    wheel = importlib.util.find_spec("pgserver")
    if wheel is not None and wheel.submodule_search_locations:
        candidates += [Path(p) / "pginstall" / "bin" for p in wheel.submodule_search_locations]
    for folder in candidates:
        if (folder / "initdb").is_file() and (folder / "postgres").is_file():
            return folder
    return None


def _as_server_user() -> tuple[list[str], int | None, int | None]:
    """The command prefix that drops root (and the uid/gid), or nothing when not root.

    Where ``setpriv`` is (Linux), the prefix also has the server sent SIGINT (its fast
    shutdown) when the process that started it dies: a test run killed (SIGTERM, SIGKILL)
    left it running, a child of init, until the machine restarted.
    """
    dies_with_parent = ["setpriv", "--pdeathsig", "INT"] if shutil.which("setpriv") else []
    if os.geteuid() != 0:
        return dies_with_parent, None, None
    nobody = pwd.getpwnam("nobody")
    prefix = ["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}",
              "--clear-groups", "--pdeathsig", "INT"]
    return prefix, nobody.pw_uid, nobody.pw_gid


@attrs.frozen
class PostgresServer:
    """A running server; :meth:`url` names a database on it."""

    folder: Path
    process: subprocess.Popen[bytes]
    port: int = 5432
    """The server's port: on 127.0.0.1 when it listens there, and in its socket's name."""

    @property
    def socket_dir(self) -> Path:
        """The folder holding the server's Unix socket."""
        return self.folder / "socket"

    def url(self, database: str = "postgres") -> str:
        """A connection URL for ``database`` over the socket."""
        port = "" if self.port == 5432 else f"&port={self.port}"
        return f"postgresql://{USER}@/{database}?host={self.socket_dir}{port}"

    def tcp_url(self, database: str = "postgres") -> str:
        """A connection URL for ``database`` over TCP (a server started with ``tcp``)."""
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def processes(self) -> list[int]:
        """The ids of the server's processes: the postmaster, then its children."""
        return [self.process.pid, *children(self.process.pid)]

    @contextlib.contextmanager
    def frozen(self) -> Iterator[None]:
        """The server's processes stopped (SIGSTOP) for the block, as a hung machine or a
        network that drops every packet looks to a client; continued however it ends."""
        stopped: list[int] = []
        try:
            for pid in self.processes():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGSTOP)
                    stopped.append(pid)
            yield
        finally:
            for pid in stopped:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCONT)

    def create_database(self, name: str) -> str:
        """Create an empty database ``name`` and return its URL."""
        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.url(name)

    def stop(self) -> None:
        """Stop the server (fast shutdown) and wait for it."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


FAST = ("-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
"""Settings of a test server: its data is thrown away, so it need not survive a crash."""


def start_server(*, durable: bool = False, tcp: bool = False,
                 settings: Callable[[Path], Sequence[str]] = lambda folder: ()
                 ) -> PostgresServer:
    """Initialise and start a server in a new temporary folder (see the module); a
    ``durable`` one keeps PostgreSQL's crash-safe defaults (for benchmarks), a ``tcp`` one
    listens on 127.0.0.1 too; ``settings`` gives more of its command line (``-c name=value``
    pairs, which win over the defaults), made in its folder (a TLS key and certificate)."""
    binaries = server_binaries()
    if binaries is None:
        raise RuntimeError(INSTALL_HINT)
    prefix, uid, gid = _as_server_user()
    # Under /tmp, not pytest's root-only folder: the server's user must reach it.
    folder = Path(tempfile.mkdtemp(prefix="harkback-pg-"))
    (folder / "socket").mkdir()
    if uid is not None and gid is not None:
        for path in (folder, folder / "socket"):
            os.chown(path, uid, gid)
    subprocess.run([*prefix, str(binaries / "initdb"), "-D", str(folder / "data"), "-U", USER,
                    "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync"],
                   check=True, capture_output=True)
    return _launched(folder, binaries, durable=durable, port=_free_port() if tcp else None,
                     settings=settings(folder))


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def restarted(server: PostgresServer) -> PostgresServer:
    """``server``, stopped, started again on its folder: what it had committed is there."""
    binaries = server_binaries()
    assert binaries is not None and server.process.poll() is not None
    return _launched(server.folder, binaries, durable=False,
                     port=None if server.port == 5432 else server.port)


def _launched(folder: Path, binaries: Path, *, durable: bool, port: int | None,
              settings: Sequence[str] = ()) -> PostgresServer:
    prefix = _as_server_user()[0]
    log = open(folder / "server.log", "ab")  # noqa: SIM115 - kept open while it runs
    listen = ("-c", "listen_addresses=") if port is None else (
        "-c", "listen_addresses=127.0.0.1", "-p", str(port))
    process = subprocess.Popen(
        [*prefix, str(binaries / "postgres"), "-D", str(folder / "data"), "-k",
         str(folder / "socket"), *listen, "-c", "max_connections=60",
         *(() if durable else FAST), *settings],
        stdout=log, stderr=subprocess.STDOUT)
    server = PostgresServer(folder=folder, process=process, port=port or 5432)
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        try:
            psycopg.connect(server.url(), connect_timeout=2).close()
            return server
        except psycopg.OperationalError as error:
            if process.poll() is not None or time.monotonic() > deadline:
                server.stop()
                raise RuntimeError(
                    "the test PostgreSQL server did not start: "
                    + (folder / "server.log").read_text(errors="replace")[-500:]) from error
            time.sleep(0.1)


def running_server(*, durable: bool = False, tcp: bool = False
                   ) -> Generator[PostgresServer, None, None]:
    """A started server, stopped and removed when the iteration ends (a SIGTERM to the
    process too, see :func:`sigterm_unwinds`)."""
    with sigterm_unwinds():
        server = start_server(durable=durable, tcp=tcp)
        try:
            yield server
        finally:
            server.stop()
            shutil.rmtree(server.folder, ignore_errors=True)


@contextlib.contextmanager
def sigterm_unwinds() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt in the block, as Ctrl-C does, so a test run killed
    with it unwinds and its ``finally`` blocks (stopping the server, removing its folder)
    run; at its default it ended the process on the spot. Only in the main thread, and
    only where SIGTERM is at its default (a handler someone set is theirs)."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL):
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


TABLES = tuple(t for t in schema.TABLES if t not in ("harkback_schema", "index_totals"))
"""The tables holding data (the schema's version and the totals row stay)."""


def emptied(url: str) -> None:
    """Empty every harkback table of the database at ``url`` (its schema stays)."""
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(sql.SQL("TRUNCATE {} RESTART IDENTITY").format(
            sql.SQL(", ").join(sql.Identifier(t) for t in TABLES)))
        connection.execute("UPDATE index_totals SET messages = 0, message_tokens = 0, "
                           "sessions = 0, session_tokens = 0, generation = generation + 1")


def benchmark_databases(url: str) -> list[str]:
    """The databases the benchmarks made (``harkback_scale_...``) on ``url``'s server."""
    with psycopg.connect(url, autocommit=True) as connection:
        return [str(row[0]) for row in connection.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE 'harkback_scale_%'")]


def waits_for_a_lock(url: str) -> bool:
    """Whether a statement of some connection to ``url``'s server waits for a lock now."""
    with psycopg.connect(url, autocommit=True) as connection:
        return connection.execute("SELECT EXISTS (SELECT FROM pg_stat_activity WHERE "
                                  "wait_event_type = 'Lock')").fetchone() == (True,)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server for the whole test run; a machine without one fails the test
    with how to install it (never a skip)."""
    if server_binaries() is None:
        pytest.fail(INSTALL_HINT)
    yield from running_server()


@pytest.fixture(scope="session")
def postgres_database(postgres_server: PostgresServer) -> str:
    """The URL of one database shared by the store tests (each empties it first)."""
    return postgres_server.create_database("harkback_tests")
