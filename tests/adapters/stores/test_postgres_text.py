"""The ``tsvector`` literals of the PostgreSQL store, read by a real server: naming each
token at its position (the fast literal) gives the vector the merged literal gives."""

from __future__ import annotations

import random

import psycopg

from harkback.adapters.stores.postgres_text import (
    MAX_POSITION,
    by_position,
    merged,
    tsvector_literal,
)
from tests.support.postgres_server import PostgresServer

WORDS = ("kiwi", "pie", "docker", "café", "上次", "次", "straße", "x", "42", "ü")


def same_vector(connection: psycopg.Connection[tuple[object, ...]], one: str,
                other: str) -> bool:
    """Whether the server reads ``one`` and ``other`` as the same ``tsvector``."""
    row = connection.execute("SELECT %s::tsvector = %s::tsvector, %s::tsvector::text",
                             (one, other, one)).fetchone()
    assert row is not None and row[1]
    return bool(row[0])


def test_the_fast_literal_is_the_merged_one(postgres_server: PostgresServer) -> None:
    """Random messages (repeats, non-ASCII and CJK tokens, up to 300 tokens) and messages
    past the last position a vector keeps read the same both ways."""
    pick = random.Random(7)
    cases = [tuple(pick.choices(WORDS, k=pick.randint(1, 300))) for _ in range(200)]
    cases += [tuple(pick.choices(WORDS, k=MAX_POSITION + extra)) for extra in (-1, 0, 1, 600)]
    with psycopg.connect(postgres_server.url()) as connection:
        for tokens in cases:
            literal = tsvector_literal(tokens)
            fast = len(tokens) <= MAX_POSITION
            assert literal == (by_position(tokens) if fast else merged(tokens))
            assert same_vector(connection, by_position(tokens[:MAX_POSITION]),
                               merged(tokens[:MAX_POSITION])), tokens[:20]
