"""Kana keep their voicing in a PostgreSQL store's ``tokens`` (schema 5): a database written
before, with バケット (bucket) and パケット (packet) both as ハケット, is tokenized again by
a writable open and then answers as a database made new."""

from __future__ import annotations

from typing import Any

import psycopg

from harkback.adapters.stores import postgres_voicing
from harkback.adapters.stores.migration import Migrated
from harkback.adapters.stores.postgres import PostgresStore
from harkback.adapters.stores.postgres_migrations import MIGRATIONS, SCHEMA_VERSION
from harkback.adapters.stores.postgres_text import tsvector_literal
from harkback.adapters.stores.sql.migrations import DATED_ABOUT
from harkback.stages.text.tokens import index_tokens
from harkback.stages.text.voicing import devoiced
from tests.adapters.stores.store_contract import match, ok
from tests.adapters.stores.test_voicing_migration import CORPUS, ranked
from tests.support.new_stores import store_locations
from tests.support.old_tokens import first_split
from tests.support.postgres_server import PostgresServer

url = store_locations("postgres")
"""The URL of a new, empty database on the run's server."""


def _as_version_4(url: str) -> None:
    """Give every row the tokens of schema versions 1 to 4 (kana devoiced): what the
    store held before."""
    texts = {(m.session_id, m.position): m.text_for_search() for c in CORPUS for m in c.messages}
    titles = {c.session.id: c.session.text_for_search() for c in CORPUS}
    with psycopg.connect(url) as connection:
        for row_id, session, position in connection.execute(
                "SELECT id, session_id, position FROM messages").fetchall():
            old = first_split(texts[(session, position)], index=True)
            connection.execute("UPDATE messages SET tokens = %s::tsvector WHERE id = %s",
                               (tsvector_literal(old), row_id))
        for key, text in titles.items():
            connection.execute("UPDATE sessions SET tokens = %s::tsvector WHERE id = %s",
                               (tsvector_literal(first_split(text, index=True)), key))
        connection.execute("UPDATE harkback_schema SET version = 4")


def _scalar(connection: psycopg.Connection[Any], statement: str) -> int:
    row = connection.execute(statement).fetchone()
    assert row is not None
    return int(row[0])


def _postings(url: str) -> tuple[Any, ...]:
    """For every token the corpus has or had, the messages and sessions holding it; and
    the totals BM25 reads."""
    words = sorted({w for c in CORPUS for m in c.messages
                    for t in index_tokens(m.text_for_search()) for w in (t, devoiced(t))})
    with psycopg.connect(url) as connection:
        found = {word: (
            sorted(connection.execute(
                "SELECT session_id, position FROM messages WHERE tokens @@ %s::tsquery",
                (f"'{word}'",)).fetchall()),
            sorted(connection.execute("SELECT id FROM sessions WHERE tokens @@ %s::tsquery",
                                      (f"'{word}'",)).fetchall()))
            for word in words}
        totals = connection.execute(
            "SELECT messages, message_tokens, sessions, session_tokens FROM index_totals"
        ).fetchone()
    return found, totals


async def test_a_version_4_database_is_tokenized_again_as_a_new_one_is(
        url: str, postgres_server: PostgresServer) -> None:
    """Read-only, the older database asks for ``harkback migrate``; writable, it is
    migrated: every word finds what it finds in a database made new, the totals agree,
    readers' remembered counts are forgotten (rewrites moved), the planner's statistics
    are gathered again, and "S3 バケット" finds the bucket session first."""
    with PostgresStore.open(url).unwrap() as store:
        await ok(store.ingest(CORPUS))
    fresh = _postings(url)
    _as_version_4(url)
    assert _postings(url) != fresh
    refused = PostgresStore.open(url, readonly=True)
    assert "run `harkback migrate --db" in refused.failure().reason
    with psycopg.connect(url) as connection:
        rewrites = _scalar(connection, "SELECT rewrites FROM index_totals")
    with PostgresStore.open(url).unwrap() as store:
        assert store.schema == Migrated(4, SCHEMA_VERSION, (
            postgres_voicing.ABOUT, DATED_ABOUT, *(m.about for m in MIGRATIONS[5:])),
            latest=SCHEMA_VERSION)
        found = {h.session_id for h in await ok(store.search(match('"バケット"')))}
        assert found == {"bucket"}
        assert (await ranked(store, "S3 バケット"))[0] == "bucket"
        titled = {h.session_id for h in await ok(store.search_titles(match('"パケット"')))}
        assert titled == {"packet"}
    assert _postings(url) == fresh
    with psycopg.connect(url) as connection:
        assert _scalar(connection, "SELECT rewrites FROM index_totals") > rewrites
        analyzed = connection.execute(
            "SELECT most_common_elems::text FROM pg_stats "
            "WHERE tablename = 'messages' AND attname = 'tokens'").fetchone()
    # The planner's word statistics (which far_above trusts) are gathered again.
    assert analyzed is not None and "バケ" in analyzed[0] and "パケ" in analyzed[0]
