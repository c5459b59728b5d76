"""A word repeated through one session weighs more than one scattered over many
(:mod:`harkback.stages.match.spread`), in the ranker with real stores."""

from __future__ import annotations

from returns.unsafe import unsafe_perform_io

from harkback.stages.match.lexical import LexicalMatch
from harkback.stages.match.score import RankUnit, idf
from harkback.stages.match.spread import SPREAD_CAP, by_sessions
from harkback.stages.ports import Deps, SessionStore
from harkback.stages.query import Term
from harkback.stages.request import SearchRequest
from harkback.stages.resolve import LineageResolve
from tests.conftest import conversation


async def _first(store: SessionStore, query: str) -> str:
    request = SearchRequest(query=query, limit=10)
    outcome = await LexicalMatch()(request).bind(LineageResolve())(
        Deps(store=store)).awaitable()
    return unsafe_perform_io(outcome.unwrap()).candidates[0].root.id


def _unit(text: str, count: int) -> RankUnit:
    return RankUnit(Term(text), (text,), idf(1000, count), count=count)


def test_a_word_gathered_in_one_session_gains_on_one_scattered_over_many() -> None:
    units = (_unit("kintone", 8), _unit("配置", 8), _unit("报错", 8))
    found = ([(0, "answer")] * 8 + [(1, f"s{i}") for i in range(8)]
             + [(2, "a"), (2, "a"), (2, "b"), (2, "b")])
    gathered, scattered, between = by_sessions(units, found, 1000)
    assert gathered.idf > between.idf > scattered.idf == units[1].idf


def test_a_word_in_half_the_store_grows_at_most_twice() -> None:
    # In 500 of 1,000 messages (IDF 0.69), its 300 candidates from three sessions: counted
    # as 50 messages it would weigh 2.99, more than four times as much.
    (common,) = by_sessions((_unit("config", 500),), [(0, f"s{i % 3}") for i in range(300)],
                            1000)
    assert common.idf == SPREAD_CAP * _unit("config", 500).idf


def test_a_word_no_candidate_holds_or_never_counted_keeps_its_weight() -> None:
    units = (_unit("kintone", 8), RankUnit(Term("回调"), ("回调",), 2.0))
    assert by_sessions(units, [(1, "a"), (1, "a")], 1000) == units


async def test_a_tool_named_through_the_answer_beats_generic_words_said_once(
        store: SessionStore) -> None:
    """"kintone" in every message of the English answer; 配置 and 报错 ("config", "error")
    once in each of several Chinese sessions, a recent look-alike holding both twice. Counted
    by messages, kintone is as common as 配置 and the look-alike wins on two words."""
    noise = [conversation(f"zh{i}", ("user", f"{topic} 配置 报错"), started_at=9_000.0 + i)
             for i, topic in enumerate(["数据库", "前端", "日志", "网关"])]
    unsafe_perform_io((await store.ingest([
        conversation("answer", ("user", "kintone returns only 500 records per call"),
                     ("assistant", "kintone limits a query to 500; page with offset"),
                     ("user", "kintone offset stops at 10000"),
                     ("assistant", "use the kintone cursor API for the full export"),
                     started_at=1_000.0),
        conversation("look-alike", ("user", "配置 改了 报错，配置 回滚 还是 报错"),
                     started_at=10_000.0),
        *noise]).awaitable()).unwrap())
    assert await _first(store, "kintone 配置 报错") == "answer"
