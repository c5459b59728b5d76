""""Last week" asked on a Sunday (and "last month" late in a month), in a store shaped like
a developer's own: the answer is from last week's Thursday, a look-alike sharing the
question's words from this Wednesday, both dated relative to the question's clock
(``as_of``, a Sunday noon).

The ranker weighed "last week" (先週, 上周, 지난주) as the seven days back, which asked on
a Sunday are nearly all this week's: the look-alike was lifted in full and the answer,
ten days back, less, so the look-alike came first. "Last week" is now the calendar's
week before this one, as a listing of it is (``local_days.previous_period``), and "last
month" the calendar's month.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import attrs
from returns.unsafe import unsafe_perform_io

from harkback.pipeline import SUMMARIZERS, Harkback, Pipeline, open_store
from tests.support.dated_sessions import Turns, dated

SUNDAY_NOON = datetime(2026, 3, 8, 12, tzinfo=UTC).timestamp()

SESSIONS: dict[str, tuple[float, Turns]] = {
    # Last week's Thursday: the answer.
    "answer": (10.0, [
        ("user", "GitHub Actions のキャッシュが効いてない。毎回 poetry install に 5 分かかる"),
        ("assistant", "actions/cache の key を hashFiles('**/poetry.lock') にして、"
                      "~/.cache/pypoetry を path に追加しました。")]),
    # This Wednesday: shares the question's words.
    "look-alike": (4.0, [
        ("user", "CI でテストが落ちる。ローカルでは通る"),
        ("assistant", "Postgres のタイムゾーンが UTC でした。キャッシュは関係なかったです。")]),
    # The rest of two weeks of work.
    **{f"other-{i}": (0.5 + 1.5 * i, [("user", ask), ("assistant", did)]) for i, (ask, did) in
       enumerate([
           ("rename master to main", "ran git branch -m master main"),
           ("stripe webhooks fail signature checks", "pass the raw body to construct_event"),
           ("kafka consumer lag keeps growing", "lowered max.poll.records to 50"),
           ("the test suite takes 14 minutes", "session-scoped db fixture and pytest-xdist"),
           ("Docker のビルドエラーを直して", "libpq-dev を追加しました"),
           ("sentry floods slack with alerts", "a fingerprint rule and one alert an hour"),
       ])},
}


async def _first(folder: Path, question: str, now: float,
                 moved: dict[str, float] | None = None) -> str | None:
    with open_store(folder / "history.db").unwrap() as store:
        unsafe_perform_io((await store.ingest(dated(SESSIONS, now, moved)).awaitable()).unwrap())
        pipeline = attrs.evolve(Pipeline(), summarize=SUMMARIZERS["none"])
        payload = (await Harkback(store=store, pipeline=pipeline).search(
            question, as_of=now)).to_payload()
    assert payload["success"], payload
    return payload["results"][0]["session_id"] if payload["results"] else None


async def test_last_week_asked_on_a_sunday_is_the_week_before(
        tmp_path: Path) -> None:
    question = "what did we do about the CI cache last week?"
    assert await _first(tmp_path, question, SUNDAY_NOON) == "answer"


async def test_last_month_asked_late_in_a_month_is_the_month_before(
        tmp_path: Path) -> None:
    """Asked on March 28th, the thirty days back are nearly all March's: the answer of
    February 18th is last month's, the look-alike of March 10th this month's."""
    march_28 = datetime(2026, 3, 28, 12, tzinfo=UTC).timestamp()
    moved = {"answer": 38.0, "look-alike": 18.0}
    question = "what did we do about the CI cache last month?"
    assert await _first(tmp_path, question, march_28, moved) == "answer"


async def test_in_the_last_week_is_the_seven_days_back(tmp_path: Path) -> None:
    """"In the last week" is the seven days back until now, as "the past week" is: asked on a
    Sunday, the answer of this Wednesday is lifted, not last week's look-alike (read as the
    calendar's week before, the look-alike came first)."""
    moved = {"answer": 4.0, "look-alike": 10.0}
    question = "what did we do about the CI cache in the last week?"
    assert await _first(tmp_path, question, SUNDAY_NOON, moved) == "answer"


async def test_last_year_asked_in_december_is_the_year_before(tmp_path: Path) -> None:
    """Asked on December 1st, "last year" is the calendar's year before, as a listing of it
    is: the ranker weighed the 365 days back, nearly all this year's, so the look-alike of
    this June was lifted and the answer of last March was not. (昨年 is read alike, but a
    year's lift is small: "CI", which only the look-alike holds, keeps it first there.)"""
    december_1 = datetime(2026, 12, 1, 12, tzinfo=UTC).timestamp()
    moved = {"answer": 260.0 + 365.0, "look-alike": 170.0}
    question = "what did we do about the CI cache last year?"
    assert await _first(tmp_path, question, december_1, moved) == "answer"
