"""Writers that wait their turn: a busy file is tried again, with back-off, for a while."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest
from returns.io import IOFailure, IOResult, IOSuccess

from harkback.adapters.stores.sqlite import SqliteStore
from harkback.adapters.stores.write_turns import Patience, busy_error, patiently
from harkback.stages.errors import StoreUnavailable
from harkback.stages.imports import Mark, SourceKey
from harkback.stages.ports import IngestReport, MessageKey
from harkback.stages.records import Message
from harkback.stages.stage import as_result
from tests.adapters.stores.store_contract import ok
from tests.conftest import conversation


def _hold_lock(path: Path, seconds: float) -> threading.Thread:
    """Another connection holds the write lock for ``seconds`` (from when this returns)."""
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")

    def release() -> None:
        time.sleep(seconds)
        holder.execute("ROLLBACK")
        holder.close()
    thread = threading.Thread(target=release)
    thread.start()
    return thread


async def _ingest_while_locked(path: Path, *, busy: float, patience: float, hold: float
                               ) -> tuple[IOResult[IngestReport, StoreUnavailable], float,
                                          tuple[Message, ...]]:
    """Ingest one session while another connection holds the lock for ``hold`` seconds:
    the outcome, the seconds it took, and what is stored afterwards."""
    SqliteStore.open(path).unwrap().close()
    with SqliteStore.open(path, busy_timeout=busy, write_patience=patience).unwrap() as store:
        holder = _hold_lock(path, hold)
        started = time.monotonic()
        outcome = await store.ingest([conversation("s1", ("user", "docker bridge"))])
        waited = time.monotonic() - started
        holder.join()
        stored = await ok(store.messages(["s1"]))
    return outcome, waited, stored


async def test_an_ingest_waits_for_a_long_transaction_past_its_busy_timeout(
        tmp_path: Path) -> None:
    """A lock held for 1.5 s outlasts the 0.2 s busy timeout; the ingest still lands."""
    outcome, waited, stored = await _ingest_while_locked(tmp_path / "h.db", busy=0.2,
                                                         patience=10.0, hold=1.5)
    assert outcome.map(lambda report: report.added) == IOSuccess(1)
    assert waited >= 1.0
    assert [m.content for m in stored] == ["docker bridge"]


async def test_the_ledger_and_vectors_wait_their_turn_too(tmp_path: Path) -> None:
    """Keeping vectors and import marks waits for the lock like an ingest does."""
    path = tmp_path / "h.db"
    source = SourceKey(kind="jsonl", location="/x.jsonl")
    with SqliteStore.open(path, busy_timeout=0.1, write_patience=10.0).unwrap() as store:
        await ok(store.ingest([conversation("s1", ("user", "docker bridge"))]))
        holder = _hold_lock(path, 0.8)
        kept = await ok(store.keep_vectors(
            "m", [(MessageKey(session_id="s1", position=0), (1.0, 0.0))]))
        holder.join()
        holder = _hold_lock(path, 0.8)
        ledger = store.import_ledger()
        await ok(ledger.keep(source, [Mark(item="x", fingerprint="1:2", sessions=1,
                                           messages=1)], now=5.0))
        holder.join()
        state = await ok(ledger.state(source))
    assert kept == 1
    assert state.sessions == 1


async def test_a_rewrite_waits_its_turn_too(tmp_path: Path) -> None:
    """``harkback redact``'s rewrite of a store waits for another connection's lock past
    its busy timeout, as an ingest does, and then changes the text."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path, busy_timeout=0.1, write_patience=10.0).unwrap() as store:
        await ok(store.ingest([conversation("s1", ("user", "the key is kiwi"))]))
        holder = _hold_lock(path, 0.8)
        report = await ok(store.rewrite_texts(lambda text: text.replace("kiwi", "[secret]")))
        holder.join()
        stored = await ok(store.messages(["s1"]))
    assert (report.sessions, report.messages) == (1, 1)
    assert [m.content for m in stored] == ["the key is [secret]"]


async def test_patience_runs_out_and_the_lock_is_reported(tmp_path: Path) -> None:
    """A lock held longer than the writer's patience fails the write as a value, in time,
    flagged as passing by itself (``transient``: what ``sync --watch`` waits for)."""
    outcome, waited, stored = await _ingest_while_locked(tmp_path / "h.db", busy=0.1,
                                                         patience=0.6, hold=2.0)
    assert isinstance(outcome, IOFailure)
    assert "locked" in as_result(outcome).failure().reason
    assert as_result(outcome).failure().transient
    assert stored == ()
    assert 0.5 <= waited < 1.8


def test_only_a_busy_file_is_tried_again() -> None:
    """Any other error ends the write on its first try."""
    calls: list[int] = []

    def work(_connection: sqlite3.Connection) -> None:
        calls.append(1)
        raise sqlite3.OperationalError("disk I/O error")
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        patiently(work, Patience(total_s=5.0), sleep=lambda _s: None)(
            sqlite3.connect(":memory:"))
    assert calls == [1]


def test_pauses_grow_are_jittered_and_stop_at_the_patience() -> None:
    """Pauses are random shares of a doubling ceiling; the last is cut so that the writer
    gives up at its patience, not a pause before it."""
    now = [0.0]
    pauses: list[float] = []

    def sleep(seconds: float) -> None:
        pauses.append(seconds)
        now[0] += seconds

    def work(_connection: sqlite3.Connection) -> Message:
        raise busy_error()
    draws = iter([0.9, 0.1, 0.9, 0.5] + [1.0] * 100)
    with pytest.raises(sqlite3.OperationalError):
        patiently(work, Patience(total_s=3.0, first_pause_s=0.1, longest_pause_s=1.0),
                  clock=lambda: now[0], sleep=sleep, draw=lambda: next(draws))(
            sqlite3.connect(":memory:"))
    assert pauses[:4] == pytest.approx([0.09, 0.02, 0.36, 0.4])
    assert max(pauses) == 1.0
    assert sum(pauses) == pytest.approx(3.0)
    assert pauses[-1] < 1.0


def test_a_writer_stops_waiting_once_told_to() -> None:
    """``stop()`` (the store closing: an interrupted command) ends the retries at once
    with the busy error, patience left or not."""
    tries: list[int] = []

    def work(_connection: sqlite3.Connection) -> None:
        tries.append(1)
        raise busy_error()
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        patiently(work, Patience(total_s=60.0), sleep=lambda _s: None,
                  stop=lambda: len(tries) >= 2)(sqlite3.connect(":memory:"))
    assert len(tries) == 2


def test_a_file_that_is_no_database_is_not_a_passing_failure(tmp_path: Path) -> None:
    """What waiting does not mend (a file that is not SQLite) is not flagged ``transient``,
    unlike another writer's lock."""
    path = tmp_path / "h.db"
    path.write_bytes(b"not a database, but text of some length " * 200)
    opened = SqliteStore.open(path, readonly=True)
    assert not opened.failure().transient, opened
