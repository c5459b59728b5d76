"""Words the planner's statistics already show far past a count limit, so a first search
need not count them.

``ANALYZE`` keeps the 1,000 most common lexemes of ``messages.tokens`` with the share of
rows holding each (schema version 3). Counting a word exactly up to the limit builds its
whole GIN bitmap however early the count stops: 0.6-2.8 s for a common word at a million
messages, paid by every new process (each ``harkback search``) and after every ingest. A
word the statistics put at :data:`FAR_ABOVE` times the limit or more is past it; a word
below, or not among the most common, is counted as before, so rankings stay those of the
SQLite store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg

from harkback.adapters.stores.postgres_schema import STORE_SCHEMA
from harkback.adapters.stores.postgres_text import MAX_LEXEME_CHARS

Connection = psycopg.Connection[tuple[Any, ...]]

TRUST_STATISTICS = True
"""Whether searches use the statistics at all (the benchmark switches it off to compare)."""

FAR_ABOVE = 2
"""How far past the limit the statistics must put a word: a margin for their sampling and
for rows written or removed since the last ``ANALYZE``."""

_SHARES = (
    "SELECT u.lexeme, u.share * t.messages FROM index_totals AS t, pg_stats AS p, "
    "unnest(p.most_common_elems::text::text[], p.most_common_elem_freqs) AS u(lexeme, share) "
    f"WHERE p.schemaname = {STORE_SCHEMA} AND p.tablename = 'messages' "
    "AND p.attname = 'tokens' AND u.lexeme = ANY(%s::text[])")
"""Each asked lexeme's share of messages times the messages now indexed (the share list
ends with three figures that name no lexeme; they pair with NULL and are never asked)."""


def far_above(connection: Connection, words: Sequence[str], limit: int) -> frozenset[str]:
    """The ``words`` the statistics of ``messages.tokens`` put in more than
    ``FAR_ABOVE * limit`` messages (none when there are no statistics yet)."""
    if not TRUST_STATISTICS or not words:
        return frozenset()
    lexemes = {word[:MAX_LEXEME_CHARS]: word for word in words}
    rows = connection.execute(_SHARES, (list(lexemes),)).fetchall()
    return frozenset(lexemes[str(lexeme)] for lexeme, messages in rows
                     if messages is not None and float(messages) > FAR_ABOVE * limit)
