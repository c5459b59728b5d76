"""A search without a model runs on the SQLite store's own thread, with the same answers."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from returns.io import IOResult

from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.compose import Pipeline
from harkback.pipeline.facade import Harkback
from harkback.pipeline.own_thread import on_store_thread
from harkback.pipeline.timing import RecordingObserver
from harkback.stages.errors import RecallError
from harkback.stages.observe import StageEvent
from harkback.stages.ports import Deps
from harkback.stages.records import Role
from harkback.stages.request import SearchRequest, make_request
from harkback.stages.result import BrowseResult, RecallResult
from harkback.stages.stage import as_result
from tests.conftest import conversation

_TURNS: tuple[tuple[str, str | None, tuple[tuple[Role, str], ...]], ...] = (
    ("docker", None, (("user", "the api container cannot resolve postgres"),
                      ("assistant", "fixed with docker network create backend"))),
    ("child", "docker", (("assistant", "the docker bridge network needed a restart"),)),
    ("cors", None, (("user", "nginx CORS header missing on uploads; docker logs"),)),
    ("db", None, (("user", "数据库连接超时 after the docker upgrade"),)),
)
SESSIONS = tuple(conversation(sid, *turns, started_at=100.0 * (i + 1), parent=parent)
                 for i, (sid, parent, turns) in enumerate(_TURNS))
QUERIES = ("docker network", "数据库连接", '"docker bridge"', "dock*", "nginx OR postgres")


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SqliteStore]:
    """A SQLite store holding four sessions, one of them a child."""
    with SqliteStore.open(tmp_path / "h.db").unwrap() as opened:
        await opened.ingest(SESSIONS).awaitable()
        yield opened


def _payload(response: Any) -> dict[str, Any]:
    payload: dict[str, Any] = response.to_payload()
    payload.pop("timings")
    return payload


async def test_the_stages_run_on_the_store_thread_not_the_callers(store: SqliteStore) -> None:
    """The observer hears every stage from one thread, and it is not the caller's."""
    threads: set[int] = set()

    def note(event: StageEvent) -> None:
        threads.add(threading.get_ident())

    response = await Harkback(store=store, observer=note).search("docker network")
    assert response.ok and response.to_payload()["count"] > 0
    assert len(threads) == 1
    assert threads != {threading.get_ident()}


async def test_answers_are_those_of_the_callers_loop(store: SqliteStore) -> None:
    """Each query's payload is the same run on the store's thread or on the caller's loop."""
    for query in QUERIES:
        request = make_request(query, limit=5, now=1000.0).unwrap()
        outcomes = []
        for alone in (True, False):
            deps = Deps(store=store, observer=RecordingObserver(), clock=lambda: 1000.0)

            async def search(deps: Deps = deps, request: SearchRequest = request
                             ) -> IOResult[RecallResult | BrowseResult, RecallError]:
                return await Pipeline().run(request)(deps)
            outcomes.append(as_result(await on_store_thread(store, search, alone=alone)))
        assert outcomes[0] == outcomes[1], query
        assert outcomes[0].unwrap().to_payload()["count"] > 0, query


async def test_searches_and_store_calls_side_by_side_all_answer(store: SqliteStore) -> None:
    """Searches run concurrently with each other and with plain store calls, each answered
    as when run alone."""
    harkback = Harkback(store=store)
    alone = [_payload(await harkback.search(q, as_of=1000.0)) for q in QUERIES]
    searches = asyncio.gather(*(harkback.search(q, as_of=1000.0) for q in QUERIES))
    together, sessions = await asyncio.gather(searches, store.sessions(["docker"]).awaitable())
    assert [_payload(r) for r in together] == alone
    assert [s.id for s in as_result(sessions).unwrap()] == ["docker"]


def test_search_sync_runs_on_the_store_thread_too(store: SqliteStore) -> None:
    """The synchronous facade (here inside the test's running loop) finds the sessions."""
    response = Harkback(store=store).search_sync("docker network", as_of=1000.0)
    assert [r["session_id"] for r in response.to_payload()["results"]][:1] == ["docker"]


_NESTED = """
import asyncio, sys
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.facade import Harkback
from tests.pipeline.test_own_thread import SESSIONS
store = SqliteStore.open(sys.argv[1]).unwrap()
asyncio.run(store.ingest(SESSIONS).awaitable())
heard = []
def nested(event):
    if event.stage == "match" and event.status == "started":
        try:
            heard.append(Harkback(store=store).search_sync("docker").to_payload()["count"])
        except RuntimeError as error:
            heard.append(str(error))
outer = Harkback(store=store, observer=nested).search_sync("docker network")
store.close()
print(outer.to_payload()["count"], heard)
"""


def test_a_synchronous_search_from_inside_a_search_is_refused_not_hung(tmp_path: Path) -> None:
    """An observer calling ``search_sync`` on the store its search runs on gets an error:
    it waited for the store's thread, busy with the search waiting for it, for ever (the
    store could not even be closed). Run apart, so a hang fails the test by its timeout."""
    done = subprocess.run([sys.executable, "-c", _NESTED, str(tmp_path / "h.db")],
                          capture_output=True, text=True, timeout=60, check=False,
                          cwd=Path(__file__).parents[2])
    assert done.returncode == 0, done.stderr
    outer, heard = done.stdout.split(" ", 1)
    assert int(outer) > 0
    assert "from inside a search, on its store's own thread" in heard
