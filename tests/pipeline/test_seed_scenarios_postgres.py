"""The seed scenarios on PostgreSQL: for every question the PostgreSQL store gives the same
top five sessions, in the same order, as a SQLite file holding the same corpus."""

from __future__ import annotations

import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path

import attrs
import pytest

from harkback.pipeline import SUMMARIZERS, Harkback, Pipeline, open_store, run_sync
from harkback.stages.ports import SessionStore
from tests.support.postgres_server import PostgresServer
from tests.support.seeds import ask, conversations, load_corpus

CORPUS = load_corpus()


def _filled(target: str, now: float) -> SessionStore:
    store = open_store(target).unwrap()
    run_sync(lambda: store.ingest(conversations(CORPUS, now=now)).awaitable()).unwrap()
    return store


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory, postgres_server: PostgresServer
          ) -> Iterator[tuple[Harkback, Harkback]]:
    """The corpus, dated from the same now, in a SQLite file and in a PostgreSQL database."""
    now = time.time()
    folder: Path = tmp_path_factory.mktemp("seeds-twins")
    stores = (_filled(str(folder / "seeds.db"), now),
              _filled(postgres_server.create_database("seeds"), now))
    pipeline = attrs.evolve(Pipeline(), summarize=SUMMARIZERS["none"])
    yield Harkback(store=stores[0], pipeline=pipeline), Harkback(store=stores[1],
                                                                 pipeline=pipeline)
    for store in stores:
        store.close()


def test_every_question_ranks_the_same_top_five(twins: tuple[Harkback, Harkback]) -> None:
    """The default pipeline's first five sessions agree for every seed question."""
    sqlite, postgres = twins
    differ = []
    for question in CORPUS.questions:
        on_sqlite = run_sync(partial(ask, sqlite, question))
        on_postgres = run_sync(partial(ask, postgres, question))
        assert on_sqlite, question.id
        if on_sqlite != on_postgres:
            differ.append((question.id, on_sqlite, on_postgres))
    assert not differ
