"""A question's misspelt word ("dokcer", "netwrok"), held in no message, is read as the
spelling one edit away the store holds most often; a word the store holds is never
looked up again."""

from __future__ import annotations

import time

from returns.unsafe import unsafe_perform_io

from harkback.stages.match.lexical import LexicalMatch
from harkback.stages.match.plan import lookups, plan_units
from harkback.stages.match.typos import typo_lookups, with_corrections
from harkback.stages.ports import Deps, SessionStore, TermStats
from harkback.stages.query import parse_query
from harkback.stages.records import Conversation
from harkback.stages.request import SearchRequest
from harkback.stages.resolve import LineageResolve
from tests.conftest import conversation

DAY = 86_400.0


async def test_a_misspelt_question_finds_the_session_it_means(store: SessionStore) -> None:
    """"dokcer netwrok trouble": the seven-week-old session on a docker network comes
    first, before yesterday's one that shares only "trouble"."""
    now = time.time()
    answer = conversation(
        "compose-network", ("user", "the api container can't resolve db, docker network ls "
                            "shows two bridges"),
        ("assistant", "create one docker network and attach both compose projects to it"),
        started_at=now - 50 * DAY)
    recent = conversation(
        "wifi", ("user", "trouble with the office wifi again"),
        ("assistant", "forget the network profile and join it again"), started_at=now - DAY)
    unsafe_perform_io((await store.ingest((answer, recent)).awaitable()).unwrap())
    outcome = await LexicalMatch()(SearchRequest(query="dokcer netwrok trouble", limit=5)).bind(
        LineageResolve())(Deps(store=store, clock=lambda: now)).awaitable()
    found = [c.root.id for c in unsafe_perform_io(outcome.unwrap()).candidates]
    assert found[:1] == ["compose-network"]


def test_a_held_word_is_never_looked_up_again_and_a_rare_spelling_replaces_nothing() -> None:
    """"docker" held: nothing to ask. "dokcer" held nowhere: its spellings are asked, and
    "docker" in one message (fewer than LEAST_MESSAGES) leaves it as written."""
    planned = plan_units(parse_query("dokcer"))
    assert typo_lookups(plan_units(parse_query("docker")),
                        TermStats(documents=10, counts=(("docker", 3),))).asked == ()
    stats = TermStats(documents=10)
    asked = typo_lookups(planned, stats)
    assert "docker" in asked.asked
    rare, _ = with_corrections(planned, stats, asked, TermStats(counts=(("docker", 1),)))
    held, _ = with_corrections(planned, stats, asked, TermStats(counts=(("docker", 2),)))
    assert "docker" not in rare[0].forms and "docker" in held[0].forms


async def _first(store: SessionStore, query: str, now: float) -> list[str]:
    outcome = await LexicalMatch()(SearchRequest(query=query, limit=5)).bind(
        LineageResolve())(Deps(store=store, clock=lambda: now)).awaitable()
    return [c.root.id for c in unsafe_perform_io(outcome.unwrap()).candidates][:1]


def _fetcher_sessions(now: float, *, retry: str = "") -> tuple[Conversation, ...]:
    # Two messages say "fetcher" (one vowel from "fetchr"), and ``retry`` (or not).
    return (conversation("fetcher", ("user", "the fetcher loop hammers the api"),
                         ("user", f"the fetcher should {retry} back off"),
                         started_at=now - (30 if retry else 1) * DAY),)


async def test_a_name_only_a_title_holds_is_searched_as_written(store: SessionStore) -> None:
    """"fetchr", the user's project, is in its session's title and no message: read as
    "fetcher" too, it still covers that title, and its session comes before yesterday's ones on a
    retry and on a fetcher."""
    now = time.time()
    named = conversation("fetchr", ("user", "add a retry with backoff on 429"),
                         title="fetchr: retry on 429", started_at=now - 20 * DAY)
    recent = conversation("upload", ("user", "retry the upload"), started_at=now - DAY)
    unsafe_perform_io((await store.ingest((named, recent, *_fetcher_sessions(now))).awaitable()
                       ).unwrap())
    assert await _first(store, "fetchr retry", now) == ["fetchr"]


async def test_search_syntax_is_never_corrected(store: SessionStore) -> None:
    """`fetchr OR retry` means those spellings: the session saying "fetcher" and "retry" a
    month ago is not weighed above yesterday's that says "retry" alone."""
    now = time.time()
    recent = conversation("upload", ("user", "retry the upload"), started_at=now - DAY)
    both = (recent, *_fetcher_sessions(now, retry="retry"))
    unsafe_perform_io((await store.ingest(both).awaitable()).unwrap())
    assert await _first(store, "fetchr OR retry", now) == ["upload"]


def test_a_held_words_near_synonyms_are_counted_only_where_it_is_absent() -> None:
    """"error" held: its group ("fail", "failed" ...) is never counted (1-2 ms of CPU a
    question on 100k messages); held nowhere, the group is asked once more."""
    planned = plan_units(parse_query("error config"))
    assert "failed" not in lookups(planned)[0]
    held = TermStats(documents=10, counts=(("error", 3), ("config", 2)))
    assert typo_lookups(planned, held).asked == ()
    assert "failed" in typo_lookups(planned, TermStats(documents=10,
                                                       counts=(("config", 2),))).asked


def test_no_word_is_read_as_one_shorter_than_five_letters() -> None:
    """"chart" (a helm chart the store never names) is one letter from "chat", held in
    forty messages: left as written, while "committ" is still read as "commit"."""
    stats = TermStats(documents=1000)
    more = TermStats(counts=(("chat", 40), ("commit", 3)))
    planned = plan_units(parse_query("chart committ"))
    units, _ = with_corrections(planned, stats, typo_lookups(planned, stats), more)
    assert "chat" not in units[0].forms and "commit" in units[1].forms
    assert "chat" not in typo_lookups(planned, stats).asked


def test_a_letter_is_left_out_only_where_it_is_doubled() -> None:
    """"sentry", "router", "stripe" (names the store lacks) are one letter from "entry",
    "route", "strip", each held in forty messages: left as written, while "postgress" is
    still read as "postgres" (the doubled s a slip)."""
    stats = TermStats(documents=1000)
    more = TermStats(counts=(("entry", 40), ("route", 40), ("strip", 40), ("postgres", 3)))
    planned = plan_units(parse_query("sentry router stripe"))
    units, _ = with_corrections(planned, stats, typo_lookups(planned, stats), more)
    assert not {"entry", "route", "strip"} & {f for u in units for f in u.forms}
    postgress = plan_units(parse_query("postgress"))
    doubled, _ = with_corrections(postgress, stats, typo_lookups(postgress, stats), more)
    assert "postgres" in doubled[0].forms
