"""The checks a record's fields pass when it is made: roles, positions, epoch seconds, ids.

Every message a search loads is made through them (a few hundred a search), so each is a
plain function: ``attrs.validators.ge`` and ``in_`` call through an object of their own
and took a message from ~2.8 to ~4.4 us to make. They fail as those did, word for word,
with a caller's value cut (:func:`briefly`).
Two more are not made at construction (a store's rows may hold what they find, written by
an older harkback): :func:`nul_key` and :func:`position_problem` (:func:`unheld` asks both),
which every store's ingest asks of a conversation before writing it.

>>> from harkback.stages.records import Message
>>> Message(session_id="s", position=-1, role="user")
Traceback (most recent call last):
ValueError: 'position' must be >= 0: -1
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal

import attrs

from harkback.stages.shown_number import shown_number, shown_value

if TYPE_CHECKING:
    from harkback.stages.records import Conversation

Role = Literal["user", "assistant", "tool", "system"]
ROLES: tuple[Role, ...] = ("user", "assistant", "tool", "system")

EARLIEST_EPOCH = -62_135_596_800.0
"""0001-01-01T00:00:00Z: the first moment Python's datetime can show."""
LATEST_EPOCH = 253_402_300_799.0
"""9999-12-31T23:59:59Z: the last moment Python's datetime can show."""


def briefly(value: object) -> str:
    """A caller's value as an error names it, by the rule of every echo of what someone
    gave (:func:`~harkback.stages.shown_number.shown_value`): cut to 60 characters.

    >>> briefly("cli"), briefly("x" * 100)[-6:], briefly({"parts": "x" * 99})[-3:]
    ("'cli'", "xxxx…'", 'xx…')
    """
    return shown_value(value)


def is_epoch(value: object) -> bool:
    """True for epoch seconds that a date can be made of (finite, years 1 to 9999).

    >>> is_epoch(1_772_547_300), is_epoch(1.7e12), is_epoch(float("nan"))
    (True, False, False)
    """
    return (isinstance(value, int | float) and not isinstance(value, bool)
            and math.isfinite(value) and EARLIEST_EPOCH <= value <= LATEST_EPOCH)


def epoch_or_none(_inst: object, attribute: attrs.Attribute[float | None], value: object) -> None:
    """A time: None or :func:`is_epoch` seconds."""
    if value is not None and not is_epoch(value):
        raise ValueError(f"{attribute.name} must be epoch seconds between the years 1 and 9999, "
                         f"got {briefly(value)}")


def non_empty(_inst: object, attribute: attrs.Attribute[str], value: str) -> None:
    """An id: not empty."""
    if not value:
        raise ValueError(f"{attribute.name} must not be empty")


MOST_POSITION = 2**31 - 1
"""The last position every store can hold (PostgreSQL's ``INTEGER`` column)."""


def at_least_zero(_inst: object, attribute: attrs.Attribute[int], value: int) -> None:
    """A position: 0 or more (as ``attrs.validators.ge(0)``). Whether a store can hold it is
    :func:`position_problem`'s to say at ingest: a record read back from a store written
    by an older harkback (``1.5``, ``2 ** 40``) must still be one."""
    if not isinstance(value, int | float):
        raise TypeError(f"'{attribute.name}' must be a whole number (int), got {value!r}"[:200])
    if not value >= 0:
        raise ValueError(f"'{attribute.name}' must be >= 0: {shown_number(value)}")


def position_problem(conversation: Conversation) -> tuple[str, str] | None:
    """Where ``conversation`` holds a message position no store can hold, and why; None when
    nowhere. A float (``1.5``) or a bool was stored as it was, and ``show``'s ``--around
    s:1.5`` could not find it; 2 ** 70 raised SQLite's OverflowError from inside ingest.

    >>> from harkback.stages.records import Conversation, Message, Session
    >>> position_problem(Conversation(Session(id="s"), (
    ...     Message(session_id="s", position=1.5, role="user"),)))[1][-24:]
    'store can hold), got 1.5'
    """
    for at, message in enumerate(conversation.messages):
        position = message.position
        if type(position) is not int or position > MOST_POSITION:  # a bool is an int too
            return (f"messages[{at}].position", f"must be a whole number from 0 to "
                    f"{MOST_POSITION} (what every store can hold), got "
                    f"{briefly(position)}")
    return None


def unheld(conversation: Conversation) -> tuple[str, str] | None:
    """What of ``conversation`` no store can hold (:func:`nul_key`, then
    :func:`position_problem`), as they name it; None when nothing."""
    return nul_key(conversation) or position_problem(conversation)


def a_role(_inst: object, attribute: attrs.Attribute[Role], value: object) -> None:
    """One of :data:`ROLES`, said as ``attrs.validators.in_(ROLES)`` says it, in one line
    with the value cut (``in_`` also gave the field's whole ``Attribute`` as an argument,
    which a traceback printed).

    >>> from harkback.stages.records import Message
    >>> Message(session_id="s", position=0, role="x")
    Traceback (most recent call last):
    ValueError: 'role' must be in ('user', 'assistant', 'tool', 'system') (got 'x')
    """
    if value not in ROLES:
        raise ValueError(f"'{attribute.name}' must be in {ROLES!r} (got {briefly(value)})")




def nul_key(conversation: Conversation) -> tuple[str, str] | None:
    """Where ``conversation`` holds a NUL character in a text used as a key or a filter
    (its id, parent, source, project; a tool call's id), named as the ingest format names
    the field, and why that is refused; None when nowhere.

    SQLite's JSON lists and text functions end a text at a NUL: such a session was stored
    and then could not be read by its id, and searches left it out without a word.

    >>> from harkback.stages.records import Conversation, Message, Session
    >>> nul_key(Conversation(Session(id="s", source="cli\\x00x"))), nul_key(Conversation(
    ...     Session(id="s"), (Message(session_id="s", position=0, role="user"),)))
    (('source', 'a source or project name cannot hold a NUL character'), None)
    """
    session = conversation.session
    for name in ("id", "parent_session_id", "source", "project"):
        value = getattr(session, name)
        if isinstance(value, str) and "\x00" in value:
            return name, (f"a {'session id' if name.endswith('id') else 'source or project name'}"
                          " cannot hold a NUL character")
    for message in conversation.messages:  # the place is named only when found: ingest's path
        if "\x00" in message.tool_call_id:
            return (f"messages[{message.position}].tool_call_id",
                    "a tool call id cannot hold a NUL character")
        for at, call in enumerate(message.tool_calls):
            if "\x00" in call.id:
                return (f"messages[{message.position}].tool_calls[{at}].id",
                        "a tool call id cannot hold a NUL character")
    return None
