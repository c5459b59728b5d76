"""A rewrite (``harkback redact``) of a PostgreSQL store beside other writers of the same
database, on a real server: a chunk is read and edited without the store's write lock and
written under it (read again first when another writer committed since), and chunks are
cut by bytes, so other writers take their turns between them."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from harkback.adapters.stores.postgres import PostgresStore
from harkback.adapters.stores.postgres_rewrite import _MARK, _UNMARK, Stopped, rewrite_all
from harkback.adapters.stores.postgres_writes import write
from harkback.stages.batching import Budget
from tests.adapters.stores.rewrite_turns import (
    BIG_SESSIONS,
    redact_kiwi,
    rewrite_beside_an_ingest,
    two_rewrites_at_once,
    watching_the_first,
)
from tests.adapters.stores.store_contract import ok
from tests.conftest import conversation
from tests.support.new_stores import store_locations

url = store_locations("postgres")
"""The URL of a new, empty database on the run's server."""

Connection = psycopg.Connection[tuple[Any, ...]]


def _busy(error: Exception) -> bool:
    return isinstance(error, psycopg.errors.LockNotAvailable)


def _other(url: str) -> Connection:
    """Another writer of the database (another machine's harkback), which waits at most
    2 s for the store's write lock."""
    connection = psycopg.connect(url, autocommit=True)
    connection.execute("SET lock_timeout = '2s'")
    return connection


async def test_an_ingest_during_a_rewrite_lands_at_once_and_keeps_its_update(url: str) -> None:
    """An ingest of new text for a session the rewrite is editing is not kept waiting (the
    whole redact was one transaction holding the write lock), and its text is not
    reverted to the old one, redacted."""
    with PostgresStore.open(url).unwrap() as store, _other(url) as other:
        stored, report, waited = await rewrite_beside_an_ingest(
            store, lambda updated: write(other, [updated]), _busy)
    assert stored == ["UPDATED text"]
    assert (report.sessions, report.messages, waited) == (0, 0, [])


async def test_two_rewrites_at_once_take_turns_and_count_each_change_once(url: str) -> None:
    """A second redact run while the first is editing a chunk runs at once, and the first
    finds that chunk rewritten when its turn comes: between them each change counts once."""
    with PostgresStore.open(url).unwrap() as store, _other(url) as other:
        stored, changes, waited = await two_rewrites_at_once(
            store, lambda: rewrite_all(other, redact_kiwi, dry_run=False), _busy)
    assert stored == ["[secret]", "[secret]"]
    assert (changes, waited) == (2, [])


async def test_big_sessions_are_written_a_few_at_a_time_cut_by_bytes(url: str) -> None:
    """Sessions larger than the byte budget go in several write transactions: the first
    are committed (another connection reads them redacted) before the last is read, and
    every one is redacted in the end."""
    with PostgresStore.open(url).unwrap() as store:
        await ok(store.ingest(BIG_SESSIONS))
    with psycopg.connect(url, autocommit=True) as reader, psycopg.connect(url) as rewriting:
        def first_text() -> str:
            row = reader.execute("SELECT content FROM messages WHERE session_id = 's0'"
                                 ).fetchone()
            return str(row[0] if row else "")
        edit, first_when_last_read = watching_the_first(first_text)
        report = rewrite_all(rewriting, edit, dry_run=False, budget=Budget(size=100_000))
        stored = [row[0][:10] for row in reader.execute(
            'SELECT content FROM messages ORDER BY session_id COLLATE "C"')]
    assert first_when_last_read == ["[secret] 0"]
    assert stored == [f"[secret] {i}" for i in range(4)]
    assert (report.sessions, report.messages) == (4, 4)


def _file_bytes(admin: Connection, table: str) -> bytes:
    """What ``table``'s files on the server hold (the tests' server runs beside them)."""
    admin.execute("CHECKPOINT")
    row = admin.execute("SELECT current_setting('data_directory'), pg_relation_filepath(%s)",
                        (table,)).fetchone()
    assert row is not None
    return b"".join(p.read_bytes() for p in Path(row[0]).glob(f"{row[1]}*"))


async def _cut_between_chunks(url: str, admin: Connection) -> None:
    """A redact of ``s0`` (holding ``kiwi``) and ``s1`` (nothing) whose connection the
    server drops once ``s0``'s chunk has committed: not Ctrl-C, so it could not compact."""
    with PostgresStore.open(url).unwrap() as store:
        await ok(store.ingest([conversation("s0", ("user", "the key is kiwi")),
                               conversation("s1", ("user", "nothing here"))]))
    with psycopg.connect(url) as dropped:
        def edit(text: str) -> str:
            if text == "nothing here":  # s0's chunk is committed: its connection goes
                admin.execute("SELECT pg_terminate_backend(%s)",
                              (dropped.info.backend_pid,))
            return redact_kiwi(text)
        with pytest.raises(psycopg.OperationalError):
            rewrite_all(dropped, edit, dry_run=False, budget=Budget(count=1))


async def test_a_run_stopped_between_chunks_and_run_again_leaves_no_secret_in_the_file(
        url: str) -> None:
    """The chunk holding the secret commits, then the server drops the connection; the
    run again has nothing left to rewrite, and the table's file must not hold the secret
    (the run again skipped VACUUM FULL: the mark the first run left makes it compact)."""
    with psycopg.connect(url, autocommit=True) as admin:
        await _cut_between_chunks(url, admin)
        with psycopg.connect(url) as again:
            assert rewrite_all(again, redact_kiwi, dry_run=False).messages == 0
        assert b"kiwi" not in _file_bytes(admin, "messages")


async def test_a_dry_run_says_a_compaction_is_pending_until_a_run_compacts(url: str) -> None:
    """After a run stopped between chunks, a dry run (which changes nothing) says the
    old row versions wait for a run's VACUUM FULL; once a run has compacted, it does not."""
    with psycopg.connect(url, autocommit=True) as admin:
        await _cut_between_chunks(url, admin)
    with psycopg.connect(url) as connection:
        pending = rewrite_all(connection, redact_kiwi, dry_run=True).notes
        again = rewrite_all(connection, redact_kiwi, dry_run=True).notes
        rewrite_all(connection, redact_kiwi, dry_run=False)
        after = rewrite_all(connection, redact_kiwi, dry_run=True).notes
    assert len(pending) == 1 and pending[0].startswith("a compaction is pending")
    assert (again, after) == (pending, ())


async def _during_compaction(url: str, meanwhile: Callable[[Connection], object]
                             ) -> tuple[Any, ...] | None:
    """The mark after a redact of one secret whose VACUUM FULL of summary_cache waited
    while another connection ran ``meanwhile`` and committed."""
    with PostgresStore.open(url).unwrap() as store:
        await ok(store.ingest([conversation("s0", ("user", "the key is kiwi"))]))
    with psycopg.connect(url) as other, psycopg.connect(url) as rewriting, \
            psycopg.connect(url, autocommit=True) as watching:
        other.execute("LOCK TABLE summary_cache IN ACCESS SHARE MODE")  # VACUUM FULL waits
        running = threading.Thread(target=rewrite_all, args=(rewriting, redact_kiwi),
                                   kwargs={"dry_run": False})
        running.start()
        while running.is_alive() and watching.execute(
                "SELECT wait_event_type, query FROM pg_stat_activity WHERE pid = %s",
                (rewriting.info.backend_pid,)).fetchone() != (
                    "Lock", "VACUUM (FULL, ANALYZE) summary_cache"):
            time.sleep(0.01)
        meanwhile(other)
        other.commit()
        running.join()
        return watching.execute("SELECT unvacuumed > 0 FROM index_totals").fetchone()


async def test_a_write_during_the_compaction_keeps_the_mark(url: str) -> None:
    """Another redact's chunk committed while this one's VACUUM FULL runs may follow the
    table it would have cleared: the mark it added stays, for a run again to compact."""
    marked = await _during_compaction(url, lambda other: other.execute(_MARK))  # its chunk
    assert marked == (True,)


async def test_a_mark_cleared_and_set_again_during_the_compaction_stays(url: str) -> None:
    """While this run's VACUUM FULL waits, another redact that read the same mark clears
    it, and a third's chunk sets it again: that chunk's old rows may follow a table this
    run compacted, so the mark must stay (it read the value this run read, and was
    cleared)."""
    def meanwhile(other: Connection) -> None:
        other.execute(_UNMARK, (1,))  # the other redact's clear: it read 1 too
        other.execute(_MARK)  # the third's chunk
    assert await _during_compaction(url, meanwhile) == (True,)


async def test_a_stop_during_a_rewrite_starts_no_other_chunk_and_compacts_what_it_wrote(
        url: str) -> None:
    """Ctrl-C or SIGTERM (the store closing) during a redact ends it once the chunk under
    way is written, and the tables are compacted first, so the old text of what it wrote
    leaves their files (a run again that finds nothing left there would not compact):
    Ctrl-C waited for the whole run, its ``VACUUM FULL`` included."""
    with PostgresStore.open(url).unwrap() as store:
        await ok(store.ingest([conversation("s0", ("user", "the key is kiwi")),
                               conversation("s1", ("user", "nothing here"))]))
    edited: list[str] = []

    def edit(text: str) -> str:
        edited.append(text)  # stopped as the first chunk is edited
        return redact_kiwi(text)
    with psycopg.connect(url, autocommit=True) as admin, psycopg.connect(url) as rewriting:
        with pytest.raises(Stopped):
            rewrite_all(rewriting, edit, dry_run=False, budget=Budget(count=1),
                        stop=lambda: bool(edited))
        stored = [row[0] for row in admin.execute(
            'SELECT content FROM messages ORDER BY session_id COLLATE "C"')]
        held = _file_bytes(admin, "messages")
    assert stored == ["the key is [secret]", "nothing here"]
    assert b"kiwi" not in held


async def test_a_transaction_older_than_the_writes_keeps_the_mark_until_it_ends(
        url: str) -> None:
    """A transaction open since before the redact's write (another program's report, a
    dump) may still see the old row versions, so VACUUM FULL keeps them in the file: the
    run says so and keeps the mark, and the run after the transaction ended clears both
    (the mark was cleared, and the secret stayed in the file for good)."""
    with PostgresStore.open(url).unwrap() as store:
        await ok(store.ingest([conversation("s0", ("user", "the key is kiwi"))]))
    with psycopg.connect(url, autocommit=True) as admin, psycopg.connect(url) as running:
        with psycopg.connect(url) as old:
            old.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            old.execute("SELECT 1").fetchone()  # its snapshot (no lock the VACUUM waits for)
            pid = old.info.backend_pid
            notes = rewrite_all(running, redact_kiwi, dry_run=False).notes
            kept = admin.execute("SELECT unvacuumed FROM index_totals").fetchone()
            held = _file_bytes(admin, "messages")
        again = rewrite_all(running, redact_kiwi, dry_run=False)
        cleared = admin.execute("SELECT unvacuumed > 0 FROM index_totals").fetchone()
        after = _file_bytes(admin, "messages")
    assert b"kiwi" in held and kept == (1,)
    assert len(notes) == 1 and f"server process {pid}" in notes[0]
    assert (again.messages, again.notes, cleared) == (0, (), (False,))
    assert b"kiwi" not in after
