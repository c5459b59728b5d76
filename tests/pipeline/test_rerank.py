"""The rerank stage end to end: facade, pipeline, OpenAI adapter, a real local HTTP server."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest

from harkback.adapters.models.chat_settings import ChatSettings
from harkback.adapters.models.openai_chat import OpenAIChatModel
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.adapters.stores.summary_cache import SqliteSummaryCache
from harkback.pipeline.compose import STAGE_NAMES, Pipeline
from harkback.pipeline.facade import Harkback
from harkback.stages.ingest_format import conversation_to_json
from harkback.stages.ports import SessionStore, SummaryCache
from harkback.stages.rerank.model import ModelRerank
from tests.pipeline.test_cli_llm import harkback as run_cli
from tests.support.chat_server import ChatServer, Received, Reply
from tests.support.corpus import QUERY, docker_session, docker_store

_BLOCK = re.compile(r"^\[(S\d+)\] title: Docker networking (\d+)$", re.MULTILINE)


def shown(received: Received) -> dict[str, str]:
    """Label -> session id of one rerank prompt (titles say which session is which)."""
    return {label: f"s{index}" for label, index in _BLOCK.findall(received.prompt)}


def answering(choose: Callable[[dict[str, str]], list[str]]) -> Callable[[Received], Reply]:
    """A script naming, of the sessions it is shown, those ``choose`` picks (by id)."""
    def script(received: Received) -> Reply:
        labels = {sid: label for label, sid in shown(received).items()}
        picked = [labels.get(sid, sid) for sid in choose(shown(received))]
        return Reply(content="RELEVANT: " + (", ".join(picked) or "none"), prompt_tokens=300,
                     completion_tokens=7)
    return script


def _harkback(store: SessionStore, server: ChatServer, cache: SummaryCache | None = None,
              rerank: ModelRerank | None = None, **settings: Any) -> Harkback:
    options: dict[str, Any] = {"backoff": 0.05, "max_concurrency": 10, "max_attempts": 2,
                               **settings}
    model = OpenAIChatModel(ChatSettings(model="test-model", base_url=server.url, **options))
    pipeline = attrs.evolve(Pipeline(), rerank=rerank or ModelRerank())
    return Harkback(store=store, pipeline=pipeline, model=model, cache=cache)


async def _payload(hb: Harkback, limit: int) -> dict[str, Any]:
    try:
        payload: dict[str, Any] = (await hb.search(QUERY, limit=limit)).to_payload()
    finally:
        await hb.aclose()
    assert payload["success"], payload
    return payload


def _ids(payload: dict[str, Any]) -> list[str]:
    return [r["session_id"] for r in payload["results"]]


async def _lexical(store: SessionStore, limit: int) -> list[str]:
    return _ids((await Harkback(store=store).search(QUERY, limit=limit)).to_payload())


async def test_the_models_order_replaces_the_lexical_one() -> None:
    """Shown four sessions, the model names them in reverse; that is the order returned."""
    store = await docker_store(4)
    lexical = await _lexical(store, 4)
    with ChatServer(answering(lambda ids: list(reversed(ids.values())))) as server:
        payload = await _payload(_harkback(store, server), limit=4)
        calls = len(server.received)
    assert _ids(payload) == list(reversed(lexical))
    assert calls == 1
    assert payload["rerank"] == {"shown": 4, "kept": 4, "calls": 1, "cached_calls": 0,
                                 "prompt_tokens": 300, "completion_tokens": 7,
                                 "model_order": True}
    assert "notes" not in payload
    assert list(payload["timings"]) == ["match", "resolve", "rerank", "load", "summarize",
                                        "assemble"]


async def test_sessions_the_model_leaves_out_are_dropped() -> None:
    """Naming two of four keeps those two, in the model's order."""
    store = await docker_store(4)
    with ChatServer(answering(lambda _ids: ["s3", "s0"])) as server:
        payload = await _payload(_harkback(store, server), limit=4)
    assert _ids(payload) == ["s3", "s0"]
    assert payload["rerank"]["kept"] == 2


async def test_labels_it_was_not_shown_are_ignored() -> None:
    """Made-up labels and session ids in the answer count for nothing."""
    store = await docker_store(3)
    with ChatServer(answering(lambda _ids: ["S9", "s1", "S0", "s2"])) as server:
        payload = await _payload(_harkback(store, server), limit=3)
    assert _ids(payload) == ["s1", "s2"]
    assert "notes" not in payload


@pytest.mark.parametrize(("reply", "why"), [
    (Reply(content="Docker is a container runtime."), "named none of the sessions"),
    (Reply(content="RELEVANT: S7, S8"), "named none of the sessions"),
    # Prose naming labels: S1 ruled out came first, and the sessions not named were dropped.
    (Reply(content="S1 does not help at all; S3 is the one that answers it."),
     "named none of the sessions"),
    (Reply(status=500), "HTTP 500"),
    (Reply(hang=True), "0.5 s deadline"),
])
async def test_a_model_that_fails_leaves_the_lexical_order_with_a_note(reply: Reply,
                                                                      why: str) -> None:
    """Garbage, unknown labels, a server error or a hang: lexical order, said in notes."""
    store = await docker_store(7)
    lexical = await _lexical(store, 3)
    with ChatServer(lambda _r: reply) as server:
        started = time.monotonic()
        payload = await _payload(_harkback(store, server, rerank=ModelRerank(deadline_s=0.5)),
                                 limit=3)
        elapsed = time.monotonic() - started
    assert _ids(payload) == lexical
    assert payload["rerank"]["shown"] == 7
    (note,) = payload["notes"]
    assert note.startswith("rerank: the lexical order stands") and why in note
    assert elapsed < 5.0


async def test_a_cached_answer_makes_no_second_call(tmp_path: Path) -> None:
    """The same question twice over a SQLite store calls the model once per batch."""
    with SqliteStore.open(tmp_path / "harkback.db").unwrap() as store:
        await store.ingest([docker_session(i) for i in range(4)])
        with ChatServer(answering(lambda ids: sorted(ids.values())[1:])) as server:
            first = await _payload(_harkback(store, server, SqliteSummaryCache(store)), 4)
            second = await _payload(_harkback(store, server, SqliteSummaryCache(store)), 4)
            calls = len(server.received)
    assert calls == 1
    assert _ids(first) == _ids(second) == ["s1", "s2", "s3"]
    assert second["rerank"]["calls"] == 0 and second["rerank"]["cached_calls"] == 1
    assert second["rerank"]["prompt_tokens"] == 0


async def test_it_over_fetches_in_batches_then_cuts_to_the_limit() -> None:
    """Twelve sessions in three batches of five; the two the model keeps are the 11th and
    12th lexically, beyond the limit of three without rerank."""
    store = await docker_store(12)
    lexical = await _lexical(store, 10)
    assert len(lexical) == 10
    with ChatServer(answering(lambda ids: [sid for sid in ids.values()
                                           if sid not in lexical])) as server:
        payload = await _payload(_harkback(store, server, rerank=ModelRerank(batch_size=5)),
                                 limit=3)
        calls = len(server.received)
        sizes = sorted(len(shown(r)) for r in server.received)
    assert calls == 3 and sizes == [2, 5, 5]
    assert payload["rerank"]["shown"] == 12
    assert sorted(_ids(payload)) == ["s0", "s1"] and not set(_ids(payload)) & set(lexical)
    assert "notes" not in payload


async def test_the_shortlist_never_outgrows_the_limit_after_rerank() -> None:
    """A model keeping everything still gives at most the request's limit."""
    store = await docker_store(9)
    with ChatServer(answering(lambda ids: list(ids.values()))) as server:
        payload = await _payload(_harkback(store, server), limit=2)
    assert len(_ids(payload)) == 2 and payload["rerank"]["shown"] == 9


async def test_off_by_default_nothing_changes_and_no_call_is_made() -> None:
    """The default pipeline with a model configured: no rerank, five timings, no request."""
    store = await docker_store(6)
    lexical = await _lexical(store, 3)
    with ChatServer() as server:
        model = OpenAIChatModel(ChatSettings(model="m", base_url=server.url))
        hb = Harkback(store=store, model=model)
        payload = await _payload(hb, limit=3)
        assert server.received == []
    assert _ids(payload) == lexical
    assert "rerank" not in payload and "notes" not in payload
    assert tuple(payload["timings"]) == STAGE_NAMES


def test_the_rerank_flag_needs_a_model(tmp_path: Path) -> None:
    """``search --rerank`` with no model is a usage error, like --summarizer llm."""
    done = run_cli("search", QUERY, "--rerank", "--db", str(tmp_path / "x.db"))
    assert done.returncode == 2
    assert "no model configured for --rerank" in done.stderr


def test_the_rerank_flag_reranks_with_the_model(tmp_path: Path) -> None:
    """``search --rerank --model M`` sends one rerank call, and summaries stay extractive
    when asked."""
    source = tmp_path / "s.jsonl"
    source.write_text("".join(json.dumps(conversation_to_json(docker_session(i))) + "\n"
                              for i in range(3)))
    db = tmp_path / "h.db"
    assert run_cli("ingest", str(source), "--db", str(db)).returncode == 0
    with ChatServer(answering(lambda _ids: ["s2"])) as server:
        done = run_cli("search", QUERY, "--db", str(db), "--json", "--rerank", "--model", "m",
                       "--base-url", server.url, "--summarizer", "extractive")
        calls = len(server.received)
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert [r["session_id"] for r in payload["results"]] == ["s2"]
    assert calls == 1 and "rerank" in payload["timings"]


def test_the_deadline_bounds_the_rerank_and_the_summaries_together(tmp_path: Path) -> None:
    """``--deadline 4 --rerank`` with a rerank that hangs: the rerank gives up at 2 s and
    the summaries still get the rest (the rerank waited its own 30 s past --deadline)."""
    source = tmp_path / "s.jsonl"
    source.write_text("".join(json.dumps(conversation_to_json(docker_session(i))) + "\n"
                              for i in range(3)))
    db = tmp_path / "h.db"
    assert run_cli("ingest", str(source), "--db", str(db)).returncode == 0
    with ChatServer(lambda r: Reply(hang=True) if shown(r) else Reply()) as server:
        done = run_cli("search", QUERY, "--db", str(db), "--json", "--rerank", "--model", "m",
                       "--base-url", server.url, "--deadline", "4")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert payload["notes"] == ["rerank: the lexical order stands (not finished within the "
                                "2 s deadline)"]
    assert [r["summary_kind"] for r in payload["results"]] == ["llm"] * 3


def test_a_rerank_that_keeps_none_says_so_in_the_human_output(tmp_path: Path) -> None:
    """The model judging none of the sessions relevant: the human output says the model
    kept none of those shown, and the payload's message says so, where it said 'No
    matching sessions found.' of three that matched."""
    source = tmp_path / "s.jsonl"
    source.write_text("".join(json.dumps(conversation_to_json(docker_session(i))) + "\n"
                              for i in range(3)))
    db = tmp_path / "h.db"
    assert run_cli("ingest", str(source), "--db", str(db)).returncode == 0
    with ChatServer(answering(lambda _ids: [])) as server:
        args = ("search", QUERY, "--db", str(db), "--rerank", "--model", "m",
                "--base-url", server.url, "--summarizer", "extractive")
        done, machine = run_cli(*args), run_cli(*args, "--json")
    assert done.returncode == machine.returncode == 0, done.stderr + machine.stderr
    said = "The model judged none of the 3 matching sessions relevant."
    assert done.stdout.splitlines() == [said, "reranked by the model: 0 kept of 3 shown"]
    assert json.loads(machine.stdout)["message"] == said


def test_a_rerank_answer_naming_no_shown_session_does_not_claim_a_rerank(
        tmp_path: Path) -> None:
    """Labels the model was never shown: the lexical order stands, and neither the human
    output nor the JSON says the model reranked (the note says why)."""
    source = tmp_path / "s.jsonl"
    source.write_text("".join(json.dumps(conversation_to_json(docker_session(i))) + "\n"
                          for i in range(3)))
    db = tmp_path / "h.db"
    assert run_cli("ingest", str(source), "--db", str(db)).returncode == 0
    with ChatServer(lambda _r: Reply(content="RELEVANT: S7, S9")) as server:
        args = ("search", QUERY, "--db", str(db), "--rerank", "--model", "m",
                "--base-url", server.url, "--summarizer", "extractive")
        human, machine = run_cli(*args), run_cli(*args, "--json")
    assert human.returncode == machine.returncode == 0, human.stderr + machine.stderr
    assert "reranked by the model" not in human.stdout
    assert "not reranked: 3 kept of 3 shown, in the lexical order" in human.stdout
    assert "note: rerank: the lexical order stands" in human.stdout
    assert json.loads(machine.stdout)["rerank"]["model_order"] is False


async def test_a_model_that_keeps_none_is_asked_once() -> None:
    """Sessions matched and the model kept none of them: that is the answer, not a
    search of nothing found (tool output is searched only when no session matched), so
    the model is not asked a second time and its tokens are all in the report."""
    store = await docker_store(3)
    with ChatServer(answering(lambda _ids: [])) as server:
        payload = await _payload(_harkback(store, server), limit=3)
        calls = len(server.received)
    assert (payload["count"], payload["sessions_searched"]) == (0, 3)
    assert calls == payload["rerank"]["calls"] == 1


async def test_an_answer_cut_at_the_token_limit_counts_only_its_finished_lines() -> None:
    """An answer cut at its token limit mid-list ("RELEVANT: S2, S", the rest unsaid) was
    read as the whole ranking: every session it did not reach was dropped, the best one by
    words too, without a note. Its unfinished last line now counts for nothing: the
    lexical order stands, saying why; a list finished before the cut still counts."""
    store = await docker_store(4)
    lexical = await _lexical(store, 4)
    cut = Reply(content="RELEVANT: S2, S", finish_reason="length")
    with ChatServer(lambda _r: cut) as server:
        payload = await _payload(_harkback(store, server), limit=4)
    assert _ids(payload) == lexical
    assert payload["notes"] == ["rerank: the lexical order stands (the model's answer was "
                                "cut at its 48-token limit before its list ended)"]
    finished = Reply(content="RELEVANT: S2\nS2 holds the fix, while S1 and",
                     finish_reason="length")
    with ChatServer(lambda _r: finished) as server:
        payload = await _payload(_harkback(store, server), limit=4)
    assert _ids(payload) == [lexical[1]]
