"""Voiced kana are words of their own in every store: a question about an S3 バケット
(bucket) finds the bucket session before one about パケット (packet), which it once
searched as the same ハケット."""

from __future__ import annotations

from harkback.stages.ports import SessionStore
from tests.adapters.stores.store_contract import ok
from tests.adapters.stores.test_voicing_migration import BRUSH, BUCKET, HALF_WIDTH, PACKET, ranked
from tests.conftest import conversation
from tests.support.new_stores import KINDS, new_stores

store = new_stores(*KINDS)
"""A fresh, empty store of each kind (in memory, SQLite, PostgreSQL)."""


async def test_a_bucket_question_ranks_the_bucket_session_above_the_packet_one(
        store: SessionStore) -> None:
    """The packet session says S3 and パケット more often; only the bucket session says
    バケット, and it comes first (it came second when both were ハケット)."""
    await ok(store.ingest([PACKET, BUCKET, BRUSH]))
    assert (await ranked(store, "S3 バケット"))[0] == "bucket"
    assert (await ranked(store, "S3 の パケット"))[0] == "packet"
    assert "bucket" not in await ranked(store, "ハケ")


async def test_half_width_katakana_is_found_as_full_width(store: SessionStore) -> None:
    """ﾋﾞﾙﾄﾞ (half-width, its mark a character of its own) is the word ビルド (build),
    both ways; ヒルト, the word without its marks, finds neither."""
    full = conversation("full", ("user", "ビルド が遅い"))
    await ok(store.ingest([HALF_WIDTH, full]))
    assert set(await ranked(store, "ビルド")) == {"half", "full"}
    assert set(await ranked(store, "ﾋﾞﾙﾄﾞ")) == {"half", "full"}
    assert await ranked(store, "ヒルト") == []
