"""Tests of record validation."""

from __future__ import annotations

import math

import pytest

from harkback.stages.records import Conversation, Message, Session
from harkback.stages.storable import storable


def test_two_messages_at_one_position_are_refused() -> None:
    """A conversation cannot hold two messages at the same position."""
    with pytest.raises(ValueError, match="position 0"):
        Conversation(Session(id="s"), (
            Message(session_id="s", position=0, role="user", content="one"),
            Message(session_id="s", position=0, role="user", content="two")))


@pytest.mark.parametrize("position", [1.5, 2.0, True, 2**31, 2**70])
def test_a_position_no_store_can_hold_is_refused_at_ingest(position: object) -> None:
    """A message's position is a whole number that every store's column holds: 1.5 was
    stored as a float by SQLite (its ``show --around s:1.5`` hint found nothing), and
    2 ** 70 raised SQLite's OverflowError from inside ``ingest``."""
    odd = Conversation(Session(id="s"), (
        Message(session_id="s", position=position, role="user"),))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"messages\[0\]\.position: must be a whole number"):
        storable([odd])


def test_a_position_that_is_no_number_is_refused_as_the_message_is_made() -> None:
    """``"3"`` failed inside a comparison, naming no field."""
    with pytest.raises(TypeError, match="'position' must be a whole number"):
        Message(session_id="s", position="3", role="user")  # type: ignore[arg-type]


def test_the_last_position_a_store_holds_is_taken() -> None:
    """The largest position PostgreSQL's INTEGER column holds is still a position."""
    last = Conversation(Session(id="s"), (Message(session_id="s", position=2**31 - 1,
                                                  role="user"),))
    assert storable([last])[0].messages[0].position == 2**31 - 1


@pytest.mark.parametrize("role", ["x", "x" * 10_000])
def test_a_role_no_message_has_is_refused_in_one_short_line_naming_field_and_value(
        role: str) -> None:
    """``Message(role="x")``'s error is one line naming the field and the value, cut when
    long: attrs' whole ``Attribute(name='role', default=NOTHING, ...)`` repr was among its
    arguments, and ``str()`` of the error (what a traceback prints) showed them all."""
    with pytest.raises(ValueError) as refused:
        Message(session_id="s", position=0, role=role)  # type: ignore[arg-type]
    (line,) = refused.value.args
    assert line == str(refused.value)
    assert line.startswith("'role' must be in ('user', 'assistant', 'tool', 'system')")
    assert repr(role)[:20] in line and len(line) < 200


def test_a_time_that_is_no_epoch_is_refused_in_a_short_line() -> None:
    """A huge value given as a session's time is named cut, not whole."""
    with pytest.raises(ValueError) as refused:
        Session(id="s", started_at="9" * 10_000)  # type: ignore[arg-type]
    assert str(refused.value).startswith("started_at must be epoch seconds")
    assert len(str(refused.value)) < 200


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
