"""One session being read from a transcript file: its turns as a format reads them, and the
conversation they make, with the project line and the parent a sub-agent is linked to
(:mod:`~harkback.adapters.sources.transcripts` reads the files).

>>> t = Transcript("s1", cwd="/w/app")
>>> t.add("user", "hi")
>>> t.conversation(source="demo").messages[0].content
'hi\\n\\n[project: /w/app]'
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from harkback.adapters.sources import importing
from harkback.adapters.sources.importing import Tally
from harkback.adapters.sources.transcript_lines import plausible_time
from harkback.stages.project_note import project_note
from harkback.stages.records import Conversation, Message, Role, Session, ToolCall


def text_of(value: object) -> str:
    """``value`` when it is a string, else ``""`` (transcript fields may hold anything)."""
    return value if isinstance(value, str) else ""


@attrs.frozen
class Turn:
    """A message as read, before its session id and position are final."""

    role: Role
    content: str = ""
    calls: tuple[ToolCall, ...] = ()
    tool_name: str = ""
    call_id: str = ""
    when: float | None = None


@attrs.define
class Transcript:
    """One session being read: its turns so far and what names it.

    ``id`` and ``parent`` may change while reading (a format that learns them from a
    metadata line sets them before :meth:`conversation`).
    """

    id: str
    parent: str | None = None
    turns: list[Turn] = attrs.field(factory=list)
    tools: dict[str, str] = attrs.field(factory=dict)
    times: list[float] = attrs.field(factory=list)
    cwd: str = ""
    branch: str = ""
    model: str = ""
    more: list[str] = attrs.field(factory=list)
    """Lines :meth:`extend` added to the last turn, joined to it once (:meth:`settled`)."""
    more_calls: list[ToolCall] = attrs.field(factory=list)

    def time(self, value: object, tally: Tally) -> float | None:
        """The epoch of a line's time (see :func:`plausible_time`), kept for the session's
        span."""
        when = plausible_time(value, tally)
        if when is not None:
            self.times.append(when)
        return when

    def add(self, role: Role, content: str = "", *, calls: tuple[ToolCall, ...] = (),
            tool_name: str = "", tool_call_id: str = "", when: float | None = None) -> None:
        """Add a turn."""
        self.settled()
        self.turns.append(Turn(role, content, calls, tool_name, tool_call_id, when))

    def extend(self, content: str, calls: tuple[ToolCall, ...]) -> None:
        """Add ``content`` (as a line) and ``calls`` to the last turn, which must exist."""
        # Kept aside and joined once: a reply written as 20,000 blocks took 16 s to import
        # when each block joined the whole text so far again.
        if content:
            self.more.append(content)
        self.more_calls.extend(calls)

    def settled(self) -> list[Turn]:
        """The turns, the lines and calls :meth:`extend` added joined to the last one.

        >>> t = Transcript("s")
        >>> t.add("assistant", "a")
        >>> t.extend("b", ())
        >>> t.extend("", ())
        >>> t.extend("c", ())
        >>> [turn.content for turn in t.settled()]
        ['a\\nb\\nc']
        """
        if self.more or self.more_calls:
            last = self.turns[-1]
            merged = "\n".join(t for t in (last.content, *self.more) if t)
            self.turns[-1] = attrs.evolve(last, content=merged,
                                          calls=last.calls + tuple(self.more_calls))
            self.more.clear()
            self.more_calls.clear()
        return self.turns

    def tool_call(self, call_id: str, name: str, arguments: str, tally: Tally) -> ToolCall:
        """A tool call, its name kept so that its result can be named after it; arguments
        longer than tool output may be are clipped as it is (a ``Write`` of a 5 MB file was
        stored, and indexed, whole), counted in ``tally``."""
        self.tools[call_id] = name
        return ToolCall(id=call_id, name=name,
                        arguments=importing.clip_arguments(arguments, tally))

    def tool_result(self, call_id: str, output: str, when: float | None, tally: Tally, *,
                    empty: str) -> None:
        """Add a tool's output (clipped when long); empty output is counted as ``empty``."""
        text, clipped = importing.clip_tool_output(output)
        if clipped:
            tally.add("tool output clipped")
        if not text.strip():
            tally.add(empty)
            return
        self.add("tool", text, tool_name=self.tools.get(call_id, ""), tool_call_id=call_id,
                 when=when)

    def conversation(self, *, source: str, title: str = "", started: float | None = None,
                     project: bool = True) -> Conversation:
        """The session read; ``project`` adds its folder under its first request.

        The folder is the session's ``project`` either way (a sub-agent works where its
        parent does). It starts at ``started`` when given, else at the earliest time read.
        """
        messages = tuple(Message(session_id=self.id, position=i, role=t.role, content=t.content,
                                 tool_calls=t.calls, tool_name=t.tool_name,
                                 tool_call_id=t.call_id, timestamp=t.when)
                         for i, t in enumerate(self.settled()))
        if project and self.cwd:
            messages = with_project(messages, project_note(self.cwd, self.branch))
        session = Session(id=self.id, source=source, model=self.model, title=title,
                          started_at=started if started is not None else min(self.times,
                                                                              default=None),
                          ended_at=max(self.times, default=None), parent_session_id=self.parent,
                          project=self.cwd)
        return Conversation(session, messages)


def with_project(messages: Sequence[Message], note: str) -> tuple[Message, ...]:
    """``messages`` with ``note`` added as the last line of the first user message.

    Search covers message text, titles and sources (not the folder), and a plain search
    covers user and assistant messages, so the project folder goes where a default search
    sees it: under the request that opened the session (a session without one is left as
    it is).
    """
    for index, message in enumerate(messages):
        if note and message.role == "user":
            content = f"{message.content}\n\n{note}" if message.content else note
            return (*messages[:index], attrs.evolve(message, content=content),
                    *messages[index + 1:])
    return tuple(messages)
