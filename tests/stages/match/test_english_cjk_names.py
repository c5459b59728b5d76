"""An English question's CJK names of its words (frontend 前端, bundle 打包), where the store
holds them in few messages, are searched beside the question's own rare words, or where it
holds none of its own: a question whose own words are common and none rare reads the
bounded OR of them, not the CJK names' rows as well (on a 100k mixed store those cost
English questions x1.27-1.35 CPU)."""

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


async def test_cjk_names_are_searched_beside_a_rare_word_of_the_question_only(
        store: SessionStore) -> None:
    common = [conversation(f"{word}-{i}", ("user", f"the {word} {filler}"),
                           started_at=1_000.0 + i)
              for word in ("frontend", "bundle")
              for i, filler in enumerate(("moved", "checked", "listed", "noted"))]
    chinese = conversation("zh", ("user", "前端打包出来的 main.js 有 3MB"),
                           ("assistant", "改成 lodash-es 按需引入"), started_at=10.0)
    rare = conversation("shrink", ("user", "shrink the logo"), started_at=2_000.0)
    unsafe_perform_io((await store.ingest((chinese, rare, *common)).awaitable()).unwrap())
    # "shrink" is rare: the CJK names join it, and the Chinese session is found.
    assert "zh" in await _found(store, "how did we shrink the frontend bundle")
    # Every word common: the CJK names weigh the rows the English words read, select none.
    assert "zh" not in await _found(store, "the frontend bundle")


async def test_cjk_names_are_searched_when_the_store_holds_none_of_its_english_words(
        store: SessionStore) -> None:
    """A store held in Chinese, asked in English (as an agent asks for its user): no word
    of the question's own is in it, rare or common, and its CJK names find the session."""
    chinese = conversation("zh", ("user", "前端打包出来的 main.js 有 3MB"), started_at=10.0)
    other = conversation("other", ("user", "redis 连接超时"), started_at=20.0)
    unsafe_perform_io((await store.ingest((chinese, other)).awaitable()).unwrap())
    assert (await _found(store, "how did we shrink the frontend bundle"))[:1] == ["zh"]
