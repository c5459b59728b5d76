"""Tests of the query parser: plain questions, FTS syntax, hostile input."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harkback.stages.query import (
    AllOf,
    AnyOf,
    Phrase,
    Term,
    Without,
    evaluate,
    parse_query,
    to_fts5,
)
from harkback.stages.text.tokens import index_tokens


def test_plain_question_becomes_or_of_topic_words() -> None:
    """Stopwords go; the remaining words are ORed, none required."""
    parsed = parse_query("how did we fix the docker network bridge issue")
    assert not parsed.advanced
    assert parsed.expression == AnyOf((Term("fix"), Term("docker"), Term("network"),
                                       Term("bridge"), Term("issue")))


def test_all_stopword_question_keeps_its_words() -> None:
    """A query made only of stopwords still searches for them rather than nothing."""
    assert parse_query("what was it").units


def test_phrase_or_prefix_keep_their_meaning() -> None:
    """Quoted phrases, OR and prefix* are honoured."""
    parsed = parse_query('"bridge network" OR dock*')
    assert parsed.expression == AnyOf((Phrase(("bridge", "network")), Term("dock", True)))


def test_not_excludes_the_operand_before_it_only() -> None:
    """NOT binds tighter than the implicit AND, as in FTS5."""
    parsed = parse_query("docker NOT compose network")
    assert parsed.expression == AllOf((Without(Term("docker"), Term("compose")),
                                       Term("network")))


def test_hyphenated_word_in_advanced_query_is_a_phrase() -> None:
    """``chat-send`` inside FTS syntax is the phrase "chat send"."""
    assert parse_query('chat-send OR "x"').expression == AnyOf((Phrase(("chat", "send")),
                                                               Term("x")))


def test_stray_operators_are_dropped() -> None:
    """Operators without an operand on each side are dropped, not sent to FTS5."""
    assert to_fts5(parse_query("foo AND").expression) == '("foo")'
    assert to_fts5(parse_query("x OR OR y").expression) == '("x" OR "y")'


def test_punctuation_only_query_is_empty() -> None:
    """A query with nothing searchable parses to an empty expression."""
    assert parse_query("*** ((( ---").is_empty


def test_nul_byte_is_treated_as_space() -> None:
    """A NUL byte separates words instead of breaking the query."""
    assert parse_query("docker\x00network").units == (Term("docker"), Term("network"))


def test_cjk_question_uses_bigrams_and_single_character_prefix() -> None:
    """A Chinese query becomes bigram units; one character alone is a prefix term."""
    assert Term("端口") in parse_query("怎么解决端口冲突").units
    assert parse_query("猫").units == (Term("猫", prefix=True),)


def test_evaluate_phrase_needs_adjacent_tokens() -> None:
    """A phrase matches adjacent tokens in order and nothing else."""
    phrase = parse_query('"bridge network"').expression
    assert phrase is not None
    assert evaluate(phrase, index_tokens("the bridge network failed"))
    assert not evaluate(phrase, index_tokens("network bridge"))


@given(st.text(max_size=300))
def test_parse_never_raises_and_quotes_every_token(text: str) -> None:
    """Any text parses; the FTS5 string has balanced quotes around every token."""
    rendered = to_fts5(parse_query(text).expression)
    assert rendered.count('"') % 2 == 0
    assert "\x00" not in rendered


@pytest.mark.parametrize(("question", "expected"), [
    ("how did we fix the runners' cache keys?", ["fix", "runners", "cache", "keys"]),
    ("where's my sister's car? I've checked, it won't start", ["sister", "car", "checked",
                                                              "start"]),
    ("we'd said you'll re-run it, they're done, I'm sure", ["said", "re", "run", "sure"]),
])
def test_contraction_fragments_are_never_units(question: str, expected: list[str]) -> None:
    """Possessive and contraction endings ('s, 't, 've, 'll, 'd, 'm, 're) make no unit."""
    assert [getattr(u, "text", None) for u in parse_query(question).units] == expected


def test_operators_in_a_question_are_words() -> None:
    """A question asked in words keeps its capitals as words: no operator, nothing required."""
    parsed = parse_query("how did we add the NOT NULL currency column to orders?")
    assert not parsed.advanced
    assert Term("null") in parsed.units and Term("currency") in parsed.units
    assert parse_query("docker NOT compose").advanced
