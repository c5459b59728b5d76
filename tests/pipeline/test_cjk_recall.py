"""Chinese, Japanese and Korean recall end to end: store, match, resolve, load, summary."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from harkback.pipeline.compose import Pipeline
from harkback.pipeline.facade import Harkback
from harkback.stages.load.load import Load
from harkback.stages.ports import SessionStore
from harkback.stages.records import Conversation, Message, Session
from tests.support.new_stores import new_stores

FILLER = "这段话和问题无关，只是为了让会话变得很长很长。" * 150

SESSIONS: dict[str, list[tuple[str, str]]] = {
    "zh-cors": [("user", "前端一直报跨域错误，CORS 预检请求被拦截了"),
                ("assistant", "原因是 nginx 没有返回 Access-Control-Allow-Origin 头，"
                              "修改 /etc/nginx/conf.d/api.conf 后解决了。")],
    "zh-youer": [("user", "帮我修改youer服务端的登录接口"),
                 ("assistant", "已修改 youer 服务端 login.py，增加了 token 校验。")],
    "zh-agent": [("user", "Agent通信协议怎么设计？"),
                 ("assistant", "我们决定用 JSON-RPC 做 Agent 之间的通信。")],
    "zh-port": [("user", "端口冲突了，8080 被占用"),
                ("assistant", "把服务改到 8081 端口就好了。")],
    "zh-cat": [("user", "我家的猫不吃饭"), ("assistant", "一只小猫不吃饭可能是生病了。")],
    "ja": [("user", "サーバーの設定ファイルを編集して、ポートを8080に変更してください"),
           ("assistant", "設定ファイル config.yaml のポートを 8080 に変更しました。"),
           ("user", "きのうはサーバーがおちたけど、いまはだいじょうぶ")],
    "ko": [("user", "데이터베이스 연결 오류가 계속 발생해요"),
           ("assistant", "연결 풀 크기를 늘려서 데이터베이스 오류를 해결했습니다.")],
    "pct": [("user", "迁移任务 100%完成了吗"),
            ("assistant", "是的，user_id 字段的迁移已经全部完成。")],
    "long": [("user", "帮我查一下为什么部署失败"),
             ("assistant", FILLER + "真正的原因是磁盘配额满了，清理 /var/log 之后部署成功。"
              + FILLER)],
    "en": [("user", "the docker bridge network is broken"),
           ("assistant", "created a user-defined network named app-net")],
}


def conversations() -> list[Conversation]:
    """The sessions above, one day apart."""
    out = []
    for day, (sid, turns) in enumerate(SESSIONS.items()):
        session = Session(id=sid, source="cli", started_at=1_772_500_000.0 + 86_400 * day)
        out.append(Conversation(session, tuple(
            Message(session_id=sid, position=i, role=role, content=text)  # type: ignore[arg-type]
            for i, (role, text) in enumerate(turns))))
    return out


empty_store = new_stores("sqlite", "memory")
"""Both stores, empty."""


@pytest.fixture
async def store(empty_store: SessionStore) -> SessionStore:
    """Both stores, holding the sessions above."""
    await empty_store.ingest(conversations()).awaitable()
    return empty_store


async def recall(store: SessionStore, query: str, **options: Any) -> dict[str, Any]:
    """The payload of a search with the default pipeline (or a smaller load budget)."""
    budget = options.pop("budget", None)
    pipeline = attrs.evolve(Pipeline(), load=Load(budget_chars=budget)) if budget else Pipeline()
    payload: dict[str, Any] = (await Harkback(store=store, pipeline=pipeline).search(
        query, **options)).to_payload()
    assert payload["success"], payload
    return payload


async def first(store: SessionStore, query: str) -> str | None:
    """The session recalled first for ``query``."""
    results = (await recall(store, query))["results"]
    return results[0]["session_id"] if results else None


@pytest.mark.parametrize(("query", "expected"), [
    ("跨域", "zh-cors"),                       # two characters inside a longer run
    ("上次怎么解决 CORS 的？", "zh-cors"),       # mixed question, full-width question mark
    ("，跨域。", "zh-cors"),                    # full-width punctuation around a word
    ("ＣＯＲＳ 预检", "zh-cors"),                 # full-width Latin letters
    ("修改youer服务端", "zh-youer"),            # Latin glued to CJK
    ('"修改youer服务端"', "zh-youer"),          # ... as a phrase, across both run ends
    ("Agent通信", "zh-agent"),
    ('"Agent通信" OR 握手', "zh-agent"),
    ("端口", "zh-port"),                        # a two-character word
    ("猫", "zh-cat"),                           # a one-character word
    ("設定ファイル", "ja"),                      # kanji + katakana
    ("ポート", "ja"),                            # katakana
    ("おちた", "ja"),                            # hiragana
    ("데이터베이스 오류", "ko"),                   # Hangul
    ("오류", "ko"),
    ("100%完成", "pct"),                         # a % sign
    ("user_id 迁移", "pct"),                     # an underscore
])
async def test_cjk_queries_recall_the_right_session(store: SessionStore, query: str,
                                                    expected: str) -> None:
    """Each language, script and awkward character finds the session that holds it."""
    assert await first(store, query) == expected


@pytest.mark.parametrize("query", ["%", "_", "%%_", "？！。", "「」"])
async def test_punctuation_only_queries_return_nothing_and_never_fail(store: SessionStore,
                                                                      query: str) -> None:
    """Queries with nothing searchable succeed with no results."""
    assert (await recall(store, query))["results"] == []


async def test_summary_of_a_chinese_session_quotes_the_answer(store: SessionStore) -> None:
    """The extractive summary picks the lines that answer the Chinese question."""
    summary = (await recall(store, "跨域怎么解决的"))["results"][0]["summary"]
    assert "Access-Control-Allow-Origin" in summary
    assert "does not appear" not in summary


async def test_window_and_summary_land_on_a_match_deep_in_a_long_message(
        store: SessionStore) -> None:
    """Cut to a small budget, the transcript and its summary keep the matched sentence."""
    result = (await recall(store, "磁盘配额", budget=800))["results"][0]
    assert result["session_id"] == "long"
    assert result["truncated"] is True
    assert "磁盘配额满了" in result["summary"]


async def test_english_next_to_cjk_is_unaffected(store: SessionStore) -> None:
    """An English question still finds the English session first."""
    assert await first(store, "docker bridge network") == "en"


async def test_a_chinese_question_recalls_and_summarises_an_english_session(
        store: SessionStore) -> None:
    """网络 is "network": the English session comes back, and its summary quotes the
    line that says so rather than calling the session off topic."""
    result = (await recall(store, "网络坏了是怎么修好的？"))["results"][0]
    assert result["session_id"] == "en"
    assert "user-defined network" in result["summary"]
    assert "does not appear" not in result["summary"]
