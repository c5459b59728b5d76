"""Tests of record validation."""

from __future__ import annotations

import math

import pytest

from harkback.stages.records import Conversation, Message, Session


def test_two_messages_at_one_position_are_refused() -> None:
    """A conversation cannot hold two messages at the same position."""
    with pytest.raises(ValueError, match="position 0"):
        Conversation(Session(id="s"), (
            Message(session_id="s", position=0, role="user", content="one"),
            Message(session_id="s", position=0, role="user", content="two")))


def test_message_of_another_session_is_refused() -> None:
    """A conversation's messages all belong to its session."""
    with pytest.raises(ValueError, match="inside session"):
        Conversation(Session(id="s"), (Message(session_id="t", position=0, role="user"),))


def test_non_finite_time_is_refused() -> None:
    """Session times must be finite epoch seconds."""
    with pytest.raises(ValueError, match="between the years"):
        Session(id="s", started_at=math.nan)


def test_unknown_role_is_refused() -> None:
    """Only the four known roles are accepted."""
    with pytest.raises(ValueError):
        Message(session_id="s", position=0, role="robot", content="")  # type: ignore[arg-type]


def test_millisecond_epoch_is_refused() -> None:
    """Epoch milliseconds (a common mistake) are outside the years a date can show."""
    with pytest.raises(ValueError, match="between the years"):
        Session(id="s", started_at=1.7e12)
