"""Fixtures of the matching stages' tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from harkback.adapters.stores.memory import MemoryStore
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.stages.ports import SessionStore


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[SessionStore]:
    """An empty store of each kind."""
    if request.param == "memory":
        yield MemoryStore()
        return
    sqlite = SqliteStore.open(tmp_path / "h.db").unwrap()
    yield sqlite
    sqlite.close()
