"""``harkback migrate`` stopped by Ctrl-C says which schema version the store is at (it
said only "interrupted"), read from a real SQLite file."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harkback.adapters.stores.sql.schema import SCHEMA_VERSION
from harkback.pipeline import wiring
from harkback.pipeline.cli import main
from tests.adapters.stores.old_files import old_file
from tests.conftest import conversation
from tests.pipeline.test_cli_migrate import _version

DOCKER = conversation("docker", ("user", "the docker bridge lost its dns"))


def ctrl_c(migrate: Callable[..., Any], *, after: bool) -> Callable[..., Any]:
    """``migrate``, with a Ctrl-C arriving just before it starts or just as it ends."""
    def stopped(target: str, *more: Any) -> Any:
        if after:
            migrate(target, *more)
        raise KeyboardInterrupt
    return stopped


@pytest.mark.parametrize("after", [True, False])
def test_an_interrupted_migrate_says_where_the_store_is(
        after: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A version-1 file: stopped before the migration it is still at 1, and "run again";
    stopped as it ends, at this harkback's version, and migrated."""
    db = tmp_path / "h.db"
    old_file(db, [DOCKER])
    monkeypatch.setattr(wiring, "migrate_store", ctrl_c(wiring.migrate_store, after=after))
    assert main(["migrate", "--db", str(db), "--json"]) == 130
    out, err = capsys.readouterr()
    version = _version(db)
    assert version == (SCHEMA_VERSION if after else 1)
    said = (f"the store was migrated: it is at schema version {version}" if after else
            f"the store is still at schema version {version}, not migrated to "
            f"{SCHEMA_VERSION}")
    assert said in err.splitlines()[-1], err
    assert said in json.loads(out)["kept"]


def test_a_real_ctrl_c_during_a_migrate_says_it_migrated_and_prints_one_payload(
        tmp_path: Path) -> None:
    """A real SIGINT while the migration runs (held open a moment after its last step, in
    a process of its own): asyncio only cancels the command then, so it used to say "1 ->
    5" and a success payload, then "interrupted" and a second payload."""
    db = tmp_path / "h.db"
    old_file(db, [DOCKER])
    driver = textwrap.dedent(f"""
        import sys, time
        from harkback.pipeline import wiring
        from harkback.pipeline.cli import main
        real = wiring.migrate_store
        def held(target, *more):
            done = real(target, *more)
            print("migrated", file=sys.stderr, flush=True)
            time.sleep(5)  # the Ctrl-C comes here, as the migration ends
            return done
        wiring.migrate_store = held
        sys.exit(main(["migrate", "--db", {str(db)!r}, "--json"]))
    """)
    run = subprocess.Popen([sys.executable, "-c", driver], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    assert run.stderr is not None
    assert run.stderr.readline() == "migrated\n"
    run.send_signal(signal.SIGINT)
    out, err = run.communicate(timeout=60)
    assert run.returncode == 130, err
    said = f"the store was migrated: it is at schema version {_version(db)}"
    assert said in err, err
    assert json.loads(out)["kept"].startswith(said)  # one payload: json.loads reads it whole


def test_a_migrate_stopped_before_it_began_says_the_store_is_as_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A Ctrl-C while the command is still starting (its imports take half of a small
    store's migrate) said only "interrupted", and under --json no ``kept``."""
    from harkback.pipeline import upkeep_commands

    def starting(target: str) -> None:
        raise KeyboardInterrupt
    db = tmp_path / "h.db"
    old_file(db, [DOCKER])
    monkeypatch.setattr(upkeep_commands, "needs_file", starting)
    assert main(["migrate", "--db", str(db), "--json"]) == 130
    out, err = capsys.readouterr()
    said = "the migration had not begun: the store is as it was"
    assert (_version(db), said in err.splitlines()[-1]) == (1, True), err
    assert json.loads(out)["kept"].startswith(said)


def test_ctrl_c_stops_a_migrate_waiting_for_the_write_lock_at_once(tmp_path: Path) -> None:
    """SQLite's wait for the lock (its busy timeout, 5 s) cannot be cut short: a Ctrl-C
    then took effect only when it ended, and the command failed as locked (exit 1), the
    Ctrl-C lost. Now it stops at once, saying the store is as it was."""
    from tests.pipeline.test_interrupt_waiting import signalled_while_waiting
    db = tmp_path / "h.db"
    old_file(db, [DOCKER])
    before = db.read_bytes()
    status, out, err, took = signalled_while_waiting(db, signal.SIGINT, "migrate")
    assert (status, out, err) == (
        130, "", "harkback: interrupted; the store is still at schema version 1, not migrated "
        f"to {SCHEMA_VERSION}: the same command run again migrates it\n")
    assert took < 2.5  # the busy timeout is 5 s
    assert (db.read_bytes(), _version(db)) == (before, 1)


def test_a_second_ctrl_c_while_the_migration_ends_still_says_it_migrated(
        tmp_path: Path) -> None:
    """The first Ctrl-C cancels the command, which then waits for the migration's thread
    (its transaction ends whole; the process cannot exit before it anyway). A second one
    during that wait escaped it and said "the migration had not begun: the store is as it
    was" of a store the thread then migrated."""
    db = tmp_path / "h.db"
    old_file(db, [DOCKER])
    driver = textwrap.dedent(f"""
        import sys, time
        from harkback.pipeline import wiring
        from harkback.pipeline.cli import main
        real = wiring.migrate_store
        def held(target, *more):
            print("migrating", file=sys.stderr, flush=True)
            time.sleep(3)  # both Ctrl-Cs come here, the migration still to commit
            return real(target, *more)
        wiring.migrate_store = held
        sys.exit(main(["migrate", "--db", {str(db)!r}]))
    """)
    run = subprocess.Popen([sys.executable, "-c", driver], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    assert run.stderr is not None
    assert run.stderr.readline() == "migrating\n"
    run.send_signal(signal.SIGINT)
    time.sleep(0.5)
    run.send_signal(signal.SIGINT)
    out, err = run.communicate(timeout=60)
    assert (run.returncode, out, _version(db)) == (130, "", SCHEMA_VERSION), err
    assert err.splitlines() == [
        f"harkback: interrupted; the store was migrated: it is at schema version "
        f"{SCHEMA_VERSION}, this harkback's (`harkback migrate` again says it is up to "
        "date)"], err


def test_a_signal_as_the_migration_s_thread_starts_says_where_the_store_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A SIGTERM (Ctrl-C ignored, as under nohup) landing as the migration's thread starts,
    before the command awaits it: it escaped the command's handler, which said "the
    migration had not begun" of a store the thread went on to migrate (seen about one run
    in ten on a busy machine). Now the thread is told to stop and waited for, and the line
    says where the store is."""
    import threading

    started = threading.Thread.start

    def interrupted(thread: threading.Thread) -> None:
        started(thread)
        if thread.name.startswith("harkback-migrate"):
            time.sleep(0.2)  # the thread has the migration ...
            raise KeyboardInterrupt  # ... the signal lands before the command awaits it
    db = tmp_path / "h.db"
    old_file(db, [DOCKER])
    monkeypatch.setattr(threading.Thread, "start", interrupted)
    assert main(["migrate", "--db", str(db)]) == 130
    err = capsys.readouterr().err
    # The migration ran (nothing told it to stop before it took the lock): the line says so.
    assert _version(db) == SCHEMA_VERSION
    assert err.splitlines()[-1] == (
        f"harkback: interrupted; the store was migrated: it is at schema version "
        f"{SCHEMA_VERSION}, this harkback's (`harkback migrate` again says it is up to "
        "date)"), err
