"""Tests of the no-model summarize stages and the shared per-transcript runner."""

from __future__ import annotations

import asyncio

import pytest
from returns.context import RequiresContextFutureResult
from returns.future import FutureResult
from returns.io import IOFailure, IOSuccess
from returns.result import Failure, Result, Success
from returns.unsafe import unsafe_perform_io

from harkback.adapters.stores.memory import MemoryStore
from harkback.stages.errors import ModelFailed, RecallError
from harkback.stages.flow import Loaded, SummarizedSet
from harkback.stages.ports import Deps
from harkback.stages.query import parse_query
from harkback.stages.records import Candidate, Session, Summary, Transcript
from harkback.stages.request import SearchRequest
from harkback.stages.stage import Step
from harkback.stages.summarize.extractive import NO_MATCH
from harkback.stages.summarize.plain import (
    ExtractiveSummarize,
    NoSummarize,
    RawSummarize,
    summarize_all,
    summarize_each,
)

CORS = ("[USER]: the CORS error is back\n\n"
        "[ASSISTANT]: nginx strips the header; remove proxy_hide_header\n\n"
        "[USER]: what about lunch?")


def _transcript(session_id: str, text: str) -> Transcript:
    return Transcript(candidate=Candidate(root=Session(id=session_id), hits=()), text=text,
                      full_chars=len(text), truncated=False)


def _loaded(query: str, *transcripts: Transcript) -> Loaded:
    return Loaded(request=SearchRequest(query=query), parsed=parse_query(query),
                  transcripts=transcripts, sessions_searched=7)


async def _outcome(step: Step[SummarizedSet]) -> Result[SummarizedSet, RecallError]:
    outcome = await step(Deps(store=MemoryStore())).awaitable()
    if isinstance(outcome, IOSuccess):
        return Success(unsafe_perform_io(outcome.unwrap()))
    assert isinstance(outcome, IOFailure)
    return Failure(unsafe_perform_io(outcome.failure()))


async def _run(step: Step[SummarizedSet]) -> SummarizedSet:
    return (await _outcome(step)).unwrap()


async def test_extractive_stage_summarises_each_transcript() -> None:
    """Every transcript gets an extractive summary focused on the query."""
    done = await _run(ExtractiveSummarize()(_loaded("nginx header", _transcript("a", CORS),
                                                    _transcript("b", "[USER]: cooking"))))
    assert [i.summary.kind for i in done.items] == ["extractive", "extractive"]
    assert "proxy_hide_header" in done.items[0].summary.text
    assert done.items[1].summary.text.startswith(NO_MATCH)


async def test_extractive_stage_passes_its_bounds() -> None:
    """The stage's max_chars bounds the kernel's output."""
    done = await _run(ExtractiveSummarize(max_chars=40)(_loaded("cors", _transcript("a", CORS))))
    assert len(done.items[0].summary.text) <= 40


async def test_raw_stage_keeps_the_first_characters() -> None:
    """The raw summary is the transcript's head, 500 characters by default."""
    text = "x" * 800
    done = await _run(RawSummarize()(_loaded("q", _transcript("a", text))))
    assert done.items[0].summary == Summary(text="x" * 500, kind="raw")


async def test_raw_stage_length_is_configurable() -> None:
    """RawSummarize(chars=N) keeps N characters."""
    done = await _run(RawSummarize(chars=10)(_loaded("q", _transcript("a", CORS))))
    assert done.items[0].summary.text == CORS[:10]


async def test_none_stage_gives_empty_summaries() -> None:
    """NoSummarize pairs each transcript with an empty summary of kind none."""
    done = await _run(NoSummarize()(_loaded("q", _transcript("a", CORS))))
    assert done.items[0].summary == Summary(text="", kind="none")


async def test_set_keeps_transcripts_and_context() -> None:
    """The set keeps transcript order, the request and the searched count."""
    loaded = _loaded("q", _transcript("a", "A"), _transcript("b", "B"))
    done = await _run(RawSummarize()(loaded))
    assert [i.transcript for i in done.items] == list(loaded.transcripts)
    assert (done.request, done.parsed, done.sessions_searched) == (
        loaded.request, loaded.parsed, 7)


async def test_no_transcripts_give_an_empty_set() -> None:
    """Summarising nothing succeeds with no items."""
    assert (await _run(ExtractiveSummarize()(_loaded("q")))).items == ()


def _slow(seconds: float, text: str) -> Step[Summary]:
    async def work() -> Result[Summary, RecallError]:
        await asyncio.sleep(seconds)
        return Success(Summary(text=text, kind="llm"))
    return RequiresContextFutureResult(lambda _deps: FutureResult(work()))


def _failing(reason: str) -> Step[Summary]:
    failure: Result[Summary, RecallError] = Failure(ModelFailed(reason))
    return RequiresContextFutureResult.from_result(failure)


async def test_transcripts_are_summarised_concurrently() -> None:
    """Per-transcript steps run at the same time, not one after another."""
    loaded = _loaded("q", *[_transcript(str(i), "t") for i in range(5)])
    started = asyncio.get_running_loop().time()
    done = await _run(summarize_each(loaded, lambda t: _slow(0.2, t.candidate.root.id)))
    assert asyncio.get_running_loop().time() - started < 0.6
    assert [i.summary.text for i in done.items] == ["0", "1", "2", "3", "4"]


async def test_failure_without_fallback_fails_the_set() -> None:
    """Without a fallback, a failing transcript fails the whole set with its error."""
    loaded = _loaded("q", _transcript("a", "A"), _transcript("b", "B"))
    outcome = await _outcome(summarize_each(
        loaded, lambda t: _failing("timeout") if t.text == "B" else _slow(0, "ok")))
    assert outcome == Failure(ModelFailed("timeout"))


async def test_fallback_replaces_only_the_failed_summary() -> None:
    """With a fallback, a failing transcript gets it and the others keep their own."""
    loaded = _loaded("q", _transcript("a", "A"), _transcript("b", "B"))
    done = await _run(summarize_each(
        loaded, lambda t: _failing("timeout") if t.text == "B" else _slow(0, "model"),
        fallback=lambda t, error: Summary(text=t.text, kind="extractive",
                                          note=error.message())))
    assert [(i.summary.text, i.summary.kind) for i in done.items] == [
        ("model", "llm"), ("B", "extractive")]
    assert done.items[1].summary.note == "model failed: timeout"


async def test_a_failure_does_not_cancel_its_siblings() -> None:
    """A fast failure still lets slower siblings run to their end."""
    finished: list[str] = []

    def one(t: Transcript) -> Step[Summary]:
        if t.text == "fail":
            return _failing("boom")

        async def work() -> Result[Summary, RecallError]:
            await asyncio.sleep(0.05)
            finished.append(t.text)
            return Success(Summary(text=t.text, kind="llm"))
        return RequiresContextFutureResult(lambda _deps: FutureResult(work()))

    loaded = _loaded("q", _transcript("a", "fail"), _transcript("b", "slow"))
    await _outcome(summarize_each(loaded, one))
    assert finished == ["slow"]


def test_bad_configuration_is_rejected() -> None:
    """Impossible bounds are refused when the stage is built."""
    with pytest.raises(ValueError):
        ExtractiveSummarize(max_lines=0)
    with pytest.raises(ValueError):
        RawSummarize(chars=-1)


async def test_a_summarizer_that_cannot_fail_keeps_order_and_carries_the_set() -> None:
    """summarize_all pairs each transcript with its summary, in order, and carries the
    request, the parsed query and the count searched through."""
    loaded = _loaded("q", *[_transcript(str(i), f"t{i}") for i in range(4)])
    done = await _run(summarize_all(loaded, lambda t: Summary(text=t.text.upper(),
                                                               kind="raw")))
    assert [(i.transcript.candidate.root.id, i.summary.text) for i in done.items] == [
        ("0", "T0"), ("1", "T1"), ("2", "T2"), ("3", "T3")]
    assert (done.request, done.parsed, done.sessions_searched) == (
        loaded.request, loaded.parsed, 7)
