"""The developers' short forms: a table the ranker can search by."""

from __future__ import annotations

from harkback.stages.match.plan import plan_units
from harkback.stages.query import Term, parse_query
from harkback.stages.text.abbreviations import expansions, short_forms
from harkback.stages.text.tokens import is_stopword, tokens


def test_every_entry_is_one_searchable_token() -> None:
    """Short forms and what they stand for are single index tokens, none a stopword: a
    stopword or a two-token entry could never be found as one form."""
    words = [w for short, longs in short_forms().items() for w in (short, *longs)]
    assert [w for w in words if tokens(w) != (w,) or is_stopword(w)] == []


def test_a_short_form_never_stands_for_itself() -> None:
    """An entry listing itself would count its own matches twice."""
    assert [short for short, longs in short_forms().items() if short in longs] == []


def test_two_names_of_one_thing_widen_both_ways() -> None:
    """postgres finds postgresql and postgresql finds postgres."""
    assert "postgresql" in expansions("postgres") and "postgres" in expansions("postgresql")


def test_a_question_s_short_form_is_searched_with_its_inflected_expansions() -> None:
    """'prod dbs' is searched as prod, production and databases too."""
    forms = {u.unit.text: u.forms for u in plan_units(parse_query("prod dbs"))
             if isinstance(u.unit, Term)}
    assert {"prod", "production"} <= set(forms["prod"])
    assert {"dbs", "databases", "database"} <= set(forms["dbs"])
