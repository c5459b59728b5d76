"""An English question's word is also looked for by the CJK words for it that are longer
than one index token (웹소켓 for "websocket", インデックス for "index", 消费者 for
"consumer"), each as the phrase of its bigrams: before, only two-character words were, and
a Korean or Japanese session writing a loanword shared none of the question's words."""

from __future__ import annotations

import time

import pytest
from returns.unsafe import unsafe_perform_io

from harkback.stages.match.lexical import LexicalMatch
from harkback.stages.ports import Deps, SessionStore
from harkback.stages.records import Role
from harkback.stages.request import SearchRequest
from harkback.stages.resolve import LineageResolve
from tests.conftest import conversation

DAY = 86_400.0


async def _found(store: SessionStore, query: str, now: float) -> list[str]:
    outcome = await LexicalMatch()(SearchRequest(query=query, limit=5)).bind(
        LineageResolve())(Deps(store=store, clock=lambda: now)).awaitable()
    return [c.root.id for c in unsafe_perform_io(outcome.unwrap()).candidates]


@pytest.mark.parametrize(("query", "answer", "decoy"), [
    ("the websocket dropping behind nginx",
     ("user", "nginx 뒤에서 웹소켓 연결이 60초마다 끊겨요"),
     ("user", "turn on gzip in nginx for the api")),
    ("the postgres index on the email column",
     ("user", "postgresのメールアドレスの列にインデックスを追加したい。メールで検索が遅い"),
     ("user", "upgrade postgres to 16")),
    ("kafka consumer falling behind",
     ("user", "kafka 消费者延迟越来越大"),
     ("user", "kafka topic retention for orders")),
])
async def test_a_session_writing_the_longer_word_comes_first(
        store: SessionStore, query: str, answer: tuple[Role, str],
        decoy: tuple[Role, str]) -> None:
    """The six-week-old session in Korean, Japanese or Chinese shares the question's
    listed word only as a loanword of several bigrams; yesterday's English look-alike
    shares a tool's or a generic word alone, and came first."""
    now = time.time()
    old = conversation("answer", answer, ("assistant", "ok"), started_at=now - 40 * DAY)
    new = conversation("decoy", decoy, ("assistant", "ok"), started_at=now - DAY)
    unsafe_perform_io((await store.ingest((old, new)).awaitable()).unwrap())
    assert (await _found(store, query, now))[:1] == ["answer"]
