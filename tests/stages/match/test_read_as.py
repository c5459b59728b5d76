"""What a search read in place of a question's word no message holds is said in its notes
(``--json`` and the MCP tools: ``notes``): a session about "docker" answering "dokcer", or
one that was "too slow" answering "speed up", says why it was found."""

from __future__ import annotations

import time

from returns.unsafe import unsafe_perform_io

from harkback.stages.match.lexical import LexicalMatch
from harkback.stages.ports import Deps, SessionStore
from harkback.stages.request import SearchRequest
from tests.conftest import conversation


async def _notes(store: SessionStore, query: str) -> tuple[str, ...]:
    outcome = await LexicalMatch()(SearchRequest(query=query, limit=5))(
        Deps(store=store, clock=time.time)).awaitable()
    return unsafe_perform_io(outcome.unwrap()).notes


async def test_a_correction_and_near_words_are_noted_and_held_words_are_not(
        store: SessionStore) -> None:
    session = conversation(
        "ci", ("user", "docker builds on CI are way too slow"),
        ("assistant", "cache the docker layers; the CI is faster now"))
    unsafe_perform_io((await store.ingest((session,)).awaitable()).unwrap())
    assert await _notes(store, "dokcer speed") == (
        "no message holds 'dokcer': read as 'docker'",
        "no message holds 'speed': read by its near words 'faster', 'slow'")
    assert await _notes(store, "docker slow") == ()
