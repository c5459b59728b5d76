"""The query parser's bounds: hostile queries parse fast into small, shallow expressions."""

from __future__ import annotations

import time

from harkback.stages.query import (
    MAX_OPERATORS,
    MAX_PHRASE_TERMS,
    MAX_PREFIXES,
    MAX_QUERY_CHARS,
    MAX_UNITS,
    AllOf,
    AnyOf,
    Node,
    Phrase,
    Term,
    Without,
    parse_query,
    to_fts5,
)
from harkback.stages.request import make_request
from harkback.stages.text.stem import LONGEST_WORD, inflections


def depth(node: Node) -> int:
    """How many levels the expression nests."""
    if isinstance(node, Term | Phrase):
        return 1
    if isinstance(node, Without):
        return 1 + max(depth(node.include), depth(node.exclude))
    return 1 + max(depth(item) for item in node.items)


def test_a_chain_of_nots_is_one_exclusion() -> None:
    """"a NOT b NOT c" excludes b or c from a: one level, however long the chain."""
    parsed = parse_query("docker NOT swarm NOT k8s NOT nomad")
    assert parsed.expression == Without(
        Term("docker"), AnyOf((Term("swarm"), Term("k8s"), Term("nomad"))))


def test_a_thousand_nots_stay_shallow() -> None:
    """The ×1000 NOT chain that once overflowed Python's stack and FTS5's parser."""
    expression = parse_query("NOT x " * 1000 + "x").expression
    assert expression is not None
    assert depth(expression) <= 4
    assert to_fts5(expression).count("(") <= 4


def test_repeated_terms_reach_fts5_once() -> None:
    """x OR x OR ... ×8000 is searched as one x."""
    assert to_fts5(parse_query("docker OR " * 8000 + "docker").expression) == '"docker"'
    assert to_fts5(parse_query("docker AND docker AND bridge").expression) == (
        '("docker" AND "bridge")')


def test_operators_past_the_limit_are_left_out() -> None:
    """The first MAX_OPERATORS operators keep their meaning; past them the operands are
    plain terms, AND-ed with the last group."""
    words = [f"w{i}" for i in range(MAX_OPERATORS + 3)]
    expression = parse_query(" OR ".join(words)).expression
    assert isinstance(expression, AnyOf)
    assert len(expression.items) == MAX_OPERATORS + 1
    assert expression.items[-1] == AllOf((Term(f"w{MAX_OPERATORS}"),
                                          Term(f"w{MAX_OPERATORS + 1}"),
                                          Term(f"w{MAX_OPERATORS + 2}")))


def test_distinct_units_are_capped_in_both_modes() -> None:
    """At most MAX_UNITS terms and phrases are searched, plain or advanced."""
    plain = parse_query(" ".join(f"word{i}" for i in range(500)))
    advanced = parse_query(" AND ".join(f"word{i}" for i in range(500)))
    assert len(plain.units) == MAX_UNITS
    assert advanced.advanced and len(advanced.units) == MAX_UNITS
    assert plain.units[0] == Term("word0")


def test_prefixes_past_the_limit_match_whole_words() -> None:
    """The first MAX_PREFIXES distinct ``word*`` are widened (a repeat counts once); the
    later ones match as the word itself, so a soup of ``a* b* c* …`` cannot make FTS5
    read the whole vocabulary dozens of times."""
    letters = "abcdefghij"
    parsed = parse_query("a* " + " ".join(f"{c}*" for c in letters))
    assert parsed.units == (*(Term(c, prefix=True) for c in letters[:MAX_PREFIXES]),
                            *(Term(c) for c in letters[MAX_PREFIXES:]))
    assert to_fts5(parse_query("dock* OR net*").expression) == '("dock"* OR "net"*)'


def test_a_long_phrase_keeps_its_first_terms() -> None:
    """A quoted phrase of 200 words matches as its first MAX_PHRASE_TERMS."""
    phrase = parse_query('"' + " ".join(f"t{i}" for i in range(200)) + '"').expression
    assert isinstance(phrase, Phrase)
    assert phrase.terms == tuple(f"t{i}" for i in range(MAX_PHRASE_TERMS))


def test_only_the_first_characters_are_read() -> None:
    """Words past MAX_QUERY_CHARS are not searched, by the parser or the request."""
    text = "a" * (MAX_QUERY_CHARS - 1) + " docker"
    assert Term("docker") not in parse_query(text).units
    assert len(make_request(text + " more").unwrap().query) == MAX_QUERY_CHARS


def test_hostile_texts_parse_in_linear_time() -> None:
    """An unclosed quote, a long token, operator soup: each parses in well under a second
    (the unclosed quote once backtracked quadratically)."""
    for text in ('"' + "a" * 100_000, "NOT " * 25_000, "\"'()*" * 20_000,
                 "x" * 100_000 + "*", " OR ".join(["x"] * 8000)):
        started = time.perf_counter()
        parse_query(text)
        assert time.perf_counter() - started < 1.0, text[:20]


def test_words_too_long_to_be_words_are_not_inflected() -> None:
    """A 10,000-letter token is its own only form (stemming it costs quadratic time)."""
    assert inflections("a" * (LONGEST_WORD + 1)) == ("a" * (LONGEST_WORD + 1),)
    assert "bikes" in inflections("bike")
