"""Tests of the demo corpus shipped as package data: it parses and holds the shapes it promises."""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

from returns.result import Success

from harkback.stages.ingest_format import parse_lines
from harkback.stages.records import Conversation


def _text() -> str:
    return (resources.files("harkback.pipeline.data") / "demo_corpus.jsonl").read_text("utf-8")


@cache
def _corpus() -> tuple[Conversation, ...]:
    # split("\n"), not splitlines(): a JSON string may hold U+2028, which splitlines breaks on.
    return tuple(r.unwrap() for r in parse_lines(_text().split("\n")))


def _by_id() -> dict[str, Conversation]:
    return {c.session.id: c for c in _corpus()}


def _lineage_text(root_id: str) -> str:
    """All message text of a session and of every session descending from it."""
    ids, frontier = {root_id}, {root_id}
    while frontier:
        frontier = {c.session.id for c in _corpus() if c.session.parent_session_id in frontier}
        ids |= frontier
    return "\n".join(m.text_for_search() for c in _corpus() if c.session.id in ids
                     for m in c.messages)


def test_every_line_parses() -> None:
    """The corpus has no bad line at all."""
    results = list(parse_lines(_text().split("\n")))
    failures = [r.failure().message() for r in results if not isinstance(r, Success)]
    assert (failures, len(results) >= 30) == ([], True)


def test_size_is_a_few_dozen_sessions_and_hundreds_of_messages() -> None:
    """Big enough to show ranking, small enough to ingest in a blink."""
    sessions, messages = len(_corpus()), sum(len(c.messages) for c in _corpus())
    assert 30 <= sessions <= 60 and 300 <= messages <= 1500


def test_session_ids_are_unique() -> None:
    """No two lines describe the same session."""
    assert len(_by_id()) == len(_corpus())


def test_every_parent_is_in_the_corpus() -> None:
    """Lineage links point at sessions that exist, so resolve can walk them."""
    ids = _by_id()
    assert all(c.session.parent_session_id in ids for c in _corpus() if not c.session.is_root)


def test_has_delegated_sub_agent_sessions() -> None:
    """Sub-agent sessions hang under the session that delegated them."""
    children = [c for c in _corpus() if c.session.source == "subagent"]
    assert len(children) >= 2 and all(not c.session.is_root for c in children)


def test_has_a_compression_continuation() -> None:
    """A session ended by compression is continued by a child session."""
    compressed = {c.session.id for c in _corpus() if c.session.end_reason == "compression"}
    continuations = [c for c in _corpus() if c.session.parent_session_id in compressed
                     and c.session.source != "subagent"]
    assert continuations


def test_has_a_lineage_two_levels_deep() -> None:
    """Some session's parent has a parent itself, so resolve must walk more than one step."""
    ids = _by_id()
    assert any(ids[c.session.parent_session_id].session.parent_session_id
               for c in _corpus() if c.session.parent_session_id)


def test_has_noisy_cron_sessions() -> None:
    """Several scheduled sessions repeat the same vocabulary."""
    cron = [c for c in _corpus() if c.session.source == "cron"]
    docker_mentions = sum(m.content.lower().count("docker") for c in cron for m in c.messages)
    assert len(cron) >= 5 and docker_mentions >= 50


def test_sources_and_models_vary() -> None:
    """Sessions come from several front ends and models."""
    sources = {c.session.source for c in _corpus()}
    models = {c.session.model for c in _corpus()}
    assert {"cli", "telegram", "discord", "cron", "subagent"} <= sources and len(models) >= 4


def test_has_chinese_japanese_and_korean_text() -> None:
    """CJK search has material: Han characters, kana and Hangul all occur."""
    text = "\n".join(m.content for c in _corpus() for m in c.messages)
    counts = [len(re.findall(p, text)) for p in ("[\u4e00-\u9fff]", "[\u3040-\u30ff]",
                                                  "[\uac00-\ud7af]")]
    assert all(n >= 20 for n in counts), counts


def test_tool_outputs_answer_earlier_calls() -> None:
    """Every tool message answers a tool call made earlier in the same session."""
    for conv in _corpus():
        asked: set[str] = set()
        for message in conv.messages:
            asked.update(call.id for call in message.tool_calls)
            if message.role == "tool":
                assert message.tool_call_id in asked and message.tool_name, conv.session.id


def test_has_long_tool_outputs() -> None:
    """Load's head-and-tail cut of tool output has something to cut."""
    long = [m for c in _corpus() for m in c.messages if m.role == "tool" and len(m.content) > 500]
    assert len(long) >= 10


def test_times_are_set_and_ordered() -> None:
    """Every session and message has a time; messages never go back in time."""
    for conv in _corpus():
        stamps = [m.timestamp for m in conv.messages if m.timestamp is not None]
        assert len(stamps) == len(conv.messages) and conv.session.started_at is not None
        assert stamps == sorted(stamps), conv.session.id


def test_the_four_stories_live_in_their_lineages() -> None:
    """Each demo story's key fact sits in the lineage of the session that tells it."""
    roots = {c.session.title: c.session.id for c in _corpus() if c.session.is_root}
    facts = {
        "api container can't reach postgres after splitting the compose files":
            "docker network create lumen-backend",
        "Uploads still blocked by CORS: trace it in nginx on api-1":
            'add_header Cache-Control "no-store";',
        "Nightly Postgres dump script with 7 daily / 4 weekly rotation":
            "/home/mara/bin/pgdump-rotate.sh",
        "Pagination for GET /v1/events: cursor or offset?":
            "ok decided: cursor for the public API",
        "youer 服务端改配置后启动失败（端口冲突）": "listen: 127.0.0.1:18080",
    }
    missing = [title for title, fact in facts.items()
               if title not in roots or fact not in _lineage_text(roots[title])]
    assert missing == []
