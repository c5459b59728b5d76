"""Tests of English inflectional stemming: stems, and the inflections that share them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harkback.stages.text.irregular import irregular_forms
from harkback.stages.text.stem import inflections, regular_inflections, stem

words = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=12)


def test_stem_merges_plural_and_tenses() -> None:
    """Plural, past and progressive forms share one stem."""
    assert {stem(w) for w in ("bike", "bikes", "biked", "biking")} == {"bike"}


def test_inflections_keep_derivations_apart() -> None:
    """A word reaches its inflections, not its derivations (conference is not confer),
    though Snowball gives both one stem."""
    assert stem("conference") == stem("confer")
    assert "confer" not in inflections("conference")
    assert "conferences" in inflections("conference")


def test_a_plural_that_ends_in_s_is_not_its_shorter_word() -> None:
    """'news' is not 'new', but 'children' is 'child' and 'ran' is 'run'."""
    assert "new" not in inflections("news")
    assert "child" in inflections("children")
    assert "run" in inflections("ran")


def test_stem_leaves_non_latin_words_alone() -> None:
    """CJK tokens and words with digits are returned unchanged."""
    assert (stem("端口"), stem("ipv6s")) == ("端口", "ipv6s")


@given(words)
def test_inflections_share_the_stem_and_include_the_word(word: str) -> None:
    """Every regular form stems like the word, and the word itself is first."""
    forms = regular_inflections(word)
    assert forms[0] == word
    assert all(stem(f) == stem(word) for f in forms)


@given(words)
def test_inflections_are_the_regular_ones_for_a_regular_word(word: str) -> None:
    """Only a form of an irregular verb is widened past its own stem."""
    if not irregular_forms(word):
        assert inflections(word) == regular_inflections(word)


def test_an_irregular_past_reaches_its_base_and_back() -> None:
    """'bought' reaches 'buy' and 'buying'; 'buy' reaches 'bought'."""
    assert {"buy", "buys", "buying"} <= set(inflections("bought"))
    assert "bought" in inflections("buy")
    assert inflections("went")[0] == "went"


def test_inflections_find_the_singular_of_a_plural() -> None:
    """A plural query word reaches its singular and -ies/-y forms."""
    assert "baby" in inflections("babies")
    assert "tank" in inflections("tanks")


@pytest.mark.parametrize(("word", "forms"), [
    ("commit", {"commits", "committed", "committing"}),
    ("stop", {"stops", "stopped", "stopping"}),
    ("equip", {"equipped", "equipping"}),
    ("travel", {"travels", "travelled", "traveled", "travelling"}),
    ("up", {"upped"}),
    ("box", {"boxes", "boxed"}),
    ("cache", {"caches", "cached", "caching"}),
    ("echo", {"echoes", "echoed"}),
    ("chili", {"chilies", "chilis"}),
    ("fix", {"fixes", "fixed", "fixing"}),
    ("migration", {"migrations"}),
    ("biking", {"bike", "bikes", "biked"}),
    ("hoped", {"hope", "hopes", "hoping"}),
    ("backlog", {"backlogs", "backlogged"}),
])
def test_the_real_forms_of_a_word_are_reached(word: str, forms: set[str]) -> None:
    """Plurals and tenses, a doubled consonant after one vowel (committed, equipped)."""
    assert forms <= set(inflections(word))


@pytest.mark.parametrize(("word", "made_up"), [
    ("configuration", {"configurationned", "configurationning"}),
    ("migration", {"migrationned"}),
    ("config", {"configes", "confige"}),
    ("kafka", {"kafkaes", "kafkae"}),
    ("backlog", {"backloges", "backloge"}),
    ("local", {"locale", "locales"}),
    ("fix", {"fixe"}),
])
def test_forms_that_are_no_words_are_not_made(word: str, made_up: set[str]) -> None:
    """Each form is a lookup in the store: no consonant doubled after two vowels
    (configurationned), no -es after a sound that does not take it (configes), no e added
    to the word (locale is another word, fixe none)."""
    assert not made_up & set(inflections(word))
