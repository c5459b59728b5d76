"""A Korean loanword before the topic 는 stays a noun, end to end: 넘파이는 ("numpy") is no
verb whose forms would be searched as 파일 ("file")."""

from __future__ import annotations

import pytest

from harkback.pipeline.facade import Harkback
from harkback.stages.ports import SessionStore
from harkback.stages.records import Conversation, Message, Session
from tests.support.new_stores import new_stores

SESSIONS: dict[str, list[tuple[str, str]]] = {
    "numpy": [("user", "numpy install fails on the new laptop"),
              ("assistant", "no numpy wheel for python 3.13 yet: pinned numpy to 2.1")],
    "files": [("user", "설정 파일 설치 경로가 이상해요, 파일이 안 보여요"),
              ("assistant", "파일 경로를 고쳐서 다시 설치했습니다")],
}


def conversations() -> list[Conversation]:
    """The sessions above, the look-alike a day newer."""
    return [Conversation(Session(id=sid, source="cli", started_at=1_772_500_000.0 + 86_400 * day),
                         tuple(Message(session_id=sid, position=i, role=role,  # type: ignore[arg-type]
                                       content=text) for i, (role, text) in enumerate(turns)))
            for day, (sid, turns) in enumerate(SESSIONS.items())]


empty_store = new_stores("sqlite", "memory")
"""Both stores, empty."""


@pytest.fixture
async def store(empty_store: SessionStore) -> SessionStore:
    """Both stores, holding the sessions above."""
    await empty_store.ingest(conversations()).awaitable()
    return empty_store


async def test_numpy_is_not_a_verb_whose_forms_are_files(store: SessionStore) -> None:
    """The question's 넘파이는 was read as a predicate 넘파이(다) and its last bigram 파이
    searched as 파일 too: the Korean session about config files, sharing 설치 and 파일 four
    times, came first. 넘파이 is a listed loanword (numpy) and ends as one: it is searched as
    itself and by its English name."""
    payload = (await Harkback(store=store).search("넘파이는 설치가 왜 실패했었지?")).to_payload()
    assert payload["success"], payload
    assert [r["session_id"] for r in payload["results"]][:1] == ["numpy"]
