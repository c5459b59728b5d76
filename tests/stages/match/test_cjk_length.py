"""An English question reads a Chinese, Japanese or Korean message's length in words, not
in index tokens (one a character): counted in tokens, the CJK answer looked two or three
times as long as its English and sank below a short English look-alike."""

from __future__ import annotations

import time

import pytest
from returns.unsafe import unsafe_perform_io

from harkback.stages.ports import SessionStore
from tests.adapters.stores.test_voicing_migration import ranked
from tests.conftest import conversation

DAY = 86_400.0
OTHERS = ("move the eslint config to the flat format and fix the new warnings",
          "the staging certificate expired, renew it with certbot and reload nginx",
          "add a retry with backoff to the payment webhook handler",
          "rename the users table column email_address to email in a migration",
          "pin the python version in the dockerfile to 3.12 and rebuild",
          "the cron job that cleans old uploads deletes nothing since the bucket move")
"""Sessions about other things: a store's usual background."""


@pytest.mark.parametrize(("query", "answer", "decoy"), [
    ("the redis eviction policy",
     "redis 的 eviction policy 改成了 allkeys-lru，内存满了以后写入就不再报错了",
     "the redis eviction policy on the cache box needs a look next week, maybe after the "
     "release"),
    ("the nginx proxy timeout",
     "nginx の proxy timeout を 120 秒に延ばしたら、アップロードが切れなくなった",
     "the nginx proxy timeout in the staging config is different from the one we use in "
     "production, check it later"),
    ("the kafka consumer lag alert",
     "kafka consumer lag alert 기준을 만 건으로 올렸더니 밤마다 오던 알림이 없어졌어요",
     "the kafka consumer lag alert fired twice today, both times during the nightly batch "
     "window, nothing to do"),
], ids=["zh", "ja", "ko"])
async def test_an_english_questions_cjk_answer_is_not_sunk_by_its_length(
        store: SessionStore, query: str, answer: str, decoy: str) -> None:
    """The six-week-old session and yesterday's each say the question's words once, in
    about as many words; the older one is in Chinese, Japanese or Korean, twice as many
    tokens."""
    now = time.time()
    old = conversation("answer", ("user", answer), ("assistant", "ok"),
                       started_at=now - 40 * DAY)
    new = conversation("decoy", ("user", decoy), ("assistant", "ok"), started_at=now - DAY)
    others = [conversation(f"other{i}", ("user", text), ("assistant", "done, it works now"),
                           started_at=now - (i + 2) * DAY) for i, text in enumerate(OTHERS)]
    unsafe_perform_io((await store.ingest((old, new, *others)).awaitable()).unwrap())
    assert (await ranked(store, query))[:1] == ["answer"]

