"""The PostgreSQL store's title search, ranked in the server, against the in-memory store's
(every title scored in Python): same sessions, order and scores on a corpus where many
titles match, scores tie, titles are CJK, sources match, a word passes ``max_scored`` and
some titles' vectors lost words; and only the titles that can reach the cut come back."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from typing import Any, cast

import attrs
import psycopg
import pytest

from harkback.adapters.stores import postgres_titles
from harkback.adapters.stores.memory import MemoryStore
from harkback.adapters.stores.postgres import PostgresStore
from harkback.stages.ports import MatchQuery
from harkback.stages.records import Conversation, TitleHit
from tests.adapters.stores.store_contract import match, ok
from tests.conftest import conversation
from tests.support.new_stores import new_database
from tests.support.postgres_server import PostgresServer

WORDS = ("error", "docker", "network", "bridge", "dns", "config", "cache", "deploy",
         "kernel", "fix", "api", "cors")
CJK = ("修复端口冲突的问题", "端口配置", "日志配置权限", "前端框架的日志", "端口", "配置错误")
SOURCES = ("cli", "web", "cron", "docker-desktop")
LONG = "x" * 600
"""A word longer than a ``tsvector`` keeps: a title holding it twice, or two words cut to
one lexeme, has no bound in the server (nor has a title with a word past 256 positions)."""


def _corpus() -> list[Conversation]:
    # Few distinct titles for many sessions, so scores tie across the cut; repeats of a
    # word; some titles without a start (last among ties), some sharing one.
    pick = random.Random(21)
    kinds = [" ".join(pick.choices(WORDS, weights=(12, 6, 3, 3, 1, 3, 2, 2, 1, 2, 1, 1),
                                   k=pick.randrange(1, 7))) for _ in range(40)]
    kinds += [*CJK, "docker docker docker", f"docker {LONG} error", f"{LONG} bridge",
              "docker network bridge error fix", "network bridge",
              "network docker network cache docker", f"{LONG} {LONG} kernel",
              f"{LONG}a {LONG}b error", "cache " * 300 + "kernel"]
    return [conversation(f"s{i:04d}", ("user", "x"), title=pick.choice(kinds),
                         source=SOURCES[i % len(SOURCES)],
                         started_at=None if i % 9 == 0 else float(pick.randrange(60)))
            for i in range(700)]


@pytest.fixture(scope="module")
def stores(postgres_server: PostgresServer) -> Iterator[tuple[PostgresStore, MemoryStore]]:
    """The corpus in a new PostgreSQL database and in memory."""
    postgres = PostgresStore.open(new_database(postgres_server, "titles")).unwrap()
    memory = MemoryStore()
    for store in (postgres, memory):
        asyncio.run(ok(store.ingest(_corpus())))
    yield postgres, memory
    postgres.close()


QUESTIONS = ("how did we fix the docker network bridge error last time?", "docker error",
             "error", "kernel dns", "cron", "docker", "端口配置", "日志 error",
             '"network bridge"', '"docker network" OR cors', "dock* api", "kern* OR cor*",
             "端 kernel",
             "docker AND error", "docker NOT error", "bridge OR xxxxxxxx", "cache kernel",
             "zygomorphic")
FIELDS: tuple[dict[str, Any], ...] = (
    {}, {"limit": 5}, {"limit": 1}, {"limit": 300}, {"max_scored": 100},
    {"max_scored": 20, "limit": 10}, {"max_scored": None}, {"hidden_sources": ("web",)},
    {"sources": ("cron", "cli")}, {"since": 20.0, "until": 40.0, "limit": 8})


def _found(hits: tuple[TitleHit, ...]) -> list[tuple[str, str, str, float | None]]:
    return [(h.session_id, h.title, h.source, h.started_at) for h in hits]


@pytest.mark.parametrize("question", QUESTIONS)
def test_title_hits_are_the_python_scorers(stores: tuple[PostgresStore, MemoryStore],
                                           question: str) -> None:
    """Every question, with every set of filters: the same sessions in the same order
    with the same scores as scoring each title in Python."""
    postgres, memory = stores
    for fields in FIELDS:
        query = match(question, **{"limit": 50, **fields})
        found = asyncio.run(ok(postgres.search_titles(query)))
        expected = asyncio.run(ok(memory.search_titles(query)))
        assert _found(found) == _found(expected), (question, fields)
        assert [h.score for h in found] == pytest.approx([h.score for h in expected],
                                                         rel=1e-12), (question, fields)


@attrs.define
class Counted:
    """A connection that counts the rows each statement sent back."""

    connection: psycopg.Connection[tuple[Any, ...]]
    rows: list[int] = attrs.field(factory=list)

    def execute(self, statement: str, params: Any = None) -> psycopg.Cursor[tuple[Any, ...]]:
        """Run ``statement``, noting how many rows it gave."""
        cursor = self.connection.execute(statement, params)
        self.rows.append(cursor.rowcount)
        return cursor

    def transaction(self) -> Any:
        """The connection's transaction."""
        return self.connection.transaction()


def _searched(postgres: PostgresStore, query: MatchQuery
              ) -> tuple[tuple[TitleHit, ...], list[int]]:
    """The title hits, and the rows each title statement sent back (not the counts')."""
    with psycopg.connect(postgres.url, autocommit=True) as connection:
        counted = Counted(connection)
        hits = postgres_titles.search_titles(
            cast(psycopg.Connection[tuple[Any, ...]], counted), query)
    return hits, counted.rows[1:]


def test_only_titles_that_can_reach_the_cut_come_back(
        stores: tuple[PostgresStore, MemoryStore]) -> None:
    """"docker" is in hundreds of titles; for the best 5 the server sends a few dozen (the
    ties at the cut), and they are the Python scorer's best 5."""
    postgres, memory = stores
    query = match("docker", limit=5, max_scored=None)
    hits, sent = _searched(postgres, query)
    matching = asyncio.run(ok(memory.search_titles(attrs.evolve(query, limit=10_000))))
    assert _found(hits) == _found(matching[:5])
    assert len(matching) > 300
    assert sum(sent) < len(matching) / 4


def test_a_phrase_bound_above_its_score_reads_again_and_ranks_alike(
        stores: tuple[PostgresStore, MemoryStore]) -> None:
    """A title holding "docker" and "network" apart is bounded as if it held the phrase:
    when such bounds crowd the best, a second statement reads what can still place."""
    postgres, memory = stores
    query = match('"docker network"', limit=3, max_scored=None)
    hits, sent = _searched(postgres, query)
    assert _found(hits) == _found(asyncio.run(ok(memory.search_titles(query))))
    assert len(sent) == 2
