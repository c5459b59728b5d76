"""A CJK question's Latin words name what it is about (:mod:`harkback.stages.match.latin_names`),
in the planner's units and in the ranker with real stores."""

from __future__ import annotations

from returns.unsafe import unsafe_perform_io

from harkback.stages.match.latin_names import latin_names, names_script
from harkback.stages.match.lexical import LexicalMatch
from harkback.stages.match.plan import plan_units
from harkback.stages.match.runs import unit_text
from harkback.stages.ports import Deps, SessionStore
from harkback.stages.query import parse_query
from harkback.stages.request import SearchRequest
from harkback.stages.resolve import LineageResolve
from harkback.stages.text.scripts import cjk_script
from tests.conftest import conversation


def _names(question: str) -> list[str]:
    units = plan_units(parse_query(question), script=cjk_script(question))
    return [unit_text(units[j].unit) for j in sorted(latin_names(units, names_script(question)))]


def test_the_latin_words_a_cjk_question_writes_are_its_names() -> None:
    # The question's own Latin words; not the English names the glossary gives its CJK
    # words (배포: deploy, 파일: file), not a lone letter or a number.
    assert _names("예전에 배포하고 나면 CloudFront 에서 옛날 JS 파일 때문에 흰 화면 뜨던 거") == [
        "cloudfront", "js"]
    assert _names("之前 docker 镜像有两个多G，晚 8 个小时才跑") == ["docker"]


def test_a_word_in_another_script_is_not_a_latin_name() -> None:
    # кэш and κρυφή are rare in the store because their scripts are, as a CJK word is: they
    # weigh as a name already. Latin letters with marks (Straße, Łódź) are still Latin.
    assert _names("nginx 超时 キャッシュ кэш κρυφή") == ["nginx"]
    assert _names("Łódź の Straße 設定") == ["łodz", "strasse"]


def test_an_english_question_has_none() -> None:
    assert _names("how did we fix the CloudFront cache after deploy") == []


def test_an_english_question_naming_one_cjk_word_has_none() -> None:
    """An English question is English for holding a Chinese or Korean word: its generic
    words (cache, service) are its own, not names it switched script for."""
    assert _names("how did we fix the 超时 of the nginx cache in the payment service") == []
    assert _names("where did the 배포 script for the billing service end up") == []
    # The CJK question's Latin words stay names with many of them (b5-ko-pickle).
    assert _names("multiprocessing 쓸 때 Can't pickle local object 에러 어떻게 고쳤지?") == [
        "multiprocessing", "pickle", "local", "object"]


async def _first(store: SessionStore, query: str) -> str:
    request = SearchRequest(query=query, limit=10)
    outcome = await LexicalMatch()(request).bind(LineageResolve())(
        Deps(store=store)).awaitable()
    return unsafe_perform_io(outcome.unwrap()).candidates[0].root.id


async def test_the_session_naming_the_tool_beats_one_sharing_generic_words(
        store: SessionStore) -> None:
    """A Korean question about a CloudFront problem: the English answer names CloudFront
    but holds the Korean words only by their English names ("deploy", as common as the
    noise sessions make it); a recent Korean session about a browser cache
    holds 배포 and 화면 ("deploy", "screen"), as rare in the store as CloudFront because
    Korean is. Counted by the share of the whole question alone, the look-alike wins."""
    noise = [conversation(f"en{i}", ("user", f"deploy the {topic} service, then check the logs"),
                          started_at=5_000.0 + i)
             for i, topic in enumerate(["billing", "search", "auth", "mail"])]
    unsafe_perform_io((await store.ingest([
        conversation("answer", ("user", "after each deploy CloudFront served the old index"),
                     ("assistant", "invalidate /index.html in CloudFront on every release"),
                     ("user", "the CloudFront invalidation fixed the blank page"),
                     started_at=1_000.0),
        conversation("look-alike", ("user", "배포 후 화면 이 하얗게 나와요"),
                     ("assistant", "브라우저 캐시 를 지우면 화면 이 다시 나와요, 배포 때마다"),
                     started_at=10_000.0),
        conversation("ko-other", ("user", "화면 글씨 가 너무 작아요"), started_at=9_000.0),
        *noise]).awaitable()).unwrap())
    assert await _first(store, "예전에 배포하고 나면 CloudFront 에서 흰 화면 뜨던 거") == "answer"


async def test_an_english_question_naming_a_cjk_word_keeps_its_ranking(
        store: SessionStore) -> None:
    """An English question naming one Chinese word (超时, "timeout"): its English words
    are no names, so a recent session holding them all but not the word it asks about
    gains no name share over the session that holds the word. Counted as a Chinese
    question, "payment service" were its names and the look-alike came first."""
    noise = [conversation(f"en{i}", ("user", f"the {topic} team shipped a new release today"),
                          started_at=5_000.0 + i)
             for i, topic in enumerate(["billing", "search", "auth", "mail"])]
    unsafe_perform_io((await store.ingest([
        conversation("answer", ("user", "payment 接口 超时 了"), started_at=1_000.0),
        conversation("look-alike", ("user", "the payment service logs are noisy"),
                     started_at=10_000.0),
        *noise]).awaitable()).unwrap())
    assert await _first(store, "how did we fix the 超时 in the payment service") == "answer"
