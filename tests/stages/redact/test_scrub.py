"""Redaction over the corpus: every secret shape caught, every look-alike untouched."""

from __future__ import annotations

import pytest

from harkback.stages.records import Conversation, Message, Session, ToolCall
from harkback.stages.redact.scrub import redact, redact_conversation
from tests.stages.redact.corpus import CAUGHT, SURVIVES


def test_the_corpus_is_big_enough() -> None:
    """At least 40 shapes each way, none listed twice."""
    assert len({text for text, _ in CAUGHT}) == len(CAUGHT) >= 40
    assert len(set(SURVIVES)) == len(SURVIVES) >= 40


@pytest.mark.parametrize(("text", "expected"), CAUGHT)
def test_a_secret_is_replaced_by_its_placeholder(text: str, expected: str) -> None:
    """Each secret becomes its typed placeholder; the text around it stays."""
    redacted, counts = redact(text)
    assert redacted == expected
    assert counts.total == expected.count("[secret:")


@pytest.mark.parametrize("text", SURVIVES)
def test_a_look_alike_survives_untouched(text: str) -> None:
    """Hashes, ids, data URIs, versions, code and prose that mention secrets stay as they are."""
    assert redact(text) == (text, redact("")[1])


@pytest.mark.parametrize(("text", "expected"), CAUGHT)
def test_redacting_twice_is_redacting_once(text: str, expected: str) -> None:
    """A placeholder is never redacted again, nor counted."""
    again, counts = redact(redact(text)[0])
    assert (again, counts.total) == (expected, 0)


def test_a_text_of_many_secrets_is_redacted_in_one_pass() -> None:
    """Secrets of every kind in one text: all caught, counted by kind."""
    text = "\n".join(t for t, _ in CAUGHT)
    redacted, counts = redact(text)
    assert redacted == "\n".join(e for _, e in CAUGHT)
    assert counts.total == sum(e.count("[secret:") for _, e in CAUGHT)
    assert dict(counts.by_kind)["password"] >= 8


def test_a_conversation_is_redacted_in_title_content_and_tool_arguments() -> None:
    """The title, every content and every tool call's arguments lose their secrets."""
    key = "AKIAIOSFODNN7EXAMPLE"
    chat = Conversation(Session(id="s", title=f"rotate {key}"), (
        Message(session_id="s", position=0, role="user", content=f"my key is {key}"),
        Message(session_id="s", position=1, role="assistant", content="ok", tool_calls=(
            ToolCall(id="c", name="bash", arguments=f'{{"cmd": "echo {key}"}}'),)),
        Message(session_id="s", position=2, role="tool", content="done")))
    clean, counts = redact_conversation(chat)
    assert key not in repr(clean)
    assert clean.session.title == "rotate [secret:aws-access-key]"
    assert clean.messages[1].tool_calls[0].arguments == '{"cmd": "echo [secret:aws-access-key]"}'
    assert clean.messages[2] is chat.messages[2]
    assert counts.by_kind == (("aws-access-key", 3),)


def test_a_conversation_without_secrets_comes_back_as_it_was() -> None:
    """Nothing to redact: the very same object, no counts."""
    chat = Conversation(Session(id="s", title="docker"), (
        Message(session_id="s", position=0, role="user", content="the token expired"),))
    clean, counts = redact_conversation(chat)
    assert clean is chat and counts.total == 0
