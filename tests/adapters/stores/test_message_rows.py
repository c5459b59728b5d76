"""A store's message rows made into records (``sql.rows.message_from_row``): the records
``Message(...)`` makes, made without its ``__init__`` when the row holds what it checks."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harkback.adapters.stores.sql.rows import message_from_row, settable
from harkback.adapters.stores.sql.tool_calls import encode_tool_calls
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.stages.long_text import LONGEST_READ
from harkback.stages.message_window import WindowQuery
from harkback.stages.records import ROLES, Conversation, Message, Session, ToolCall
from tests.adapters.stores.store_contract import ok


def _fresh(message: Message) -> Message:
    return Message(**attrs.asdict(message, recurse=False))


async def test_a_stored_row_is_made_without_init_and_an_odd_one_through_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows of a real file: the ordinary ones skip ``Message.__init__`` (its keyword call
    and validators were half of each message's cost, ~200 a search); a position 1.5 an
    older harkback stored goes through it. Every record equals, and hashes as, the one
    ``Message(...)`` makes of its fields, and stays frozen."""
    db = tmp_path / "harkback.db"
    call = ToolCall(id="c1", name="bash", arguments="docker network ls")
    with SqliteStore.open(db).unwrap() as writer:
        await ok(writer.ingest([Conversation(Session(id="s1", started_at=1.0), (
            Message(session_id="s1", position=0, role="user", content="bridge down",
                    timestamp=1_770_000_000.5),
            Message(session_id="s1", position=1, role="assistant", tool_calls=(call,)),
            Message(session_id="s1", position=2, role="tool", content="ok", tool_name="bash",
                    tool_call_id="c1", timestamp=1_770_000_001.0)))]))
    with sqlite3.connect(db) as connection:  # as an older harkback stored it
        connection.execute("UPDATE messages SET position = 1.5 WHERE position = 2")
    connection.close()
    made: list[object] = []
    init = Message.__init__

    def watched(self: Message, **fields: Any) -> None:
        made.append(fields["position"])
        init(self, **fields)

    monkeypatch.setattr(Message, "__init__", watched)
    with SqliteStore.open(db, readonly=True).unwrap() as reader:
        read = await ok(reader.messages(["s1"]))
        loaded = await ok(reader.messages(["s1"], LONGEST_READ))
        window = (await ok(reader.message_window(WindowQuery(session_id="s1", limit=10)))).messages
    assert made == [1.5, 1.5, 1.5]
    monkeypatch.undo()
    assert [m.position for m in read] == [0, 1, 1.5]
    assert read[1].tool_calls == (call,)
    assert loaded == read and window == read
    for message in read:
        assert message == _fresh(message) and hash(message) == hash(_fresh(message))
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            message.content = "changed"  # type: ignore[misc]


def _outcome(make: Any) -> tuple[str, object]:
    try:
        message = make()
    except (TypeError, ValueError) as error:
        return type(error).__name__, str(error)
    return "made", (message, tuple(type(v) for v in attrs.astuple(message, recurse=False)))


@settings(max_examples=300, deadline=None)
@given(session_id=st.sampled_from(["s1", "", "會話", "s\x00"]),
       position=st.one_of(st.integers(-2, 2**40), st.sampled_from([1.5, -0.5, math.nan, True])),
       role=st.sampled_from([*ROLES, "robot", ""]),
       calls=st.sampled_from([None, "", encode_tool_calls((ToolCall(id="c", name="n"),))]),
       timestamp=st.one_of(st.none(), st.floats(allow_nan=True), st.integers(-10**12, 10**13),
                           st.sampled_from([True, 253_402_300_799.0, -62_135_596_800.0])))
def test_any_row_gives_what_message_gives(session_id: str, position: object, role: str,
                                          calls: str | None, timestamp: object) -> None:
    """A guard beside the test above: whatever a row holds (positions and times no ingest
    writes today included), the record, its fields' types, or the error (type and words)
    are those ``Message(...)`` gives."""
    row = (session_id, position, role, "text", "", "", calls, timestamp)
    fields: dict[str, Any] = dict(
        session_id=session_id, position=position, role=role, content="text", tool_name="",
        tool_call_id="", timestamp=timestamp,
        tool_calls=(ToolCall(id="c", name="n"),) if calls else ())
    assert _outcome(lambda: message_from_row(row)) == _outcome(lambda: Message(**fields))


def _no_nul(_inst: object, attribute: attrs.Attribute[str], value: str) -> None:
    if "\x00" in value:
        raise ValueError(f"{attribute.name} holds a NUL")


def test_a_field_or_check_added_to_message_turns_the_shortcut_off() -> None:
    """Setting slots skips Message's validators: it is right only while the inline
    checks are all of them. A copy of Message keeps the shortcut; one whose content
    gains a check, or with one more field, does not (the check would have been
    skipped, the field left unset)."""
    def copy(content: Any = None, **more: Any) -> type[Message]:
        fields = {a.name: attrs.field(default=a.default, validator=a.validator)
                  for a in attrs.fields(Message)}
        if content is not None:
            fields["content"] = attrs.field(default="", validator=content)
        made: type[Message] = attrs.make_class("Variant", {**fields, **more}, frozen=True,
                                               kw_only=True)
        return made

    assert (settable(copy()), settable(copy(_no_nul)),
            settable(copy(source=attrs.field(default="")))) == (True, False, False)


@pytest.mark.parametrize("stored", [
    '[{}]', '[{"id": "c1", "function": {}}]', '[null]', '{"id": "c1"}',
    '[{"id": 1, "function": {"name": null, "arguments": {}}}]', "[" * 100_000 + "]" * 100_000])
def test_stored_tool_calls_that_hold_no_call_are_a_damaged_row(stored: str) -> None:
    """Another program's ``tool_calls``, JSON but no list of calls: a KeyError, a
    RecursionError or calls of numbers and nulls (failing only when printed) escaped as an
    internal error; now the ValueError the store says as a damaged row."""
    row = ("s1", 0, "assistant", "", "", "", stored, None)
    with pytest.raises(ValueError, match=r"^its tool calls are stored as no list of calls$"):
        message_from_row(row)
