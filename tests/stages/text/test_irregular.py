"""Tests of the irregular verb table."""

from __future__ import annotations

from harkback.stages.text.irregular import IRREGULAR_VERBS, irregular_forms
from harkback.stages.text.stem import stem
from harkback.stages.text.tokens import is_stopword


def test_every_form_maps_to_the_group_it_stands_in() -> None:
    """A form's group holds the form, and every form of a group maps to that group."""
    for form, group in IRREGULAR_VERBS.items():
        assert form in group
        assert all(IRREGULAR_VERBS[other] == group for other in group)


def test_no_listed_form_is_a_stopword() -> None:
    """Stopwords are never searched for, so listing one would be dead weight."""
    assert [f for f in IRREGULAR_VERBS if is_stopword(f)] == []


def test_the_table_holds_only_what_stemming_cannot_join() -> None:
    """Each group's past forms stem apart from its base (else stemming would do)."""
    for group in set(IRREGULAR_VERBS.values()):
        base, *past = group
        assert any(stem(p) != stem(base) for p in past), group


def test_a_word_outside_the_table_has_no_irregular_forms() -> None:
    """A regular verb or a noun gives nothing."""
    assert irregular_forms("bike") == irregular_forms("docker") == ()
