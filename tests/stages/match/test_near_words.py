"""A question's word the store never writes is read by the near-synonyms developers write
for the same trouble ("speed up" by "slow" and "faster", "broke" by "failed"), at a part of
its weight; a word the store holds is read as written, its group never."""

from __future__ import annotations

import time

import pytest
from returns.unsafe import unsafe_perform_io

from harkback.stages.match.lexical import LexicalMatch
from harkback.stages.match.near import NEAR_SHARE
from harkback.stages.match.plan import plan_units, weigh_units
from harkback.stages.ports import Deps, SessionStore, TermStats
from harkback.stages.query import parse_query
from harkback.stages.records import Conversation
from harkback.stages.request import SearchRequest
from harkback.stages.resolve import LineageResolve
from tests.conftest import conversation

DAY = 86_400.0


async def _first(store: SessionStore, query: str, now: float,
                 *sessions: Conversation) -> list[str]:
    """The first session found for ``query`` asked at ``now``, once ``sessions`` are stored."""
    unsafe_perform_io((await store.ingest(sessions).awaitable()).unwrap())
    outcome = await LexicalMatch()(SearchRequest(query=query, limit=5)).bind(
        LineageResolve())(Deps(store=store, clock=lambda: now)).awaitable()
    return [c.root.id for c in unsafe_perform_io(outcome.unwrap()).candidates][:1]


@pytest.mark.parametrize("question", ["how did I speed up our CI?", "how was our CI sped up?"])
async def test_speed_up_finds_the_session_that_was_slow_and_is_faster(
        store: SessionStore, question: str) -> None:
    """"speed" is in no message: the five-week-old session where the CI was "too slow" and
    is "faster" now comes before yesterday's one that names the CI more often. "Sped" is
    read as "speed" (an irregular form: no stemmer joins them), its near words alike."""
    now = time.time()
    answer = conversation(
        "ci-cache", ("user", "our CI takes 25 minutes on every push, way too slow"),
        ("assistant", "cache the pip downloads and split the tests into 4 shards"),
        ("user", "much faster now, 8 minutes"), started_at=now - 35 * DAY)
    recent = conversation(
        "ci-lint", ("user", "CI is red, the lint job fails"),
        ("assistant", "pin ruff in CI to the version pre-commit uses"),
        ("user", "CI green again"), started_at=now - DAY)
    assert await _first(store, question, now, answer, recent) == ["ci-cache"]


async def test_broke_finds_the_session_where_it_failed(store: SessionStore) -> None:
    """"break" (as "broke") is in no message: the backup job that "failed" a month ago
    comes before this week's session on backups that names no failure."""
    now = time.time()
    answer = conversation(
        "backup-fail", ("user", "the nightly backup job failed: permission denied for sequence"),
        ("assistant", "grant select on all sequences to the backup role"),
        started_at=now - 30 * DAY)
    recent = conversation(
        "backup-plan", ("user", "plan a weekly backup restore drill for the backup server"),
        ("assistant", "restore the latest dump into staging every Monday"),
        started_at=now - 2 * DAY)
    assert await _first(store, "why the backup broke", now, answer, recent) == ["backup-fail"]


def test_a_word_the_store_holds_is_read_as_written() -> None:
    """"speed" found in one message: its group ("slow", "faster") is not read, whatever
    the store holds of it; found in none, the group is read at NEAR_SHARE of its weight."""
    planned = plan_units(parse_query("speed"))
    held = TermStats(documents=100, counts=(("speed", 1), ("slow", 5), ("faster", 2)))
    absent = TermStats(documents=100, counts=(("slow", 5), ("faster", 2)))
    (own,) = weigh_units(planned, held)[:1]
    (near,) = weigh_units(planned, absent)[:1]
    assert own.forms == ("speed",) and own.share == 1.0
    assert set(near.forms) == {"speed", "slow", "faster"} and near.share == NEAR_SHARE


async def test_a_quick_fix_is_no_speed(store: SessionStore) -> None:
    """"speed" is in no message, and "quick" is no near word of it: the month-old session
    where the build was "slow" comes before yesterday's "quick fix" of the build, which
    says nothing of its speed."""
    now = time.time()
    answer = conversation(
        "build-slow", ("user", "the docker build is slow, 12 minutes each time"),
        ("assistant", "order the layers so the dependencies are cached"),
        started_at=now - 30 * DAY)
    recent = conversation(
        "build-quick", ("user", "quick question: a quick fix for the docker build tag?"),
        ("assistant", "a quick one: tag the build with the commit"), started_at=now - DAY)
    assert await _first(store, "how did I speed up the docker build?", now, answer, recent) \
        == ["build-slow"]


async def test_a_near_word_the_question_names_is_read_as_its_own(store: SessionStore) -> None:
    """"how did I speed up the slow build?": "slow" is the question's own word, searched as
    written. "speed", held nowhere, is read by its other near words alone ("faster"): it
    read "slow" too, so a session saying "slow" once counted it twice, and the note said
    "speed" was read by "slow"."""
    now = time.time()
    slow = conversation("build-slow", ("user", "the docker build is slow"), started_at=now - DAY)
    fast = conversation("build-fast", ("user", "the docker build is faster with the cache"),
                        started_at=now - 2 * DAY)
    unsafe_perform_io((await store.ingest((slow, fast)).awaitable()).unwrap())
    outcome = await LexicalMatch()(SearchRequest(query="how did I speed up the slow build?"))(
        Deps(store=store, clock=lambda: now)).awaitable()
    assert unsafe_perform_io(outcome.unwrap()).notes == (
        "no message holds 'speed': read by its near words 'faster'",)
