"""Every store opened read-only through ``open_store`` (what the commands and the library
use) refuses each write with a :class:`StoreUnavailable` saying so: in memory, a SQLite
file and a real PostgreSQL database."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from returns.future import FutureResult

from harkback.adapters.stores.postgres import PostgresStore
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.wiring import open_store
from harkback.stages.errors import StoreUnavailable
from harkback.stages.imports import SourceKey
from harkback.stages.ports import SessionStore
from tests.adapters.stores.store_contract import failed
from tests.conftest import conversation
from tests.support.postgres_server import emptied

WRITES: dict[str, Callable[[SessionStore], FutureResult[Any, StoreUnavailable]]] = {
    "ingest": lambda s: s.ingest([conversation("s1", ("user", "the heron nests"))]),
    "import marks": lambda s: _need(s.import_ledger()).advance(
        SourceKey("hermes", "/h/state.db"), "1", now=1.0),
    "remove": lambda s: _need(s.session_remover()).remove_sessions(["s1"]),
    "rewrite": lambda s: _need(s.text_rewriter()).rewrite_texts(
        str.upper),
    "vectors": lambda s: _need(s.vector_store()).keep_vectors("m", []),
}


def _need(part: Any) -> Any:
    assert part is not None
    return part


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def read_only(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SessionStore]:
    """A store of each kind, made writable first (nothing to open read-only else), then
    opened read-only as ``open_store`` opens it."""
    target = ":memory:"
    if request.param == "sqlite":
        target = str(tmp_path / "harkback.db")
        SqliteStore.open(target).unwrap().close()
    elif request.param == "postgres":
        target = request.getfixturevalue("postgres_database")
        with PostgresStore.open(target).unwrap():
            emptied(target)
    with open_store(target, readonly=True).unwrap() as store:
        yield store


@pytest.mark.parametrize("write", list(WRITES))
async def test_a_store_opened_read_only_refuses_each_write(read_only: SessionStore,
                                                           write: str) -> None:
    """``open_store(":memory:", readonly=True)`` gave a store that ingested, imported and
    removed as if writable, where SQLite and PostgreSQL refuse; now it refuses alike."""
    error = await failed(WRITES[write](read_only))
    assert "opened read-only" in error.reason, error.reason
