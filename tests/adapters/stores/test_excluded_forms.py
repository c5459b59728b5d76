"""A ``NOT`` part checked session by session (``EXCLUDED_PER_SESSION``) against the set of
excluded sessions built once (``EXCLUDED_SESSIONS``): every statement that takes either
gives the same rows with each."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harkback.adapters.stores import sqlite_search
from harkback.adapters.stores.sql import fulltext
from harkback.adapters.stores.sql.statement import Statement
from harkback.stages.ports import MatchQuery
from harkback.stages.query import Term, parse_query
from harkback.stages.records import ROLES, Conversation, Role
from tests.adapters.stores.statement_files import plain_connection, store_file
from tests.conftest import conversation

WORDS = ("error", "docker", "swarm", "dns", "config", "cache")


def _corpus() -> list[Conversation]:
    pick = random.Random(5)
    return [conversation(f"s{i}", *[(ROLES[pick.randrange(len(ROLES))],
                                     " ".join(pick.choices(WORDS, k=3)))
                                    for _ in range(pick.randint(1, 6))],
                         started_at=float(i))
            for i in range(60)]


@pytest.fixture(scope="module")
def connection(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sqlite3.Connection]:
    """A plain connection to a store file holding :func:`_corpus`."""
    yield from plain_connection(store_file(tmp_path_factory, "excluded", _corpus()))


def _rows(connection: sqlite3.Connection, statement: Statement) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in connection.execute(statement.sql, statement.params)]


def _both(connection: sqlite3.Connection, statement: Statement
          ) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    per_session = _rows(connection, statement)
    assert fulltext.EXCLUDED_PER_SESSION in statement.sql
    as_set = Statement(statement.sql.replace(fulltext.EXCLUDED_PER_SESSION,
                                             fulltext.EXCLUDED_SESSIONS), statement.params)
    return per_session, _rows(connection, as_set)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(WORDS), st.sampled_from(WORDS),
       st.lists(st.sampled_from(ROLES), min_size=1, max_size=4, unique=True),
       st.integers(1, 40))
def test_both_forms_keep_the_same_rows(connection: sqlite3.Connection, word: str,
                                       excluded: str, roles: list[Role], limit: int) -> None:
    """Scored, FTS5's best first, newest first, and newest from a row id up: the same rows."""
    expression = parse_query(word).expression
    assert expression is not None
    query = MatchQuery(expression=expression, excluded=Term(excluded), roles=tuple(roles),
                       limit=limit)
    statements = (fulltext.search(query, per_session=True),
                  fulltext.ranked_search(query, 30, per_session=True),
                  fulltext.newest(query, skip=(), limit=limit, per_session=True),
                  fulltext.newest(query, skip=(), limit=limit, at_least=5, per_session=True))
    for statement in statements:
        per_session, as_set = _both(connection, statement)
        assert per_session == as_set


def test_the_corpus_has_sessions_to_exclude_and_to_keep(connection: sqlite3.Connection) -> None:
    """What the comparison relies on: a NOT part drops some sessions, not all."""
    everything = MatchQuery(expression=Term("docker"), roles=ROLES, limit=1000)
    query = MatchQuery(expression=Term("docker"), excluded=Term("swarm"), roles=ROLES,
                       limit=1000)
    kept = {row[0] for row in _rows(connection, fulltext.newest(query, skip=(), limit=1000))}
    found = {row[0] for row in _rows(connection, fulltext.newest(everything, skip=(),
                                                                 limit=1000))}
    assert kept and kept < found


def test_a_not_part_is_asked_per_session_only_when_it_matches_many(
        connection: sqlite3.Connection) -> None:
    """The store's choice: by how many messages the ``NOT`` part matches, counted up to
    the bound; a query without one never asks."""
    query = MatchQuery(expression=Term("docker"), excluded=Term("swarm"), roles=ROLES)
    matching = connection.execute(
        "SELECT COUNT(*) FROM messages_fts WHERE messages_fts MATCH 'swarm'").fetchone()[0]
    assert matching > 1
    assert sqlite_search.many_excluded(connection, query, above=matching - 1)
    assert not sqlite_search.many_excluded(connection, query, above=matching)
    assert not sqlite_search.many_excluded(connection, attrs.evolve(query, excluded=None),
                                           above=0)
