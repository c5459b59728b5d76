"""Tests of CJK question framing: the words that ask go, the words that name stay."""

from __future__ import annotations

import pytest

from harkback.stages.query import parse_query
from harkback.stages.text.framing import (
    CHINESE,
    CHINESE_ALONE,
    JAPANESE,
    KOREAN,
    KOREAN_APART,
    KOREAN_WORDS,
    without_framing,
)
from harkback.stages.text.tokens import tokens
from tests.support.query_units import query_units as units


@pytest.mark.parametrize(("question", "topic"), [
    ("上次 nginx 超时是怎么处理的？", ["nginx", "超时"]),
    ("端口冲突是怎么解决的", ["端口", "口冲", "冲突"]),
    ("之前用了什么方案修复 CORS 问题", ["修复", "cors"]),
    ("前回のDockerのネットワークの問題はどうやって解決した？",
     ["docker", "ネッ", "ット", "トワ", "ワー", "ーク"]),
    ("지난번 CORS 에러 어떻게 해결했지?", ["cors", "에러"]),
    ("쿠버네티스 OOM으로 죽었던 문제를 어떻게 처리했지?",
     ["쿠버", "버네", "네티", "티스", "oom"]),
    # A conjunction is framing; searched, 그리고 was the verb 그리다 and took 그림 along.
    ("그리고 서버 설정은 어떻게 했지?", ["서버", "설정"]),
    ("카테고리는 아니면 어디서 바꿨지", ["카테", "테고", "고리"]),
])
def test_a_question_keeps_only_its_topic(question: str, topic: list[str]) -> None:
    """Framing words and the bigrams they would glue to the topic are gone."""
    assert units(question) == topic


@pytest.mark.parametrize("word", sorted(w for w in set(CHINESE + JAPANESE) if len(w) > 1))
def test_every_listed_chinese_or_japanese_word_is_framing(word: str) -> None:
    """Each listed word, standing between two topic words, leaves only them."""
    assert tokens(without_framing(f"端口{word}冲突")) == ("端口", "冲突")


@pytest.mark.parametrize("particle", sorted(w for w in set(CHINESE + JAPANESE) if len(w) == 1))
def test_a_one_character_particle_frames_at_a_word_edge(particle: str) -> None:
    """Beside a framing word, punctuation or the end, a particle goes; between two topic
    characters it may be part of a word (目的, 了解) and the bigrams stay."""
    assert tokens(without_framing(f"端口{particle}怎么冲突")) == ("端口", "冲突")
    assert tokens(without_framing(f"端口冲突{particle}？")) == ("端口", "口冲", "冲突")
    assert tokens(without_framing(f"端{particle}口")) == (f"端{particle}", f"{particle}口")


@pytest.mark.parametrize(("question", "word"), [
    ("这个脚本的目的是什么？", "目的"),
    ("上次处理器占用太高是怎么解决的", "处理器"),
    ("我想了解一下之前的方案", "了解"),
])
def test_a_word_holding_a_framing_part_stays_whole(question: str, word: str) -> None:
    """目的 keeps its 的, 处理器 its 处理, 了解 its 了."""
    assert word in without_framing(question).split()


@pytest.mark.parametrize(("question", "word"), [
    ("上次改的配置文件", "配置文件"),
    ("邮件是怎么发的", "邮件"),
    ("那个插件", "插件"),
    ("批处理作业", "批处理作业"),
    ("コンテナの名前解決", "名前解決"),
    ("디플로이 할 때", "디플로이"),
    ("워크플로 고쳤던 거", "워크플로"),
    ("처리량이 떨어졌던 거", "처리량"),
])
def test_a_glossary_word_holding_a_framing_part_stays_whole(question: str, word: str) -> None:
    """A word the glossary names (文件 "file" holds 件, 批处理 "batch" 处理, 名前解決
    "name resolution" 解決; 디플로이 and 워크플로 end as a particle would, 처리량
    "throughput" starts as a framing stem) is a thing, not framing, and stays as the
    question writes it."""
    assert word in without_framing(question)


def test_a_listed_word_is_a_word_edge() -> None:
    """处理器的目的: 的 between two whole words is a particle and goes."""
    assert tokens(without_framing("处理器的目的")) == ("处理", "理器", "目的")


@pytest.mark.parametrize("stem", KOREAN)
def test_every_listed_korean_stem_goes_with_its_endings(stem: str) -> None:
    """A Korean word that starts with a framing stem goes whole, endings and all."""
    assert tokens(without_framing(f"포트 {stem}했지 충돌")) == ("포트", "충돌")


def test_a_korean_particle_leaves_a_longer_word_only() -> None:
    """에러를 is 에러; 속도 keeps its last syllable, which is part of the word."""
    assert tokens(without_framing("에러를 속도")) == ("에러", "속도")


def test_a_particle_inside_a_hiragana_word_stays() -> None:
    """Japanese particles go after kanji, katakana or Latin, never inside kana words."""
    assert "もの" in "".join(tokens(without_framing("ものの")))


def test_english_text_is_left_alone() -> None:
    """Framing is a CJK matter: English goes through untouched but for case."""
    assert without_framing("How did we fix Docker") == "how did we fix docker"


def test_a_korean_verb_form_frames_and_a_noun_stays() -> None:
    """바꿔서 ("by changing") and 죽었던 ("that died") go; 설정 and 문서 are topic."""
    assert tokens(without_framing("nginx 설정 바꿔서 죽었던 문서")) == ("nginx", "설정", "문서")


@pytest.mark.parametrize(("word", "noun"), [
    ("배포했던", "배포"), ("복구했지", "복구"), ("설치했는데", "설치"),
    ("마이그레이션해서", "마이그레이션"), ("재시작했어", "재시작"), ("연결됐던", "연결"),
    ("재시작되던", "재시작"), ("설치하였다", "설치"),
])
def test_a_noun_made_a_verb_keeps_the_noun(word: str, noun: str) -> None:
    """A noun with 하다/되다 and a verb ending (배포했던 "that deployed") is the noun."""
    assert without_framing(word).split() == [noun]


@pytest.mark.parametrize("word", sorted(KOREAN_WORDS))
def test_a_listed_korean_word_frames_alone_and_with_a_particle(word: str) -> None:
    """거, 때, 안 ("thing", "when", "not") go as words, and with a particle (것을, 때는)."""
    assert tokens(without_framing(f"포트 {word} {word}를 충돌")) == ("포트", "충돌")


@pytest.mark.parametrize("particle", sorted(KOREAN_APART))
def test_a_korean_particle_written_apart_frames(particle: str) -> None:
    """After a Latin word or a number a particle is often written apart ("CloudFront 에서",
    "8080 으로"): a word of its own, it names nothing and is no unit of the question."""
    assert tokens(without_framing(f"CloudFront {particle} 옛날 8080 {particle} 포트")) == (
        "cloudfront", "옛날", "8080", "포트")


@pytest.mark.parametrize(("char", "word"), [
    ("里", "里面"), ("上", "上线"), ("中", "中文"), ("下", "下载"), ("内", "内存"), ("用", "用户")])
def test_a_chinese_place_or_with_standing_alone_frames(char: str, word: str) -> None:
    """"k8s 上 pod", "ES 里", "用 Excel": a character of its own beside Latin words names
    nothing; inside a word (上线 "go live", 用户 "user") it stays."""
    assert char in CHINESE_ALONE
    assert tokens(without_framing(f"k8s {char} pod {word}")) == ("k8s", "pod", word)


def test_a_listed_korean_word_inside_a_longer_word_stays() -> None:
    """안 frames alone; 안전 ("safety") and 거리 ("distance") are words of their own."""
    assert tokens(without_framing("안전 거리")) == ("안전", "거리")


@pytest.mark.parametrize("word", ["바꿨었지", "죽었던", "바꿔서", "했는데", "고쳤었지",
                                  "느렸을", "풀었더라", "죽던", "되던", "켰다가"])
def test_a_verb_of_its_own_with_an_ending_goes(word: str) -> None:
    """A verb's own stem (바꾸, 죽, 고치) with an ending leaves nothing to search for."""
    assert without_framing(f"nginx {word}").split() == ["nginx"]


def test_japanese_units_are_the_words_that_name() -> None:
    """Hiragana endings and script-crossing bigrams make no unit; kanji and katakana do."""
    question = "翻訳がないときの言語はどう設定した"
    assert [getattr(u, "text", "") for u in parse_query(question).units] == ["翻訳", "言語", "設定"]


def test_a_question_of_framing_alone_still_searches_its_words() -> None:
    """Nothing but framing ("上次怎么解决的？"): its own bigrams are searched, not nothing."""
    assert parse_query("上次怎么解决的？").units
    assert parse_query("지난번 문제 어떻게 해결했지?").units
