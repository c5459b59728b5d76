"""An English question's CJK names of its words (frontend 前端, bundle 打包), where the store
holds them and the word they name in few messages, are searched beside the question's own
rare words, or where it holds none of its own: a question whose own words are common and
none rare reads the bounded OR of them, not the CJK names' rows as well (on a 100k mixed
store those cost English questions x1.27-1.35 CPU), and a common word's names are never
searched (their rows crowd out the rare words')."""

from __future__ import annotations

from returns.unsafe import unsafe_perform_io

from harkback.stages.match.lexical import LexicalMatch
from harkback.stages.ports import Deps, SessionStore
from harkback.stages.request import SearchRequest
from harkback.stages.resolve import LineageResolve
from tests.conftest import conversation

MATCH = LexicalMatch(max_scored=3)  # four messages a word: each English word is common


async def _found(store: SessionStore, query: str) -> list[str]:
    outcome = await MATCH(SearchRequest(query=query, limit=10)).bind(LineageResolve())(
        Deps(store=store)).awaitable()
    return [c.root.id for c in unsafe_perform_io(outcome.unwrap()).candidates]


async def test_cjk_names_are_searched_beside_a_rare_word_of_the_question_s_own(
        store: SessionStore) -> None:
    """"frontend" is rare (one message), "bundle" absent: their names 前端 and 打包 are
    searched beside them, and the Chinese session writing none of the English is found."""
    english = conversation("logo", ("user", "shrink the frontend logo"), started_at=1_000.0)
    chinese = conversation("zh", ("user", "前端打包出来的 main.js 有 3MB"),
                           ("assistant", "改成 lodash-es 按需引入"), started_at=10.0)
    unsafe_perform_io((await store.ingest((english, chinese)).awaitable()).unwrap())
    assert "zh" in await _found(store, "how did we shrink the frontend bundle")


async def test_no_cjk_name_is_searched_beside_common_words_alone(store: SessionStore) -> None:
    """"frontend" is common (four messages), "bundle" absent, no word rare: the question
    reads the bounded OR of its own words, not the rows of 打包 (the name of the absent
    "bundle") as well, which beside common words cost x1.3 CPU on a 100k store."""
    common = [conversation(f"frontend-{i}", ("user", f"the frontend {filler}"),
                           started_at=1_000.0 + i)
              for i, filler in enumerate(("moved", "checked", "listed", "noted"))]
    chinese = conversation("zh", ("user", "打包出来的 main.js 有 3MB"), started_at=10.0)
    unsafe_perform_io((await store.ingest((chinese, *common)).awaitable()).unwrap())
    assert "zh" not in await _found(store, "the frontend bundle")


async def test_cjk_names_are_searched_when_the_store_holds_none_of_its_english_words(
        store: SessionStore) -> None:
    """A store held in Chinese, asked in English (as an agent asks for its user): no word
    of the question's own is in it, rare or common, and its CJK names find the session."""
    chinese = conversation("zh", ("user", "前端打包出来的 main.js 有 3MB"), started_at=10.0)
    other = conversation("other", ("user", "redis 连接超时"), started_at=20.0)
    unsafe_perform_io((await store.ingest((chinese, other)).awaitable()).unwrap())
    assert (await _found(store, "how did we shrink the frontend bundle"))[:1] == ["zh"]


async def test_the_cjk_names_of_a_common_word_are_not_searched_beside_a_rare_one(
        store: SessionStore) -> None:
    """"deploy" is common (four messages), "crlf" rare: 部署, the name of the common word,
    is weighed in the rows the English words read, never read by itself (in a 100k store
    its 1,755 rows filled the rows read and the CRLF fix lost first place)."""
    common = [conversation(f"deploy-{i}", ("user", f"the deploy {filler}"),
                           started_at=1_000.0 + i)
              for i, filler in enumerate(("moved", "checked", "listed", "noted"))]
    crlf = conversation("crlf", ("user", "crlf line endings break the deploy script"),
                        started_at=10.0)
    chinese = conversation("zh", ("user", "部署到 staging 失败"), started_at=20.0)
    unsafe_perform_io((await store.ingest((crlf, chinese, *common)).awaitable()).unwrap())
    found = await _found(store, "the crlf thing breaking the deploy script")
    assert found[:1] == ["crlf"] and "zh" not in found
