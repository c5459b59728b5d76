"""The garbage collector pauses while ``harkback search`` runs, and only then (a real
SQLite file, the command run in this process through ``cli.main``)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import io
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline import cli
from harkback.pipeline.commands import COMMANDS
from tests.conftest import conversation


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A store with two sessions."""
    path = tmp_path / "h.db"
    store = SqliteStore.open(path).unwrap()
    sessions = [conversation("docker", ("user", "the docker bridge has no dns"),
                             ("assistant", "attach both containers to one network"),
                             started_at=1_770_000_000.0, title="Docker DNS"),
                conversation("cors", ("user", "CORS error from nginx"),
                             started_at=1_771_000_000.0)]
    asyncio.run(_ingest(store, sessions))
    store.close()
    return path


async def _ingest(store: SqliteStore, sessions: list[Any]) -> None:
    (await store.ingest(sessions)).unwrap()


RUNNING: list[str] = []
"""The command running now, while one runs (set by :func:`watched`)."""


@pytest.fixture
def watched(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command notes that it runs, from its first line to its last."""
    def noted(name: str, command: Callable[[argparse.Namespace], Awaitable[int]]
              ) -> Callable[[argparse.Namespace], Awaitable[int]]:
        async def run(args: argparse.Namespace) -> int:
            RUNNING.append(name)
            try:
                return await command(args)
            finally:
                RUNNING.remove(name)
        return run
    for name, command in list(COMMANDS.items()):
        monkeypatch.setitem(COMMANDS, name, noted(name, command))


@pytest.fixture
def collections(watched: None) -> Iterator[list[bool]]:
    """For every collection that runs, whether a command was running; the collector is
    made to run at nearly every allocation, and its thresholds come back after."""
    seen: list[bool] = []

    def heard(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            seen.append(bool(RUNNING))
    thresholds = gc.get_threshold()
    gc.set_threshold(1, 1, 1)
    gc.callbacks.append(heard)
    try:
        yield seen
    finally:
        gc.callbacks.remove(heard)
        gc.set_threshold(*thresholds)


class _Tracked:
    """An object the collector tracks (lists and dicts come from free lists, which do not
    count as allocations)."""


def _main(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = cli.main(list(args))
    return status, out.getvalue()


def test_a_search_runs_without_collections_and_gives_the_collector_back(
        db: Path, collections: list[bool]) -> None:
    """No collection runs while the search command runs, however often one is due;
    afterwards the collector runs again."""
    status, out = _main("search", "docker dns", "--db", str(db), "--json")
    assert status == 0 and '"docker"' in out
    assert not any(collections)
    assert gc.isenabled()
    before = len(collections)
    assert [_Tracked() for _ in range(100)] and len(collections) > before


def test_other_commands_keep_collecting(db: Path, collections: list[bool]) -> None:
    """A command that is not one-shot (here, the recent sessions) runs with the collector."""
    status, out = _main("recent", "--db", str(db), "--json")
    assert status == 0 and '"cors"' in out
    assert any(collections)
