"""Tests of the facade and per-stage timing over the in-memory and SQLite stores."""

from __future__ import annotations

import asyncio
from pathlib import Path

import attrs
import pytest

from harkback.adapters.stores.memory import MemoryStore
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.compose import STAGE_NAMES, Pipeline
from harkback.pipeline.facade import Harkback
from harkback.pipeline.timing import RecordingObserver
from harkback.stages.observe import StageEvent
from harkback.stages.summarize.plain import RawSummarize
from tests.conftest import conversation

TIMES = "text, epoch seconds, a datetime or a date"
"""The types a time is taken as, as a refusal names them."""

SESSIONS = (
    conversation("docker", ("user", "the api container cannot resolve postgres"),
                 ("assistant", "fixed with docker network create backend"),
                 started_at=100.0, title="Docker DNS"),
    conversation("cron-1", ("assistant", "nightly report: docker network ok, backup ok"),
                 started_at=200.0, source="cron"),
    conversation("cors", ("user", "nginx CORS header missing on uploads"),
                 started_at=300.0, title="CORS"),
)


@pytest.fixture
async def harkback() -> Harkback:
    """A facade over an in-memory store holding three sessions."""
    store = MemoryStore()
    await store.ingest(SESSIONS)
    return Harkback(store=store)


async def test_observer_hears_each_stage_start_and_finish(harkback: Harkback) -> None:
    """Every stage reports started then completed, with a duration."""
    recorder = RecordingObserver()
    await attrs.evolve(harkback, observer=recorder).search("docker network")
    finished = [e.stage for e in recorder.events if e.status == "completed"]
    assert finished == list(STAGE_NAMES)
    assert all(e.duration_ms is not None and e.duration_ms >= 0
               for e in recorder.events if e.status == "completed")


async def test_a_stage_run_twice_is_timed_in_full() -> None:
    """A word only a tool's output holds is searched twice (the conversation, then tool
    output): the payload's time for each stage is the two runs' together, not the last."""
    store = MemoryStore()
    await store.ingest([conversation("hook", ("user", "stripe webhooks fail"),
                                     ("tool", "SignatureVerificationError: no signatures"))])
    recorder = RecordingObserver()
    payload = (await Harkback(store=store, observer=recorder).search(
        "SignatureVerificationError")).to_payload()
    runs = [e.duration_ms for e in recorder.events if e.stage == "match" and e.duration_ms]
    assert payload["count"] == 1 and len(runs) == 2
    assert payload["timings"]["match"] == round(sum(runs), 3)


async def test_failing_observer_cannot_break_a_recall(harkback: Harkback) -> None:
    """An observer that raises is ignored; the recall still succeeds."""
    def broken(event: StageEvent) -> None:
        raise RuntimeError("observer bug")

    response = await attrs.evolve(harkback, observer=broken).search("docker network")
    assert response.ok
    assert response.to_payload()["results"][0]["session_id"] == "docker"


async def test_swapping_the_summarizer_changes_the_summary(harkback: Harkback) -> None:
    """A pipeline with RawSummarize returns raw summaries."""
    raw = attrs.evolve(harkback, pipeline=attrs.evolve(Pipeline(), summarize=RawSummarize()))
    payload = (await raw.search("docker network")).to_payload()
    assert payload["results"][0]["summary_kind"] == "raw"


async def test_empty_query_browses_without_summarizing(harkback: Harkback) -> None:
    """An empty query runs recent mode only: no match, no summarize."""
    recorder = RecordingObserver()
    response = await attrs.evolve(harkback, observer=recorder).search("  ")
    assert {e.stage for e in recorder.events} == {"recent"}
    assert [r["session_id"] for r in response.to_payload()["results"]] == [
        "cors", "cron-1", "docker"]


async def test_bad_request_is_a_failure_payload(harkback: Harkback) -> None:
    """A limit out of range gives ``success: false`` with a clear message."""
    payload = (await harkback.search("docker", limit=50)).to_payload()
    assert payload == {"success": False,
                       "error": "query rejected: limit must be between 1 and 10, got 50"}


async def test_store_failure_is_a_failure_payload(tmp_path: Path) -> None:
    """A store that cannot be read turns into ``success: false``, not an exception."""
    store = SqliteStore.open(tmp_path / "h.db").unwrap()
    store.close()
    payload = (await Harkback(store=store).search("docker")).to_payload()
    assert payload["success"] is False
    assert "session store unavailable" in payload["error"]


async def test_cron_noise_ranks_below_the_real_fix(harkback: Harkback) -> None:
    """A cron report sharing the words ranks below the session that fixed the problem."""
    payload = (await harkback.search("docker network", limit=3)).to_payload()
    assert [r["session_id"] for r in payload["results"]][:2] == ["docker", "cron-1"]


def test_search_sync_from_plain_code(harkback: Harkback) -> None:
    """``search_sync`` works where no event loop is running."""
    assert harkback.search_sync("nginx cors").to_payload()["results"][0]["session_id"] == "cors"


async def test_search_sync_inside_a_running_loop(harkback: Harkback) -> None:
    """``search_sync`` called from inside a running loop neither deadlocks nor fails."""
    assert asyncio.get_running_loop().is_running()
    assert harkback.search_sync("nginx cors").ok


async def test_browse_honours_since(harkback: Harkback) -> None:
    """An empty query with ``since`` lists only sessions started after it."""
    payload = (await harkback.search("", since=250.0)).to_payload()
    assert [r["session_id"] for r in payload["results"]] == ["cors"]


async def test_as_of_sets_the_clock_of_one_call(tmp_path: Path) -> None:
    """``as_of`` reads "a week ago" from then, on a real SQLite store; the next call
    without it is back on the wall clock."""
    day = 86400.0
    store = SqliteStore.open(tmp_path / "h.db").unwrap()
    try:
        await store.ingest((
            conversation("march", ("user", "rotate the backup keys"),
                         started_at=1_772_323_200.0),  # 2026-03-01
            conversation("april", ("user", "rotate the backup keys"),
                         started_at=1_772_323_200.0 + 31 * day),
        ))
        hb = Harkback(store=store)
        question = "when did I rotate the backup keys a week ago"
        then = await hb.search(question, as_of="2026-03-08")
        later = await hb.search(question, as_of=1_772_323_200.0 + 38 * day)
        assert then.to_payload()["results"][0]["session_id"] == "march"
        assert later.to_payload()["results"][0]["session_id"] == "april"
        assert then.as_of == 1_772_928_000.0
        assert (await hb.search(question)).as_of is None
        listed = await hb.recent(as_of="2026-03-08", since="30d")
        assert [r["session_id"] for r in listed.to_payload()["results"]] == ["april", "march"]
    finally:
        store.close()


async def test_bad_as_of_is_a_rejected_query(harkback: Harkback) -> None:
    """An unreadable or impossible ``as_of`` is a failure value, never an exception."""
    for value in ("someday", float("inf"), -5.0):
        response = await harkback.search("docker", as_of=value)
        assert not response.ok
        assert "as_of " in response.to_payload()["error"]


@pytest.mark.parametrize("question", ["what did I do last week?", "上周做了什么？",
                                      "先週何をした？", "지난주에 뭐 했지?"])
async def test_a_question_of_a_time_alone_lists_that_time(question: str) -> None:
    """With no topic, "what did I do last week?" lists last week's sessions (the calendar
    week before this one, not this week's), newest first, instead of searching for the
    word "week"."""
    day = 86400.0
    now = 1_000 * day
    store = MemoryStore()
    await store.ingest([
        conversation("week", ("user", "rotate the api key"), started_at=now - 3 * day),
        conversation("older", ("user", "plan the week ahead"), started_at=now - 20 * day),
        conversation("today", ("user", "lunch"), started_at=now - 0.1 * day)]).awaitable()
    payload = (await Harkback(store=store).search(question, as_of=now, limit=10)).to_payload()
    assert payload["mode"] == "recent"
    assert [r["session_id"] for r in payload["results"]] == ["week"]


async def test_a_time_with_a_topic_still_searches() -> None:
    """"how did we rotate the key last week" names a topic: it is searched, not listed."""
    store = MemoryStore()
    await store.ingest([conversation("k", ("user", "rotate the api key"))]).awaitable()
    payload = (await Harkback(store=store).search("how did we rotate the key last week")
               ).to_payload()
    assert payload["mode"] == "search"


@pytest.mark.parametrize("query", ["nginx timeout", ""])
async def test_a_live_session_s_stored_sub_agents_are_not_recalled(query: str) -> None:
    """An agent asks from a session not stored yet whose sub-agent already is: the sub-agent
    is part of the asking session, so neither a search nor the recent list offers it."""
    store = MemoryStore()
    await store.ingest([
        conversation("sub", ("user", "raise the nginx timeout"), parent="live",
                     started_at=2_000.0),
        conversation("other", ("user", "the nginx timeout was raised last month"),
                     started_at=1_000.0)]).awaitable()
    harkback = Harkback(store=store)
    payload = (await harkback.search(query, current_session_id="live")).to_payload()
    assert [r["session_id"] for r in payload["results"]] == ["other"]


async def test_a_session_found_by_other_forms_of_the_words_is_summarised_by_them(
        tmp_path: Path) -> None:
    """'bikes' and 'service' found "bike" and "serviced": the summary quotes that line and
    does not call the session off topic."""
    store = SqliteStore.open(tmp_path / "h.db").unwrap()
    try:
        await store.ingest((
            conversation("bike", ("user", "I got my road bike serviced at the shop"),
                         ("assistant", "a tune-up each season keeps the chain healthy")),
            conversation("db", ("user", "restore the production database"))))
        payload = (await Harkback(store=store).search("how many bikes did I service")
                   ).to_payload()
        result = payload["results"][0]
        assert result["session_id"] == "bike"
        assert "bike serviced" in result["summary"]
        assert "does not appear" not in result["summary"]
    finally:
        store.close()


async def test_an_id_that_is_not_text_is_looked_up_as_before(tmp_path: Path) -> None:
    """A caller's number for a session id (``read_session(123)``) is not found, and
    ``current_session_id=7`` is refused (a number excluded nothing: the caller's own
    session came back); mending half characters out of the request's texts raised
    AttributeError on them."""
    with SqliteStore.open(tmp_path / "h.db").unwrap() as store:
        await store.ingest([conversation("s1", ("user", "docker bridge"))]).awaitable()
        hb = Harkback(store=store)
        page = await hb.read_session(123)  # type: ignore[arg-type]
        assert page.failure().reason == "no session with id 123"
        found = await hb.search("docker", current_session_id=7)  # type: ignore[arg-type]
        assert "current_session_id must be text, got int" in found.to_payload()["error"]


async def test_an_id_that_is_neither_text_nor_a_number_is_refused(tmp_path: Path) -> None:
    """``read_session(b"s1")`` is one refusal naming the type (SQLite's JSON list of ids
    raised TypeError on it), and the stored session still reads by its text."""
    with SqliteStore.open(tmp_path / "h.db").unwrap() as store:
        await store.ingest([conversation("s1", ("user", "docker bridge"))]).awaitable()
        hb = Harkback(store=store)
        for asked in (b"s1", ["s1"], True):
            page = await hb.read_session(asked)  # type: ignore[arg-type]
            assert page.failure().reason == (
                f"a session id must be text, got {type(asked).__name__}"), asked
        assert (await hb.read_session("s1")).unwrap().session.id == "s1"


@pytest.mark.parametrize(("options", "reason"), [
    ({"query": None}, "query must be text, got NoneType"),
    ({"query": b"docker"}, "query must be text, got bytes"),
    ({"limit": 1.5}, "limit must be a whole number, got 1.5"),
    ({"limit": "5"}, "limit must be a whole number, got '5'"),
    ({"limit": None}, "limit must be a whole number, got None"),
    ({"roles": None}, "roles must be text or a tuple of texts, got NoneType"),
    ({"sources": ["codex", None]},
     "sources must be text or a tuple of texts, got a list holding NoneType"),
    ({"projects": 7}, "projects must be text or a tuple of texts, got int"),
    ({"hidden_sources": None}, "hidden_sources must be text or a tuple of texts, got NoneType"),
    ({"since": []}, f"since must be a time ({TIMES}), got list"),
    ({"as_of": True}, f"as_of must be a time ({TIMES}), got bool"),
])
async def test_an_argument_of_the_wrong_type_is_a_rejected_query(
        tmp_path: Path, options: dict[str, object], reason: str) -> None:
    """A library caller's slip is a failed response naming the argument, as a bad value is;
    each raised from deep inside a stage (TypeError: 'NoneType' object is not subscriptable,
    slice indices must be integers ...), or (``as_of=True``) was read as one second past
    1970. The store answers the next search."""
    with SqliteStore.open(tmp_path / "h.db").unwrap() as store:
        await store.ingest([conversation("s1", ("user", "docker bridge"))]).awaitable()
        hb = Harkback(store=store)
        asked = {"query": "docker", **options}
        response = await hb.search(**asked)  # type: ignore[arg-type]
        assert response.to_payload() == {"success": False, "error": f"query rejected: {reason}"}
        assert (await hb.search("docker")).to_payload()["count"] == 1
