"""A new store of each kind for a test module, as one fixture made by a call:

    db = store_locations("sqlite", "postgres")   # each test gets a new location to --db
    store = new_stores("memory", "sqlite")       # each test gets an opened, empty store

The module-level name is the fixture's name; with more than one kind the fixture is
parametrised and the tests' ids say the kind (``test_x[sqlite]``, ``test_x[postgres]``),
with one kind it is not (the ids stay bare). The kinds:

- ``memory``: the in-memory store (its location ``:memory:``);
- ``sqlite``: a new file in the test's ``tmp_path``;
- ``postgres``: on the run's test server (tests/support/postgres_server.py). A location is
  a new database of its own (a command run on it makes the schema, as on a user's empty
  database); an opened store is the run's shared test database, emptied: making and
  migrating a database per test costs far more, and the store tests number hundreds.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

import pytest

from harkback.adapters.stores.memory import MemoryStore
from harkback.adapters.stores.postgres import PostgresStore
from harkback.adapters.stores.sqlite import SqliteStore
from tests.adapters.stores.vector_contract import Store
from tests.support.postgres_server import PostgresServer, emptied

Kind = Literal["memory", "sqlite", "postgres"]
KINDS: tuple[Kind, ...] = ("memory", "sqlite", "postgres")
SQLITE_NAME = "store.db"
"""The file a ``sqlite`` store is in (a name no test of the suite gives a file of its own)."""

# One count for the whole run: the server is the run's, so a database's or a role's name
# must be unique across every module, not only within one.
_numbers = itertools.count()


def unique_name(prefix: str) -> str:
    """``prefix`` and a number no other name of the run has, for what a server holds once
    for all its databases (a database, a role): ``unique_name("writer")`` -> ``writer_4``."""
    return f"{prefix}_{next(_numbers)}"


def new_database(server: PostgresServer, prefix: str) -> str:
    """The URL of a new, empty database on ``server``, named by :func:`unique_name`:
    ``new_database(postgres_server, "team")`` makes ``team_7``."""
    return server.create_database(unique_name(prefix))


def new_location(kind: Kind, request: pytest.FixtureRequest, folder: Path) -> str:
    """A new store location of ``kind`` (see the module), the ``--db`` value naming it; a
    database is named after the test's module (``test_import_nuls`` -> ``import_nuls_3``)."""
    if kind == "memory":
        return ":memory:"
    if kind == "sqlite":
        return str(folder / SQLITE_NAME)
    prefix = request.module.__name__.rpartition(".")[2].removeprefix("test_")
    return new_database(request.getfixturevalue("postgres_server"), prefix)


def fresh_store(kind: Kind, request: pytest.FixtureRequest, folder: Path) -> Iterator[Store]:
    """A fresh, empty, opened store of ``kind`` (see the module), closed when the iteration
    ends: ``for store in fresh_store("sqlite", request, tmp_path): ...``."""
    if kind == "memory":
        yield MemoryStore()
    elif kind == "sqlite":
        with SqliteStore.open(folder / SQLITE_NAME).unwrap() as opened:
            yield opened
    else:
        url = request.getfixturevalue("postgres_database")
        with PostgresStore.open(url).unwrap() as store:
            emptied(url)
            yield store


def _kind(request: pytest.FixtureRequest, kinds: tuple[Kind, ...]) -> Kind:
    """The kind of this test: its parameter, or the one kind there is (no parameter)."""
    kind: Kind = getattr(request, "param", kinds[0])
    return kind


def _params(kinds: tuple[Kind, ...]) -> list[Kind] | None:
    if not kinds or any(k not in KINDS for k in kinds):
        raise ValueError(f"store kinds are some of {KINDS}, not {kinds}")
    return list(kinds) if len(kinds) > 1 else None


def store_locations(*kinds: Kind) -> Callable[..., str]:
    """A fixture giving each test a new location of each of ``kinds`` (a str for
    ``--db``): ``db = store_locations("sqlite", "postgres")`` at a module's top."""
    @pytest.fixture(params=_params(kinds))
    def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
        return new_location(_kind(request, kinds), request, tmp_path)
    return location


def new_stores(*kinds: Kind) -> Callable[..., Iterator[Store]]:
    """A fixture giving each test a fresh, opened store of each of ``kinds``, closed after:
    ``store = new_stores("memory", "sqlite")`` at a module's top."""
    @pytest.fixture(params=_params(kinds))
    def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
        yield from fresh_store(_kind(request, kinds), request, tmp_path)
    return store
