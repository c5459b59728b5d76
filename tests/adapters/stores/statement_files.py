"""Store files for the statement tests: written once through the store, then read through a
plain connection that runs statements directly."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from harkback.adapters.stores.sqlite import SqliteStore
from harkback.stages.records import Conversation
from tests.adapters.stores.store_contract import ok


def store_file(factory: pytest.TempPathFactory, name: str,
               conversations: Sequence[Conversation]) -> Path:
    """A new store file holding ``conversations``."""
    path = factory.mktemp(name) / "h.db"
    store = SqliteStore.open(path).unwrap()
    asyncio.run(ok(store.ingest(conversations)))
    store.close()
    return path


def plain_connection(path: Path) -> Iterator[sqlite3.Connection]:
    """A plain connection to ``path``, closed when the fixture using it ends."""
    connection = sqlite3.connect(path)
    yield connection
    connection.close()
