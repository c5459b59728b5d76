"""Tests of counts and relative times in CJK questions: framing, the number kept."""

from __future__ import annotations

import pytest

from harkback.stages.text.counts import (
    CHINESE_COUNTERS,
    JAPANESE_COUNTERS,
    KOREAN_BEFORE_AFTER,
    KOREAN_COUNT_WORDS,
    KOREAN_COUNTERS,
    KOREAN_NUMERALS,
    KOREAN_TIMES,
    RELATIVE_TIMES,
    TIME_ALONE,
    WORDS,
)
from harkback.stages.text.framing import without_framing
from harkback.stages.text.tokens import tokens
from tests.support.query_units import query_units as units


@pytest.mark.parametrize("counter", sorted(set(CHINESE_COUNTERS + JAPANESE_COUNTERS)))
def test_a_chinese_or_japanese_counter_after_a_number_frames(counter: str) -> None:
    """"500 条", "8秒": the number stays, the counter bound to it goes (no 条*, no 秒冲)."""
    assert tokens(without_framing(f"端口 500 {counter}冲突")) == ("端口", "500", "冲突")
    assert tokens(without_framing(f"端口8{counter}冲突")) == ("端口", "8", "冲突")


@pytest.mark.parametrize("counter", KOREAN_COUNTERS)
def test_a_korean_counter_after_a_number_frames(counter: str) -> None:
    """"5 개", "3번을", "1원씩": the number stays, the counter and its endings go."""
    assert tokens(without_framing(f"포트 5 {counter} 충돌")) == ("포트", "5", "충돌")
    assert tokens(without_framing(f"포트 3{counter}씩 충돌")) == ("포트", "3", "충돌")


@pytest.mark.parametrize("count", ["两次", "那两次", "好几分钟", "几天", "二回", "何回", "数日",
                                   "一日", "两个"])
def test_a_count_in_characters_goes_whole(count: str) -> None:
    """两次 ("twice"), 何回 ("how many times"): how the question counts, not what it names;
    neither the numeral nor the counter is left to match as a prefix."""
    assert tokens(without_framing(f"端口 {count} 冲突")) == ("端口", "冲突")


@pytest.mark.parametrize("numeral", KOREAN_NUMERALS)
def test_a_korean_count_in_words_goes_whole(numeral: str) -> None:
    """두 번, 몇 개: numeral and counter go, with an ending (두 번씩)."""
    assert tokens(without_framing(f"포트 {numeral} 번씩 충돌")) == ("포트", "충돌")
    assert tokens(without_framing(f"포트 {numeral} 개를 충돌")) == ("포트", "충돌")


@pytest.mark.parametrize("word", KOREAN_COUNT_WORDS)
def test_a_korean_count_standing_alone_frames(word: str) -> None:
    """"둘 다 보여줘" ("show me both"): 둘 names nothing."""
    assert tokens(without_framing(f"포트 {word} 다 {word}를 충돌")) == ("포트", "충돌")


@pytest.mark.parametrize(("word", "count"), [
    *((w, "3 次") for w in ("次数", "条目", "回调", "个人", "分钟数", "百度", "统一个人")),
    *((w, "3 번") for w in ("번역", "개발", "세일", "세대", "원본", "주소", "일정", "전체"))])
def test_a_counter_without_a_number_is_a_word(word: str, count: str) -> None:
    """Only a number binds a counter: 条目 ("entry"), 번역 ("translation"), 세일
    ("sale", not 세 "three" and 일 "day") and 百度 stay whole beside a count that goes."""
    assert without_framing(f"{word} {count}").split() == [word, "3"]


@pytest.mark.parametrize("char", TIME_ALONE)
def test_before_or_after_standing_alone_frames(char: str) -> None:
    """前に, 前の, 3 天后: a time relative to another, no topic; 前端 and 前缀 stay."""
    assert units(f"pgbouncer の設定、{char}に変えた 前端 前缀") == [
        "pgbouncer", "設定", "前端", "前缀"]


@pytest.mark.parametrize("word", RELATIVE_TIMES)
def test_a_chinese_or_japanese_relative_time_frames(word: str) -> None:
    """最近 ("recently"), 这几天 ("these days"): as "recently" is in English."""
    assert tokens(without_framing(f"端口{word}冲突")) == ("端口", "冲突")


@pytest.mark.parametrize("word", KOREAN_TIMES + KOREAN_BEFORE_AFTER)
def test_a_korean_relative_time_frames(word: str) -> None:
    """최근에, 며칠, 이번 주에, 전에: a word of its own with its endings."""
    assert tokens(without_framing(f"포트 {word}에 충돌")) == ("포트", "충돌")


@pytest.mark.parametrize(("question", "gone"), [
    ("kintone 拉数据只拿到 500 条那个，当时怎么分页的", "条"),
    ("Java の Lambda のコールドスタートが 8 秒かかってた", "秒"),
    ("CI で pnpm install がロックファイル絡みでコケてたの、何回かあった", "回"),
    ("iOS のアーカイブで署名のエラー出てたやつ、前どうやって直したんだっけ？", "前"),
    ("3番目の引数が渡らなくなったやつ", "番目"),
    ("셀러리 정산 태스크가 두 번 실행되던 문제", "번"),
    ("며칠 전에 몽고DB 쿼리 느렸던 거", "전에"),
    ("이번 주에 vite 번들 너무 커서 청크 나눈 거", "주에"),
])
def test_a_question_s_counts_and_times_are_no_unit(question: str, gone: str) -> None:
    """The seed sets' questions whose counter or time reached the ranker as a topic unit, and
    an ordinal (3番目, "the third")."""
    assert gone not in units(question)
    assert units(question)


@pytest.mark.parametrize(("written_on", "apart"), [
    ("3일전에 배포한 서버", "3일 전에 배포한 서버"),
    ("2주전 도커 빌드 실패", "2주 전 도커 빌드 실패"),
    ("5분후에 로그", "5분 후에 로그")])
def test_a_korean_time_written_on_to_its_count_frames(written_on: str, apart: str) -> None:
    """3일전에 ("three days ago", 전 written on to the count) asks what "3일 전에" does: no
    일전, 주전 or 분후 is searched."""
    assert units(written_on) == units(apart)


@pytest.mark.parametrize(("question", "kept"), [
    ("上次双11秒杀的超卖问题怎么解决的", "秒杀"),  # "flash sale", not "11 seconds"
    ("MySQL 8 回滚失败的那次", "回滚"),  # a glossary word after a version
    ("Python 3.12 本番環境で落ちた", "本番"),
    ("Android 14 位置权限", "位置"),
    ("TCP三次握手超时", "次握"),  # three-way handshake
    ("この二分探索のバグ", "二分"),  # binary search
    ("p99 百分位延迟", "百分"),  # percentile
    ("最近邻搜索太慢", "近邻"),  # nearest neighbour
    ("リトライのこの間隔はどこで設定した", "間隔"),  # この間 of この間隔 ("this interval")
    ("최근접 이웃 검색이 느려요", "근접"),
    ("상태 전이 로직 버그", "전이"),  # state transition, not 전 ("before") with 이
])
def test_a_count_or_time_is_not_cut_out_of_a_word(question: str, kept: str) -> None:
    """A counter or time that starts a longer word (秒杀, 回滚, 最近邻) is part of it: the
    word stays whole and is searched as the question writes it."""
    assert kept in units(question)


@pytest.mark.parametrize("word", WORDS)
def test_a_listed_word_keeps_its_count_after_a_number(word: str) -> None:
    """"Redis 7 秒杀", "TCP 三次握手": the number stays and so does the word after it."""
    assert without_framing(f"redis 7 {word}").split() == ["redis", "7", word]


@pytest.mark.parametrize("question", [
    "三天前的那个bug怎么修的", "两周前的那次迁移", "3天前的部署失败"])
def test_before_with_a_particle_after_a_count_frames(question: str) -> None:
    """三天前的 ("of three days ago"): 前 before the particle 的 stands alone too; no 前*
    or 前的 is searched."""
    assert not any(u.startswith("前") for u in units(question))
