"""A library user's first slips: each is one clear error at the line that made it, not a
traceback from deep inside a stage at the first search."""

from __future__ import annotations

import gc
import json
import traceback
from pathlib import Path
from typing import Any

import attrs
import pytest

from harkback.pipeline import (
    RANKERS,
    Harkback,
    Pipeline,
    handle_session_search_sync,
    open_store,
    run_sync,
)
from harkback.stages.errors import QueryRejected
from tests.conftest import conversation


@pytest.fixture
async def store_file(tmp_path: Path) -> Path:
    """A real SQLite store holding one session of four messages."""
    path = tmp_path / "history.db"
    store = open_store(path).unwrap()
    await store.ingest([conversation(
        "deploy", ("user", "the deploy of api failed"), ("assistant", "ran kubectl rollout"),
        ("user", "it works now"), ("assistant", "good"), started_at=1_700_000_000.0)])
    store.close()
    return path


@pytest.mark.parametrize("given", ["path", "pathlib", "result", "none"])
def test_a_store_that_is_not_open_is_refused_where_it_is_given(store_file: Path,
                                                                given: str) -> None:
    """A path, or open_store's Result left wrapped, is refused by Harkback() itself,
    naming what to write instead."""
    result = open_store(store_file)
    value: Any = {"path": str(store_file), "pathlib": store_file, "result": result,
                  "none": None}[given]
    with pytest.raises(TypeError, match=r"store must be an open store") as raised:
        Harkback(store=value)
    assert ("unwrap()" in str(raised.value))
    result.unwrap().close()


def test_a_ranker_given_by_name_is_refused_naming_the_registry(store_file: Path) -> None:
    """``Pipeline(match="bm25")`` and ``pipeline="bm25"`` say how a stage is chosen by
    name; the form they name works."""
    store = open_store(store_file).unwrap()
    with pytest.raises(TypeError, match=r"RANKERS\['bm25'\]"):
        Pipeline(match="bm25")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"pipeline must be a Pipeline, got str"):
        Harkback(store=store, pipeline="bm25")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"summarize must be a stage"):
        attrs.evolve(Pipeline(), summarize="raw")  # type: ignore[arg-type]
    works = Harkback(store=store, pipeline=Pipeline(match=RANKERS["bm25"]))
    payload = works.search_sync("deploy kubectl").to_payload()
    assert [r["session_id"] for r in payload["results"]] == ["deploy"]
    store.close()


@pytest.mark.parametrize(("options", "named"), [
    ({"offset": "2"}, "offset must be a whole number, got '2'"),
    ({"limit": "3"}, "page size must be a whole number, got '3'"),
    ({"limit": 2.5}, "page size must be a whole number, got 2.5"),
    ({"offset": True}, "offset must be a whole number, got True"),
    ({"limit": None}, "page size must be a whole number, got None"),
])
async def test_a_page_asked_with_a_number_of_the_wrong_type_is_a_rejected_query(
        store_file: Path, options: dict[str, Any], named: str) -> None:
    """read_session returns a QueryRejected naming the argument, as search does."""
    store = open_store(store_file, readonly=True).unwrap()
    page = await Harkback(store=store).read_session("deploy", **options)
    store.close()
    failure = page.failure()
    assert isinstance(failure, QueryRejected)
    assert failure.reason == named


@pytest.mark.parametrize("arguments", [
    None,
    '{"query": "deploy", "limit": ' + "9" * 5000 + "}",
    '{"query": ' + "[" * 100_000 + "}",
])
def test_tool_arguments_json_cannot_read_are_a_failure_payload(store_file: Path,
                                                               arguments: Any) -> None:
    """No arguments at all, a number past json's 4,300 digits or arrays nested past its
    depth give the documented ``{"success": false, "error"}``, not an exception."""
    store = open_store(store_file, readonly=True).unwrap()
    text = handle_session_search_sync(Harkback(store=store), arguments)
    store.close()
    payload = json.loads(text)
    assert payload["success"] is False
    assert payload["error"].startswith("tool arguments")


@pytest.mark.parametrize("target", ["file", ":memory:"])
@pytest.mark.parametrize(("batch", "named"), [
    ("one", r"got one Conversation: ingest\(\[conversation\]\)"),
    ("dicts", r"ingest takes Conversation records .*, got dict"),
])
async def test_ingest_given_other_than_a_list_of_conversations_says_what_it_takes(
        store_file: Path, target: str, batch: str, named: str) -> None:
    """One Conversation not in a list, or sessions as JSON dicts, are a TypeError saying
    what ingest takes ('dict' object has no attribute 'mended' before), and nothing is
    written."""
    store = open_store(store_file if target == "file" else target).unwrap()
    talk = conversation("new", ("user", "a new session"), started_at=1_700_000_100.0)
    given: Any = {"one": talk, "dicts": [{"id": "new", "messages": []}]}[batch]
    with pytest.raises(TypeError, match=named):
        await store.ingest(given)
    page = await Harkback(store=store).read_session("new")
    store.close()
    assert "no session with id 'new'" in page.failure().message()


def test_a_coroutine_given_to_run_sync_is_refused_saying_how_to_pass_it(
        store_file: Path, recwarn: pytest.WarningsRecorder) -> None:
    """``run_sync(hb.search(...))`` said only "'coroutine' object is not callable", with
    a RuntimeWarning that it was never awaited; now the error shows the form that works,
    no warning comes besides it, and that form runs."""
    store = open_store(store_file, readonly=True).unwrap()
    hb = Harkback(store=store)
    with pytest.raises(TypeError, match=r"run_sync\(lambda: hb\.search\('docker'\)\)"):
        run_sync(hb.search("deploy"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"hb\.call_sync\(lambda: "):
        hb.call_sync(hb.search("deploy"))  # type: ignore[arg-type]
    gc.collect()  # a coroutine left unawaited warns when it is collected
    assert not [w for w in recwarn.list if issubclass(w.category, RuntimeWarning)]
    found = run_sync(lambda: hb.search("deploy kubectl")).to_payload()
    store.close()
    assert [r["session_id"] for r in found["results"]] == ["deploy"]


def test_the_tool_takes_a_whole_number_written_as_a_float(store_file: Path) -> None:
    """The schema says ``integer``, which JSON Schema holds 1.0 to be (as the MCP tools
    now take it); 1.5 is still refused."""
    store = open_store(store_file, readonly=True).unwrap()
    hb = Harkback(store=store)
    whole = json.loads(handle_session_search_sync(hb, '{"query": "deploy", "limit": 1.0}'))
    part = json.loads(handle_session_search_sync(hb, '{"query": "deploy", "limit": 1.5}'))
    store.close()
    assert (whole["success"], whole["count"]) == (True, 1)
    assert part == {"success": False, "error": "limit must be an integer"}


def test_an_error_raised_in_run_sync_is_not_chained_to_a_missing_loop(
        store_file: Path) -> None:
    """A bug raised inside a synchronous search (here, a stage of one's own) reads as
    itself: its traceback said first "RuntimeError: no running event loop ... During
    handling of the above exception, another exception occurred", which it never was."""
    def broken(_request: object) -> Any:
        raise ValueError("a bug in my ranker")
    store = open_store(store_file, readonly=True).unwrap()
    hb = Harkback(store=store, pipeline=attrs.evolve(Pipeline(), match=broken))
    with pytest.raises(ValueError, match="a bug in my ranker") as raised:
        hb.search_sync("deploy")
    store.close()
    shown = "".join(traceback.format_exception(raised.value))
    assert "no running event loop" not in shown
    assert "During handling" not in shown


async def _an_async_ranker(request: object) -> object:
    return request


def _a_ranker_returning_nothing(request: object) -> None:
    return None


@pytest.mark.parametrize(("ranker", "named"), [
    (_an_async_ranker, "the match stage _an_async_ranker returned coroutine, not a Step"),
    (_a_ranker_returning_nothing,
     "the match stage _a_ranker_returning_nothing returned NoneType, not a Step"),
])
async def test_a_stage_of_one_s_own_of_the_wrong_shape_is_named(
        store_file: Path, ranker: Any, named: str, recwarn: pytest.WarningsRecorder) -> None:
    """An ``async def`` ranker, or one returning no step, failed as "'coroutine' (or
    'NoneType') object is not callable" from the timing wrapper; now the error names the
    stage and the shape a stage has, and no "never awaited" warning comes besides it."""
    store = open_store(store_file, readonly=True).unwrap()
    hb = Harkback(store=store, pipeline=attrs.evolve(Pipeline(), match=ranker))
    with pytest.raises(TypeError, match=named):
        await hb.search("deploy")
    gc.collect()
    store.close()
    assert not [w for w in recwarn.list if issubclass(w.category, RuntimeWarning)]


def test_a_stage_given_as_its_class_says_to_make_one() -> None:
    """``match=Bm25Match`` (the class) was called with the request as its limit and failed
    at the first search ("'>=' not supported between instances of 'SearchRequest' and
    'int'"); the form it names works."""
    ranker = RANKERS["bm25"]
    with pytest.raises(TypeError, match=rf"got the class {type(ranker).__name__}: make one"):
        Pipeline(match=type(ranker))  # type: ignore[arg-type]
    assert Pipeline(match=type(ranker)()).match == ranker


async def test_a_current_session_id_given_as_a_number_is_refused(tmp_path: Path) -> None:
    """An agent's own id given as a number (a runner's integer id) matched no stored id, so
    its live session came back as memory; it is refused, naming the argument."""
    store = open_store(tmp_path / "history.db").unwrap()
    await store.ingest([conversation("12345", ("user", "the deploy of api failed"),
                                     started_at=1_700_000_000.0)]).awaitable()
    hb = Harkback(store=store)
    payload = (await hb.search("deploy", current_session_id=12345)).to_payload()  # type: ignore[arg-type]
    tool = json.loads(handle_session_search_sync(hb, {"query": "deploy"}, current_session_id=12345))  # type: ignore[arg-type]
    store.close()
    assert payload == {"success": False, "error": "query rejected: current_session_id must be "
                       "text, got int (write it as current_session_id=str(...))"}
    assert tool["success"] is False and "current_session_id must be text" in tool["error"]
