"""The lexical ranker and the baselines as match stages, against both stores."""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import pytest
from returns.future import FutureResult
from returns.unsafe import unsafe_perform_io

from harkback.adapters.stores.memory import MemoryStore
from harkback.stages.errors import StoreUnavailable
from harkback.stages.flow import Matched
from harkback.stages.match import lexical
from harkback.stages.match.lexical import LexicalMatch
from harkback.stages.match.rankers import RANKERS, ReferenceMatch
from harkback.stages.match.sessions import SessionScoring
from harkback.stages.ports import Deps, SessionStore, TermStats
from harkback.stages.records import Conversation, Role
from harkback.stages.request import SearchRequest
from harkback.stages.resolve import LineageResolve
from harkback.stages.stage import Stage
from tests.conftest import conversation


async def _ingest(store: SessionStore, *conversations: Conversation) -> None:
    unsafe_perform_io((await store.ingest(conversations).awaitable()).unwrap())


LEXICAL = LexicalMatch()


async def _sessions(store: SessionStore, query: str,
                    match: Stage[SearchRequest, Matched] = LEXICAL) -> list[str]:
    request = SearchRequest(query=query, limit=10)
    outcome = await match(request).bind(LineageResolve())(Deps(store=store)).awaitable()
    return [c.root.id for c in unsafe_perform_io(outcome.unwrap()).candidates]


async def test_inflected_evidence_is_found(store: SessionStore) -> None:
    """A question about 'bikes' finds the session that says 'bike' and 'serviced'."""
    await _ingest(store,
                  conversation("gold", ("user", "I got my road bike serviced at the shop")),
                  conversation("other", ("user", "the service desk was closed today")),
                  conversation("noise", ("user", "tell me about sourdough bread")))
    assert (await _sessions(store, "how many bikes did I service"))[0] == "gold"


async def test_covering_session_beats_a_repetitive_one(store: SessionStore) -> None:
    """A session covering the whole query outranks one repeating a single query word."""
    loud = conversation("loud", *[("user", f"docker container restart {i}") for i in range(12)])
    right = conversation("right", ("user", "the docker bridge network lost dns"),
                         ("assistant", "recreate the bridge network"))
    await _ingest(store, loud, right)
    assert (await _sessions(store, "docker bridge network dns"))[0] == "right"


async def test_cron_sessions_are_demoted(store: SessionStore) -> None:
    """With the same text, a cron session ranks below a normal one."""
    await _ingest(store, conversation("cron", ("user", "backup failed on disk"), source="cron"),
                  conversation("cli", ("user", "backup failed on disk"), source="cli"))
    assert await _sessions(store, "backup failed") == ["cli", "cron"]


async def test_hits_follow_the_session_ranking(store: SessionStore) -> None:
    """The match stage's hits come grouped by session, best session first."""
    await _ingest(store, conversation("a", ("user", "nginx cors header"), ("user", "cors again")),
                  conversation("b", ("user", "nginx restart")))
    outcome = await LexicalMatch()(SearchRequest(query="nginx cors header"))(
        Deps(store=store)).awaitable()
    hits = unsafe_perform_io(outcome.unwrap()).hits
    assert [h.session_id for h in hits] == ["a", "a", "b"]


async def test_stopword_only_query_matches_nothing_safely(store: SessionStore) -> None:
    """A query of punctuation finds nothing and raises nothing."""
    await _ingest(store, conversation("a", ("user", "hello")))
    assert await _sessions(store, "?!* ((") == []


async def test_reference_requires_every_word_first(store: SessionStore) -> None:
    """The reference ranker returns only all-word matches when there are any."""
    await _ingest(store, conversation("all", ("user", "fix the bridge")),
                  conversation("some", ("user", "bridge bridge bridge")))
    assert await _sessions(store, "fix the bridge", ReferenceMatch()) == ["all"]


async def test_reference_falls_back_to_any_word(store: SessionStore) -> None:
    """When no message holds every word, the reference ranker tries any word."""
    await _ingest(store, conversation("some", ("user", "the bridge is down")))
    assert await _sessions(store, "fix the bridge", ReferenceMatch()) == ["some"]


@pytest.mark.parametrize("name", sorted(RANKERS))
async def test_every_registered_ranker_runs(store: SessionStore, name: str) -> None:
    """Each ranker in the registry finds the one matching session."""
    await _ingest(store, conversation("a", ("user", "kubernetes pod crashloop")),
                  conversation("b", ("user", "weekend plans")))
    assert await _sessions(store, "kubernetes pod", RANKERS[name]) == ["a"]


async def test_what_the_user_said_outranks_the_same_words_from_the_assistant(
        store: SessionStore) -> None:
    """By default the user's own words weigh more than the same words from the assistant."""
    await _ingest(store,
                  conversation("told", ("assistant", "a garden kayak trip"), ("user", "ok")),
                  conversation("said", ("user", "a garden kayak trip"), ("assistant", "ok")))
    assert (await _sessions(store, "kayak trip"))[0] == "said"


async def test_a_question_naming_a_time_prefers_sessions_from_then(store: SessionStore) -> None:
    """'two weeks ago' lifts the session of two weeks before now over an older twin."""
    day = 86400.0
    now = 100 * day
    said: tuple[Role, str] = ("user", "I baked a lemon tart")
    await _ingest(store, conversation("old", said, started_at=now - 60 * day),
                  conversation("then", said, started_at=now - 14 * day))
    request = SearchRequest(query="what did I bake two weeks ago?", limit=10)
    outcome = await LexicalMatch()(request).bind(LineageResolve())(
        Deps(store=store, clock=lambda: now)).awaitable()
    ranked = [c.root.id for c in unsafe_perform_io(outcome.unwrap()).candidates]
    assert ranked[0] == "then"


async def test_every_time_a_question_names_is_weighed(store: SessionStore) -> None:
    """'yesterday and three weeks ago': the bread of three weeks ago rises over an older
    session that says 'bread' more often, though the first time named is yesterday."""
    day = 86400.0
    now = 1000 * day
    await _ingest(store,
                  conversation("old", ("user", "bread, more bread: I baked rye bread"),
                               started_at=now - 80 * day),
                  conversation("then", ("user", "I baked rye bread"), started_at=now - 21 * day))
    request = SearchRequest(query="which bread did I bake yesterday and three weeks ago?",
                            limit=10)
    outcome = await LexicalMatch()(request).bind(LineageResolve())(
        Deps(store=store, clock=lambda: now)).awaitable()
    assert [c.root.id for c in unsafe_perform_io(outcome.unwrap()).candidates] == [
        "then", "old"]


async def test_the_words_of_a_time_are_not_searched_for(store: SessionStore) -> None:
    """'two weeks ago' is weighed by its window: a session that only says those words
    is not a match for what was baked then."""
    day = 86400.0
    now = 100 * day
    await _ingest(store,
                  conversation("baked", ("user", "I baked a lemon tart"),
                               started_at=now - 14 * day),
                  conversation("weeks", ("user", "two weeks ago, and weeks before that, ago"),
                               started_at=now - 14 * day))
    request = SearchRequest(query="what did I bake two weeks ago?", limit=10)
    outcome = await LexicalMatch()(request).bind(LineageResolve())(
        Deps(store=store, clock=lambda: now)).awaitable()
    assert [c.root.id for c in unsafe_perform_io(outcome.unwrap()).candidates] == ["baked"]


async def test_an_irregular_past_answers_a_question_in_the_present(store: SessionStore) -> None:
    """'what did I buy' finds the session that says 'bought'."""
    await _ingest(store, conversation("gold", ("user", "I bought a kayak last spring")),
                  conversation("noise", ("user", "kayak club")))
    assert (await _sessions(store, "what did I buy for the kayak"))[0] == "gold"


async def test_common_topic_words_found_together_are_read_beside_a_rare_word(
        store: SessionStore) -> None:
    """In a store where every topic word is common, an incidental rare word of the question
    ("take") does not decide alone which messages are read: messages holding two of the
    common words together are read too, so the session about them is found."""
    common = [conversation(f"{word}-{i}", ("user", f"{word} {filler}"), started_at=1_000.0 + i)
              for word in ("postgres", "restore", "backups")
              for i, filler in enumerate(("upgraded", "checked", "listed", "noted"))]
    gold = conversation("gold", ("user", "the postgres backups run nightly"),
                        ("assistant", "pg_restore can restore one table of the postgres dump"),
                        started_at=10.0)
    rare = conversation("rare", ("user", "take the dog out"), started_at=2_000.0)
    await _ingest(store, gold, rare, *common)
    match = LexicalMatch(max_scored=3)  # four messages a word: each topic word is common
    ranked = await _sessions(store, "how do we take and restore the postgres backups?", match)
    assert ranked[0] == "gold"


async def test_a_question_in_japanese_prefers_the_japanese_session_of_a_near_tie(
        store: SessionStore) -> None:
    """Two sessions match a Japanese question alike (by the tool's name); the one held in
    Japanese comes first, whichever is newer."""
    await _ingest(store,
                  conversation("en", ("user", "certbot renew failed once again"),
                               started_at=2_000.0),
                  conversation("ja", ("user", "certbot renew エラー"), started_at=1_000.0))
    assert (await _sessions(store, "certbot renew でどう直した？"))[0] == "ja"
    # An English question lifts nothing: the newer English session wins the tie.
    assert (await _sessions(store, "how did we fix certbot renew?"))[0] == "en"


async def test_a_flag_is_searched_as_written(store: SessionStore) -> None:
    """'--no-cache' is the phrase "no cache", not the loose word "cache"."""
    await _ingest(store,
                  conversation("flag", ("user", "the image was stale, rebuild with --no-cache")),
                  conversation("loose", ("user", "the build cache is huge, prune the cache"),
                               started_at=5_000.0))
    assert (await _sessions(store, "what was --no-cache for?"))[0] == "flag"


async def test_a_short_form_finds_what_it_stands_for(store: SessionStore) -> None:
    """'prod db' finds the session that says 'production database'."""
    await _ingest(store,
                  conversation("long", ("user", "restore the production database from backup")),
                  conversation("other", ("user", "restore my photos from the backup drive")))
    assert (await _sessions(store, "how did we restore the prod db?"))[0] == "long"



async def test_a_chinese_question_finds_the_english_session_it_names(store: SessionStore) -> None:
    """数据库 连接 超时 are 'database', 'connection', 'timeout': the English session that
    fixed them comes first, above a Chinese session that shares only the question's
    framing and one word."""
    await _ingest(store,
                  conversation("gold", ("user", "the api keeps failing with database "
                                        "connection timeout under load"),
                               ("assistant", "raised the pool size and the connect timeout")),
                  conversation("zh", ("user", "上次构建失败了，数据在哪里看？")),
                  conversation("other", ("user", "the cron backup job filled the disk")))
    ranked = await _sessions(store, "上次数据库连接超时是怎么解决的？")
    assert ranked[0] == "gold"


async def test_english_words_in_a_korean_question_find_the_korean_words(
        store: SessionStore) -> None:
    """'deploy' and 'rollback' in a Korean question also look for 배포 and 롤백."""
    await _ingest(store,
                  conversation("gold", ("user", "어제 배포 후 에러가 나서 롤백했어요")),
                  conversation("other", ("user", "로그인 화면 디자인을 바꿨어요")))
    assert (await _sessions(store, "지난번 deploy rollback 어떻게 했지?"))[0] == "gold"


async def test_a_korean_question_finds_the_japanese_session_it_names(
        store: SessionStore) -> None:
    """권한 and 경고 (permission, warning) are 権限 and 警告 in Japanese: the Japanese
    session about them comes first, above a Korean one sharing only 권한."""
    await _ingest(store,
                  conversation("ja", ("user", "ビルドで権限の警告が 240 個出る"),
                               ("assistant", "権限を付け直して警告は 3 個になりました")),
                  conversation("ko", ("user", "폴더 권한 설정을 바꿨어요")))
    assert (await _sessions(store, "권한 경고 뜨던 거 어떻게 했지?"))[0] == "ja"


async def test_an_english_question_finds_the_chinese_session_it_names(
        store: SessionStore) -> None:
    """"callback", "signature" and "fail" are 回调, 签名 and 失败: the Chinese session on
    the alipay notify callback comes first, above an English one holding those three
    words but not "alipay notify" (the Chinese session, found by "alipay", is weighed by
    its Chinese words too)."""
    await _ingest(store,
                  conversation("zh", ("user", "alipay notify 回调 签名 一直 失败")),
                  conversation("en", ("user", "github webhook callback signature check "
                                       "failing after the secret rotation")))
    ranked = await _sessions(store, "how did we fix the alipay notify callback signature failing?")
    assert ranked[0] == "zh"


async def test_a_session_in_the_question_s_language_stays_ahead_of_an_english_look_alike(
        store: SessionStore) -> None:
    """A Japanese question about a Japanese session: an English session on a like topic,
    matched only through the English name of ネットワーク, does not pass it (the name
    weighs half of the word as the question writes it)."""
    await _ingest(store,
                  conversation("ja", ("user", "docker のネットワークで redis に繋がらない"),
                               ("assistant", "同じネットワークに入れて解決しました"),
                               started_at=1_000.0),
                  conversation("en", ("user", "docker network: the api can't reach the db"),
                               ("assistant", "put both on one user-defined network; the "
                                "default bridge network has no dns"),
                               started_at=2_000.0))
    ranked = await _sessions(store, "前回のDockerのネットワークの問題はどうやって解決した？")
    assert ranked[0] == "ja"


async def test_an_english_session_s_title_weighs_its_names_as_its_messages_do(
        store: SessionStore) -> None:
    """A Chinese question about an English session that names 缓存 ("cache") only in its
    title: in a store where "cache" is common and 缓存 rare, the title weighs the English
    name as the session's messages would (FOREIGN_FLOOR of 缓存), so the session passes a
    Chinese one that mentions 缓存 in passing in a long message."""
    common = [conversation(f"common-{i}", ("user", f"the cache of service {i} was cold"))
              for i in range(12)]
    await _ingest(store, *common,
                  conversation("gold", ("user", "bumped the ttl to ten minutes"),
                               title="cache ttl", started_at=1_000.0),
                  conversation("zh", ("user", "今天开会讨论了很多事情，包括下个季度的计划、"
                                      "团队的分工、还有浏览器缓存的一点小事，然后大家一起吃了午饭"),
                               started_at=2_000.0))
    ranked = await _sessions(store, "缓存的问题是怎么解决的？")
    # The English sessions saying "cache" pass the Chinese one too: they cover the
    # question's share at the names' lifted weights (sessions.rank_sessions' foreign).
    assert ranked[0] == "gold"


async def test_a_ranking_that_weighs_no_writing_does_not_look_for_it(
        store: SessionStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the script lift, and with no word of the Korean question named in English
    (no floor to apply), which sessions are written in Korean is not worked out: nothing
    would use it."""
    def unused(*_: object) -> set[str]:
        raise AssertionError("the sessions written in the question's script were looked for")

    monkeypatch.setattr(lexical, "_written_in", unused)
    await _ingest(store, conversation("ko", ("user", "화면 디자인을 다시 바꿨어요")),
                  conversation("en", ("user", "the login page design")))
    match = LexicalMatch(scoring=SessionScoring(script_weight=0.0))
    assert await _sessions(store, "화면 디자인 바꿨던 거", match) == ["ko"]


@pytest.mark.parametrize("question", ["큐에 쌓였던 거 어떻게 해결했지?", "큐가 밀렸던 거 뭐였지?",
                                      "큐 쌓였던 거 어떻게 해결했지?"])
async def test_a_korean_noun_of_one_syllable_meets_it_with_any_particle(
        store: SessionStore, question: str) -> None:
    """큐에, 큐가 and a bare 큐 in the question all find the session that says 큐를 and
    큐가 ("the queue"), and not the newer one about a 큐브 ("cube")."""
    await _ingest(store,
                  conversation("queue", ("user", "워커가 죽어서 작업 큐가 계속 밀렸어요"),
                               ("assistant", "워커를 다시 띄우고 큐를 비웠습니다"),
                               started_at=1_000.0),
                  conversation("cube", ("user", "큐브 모양 아이콘을 새로 그렸어요"),
                               started_at=2_000.0))
    assert await _sessions(store, question) == ["queue"]


async def test_a_korean_noun_with_a_particle_meets_the_bare_noun(store: SessionStore) -> None:
    """락이 ("the lock") in the question finds the session that says 락 alone and 락을."""
    await _ingest(store,
                  conversation("lock", ("user", "배포 중에 마이그레이션 락 때문에 멈췄어요"),
                               ("assistant", "남아 있던 락을 지우고 다시 돌렸습니다")),
                  conversation("other", ("user", "로그인 버튼 색을 바꿨어요")))
    assert (await _sessions(store, "락이 안 풀렸던 거 어떻게 했지?"))[:1] == ["lock"]


async def test_a_korean_noun_of_one_syllable_finds_the_english_session_it_names(
        store: SessionStore) -> None:
    """큐에 ("at the queue") is 큐, whose English name finds the session about a queue."""
    await _ingest(store,
                  conversation("gold", ("user", "the emails queue keeps growing, zero consumers"),
                               ("assistant", "the worker only consumed the default queue")),
                  conversation("other", ("user", "큐브 모양 아이콘을 새로 그렸어요")))
    assert (await _sessions(store, "큐에 쌓였던 거 어떻게 해결했지?"))[:1] == ["gold"]


async def test_a_lone_chinese_character_weighs_as_common_as_the_words_it_starts(
        store: SessionStore) -> None:
    """改 ("change") alone in the question is matched as a prefix (改成, 改了); counted as
    those, it is common in a store of Chinese sessions that change things, and the session
    on the question's rare word (webpack) comes first. Counted as the character alone, a
    token only where a run of CJK ends (found here nowhere), it weighed as much as webpack
    and every newer Chinese session passed the answer."""
    changes = ["把按钮改成蓝色", "标题文案改了一下", "接口路径改成 v2", "改成每天早上发",
               "字体大小改回去了", "把日志级别改成 info", "首页布局改了", "配色改成暗色"]
    await _ingest(store,
                  conversation("gold", ("user", "the webpack build got slow after the upgrade"),
                               ("assistant", "switched babel-loader to esbuild-loader"),
                               started_at=1_000.0),
                  *(conversation(f"zh-{i}", ("user", text), started_at=3_000.0 + i)
                    for i, text in enumerate(changes)))
    assert (await _sessions(store, "上次 webpack 改了哪里？"))[0] == "gold"


class OneArgumentStore(MemoryStore):
    """A library caller's own store, written before ``term_stats`` took prefixes."""

    def term_stats(self, terms: Sequence[str]  # type: ignore[override]
                   ) -> FutureResult[TermStats, StoreUnavailable]:
        return super().term_stats(terms)


async def test_a_store_written_to_the_one_argument_term_stats_still_answers() -> None:
    """Prefix counts are asked for only when the question has a prefix unit: a store whose
    ``term_stats`` takes the terms alone answers every other question as before."""
    store = cast(SessionStore, OneArgumentStore())  # typed callers have the new form
    await _ingest(store,
                  conversation("gold", ("user", "the nginx reload dropped the websocket")),
                  conversation("other", ("user", "tell me about sourdough bread")))
    assert (await _sessions(store, "how did we fix the nginx websocket"))[0] == "gold"


async def test_an_english_session_covers_a_korean_question_as_its_names_are_weighed(
        store: SessionStore) -> None:
    """A Korean question about an English session (설정 "config", 파드 "pod"), in a store
    where "config" and "pod" are common: the English session holds the names of two of the
    question's words, a Korean editor-settings session one word as written. Its share of the
    question counts the names as its messages weigh them (FOREIGN_FLOOR of the words), so
    it comes first; at the names' own weights the Korean session came first."""
    common = [conversation(f"common-{i}-{word}", ("user", f"service {i}: {word} checked"))
              for i in range(6) for word in ("config", "pod")]
    await _ingest(store, *common,
                  conversation("en", ("user", "changed the config but the pod kept the old one"),
                               started_at=1_000.0),
                  conversation("ko", ("user", "VS Code 설정 동기화가 꺼졌어요"),
                               ("assistant", "설정 동기화를 다시 켰습니다"), started_at=2_000.0))
    ranked = await _sessions(store, "설정 바꿨는데 파드에 반영이 안 됐던 거")
    assert ranked[0] == "en"


async def test_a_korean_predicate_meets_its_conjugated_forms(store: SessionStore) -> None:
    """A Korean question asks about logs that "break" (깨지는); the answer says they broke
    as 깨져요 and 깨진, a newer look-alike holds the question's 한글 and 로그 as written but
    nothing broken. The question's 깨지 is searched by its conjugated forms, so the answer
    covers all three words; as the bigram 깨지 alone it covered two, as the look-alike does."""
    common = [conversation(f"common-{i}", ("user", f"서비스 {i} 로그 한글 확인")) for i in range(6)]
    await _ingest(store, *common,
                  conversation("answer", ("user", "한글 로그가 깨져요"),
                               ("assistant", "인코딩이 달라서 깨진 겁니다"), started_at=1_000.0),
                  conversation("look-alike", ("user", "한글 로그 검색이 느려요"),
                               ("assistant", "로그 인덱스를 추가했습니다"), started_at=2_000.0))
    ranked = await _sessions(store, "한글 로그 깨지는 거 고쳤던 거")
    assert ranked[0] == "answer"
