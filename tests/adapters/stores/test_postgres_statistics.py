"""The PostgreSQL store trusts the planner's statistics only for words far past the count
limit, and never when the word's own matches say otherwise."""

from __future__ import annotations

from collections.abc import Callable

import psycopg
import pytest

from harkback.adapters.stores import postgres_search, postgres_statistics
from harkback.adapters.stores.postgres import PostgresStore
from harkback.stages.query import Term
from harkback.stages.records import Conversation
from tests.adapters.stores.store_contract import ok
from tests.support.new_stores import store_locations

Make = Callable[..., Conversation]


url = store_locations("postgres")
"""The URL of a new, empty database on the run's server."""


async def _analysed(url: str, make_conversation: Make) -> PostgresStore:
    """A store where "kiwi" is in 60 messages of 120 and "mango" in 3, its statistics
    gathered."""
    store = PostgresStore.open(url).unwrap()
    await ok(store.ingest([make_conversation(
        "s1", *[("user", f"kiwi {i}" + (" mango" if i < 3 else "")) for i in range(60)]),
        make_conversation("s3", *[("user", f"plum {i}") for i in range(60)])]))
    await ok(store.optimize())
    return store


async def test_only_words_far_past_the_limit_are_taken_from_the_statistics(
        url: str, make_conversation: Make, monkeypatch: pytest.MonkeyPatch) -> None:
    """60 messages are far past 10 (more than twice), not past 30; a rare word or one never
    seen is never taken; with the statistics switched off nothing is."""
    with await _analysed(url, make_conversation), psycopg.connect(url) as connection:
        words = ["kiwi", "mango", "absent"]
        assert postgres_statistics.far_above(connection, words, 10) == {"kiwi"}
        assert postgres_statistics.far_above(connection, words, 30) == frozenset()
        monkeypatch.setattr(postgres_statistics, "TRUST_STATISTICS", False)
        assert postgres_statistics.far_above(connection, words, 10) == frozenset()


async def test_a_search_takes_a_common_word_from_the_statistics(
        url: str, make_conversation: Make) -> None:
    """Under a cap of 10, the census reports "kiwi" one past the cap from the statistics
    alone: its messages, removed behind the statistics' back, are not counted."""
    with await _analysed(url, make_conversation), psycopg.connect(url) as connection:
        connection.execute("DELETE FROM messages WHERE tokens @@ 'kiwi'::tsquery "
                           "AND position >= 5")
        _, counts = postgres_search.census(connection, "messages",
                                           [Term("kiwi"), Term("mango")], 10)
        assert counts == {Term("kiwi"): 11, Term("mango"): 3}


async def test_stale_statistics_give_way_to_the_words_own_matches(
        url: str, make_conversation: Make, monkeypatch: pytest.MonkeyPatch) -> None:
    """The statistics still put "kiwi" in half the messages (32 of the 64 now), but its
    session was removed and 4 kiwi messages written since: its two ends (3 newest, 3
    oldest) make 6, under the limit of 7, so it is counted exactly, as a word under the
    limit; the next ask gives the same."""
    monkeypatch.setattr(postgres_search, "EXACT_COUNT_LIMIT", 7)
    monkeypatch.setattr(postgres_search, "END_SAMPLE", 2)
    with await _analysed(url, make_conversation) as store:
        assert await ok(store.remove_sessions(["s1"])) == 1
        await ok(store.ingest([make_conversation("s2", *[("user", f"kiwi tart {i}")
                                                         for i in range(4)])]))
        for _ask in range(2):
            assert dict((await ok(store.term_stats(["kiwi", "tart"]))).counts) == {
                "kiwi": 4, "tart": 4}


async def test_the_statistics_are_the_stores_when_its_schema_is_not_first(
        url: str, make_conversation: Make) -> None:
    """A schema holding none of harkback's tables ahead of the store's on the search path (a
    role's own, ``"$user", public``): the statistics are still read for the store's table,
    not looked for in the path's first schema, where there are none."""
    with await _analysed(url, make_conversation), psycopg.connect(url) as connection:
        connection.execute("CREATE SCHEMA ahead")
        connection.execute("SET search_path = ahead, public")
        assert connection.execute("SELECT current_schema()").fetchone() == ("ahead",)
        assert postgres_statistics.far_above(connection, ["kiwi", "mango"], 10) == {"kiwi"}
