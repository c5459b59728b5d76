"""A real recall through a real local model: llama.cpp (xllamacpp) serving SmolLM2-135M.

Quality is not the point here; the real protocol, token counts and timeouts are.
The server runs in a child process on 127.0.0.1 and is stopped after the module.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest
from returns.io import IOFailure
from returns.unsafe import unsafe_perform_io

from harkback.adapters.models.chat_settings import ChatSettings
from harkback.adapters.models.openai_chat import OpenAIChatModel
from harkback.pipeline.compose import Pipeline
from harkback.pipeline.facade import Harkback
from harkback.stages.chat import ChatRequest
from harkback.stages.summarize.model import LlmSummarize
from tests.support.corpus import QUERY, docker_store

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 60.0


@pytest.fixture(scope="module")
def local_model_url() -> Iterator[str]:
    """Start the llama.cpp server with SmolLM2 and yield its base URL."""
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.support.llama_server"], cwd=ROOT,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert child.stdout is not None
        started = time.monotonic()
        line = child.stdout.readline()
        assert line.startswith("ready "), (
            f"the local model server did not start (exit status {child.poll()}); run "
            f"`.venv/bin/python -m tests.support.llama_server` to see why")
        assert time.monotonic() - started < START_TIMEOUT
        yield line.split()[1]
    finally:
        if child.stdin is not None:
            child.stdin.close()
        try:
            child.wait(timeout=15)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def _model(url: str, *, timeout: float = 30.0, max_attempts: int = 3) -> OpenAIChatModel:
    return OpenAIChatModel(ChatSettings(model="smollm2-135m", base_url=url, max_concurrency=1,
                                        backoff=0.1, timeout=timeout,
                                        max_attempts=max_attempts))


async def test_a_recall_is_summarised_by_the_local_model(local_model_url: str) -> None:
    """One session, summarised over HTTP by llama.cpp, with real token counts."""
    summarize = LlmSummarize(max_output_tokens=64, deadline_s=90.0)
    hb = Harkback(store=await docker_store(1), model=_model(local_model_url, timeout=80.0),
                  pipeline=attrs.evolve(Pipeline(), summarize=summarize))
    try:
        payload = (await hb.search(QUERY, limit=1)).to_payload()
    finally:
        await hb.aclose()
    result = payload["results"][0]
    # SmolLM2-135M mostly answers by repeating the quoted transcript (or its instructions),
    # which is no recap (stages/summarize/grounding.py); either way the call went over HTTP
    # and its real token counts are reported.
    assert (result["summary_kind"] == "llm"
            or "repeated the transcript" in result["summary_note"]
            or "repeated its instructions" in result["summary_note"]), result.get("summary_note")
    assert result["summary"].strip()
    assert result["usage"]["prompt_tokens"] > 100
    assert result["usage"]["completion_tokens"] > 0
    assert payload["usage"] == result["usage"]


async def test_a_call_slower_than_its_timeout_fails_cleanly(local_model_url: str) -> None:
    """A per-call timeout shorter than generation gives ModelFailed, and the server lives on."""
    long_answer = ChatRequest(messages=(("user", "Count from 1 to 500, one per line."),),
                              max_tokens=400, temperature=0.1)
    slow = _model(local_model_url, timeout=0.2, max_attempts=1)
    try:
        outcome = await slow.complete(long_answer).awaitable()
    finally:
        await slow.aclose()
    assert isinstance(outcome, IOFailure)
    assert "no answer within 0.2 s" in unsafe_perform_io(outcome.failure()).reason
    quick = _model(local_model_url, timeout=80.0)
    try:
        again = await quick.complete(attrs.evolve(long_answer, max_tokens=8)).awaitable()
    finally:
        await quick.aclose()
    assert unsafe_perform_io(again.unwrap()).usage.completion > 0
