"""Rewriting what a store holds through a text function: the optional ``text_rewriter``
capability of :class:`~harkback.stages.ports.SessionStore` (``harkback redact`` uses it to
take secrets out of a store built before redaction existed).

A store applies the function to every session title and project, message content and tool-call
arguments, stores each changed session again as an ingest does (so the full-text index
follows and the vectors of changed messages go), and drops every cached summary whose
text, note or query the function changes, and every one cached under a changed session or
any of its ancestors (a model's summary may paraphrase what the function took out).

>>> from harkback.stages.records import Conversation, Message, Session
>>> chat = Conversation(Session(id="s", title="hi"),
...                     (Message(session_id="s", position=0, role="user", content="abc"),))
>>> rewrite_conversation(chat, str.upper)[0].messages[0].content
'ABC'
>>> rewrite_conversation(chat, str)[0] is chat
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol

import attrs
from returns.future import FutureResult

from harkback.stages.errors import StoreUnavailable
from harkback.stages.records import Conversation, Message, Session

Edit = Callable[[str], str]
"""A text function: returns its argument unchanged (the same text) when it has nothing to do."""


@attrs.frozen(kw_only=True)
class RewriteReport:
    """What a rewrite changed (or, in a dry run, would change)."""

    sessions: int = 0
    messages: int = 0
    titles: int = 0
    summaries_dropped: int = 0
    notes: tuple[str, ...] = ()
    """What the store could not do and what that leaves (old copies it could not clear)."""


class TextRewriter(Protocol):
    """A store's texts rewritten in place (see the module)."""

    def rewrite_texts(self, edit: Edit, *, dry_run: bool = False
                      ) -> FutureResult[RewriteReport, StoreUnavailable]:
        """Apply ``edit`` to every stored text; with ``dry_run`` change nothing, only count."""
        ...


def rewrite_message(message: Message, edit: Edit) -> Message:
    """``message`` with ``edit`` applied to its content and tool-call arguments (the same
    object when nothing changed)."""
    content = edit(message.content)
    calls = tuple(attrs.evolve(c, arguments=edit(c.arguments)) if c.arguments else c
                  for c in message.tool_calls)
    if content == message.content and calls == message.tool_calls:
        return message
    return attrs.evolve(message, content=content, tool_calls=calls)


def rewrite_conversation(conversation: Conversation, edit: Edit
                         ) -> tuple[Conversation, RewriteReport]:
    """``conversation`` with ``edit`` applied to its title, project and messages, and what
    changed (the same object when nothing did)."""
    session = conversation.session
    title, project = edit(session.title), edit(session.project)
    messages = tuple(rewrite_message(m, edit) for m in conversation.messages)
    changed = sum(1 for new, old in zip(messages, conversation.messages, strict=True)
                  if new is not old)
    if title == session.title and project == session.project and not changed:
        return conversation, RewriteReport()
    report = RewriteReport(sessions=1, messages=changed, titles=int(title != session.title))
    return Conversation(attrs.evolve(session, title=title, project=project), messages), report


def rewrite_sessions(sessions: Iterable[Session], messages: Iterable[Message], edit: Edit
                     ) -> tuple[list[Conversation], RewriteReport]:
    """The conversations of ``sessions`` (with their ``messages``, in order) that ``edit``
    changes, rewritten, and what changed in all.

    >>> from harkback.stages.records import Session
    >>> changed, report = rewrite_sessions([Session(id="s", title="hi"), Session(id="t")], [
    ...     Message(session_id="s", position=0, role="user", content="a")], str.upper)
    >>> [c.session.title for c in changed], report.titles, report.messages
    (['HI'], 1, 1)
    """
    by_session: dict[str, list[Message]] = {}
    for message in messages:
        by_session.setdefault(message.session_id, []).append(message)
    changed: list[Conversation] = []
    report = RewriteReport()
    for session in sessions:
        old = Conversation(session, tuple(by_session.get(session.id, ())))
        new, counts = rewrite_conversation(old, edit)
        report = added(report, counts)
        if new is not old:
            changed.append(new)
    return changed, report


def changes_summary(edit: Edit, query: str, text: str, note: str) -> bool:
    """Whether ``edit`` changes a cached summary's text, note or question. The question is
    kept case-folded, where a rule for an upper-case secret (``AKIA...``) finds nothing,
    and a harkback before ``key_query`` cached such questions: it is tried upper-cased too
    (a row dropped wrongly only costs a model call again).

    >>> changes_summary(lambda t: t.replace("AKIA", "[secret]"), "key akia7", "", "")
    True
    """
    return any(edit(kept) != kept for kept in (text, note, query, query.upper()))


def added(a: RewriteReport, b: RewriteReport) -> RewriteReport:
    """Both reports' counts added up.

    >>> added(RewriteReport(messages=1), RewriteReport(messages=2, titles=1)).messages
    3
    """
    return RewriteReport(**{f.name: getattr(a, f.name) + getattr(b, f.name)
                            for f in attrs.fields(RewriteReport)})
