"""The facade: one object an agent or a script holds to recall past sessions.

>>> import asyncio
>>> from harkback.adapters.stores.memory import MemoryStore
>>> hb = Harkback(store=MemoryStore())
>>> asyncio.run(hb.search("docker network")).to_payload()["count"]
0
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Mapping
from types import MappingProxyType, TracebackType
from typing import Any, Self, TypeVar

import attrs
from returns.result import Failure, Result, Success

from harkback.adapters.stores.own_thread import inside_a_store_search
from harkback.adapters.thread_room import one_thread_pool
from harkback.pipeline.compose import Pipeline
from harkback.pipeline.facade_parts import a_part, a_pipeline, a_store
from harkback.pipeline.own_thread import on_store_thread
from harkback.pipeline.timing import FanOut, RecordingObserver
from harkback.stages.defaults import DEFAULT_LIMIT, PAGE_LIMIT
from harkback.stages.errors import RecallError
from harkback.stages.observe import Observer, null_observer
from harkback.stages.ports import (
    ChatModel,
    Deps,
    Embedder,
    SessionStore,
    SummaryCache,
    VectorStore,
)
from harkback.stages.read_back import PageRequest, ReadError, SessionPage, read_page
from harkback.stages.request import DEFAULT_HIDDEN_SOURCES, DEFAULT_ROLES, make_request
from harkback.stages.result import BrowseResult, RecallResult
from harkback.stages.stage import as_result
from harkback.stages.time_bounds import TimeGiven, parse_as_of

T = TypeVar("T")


def _stopped_at(moment: float) -> Callable[[], float]:
    """A clock that always reads ``moment``."""
    return lambda: moment


def _read_only(timings: Mapping[str, float]) -> Mapping[str, float]:
    return MappingProxyType(dict(timings))


@attrs.frozen
class Response:
    """A finished recall: the outcome, each stage's duration in milliseconds, and the
    moment it was asked as of (None: the wall clock)."""

    outcome: Result[RecallResult | BrowseResult, RecallError]
    timings: Mapping[str, float] = attrs.field(factory=dict, converter=_read_only)
    as_of: float | None = None

    @property
    def ok(self) -> bool:
        """True when the recall succeeded."""
        return isinstance(self.outcome, Success)

    def to_payload(self) -> dict[str, Any]:
        """The JSON payload: the result with ``timings`` (and ``as_of`` when one was
        given), or ``{"success": false, "error"}``."""
        if isinstance(self.outcome, Failure):
            return {"success": False, "error": self.outcome.failure().message()}
        payload = self.outcome.unwrap().to_payload()
        if self.as_of is not None:
            payload["as_of"] = self.as_of
        payload["timings"] = {k: round(v, 3) for k, v in self.timings.items()}
        return payload


@attrs.frozen(kw_only=True)
class Harkback:
    """Recall over a store with a pipeline. Swap stages with ``attrs.evolve``.

    ``embedder`` and ``vectors`` feed the ``hybrid`` ranker's dense side (the SQLite and
    memory stores are vector stores too); without them every ranker is lexical.
    """

    store: SessionStore = attrs.field(validator=a_store)
    pipeline: Pipeline = attrs.field(default=Pipeline(), validator=a_pipeline)
    observer: Observer = attrs.field(default=null_observer,
                                     validator=attrs.validators.is_callable())
    model: ChatModel | None = attrs.field(default=None, validator=a_part)
    cache: SummaryCache | None = attrs.field(default=None, validator=a_part)
    embedder: Embedder | None = attrs.field(default=None, validator=a_part)
    vectors: VectorStore | None = attrs.field(default=None, validator=a_part)

    async def search(self, query: str, *, limit: int = DEFAULT_LIMIT,
                     roles: tuple[str, ...] = DEFAULT_ROLES,
                     current_session_id: str | None = None, since: TimeGiven | None = None,
                     until: TimeGiven | None = None,
                     hidden_sources: tuple[str, ...] = DEFAULT_HIDDEN_SOURCES,
                     as_of: TimeGiven | None = None, sources: tuple[str, ...] = (),
                     projects: tuple[str, ...] = ()) -> Response:
        """Recall sessions about ``query``; an empty query lists recent sessions.

        ``since``, ``until`` and ``as_of`` are each text as the command line takes it (an
        ISO time, ``7d``, ``yesterday``), epoch seconds, a ``datetime`` (naive: local
        time) or a ``date`` (a local day; ``until`` takes all of it); a value of another
        type is a failed response naming these. ``as_of`` asks the question as if then:
        the ranker's "now", the question's time words ("two weeks ago") and relative
        ``since``/``until`` count from it. It hides nothing; bound with ``until``.
        ``sources`` (``codex``, ``cli``...) and ``projects`` (a folder's path or name),
        when given, are the only ones searched; these and ``roles`` are tuples of names or
        one comma list (``"codex,telegram"``). ``hidden_sources`` are left out unless
        ``sources`` names them.
        """
        moment: float | None = None
        if as_of is not None:
            parsed = parse_as_of(as_of)
            if isinstance(parsed, Failure):
                return Response(Failure(parsed.failure()))
            moment = parsed.unwrap()
        request = make_request(query, limit=limit, roles=roles,
                               current_session_id=current_session_id, since=since, until=until,
                               hidden_sources=hidden_sources, now=moment, sources=sources,
                               projects=projects)
        if isinstance(request, Failure):
            return Response(Failure(request.failure()), as_of=moment)
        recorder = RecordingObserver()
        deps = Deps(store=self.store, observer=FanOut((recorder, self.observer)),
                    clock=time.time if moment is None else _stopped_at(moment),
                    model=self.model, cache=self.cache, embedder=self.embedder,
                    vectors=self.vectors)
        step = self.pipeline.run(request.unwrap())
        # Without a model (or cache, embedder, vectors) the whole search can run on the
        # store's own thread, its store calls made in place there (pipeline/own_thread.py).
        alone = all(part is None for part in (self.model, self.cache, self.embedder, self.vectors))
        outcome = await on_store_thread(self.store, lambda: step(deps).awaitable(), alone=alone)
        return Response(as_result(outcome), recorder.durations(), as_of=moment)

    async def recent(self, *, limit: int = 10, current_session_id: str | None = None,
                     since: TimeGiven | None = None, until: TimeGiven | None = None,
                     as_of: TimeGiven | None = None, sources: tuple[str, ...] = (),
                     projects: tuple[str, ...] = ()) -> Response:
        """List recent root sessions, newest first (``since``/``until`` bound their start;
        relative ones count back from ``as_of`` when given; only ``sources`` and
        ``projects`` when given)."""
        return await self.search("", limit=limit, current_session_id=current_session_id,
                                 since=since, until=until, as_of=as_of, sources=sources,
                                 projects=projects)

    async def read_session(self, session_id: str, *, around: str | int | None = None,
                           offset: int | None = None, limit: int = PAGE_LIMIT
                           ) -> Result[SessionPage, ReadError]:
        """A page of one session's transcript: centred on the message ``around`` names
        (``SESSION_ID:POSITION`` as search results carry it, or a position), or from
        ``offset``; ``page.next_offset`` continues it. Reads only."""
        return await read_page(self.store, PageRequest(
            session_id=session_id, around=None if around is None else str(around),
            offset=offset, limit=limit))

    async def aclose(self) -> None:
        """Release what the model and embedder hold in the running loop (HTTP clients);
        calling it again is harmless. The store stays open: it is the caller's to close."""
        if self.model is not None:
            await self.model.aclose()
        if self.embedder is not None:
            await self.embedder.aclose()

    async def __aenter__(self) -> Self:
        """Use the facade in an ``async with`` block that calls :meth:`aclose` on leaving
        (the store stays open: ``with open_store(...).unwrap() as store`` closes it)."""
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        trace: TracebackType | None) -> None:
        """Release the model's and embedder's clients of this loop."""
        await self.aclose()

    def search_sync(self, query: str, **options: Any) -> Response:
        """:meth:`search` from synchronous code, including code inside a running loop."""
        return self.call_sync(lambda: self.search(query, **options))

    def call_sync(self, make: Callable[[], Awaitable[T]]) -> T:
        """Run ``make()`` with :func:`run_sync` and release the model's client afterwards.

        Every call runs in a loop of its own, so what the model made there (client,
        limiter) is closed in that same loop before it ends.
        """
        _check_maker(make, "hb.call_sync")

        async def once() -> T:
            try:
                return await make()
            finally:
                await self.aclose()

        return run_sync(once)


def run_sync(make: Callable[[], Awaitable[T]]) -> T:
    """Run a coroutine to completion from synchronous code.

    With no loop running in this thread it uses ``asyncio.run``; inside a running loop
    (an agent gateway calling a sync tool handler) it runs a fresh loop on a worker
    thread, so nothing blocks on itself and no client is bound to the caller's loop.
    ``make`` is a function that makes the awaitable, called in the loop that awaits it:

    >>> run_sync(asyncio.sleep(0))
    Traceback (most recent call last):
    TypeError: run_sync takes a function that makes the awaitable, got a coroutine: \
run_sync(lambda: hb.search('docker'))
    """
    _check_maker(make, "run_sync")
    if inside_a_store_search():
        raise RuntimeError(
            "a synchronous harkback call (search_sync, call_sync, run_sync, a sync tool "
            "handler) was made from inside a search, on its store's own thread (an "
            "observer or a stage of yours): it would wait for that thread, busy with the "
            "search that waits for it, for ever; await hb.search(...) in a stage, or make "
            "the call after the search returns")

    async def main() -> T:
        return await make()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        running = False
    else:
        running = True
    if not running:
        # Run outside the except block: else every error raised by the search (a stage's
        # bug, an observer's) printed "During handling ... no running event loop" first.
        return asyncio.run(main())
    with one_thread_pool("harkback-sync") as pool:
        return pool.submit(asyncio.run, main()).result()


def _check_maker(make: object, name: str) -> None:
    """Refuse an awaitable given where a function making one is taken: ``await make()``
    said only "'coroutine' object is not callable", and Python warned besides that the
    coroutine was never awaited."""
    if callable(make):
        return
    if inspect.iscoroutine(make):
        make.close()  # it will never run: no "never awaited" warning on top of the error
    raise TypeError(f"{name} takes a function that makes the awaitable, got a "
                    f"{type(make).__name__}: {name}(lambda: hb.search('docker'))")
