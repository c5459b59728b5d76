"""The ranked search statement (FTS5 ranks, then filters) against the full one it stands in for."""

from __future__ import annotations

import asyncio
import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harkback.adapters.stores import sqlite_search
from harkback.adapters.stores.sql import fulltext
from harkback.adapters.stores.sql.rows import hit_from_row, hit_text
from harkback.adapters.stores.sql.statement import Statement
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.stages.ports import MatchQuery
from harkback.stages.query import parse_query
from harkback.stages.records import ROLES, Conversation, MessageHit, Role
from tests.adapters.stores.statement_files import plain_connection, store_file
from tests.adapters.stores.store_contract import match, ok
from tests.conftest import conversation

WORDS = ("error", "docker", "bridge", "dns", "config", "cache", "deploy", "kernel")
SOURCES = ("cli", "web", "cron")
PROJECTS = ("/home/a/harkback", "/srv/deploy/", "")


def _corpus() -> list[Conversation]:
    # "error" is in nearly every message, so a query for it matches more rows than the
    # ranked statement fetches; repeated texts give equal scores, ordered by row id.
    pick = random.Random(7)
    sessions = []
    for i in range(80):
        turns: list[tuple[Role, str]] = []
        for j in range(4):
            role = ROLES[(i + j) % len(ROLES)]
            text = ("error docker" if j == 3 else
                    " ".join(pick.choices(WORDS, weights=(9, 3, 2, 1, 3, 2, 1, 1), k=6)))
            turns.append((role, text))
        sessions.append(conversation(
            f"s{i}", *turns, started_at=float(i), source=SOURCES[i % len(SOURCES)],
            project=PROJECTS[i % len(PROJECTS)],
            timestamps=[None if (i + j) % 5 == 0 else i + j / 10 for j in range(4)]))
    return sessions


@pytest.fixture(scope="module")
def path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store file holding :func:`_corpus`."""
    return store_file(tmp_path_factory, "ranked", _corpus())


@pytest.fixture(scope="module")
def connection(path: Path) -> Iterator[sqlite3.Connection]:
    """A plain connection to the store file, for running statements directly."""
    yield from plain_connection(path)


@st.composite
def queries(draw: st.DrawFn) -> MatchQuery:
    """Disjunctions of corpus words with any filters and limit."""
    words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4, unique=True))
    since = draw(st.none() | st.floats(0, 80))
    until = draw(st.none() | st.floats(0, 80))
    return match(" OR ".join(words),
                 roles=tuple(draw(st.sets(st.sampled_from(ROLES), min_size=1))),
                 hidden_sources=tuple(draw(st.sets(st.sampled_from(SOURCES), max_size=2))),
                 since=since, until=until, limit=draw(st.integers(1, 80)), max_scored=None)


def _rows(connection: sqlite3.Connection, statement: Statement) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in connection.execute(statement.sql, statement.params)]


def _full_hits(connection: sqlite3.Connection, query: MatchQuery) -> list[MessageHit]:
    rows = _rows(connection, fulltext.search(query))
    texts = {row_id: hit_text(start) for row_id, start in _rows(
        connection, fulltext.hit_texts([row[6] for row in rows]))}
    return [hit_from_row(row, texts[row[6]]) for row in rows]


@settings(max_examples=150, deadline=None)
@given(query=queries(), fetch=st.integers(1, 400))
def test_ranked_rows_are_the_full_rows_when_enough_survive(
        connection: sqlite3.Connection, query: MatchQuery, fetch: int) -> None:
    """The ranked rows lead the full ones; all of them with ``limit`` survivors or nothing cut."""
    *rows, last = _rows(connection, fulltext.ranked_search(query, fetch))
    ranked = [row[:7] for row in rows]
    full = _rows(connection, fulltext.search(query))
    assert ranked == full[:len(ranked)]
    if len(ranked) >= query.limit or last[8] < fetch:
        assert ranked == full


def test_a_small_fetch_can_leave_too_few_survivors(connection: sqlite3.Connection) -> None:
    """Filters applied after the cut can drop rows the full statement keeps."""
    query = match("error", roles=("tool",), limit=20, max_scored=None)
    *ranked, last = _rows(connection, fulltext.ranked_search(query, 20))
    assert len(ranked) < query.limit
    assert last[8] == 20
    assert len(_rows(connection, fulltext.search(query))) == query.limit


@settings(max_examples=100, deadline=None)
@given(query=queries())
def test_store_search_equals_the_full_statement(
        path: Path, connection: sqlite3.Connection, query: MatchQuery) -> None:
    """Through the store, ranked first or fallen back, a search gives the full statement's hits."""
    store = SqliteStore.open(path, readonly=True).unwrap()
    try:
        hits = asyncio.run(ok(store.search(query)))
    finally:
        store.close()
    full = _full_hits(connection, query)
    assert list(hits) == full


def test_a_common_term_with_a_narrow_role_falls_back(path: Path,
                                                     connection: sqlite3.Connection) -> None:
    """When the over-fetch holds too few rows of the asked role, the store still fills the limit."""
    query = match("error", roles=("system",), limit=60, max_scored=None)
    assert len(_rows(connection, fulltext.ranked_search(query, 240))) - 1 < query.limit
    store = SqliteStore.open(path, readonly=True).unwrap()
    try:
        hits = asyncio.run(ok(store.search(query)))
        bounded = asyncio.run(ok(store.search(attrs.evolve(query, max_scored=1000))))
    finally:
        store.close()
    assert len(hits) == query.limit
    assert {h.role for h in hits} == {"system"}
    assert bounded == hits


@settings(max_examples=40, deadline=None)
@given(sequence=st.lists(queries(), min_size=2, max_size=6))
def test_searches_in_a_row_each_equal_the_full_statement(
        path: Path, connection: sqlite3.Connection, sequence: list[MatchQuery]) -> None:
    """What one search teaches the store about the next one's cut never changes its hits."""
    store = SqliteStore.open(path, readonly=True).unwrap()
    try:
        for query in sequence:
            hits = asyncio.run(ok(store.search(query)))
            full = _full_hits(connection, query)
            assert list(hits) == full
    finally:
        store.close()


def _fetch_sizes(store: SqliteStore, query: MatchQuery, times: int) -> list[int]:
    seen: list[str] = []

    async def run() -> None:
        await ok(store.run(lambda connection: connection.set_trace_callback(seen.append)))
        for _ in range(times):
            await ok(store.search(query))
    asyncio.run(run())
    # The ranked statement's first LIMIT is the cut: "... ORDER BY rank, rowid LIMIT n))".
    return [int(s.split("ORDER BY rank, rowid LIMIT ")[1].split(")")[0])
            for s in seen if "ROW_NUMBER()" in s]


def test_the_cut_shrinks_when_the_filters_drop_nothing(path: Path) -> None:
    """Every role asked and no source hidden: the second search joins fewer ranked rows."""
    query = match("error", roles=ROLES, limit=60, max_scored=None)
    with SqliteStore.open(path, readonly=True).unwrap() as store:
        sizes = _fetch_sizes(store, query, 2)
    assert sizes[0] == 240  # the default, four times the limit
    assert sizes[1] < sizes[0]


def test_the_cut_grows_when_the_filters_drop_most_rows(path: Path) -> None:
    """One role in four asked: after a search that fell short, the next cut goes deeper."""
    query = match("error", roles=("system",), limit=60, max_scored=None)
    with SqliteStore.open(path, readonly=True).unwrap() as store:
        sizes = _fetch_sizes(store, query, 2)
    assert sizes[0] == 240
    assert sizes[-1] > 240


def _searched(store: SqliteStore, query: MatchQuery) -> tuple[list[MessageHit], list[str]]:
    seen: list[str] = []

    async def run() -> tuple[MessageHit, ...]:
        await ok(store.run(lambda connection: connection.set_trace_callback(seen.append)))
        return await ok(store.search(query))
    return list(asyncio.run(run())), seen


@settings(max_examples=100, deadline=None)
@given(query=queries(), cap=st.sampled_from((5, 40, 100, 1000)))
def test_a_bounded_search_ranking_first_gives_the_joined_rows(
        path: Path, query: MatchQuery, cap: int) -> None:
    """A bounded OR of words, ranked inside FTS5 first or every match joined, gives the same
    hits, whether some of its words are common or none is."""
    bounded = attrs.evolve(query, max_scored=cap)
    with pytest.MonkeyPatch.context() as patch:
        store = SqliteStore.open(path, readonly=True).unwrap()
        try:
            patch.setattr(sqlite_search, "RANK_FIRST_FROM", 10**9)
            joined, _ = _searched(store, bounded)
            patch.setattr(sqlite_search, "RANK_FIRST_FROM", 1)
            ranked, _ = _searched(store, bounded)
        finally:
            store.close()
    assert ranked == joined


@pytest.mark.parametrize(("text", "ranks_first"), [
    ("error OR dns", True), ('"error docker"', False), ("error AND dns", False)])
def test_only_an_or_of_words_found_often_enough_ranks_first(
        path: Path, text: str, ranks_first: bool) -> None:
    """Phrases and ANDs keep the joined statement: their matches say little of their rows."""
    query = match(text, roles=("user", "assistant"), limit=20, max_scored=1000)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sqlite_search, "RANK_FIRST_FROM", 50)
        with SqliteStore.open(path, readonly=True).unwrap() as store:
            _, statements = _searched(store, query)
    assert any("ROW_NUMBER()" in s for s in statements) == ranks_first


@settings(max_examples=150, deadline=None)
@given(query=queries(), sources=st.sets(st.sampled_from(SOURCES), max_size=2),
       projects=st.sets(st.sampled_from(("harkback", "deploy")), max_size=1),
       excluded=st.none() | st.sampled_from(WORDS), per_session=st.booleans())
def test_rows_read_in_rank_order_lead_with_the_full_rows(
        connection: sqlite3.Connection, query: MatchQuery, sources: set[str],
        projects: set[str], excluded: str | None, per_session: bool) -> None:
    """Read in rank order, the first ``limit`` filtered rows are the full statement's rows,
    whatever the filters (a ``NOT`` part either way it is asked)."""
    query = attrs.evolve(query, sources=tuple(sources), projects=tuple(projects),
                         excluded=None if excluded is None else parse_query(excluded).expression)
    cursor = connection.execute(*attrs.astuple(fulltext.search_in_order(
        query, per_session=per_session)))
    in_order = [tuple(row) for row in cursor.fetchmany(query.limit)]
    cursor.close()
    assert in_order == _rows(connection, fulltext.search(query))


IN_ORDER = "LIMIT -1) AS best"
"""What only :func:`~harkback.adapters.stores.sql.fulltext.search_in_order` runs."""


@pytest.mark.parametrize(("text", "limit", "in_order"), [
    ("error OR dns", 20, True), ("dns", 20, True), ("dns", 300, False),
    ('"error docker"', 20, False), ("error AND dns", 20, False), ("err*", 20, False)])
def test_an_or_of_words_matching_more_than_the_limit_is_read_in_rank_order(
        path: Path, connection: sqlite3.Connection, text: str, limit: int,
        in_order: bool) -> None:
    """A bounded OR of words of which one matches more messages than the limit joins them
    in rank order, only as far as the limit; the hits are the full statement's either way."""
    query = match(text, roles=("user", "assistant"), limit=limit, max_scored=1000)
    with SqliteStore.open(path, readonly=True).unwrap() as store:
        hits, statements = _searched(store, query)
    assert any(IN_ORDER in s for s in statements) == in_order
    assert hits == _full_hits(connection, attrs.evolve(query, max_scored=None))


@pytest.mark.parametrize("limit", [0, -1])
def test_a_limit_of_zero_or_less_reads_as_the_full_statement(
        path: Path, connection: sqlite3.Connection, limit: int) -> None:
    """No rows asked, or every one (SQL's LIMIT -1), as the full statement reads it."""
    query = match("error OR dns", roles=("user", "assistant"), limit=limit, max_scored=1000)
    with SqliteStore.open(path, readonly=True).unwrap() as store:
        hits, _ = _searched(store, query)
    assert hits == _full_hits(connection, attrs.evolve(query, max_scored=None))


def test_rows_out_of_rank_order_fall_back_to_the_full_statement(
        path: Path, connection: sqlite3.Connection) -> None:
    """Should SQLite hand the rows over in another order, the full statement decides."""
    query = match("error OR dns", roles=("user", "assistant"), limit=20, max_scored=1000)
    reversed_order = fulltext.search_in_order

    def backwards(*args: Any, **kwargs: Any) -> Statement:
        statement = reversed_order(*args, **kwargs)
        return attrs.evolve(statement, sql=statement.sql.replace(
            "ORDER BY rank, rowid", "ORDER BY rank DESC, rowid DESC"))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fulltext, "search_in_order", backwards)
        with SqliteStore.open(path, readonly=True).unwrap() as store:
            hits, statements = _searched(store, query)
    assert any(IN_ORDER in s for s in statements)
    assert hits == _full_hits(connection, attrs.evolve(query, max_scored=None))


@pytest.mark.parametrize("filters", [
    {"since": 60.0}, {"until": 3.0}, {"sources": ("cron",)}, {"excluded": "kernel"}])
def test_filters_that_may_keep_few_matches_keep_the_full_join(
        path: Path, connection: sqlite3.Connection, filters: dict[str, Any]) -> None:
    """A time bound, a source or a ``NOT`` part may drop nearly every match: read in rank
    order, every match would be scored and sorted before the join went through them all."""
    if "excluded" in filters:
        filters = {"excluded": parse_query(filters["excluded"]).expression}
    query = match("error OR dns", roles=("user", "assistant"), limit=20, max_scored=1000,
                  **filters)
    with SqliteStore.open(path, readonly=True).unwrap() as store:
        hits, statements = _searched(store, query)
    assert not any(IN_ORDER in s for s in statements)
    assert hits == _full_hits(connection, attrs.evolve(query, max_scored=None))


def test_roles_found_to_drop_most_matches_keep_the_full_join(
        path: Path, connection: sqlite3.Connection) -> None:
    """Once a ranked search showed that few matches are of the asked role, an OR of words
    whose matches the limit would not reach through that role is joined in full."""
    query = match("error OR dns", roles=("system",), limit=60, max_scored=1000)
    with SqliteStore.open(path, readonly=True).unwrap() as store:
        _, before = _searched(store, query)
        _searched(store, match("error", roles=("system",), limit=60, max_scored=None))
        hits, after = _searched(store, query)
    assert any(IN_ORDER in s for s in before)
    assert not any(IN_ORDER in s for s in after)
    assert hits == _full_hits(connection, attrs.evolve(query, max_scored=None))


def test_a_session_removed_between_the_rows_and_their_texts_is_no_hit(
        tmp_path: Path) -> None:
    """A writable store reads each statement in a snapshot of its own: a session another
    connection removes after the rows were read and before their texts is left out, and the
    search still answers."""
    path = tmp_path / "h.db"
    with SqliteStore.open(path).unwrap() as store, SqliteStore.open(path).unwrap() as other:
        asyncio.run(ok(store.ingest([conversation("kept", ("user", "walrus feeding")),
                                     conversation("gone", ("user", "walrus tusk"))])))
        texts = fulltext.hit_texts

        def removing(ids: list[int]) -> Statement:
            asyncio.run(ok(other.remove_sessions(["gone"])))
            return texts(ids)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(fulltext, "hit_texts", removing)
            hits = asyncio.run(ok(store.search(match("walrus"))))
    assert [h.session_id for h in hits] == ["kept"]


@settings(max_examples=150, deadline=None)
@given(query=queries(), fetch=st.integers(1, 400),
       sources=st.sets(st.sampled_from(SOURCES), max_size=2),
       excluded=st.none() | st.sampled_from(WORDS), per_session=st.booleans())
def test_a_cut_read_in_rank_order_leads_with_the_ranked_rows(
        connection: sqlite3.Connection, query: MatchQuery, fetch: int, sources: set[str],
        excluded: str | None, per_session: bool) -> None:
    """The cut's survivors read in rank order, as far as the limit, are the ranked
    statement's rows with the same places, whatever the filters."""
    query = attrs.evolve(query, sources=tuple(sources),
                         excluded=None if excluded is None else parse_query(excluded).expression)
    cursor = connection.execute(*attrs.astuple(fulltext.ranked_in_order(
        query, fetch, per_session=per_session)))
    in_order = [tuple(row) for row in cursor.fetchmany(query.limit)]
    cursor.close()
    *ranked, _ = _rows(connection, fulltext.ranked_search(query, fetch, per_session=per_session))
    assert in_order == [row[:8] for row in ranked]


CUT_IN_ORDER = ")) AS best CROSS JOIN"
"""What only :func:`~harkback.adapters.stores.sql.fulltext.ranked_in_order` runs."""
CUT_STORED = "kept AS MATERIALIZED"
"""What only :func:`~harkback.adapters.stores.sql.fulltext.ranked_search` runs."""


@pytest.mark.parametrize(("roles", "limit"), [(ROLES, 20), (("user", "assistant"), 30),
                                              (("system",), 60)])
def test_a_ranked_search_reads_its_cut_in_rank_order(
        path: Path, connection: sqlite3.Connection, roles: tuple[Role, ...],
        limit: int) -> None:
    """FTS5's best rows are joined in rank order only as far as the limit (and a cut that
    leaves too few survivors is counted, then cut deeper); the hits are the full
    statement's."""
    query = match("error OR dns", roles=roles, limit=limit, max_scored=None)
    with SqliteStore.open(path, readonly=True).unwrap() as store:
        hits, statements = _searched(store, query)
    assert any(CUT_IN_ORDER in s for s in statements)
    assert not any(CUT_STORED in s for s in statements)
    assert hits == _full_hits(connection, query)


def test_a_cut_read_out_of_rank_order_falls_back_to_the_ranked_statement(
        path: Path, connection: sqlite3.Connection) -> None:
    """Should SQLite hand the cut's rows over in another order, the ranked statement decides."""
    query = match("error OR dns", roles=("user", "assistant"), limit=20, max_scored=None)
    in_order = fulltext.ranked_in_order

    def backwards(*args: Any, **kwargs: Any) -> Statement:
        statement = in_order(*args, **kwargs)
        return attrs.evolve(statement,
                            sql=f"SELECT * FROM ({statement.sql}) ORDER BY place DESC")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fulltext, "ranked_in_order", backwards)
        with SqliteStore.open(path, readonly=True).unwrap() as store:
            hits, statements = _searched(store, query)
    assert any(CUT_IN_ORDER in s for s in statements)
    assert any(CUT_STORED in s for s in statements)
    assert hits == _full_hits(connection, query)


def test_a_session_removed_between_the_cut_and_its_count_loses_no_hit(tmp_path: Path) -> None:
    """When too few of the ranked cut survive, the count of matches that says whether the
    cut dropped any reads the cut's state of the file: a session another connection removes
    in between does not make the search stop at the cut's survivors."""
    path = tmp_path / "h.db"
    # 250 short assistant messages rank above the user ones and fill the cut of 200.
    short: tuple[Role, str] = ("assistant", "walrus")
    gone = conversation("gone", *[short] * 250)
    kept = [conversation(f"kept{i}", ("user", "a walrus swam past the long pier today"))
            for i in range(3)]
    with SqliteStore.open(path).unwrap() as store, SqliteStore.open(path).unwrap() as other:
        asyncio.run(ok(store.ingest([gone, *kept])))
        counted = fulltext.count_matches

        def removing(*args: Any) -> Statement:
            asyncio.run(ok(other.remove_sessions(["gone"])))
            return counted(*args)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(fulltext, "count_matches", removing)
            hits = asyncio.run(ok(store.search(match("walrus", roles=("user",), limit=5,
                                                     max_scored=None))))
    assert sorted(h.session_id for h in hits) == ["kept0", "kept1", "kept2"]
