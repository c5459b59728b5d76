"""Immutable records that flow between the stages.

Every record is a frozen ``attrs`` class; collections inside are tuples. Outside
shapes (database rows, JSON lines) enter through the named constructors in
:mod:`harkback.stages.ingest_format` and the adapters, never ``Record(**row)``.

>>> s = Session(id="s1", source="cli", started_at=1.0)
>>> s.is_root
True
"""

from __future__ import annotations

import operator
import re
from typing import Any, Literal, TypeVar

import attrs

from harkback.stages.record_checks import EARLIEST_EPOCH as EARLIEST_EPOCH
from harkback.stages.record_checks import LATEST_EPOCH as LATEST_EPOCH
from harkback.stages.record_checks import ROLES as ROLES
from harkback.stages.record_checks import Role as Role
from harkback.stages.record_checks import a_role, at_least_zero, briefly, epoch_or_none, non_empty
from harkback.stages.record_checks import is_epoch as is_epoch

_R = TypeVar("_R", "Session", "Message", "ToolCall")
SummaryKind = Literal["llm", "extractive", "raw", "none"]


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def mended(text: str) -> str:
    """``text`` as UTF-8 can hold it: each lone surrogate (half of a character, as
    ``json.loads`` gives for ``"\\ud83d"``) made U+FFFD, as every reader of harkback does.

    >>> mended("cut \\ud83d here"), mended("caf\\u00e9 \\U0001f600")
    ('cut \ufffd here', 'caf\xe9 \U0001f600')
    """
    if not isinstance(text, str) or text.isascii():  # not text: left to the caller's checks
        return text
    return _LONE_SURROGATE.sub("\ufffd", text)


@attrs.frozen
class ToolCall:
    """One function call an assistant turn asked for.

    >>> ToolCall(id="c1", name="bash", arguments='{"cmd": "ls"}').name
    'bash'
    """

    id: str
    name: str
    arguments: str = ""


@attrs.frozen(kw_only=True)
class Session:
    """One stored conversation segment; ``parent_session_id`` links it to its lineage.

    ``project`` is the folder the session worked in when its source says so (a Claude
    Code or Codex working directory), else empty.

    >>> Session(id="child", parent_session_id="root").is_root
    False
    """

    id: str = attrs.field(validator=non_empty)
    source: str = ""
    model: str = ""
    title: str = ""
    started_at: float | None = attrs.field(default=None, validator=epoch_or_none)
    ended_at: float | None = attrs.field(default=None, validator=epoch_or_none)
    parent_session_id: str | None = None
    end_reason: str = ""
    project: str = ""

    @property
    def is_root(self) -> bool:
        """True when the session has no parent."""
        return self.parent_session_id is None

    def text_for_search(self) -> str:
        """The text the title index sees: the title, the source, then the project's name
        (:func:`project_name`: the name ``search --project`` matches).

        >>> Session(id="s", source="codex", title="CORS fix").text_for_search()
        'CORS fix\\ncodex'
        >>> Session(id="s", title="Fix", project="/home/me/code/mobile-app/").text_for_search()
        'Fix\\nmobile-app'
        """
        return "\n".join(p for p in (self.title, self.source, project_name(self.project)) if p)


_HOME = re.compile(r"(?:/home|/Users|/usr/home|[A-Za-z]:/Users)/[^/]+|/root|~", re.IGNORECASE)
"""A home folder itself: a session started there worked in no project."""


def project_name(folder: str) -> str:
    """A project folder's last name, which a project is asked for by (``--project api``).

    A Windows folder (Codex, Claude Code there) is named by its last name too: its whole
    path indexed "users" and the user's name in every session there. A home folder names
    no project: its name is the user's ("user", "max", "will"), and every session started
    there covered that word of a question ("add a user to the docker group").

    >>> project_name("/home/me/code/api/"), project_name("api"), project_name("")
    ('api', 'api', '')
    >>> project_name("C:\\\\Users\\\\max\\\\notes"), project_name("/home/user")
    ('notes', '')
    >>> project_name("/Users/max/"), project_name("~"), project_name("/root/x")
    ('', '', 'x')
    """
    path = folder.replace("\\", "/").rstrip("/")
    return "" if _HOME.fullmatch(path) else path.rsplit("/", 1)[-1]


@attrs.frozen
class SessionLink:
    """What the walk to a lineage's root reads of a session: its parent, its source (a
    lineage is hidden or demoted by its root's) and its start (a loop of parents names its
    earliest). The rest of a :class:`Session` is left unread: the ranker walks the
    lineages of a few hundred candidates a search (``SessionStore.session_links``).

    >>> SessionLink.of(Session(id="b", source="cli", title="t", parent_session_id="a"))
    SessionLink(id='b', parent_session_id='a', source='cli', started_at=None)
    """

    id: str
    parent_session_id: str | None = None
    source: str = ""
    started_at: float | None = None

    @classmethod
    def of(cls, session: Session) -> SessionLink:
        """The link of a whole ``session``."""
        return cls(session.id, session.parent_session_id, session.source, session.started_at)


@attrs.frozen(kw_only=True)
class Message:
    """One turn of a session, identified by its ``position`` within the session.

    >>> Message(session_id="s1", position=0, role="user", content="hi").text_for_search()
    'hi'
    """

    session_id: str = attrs.field(validator=non_empty)
    position: int = attrs.field(validator=at_least_zero)
    role: Role = attrs.field(validator=a_role)
    content: str = ""
    tool_name: str = ""
    tool_call_id: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    timestamp: float | None = attrs.field(default=None, validator=epoch_or_none)

    def text_for_search(self) -> str:
        """The text the index sees: content, tool name and tool-call names and arguments."""
        parts = [self.content]
        if self.tool_name:
            parts.append(self.tool_name)
        for call in self.tool_calls:
            parts.append(call.name)
            parts.append(call.arguments)
        return "\n".join(p for p in parts if p)


@attrs.frozen
class Conversation:
    """A session with all of its messages, as ingested.

    >>> Conversation(Session(id="s"), ()).session.id
    's'
    """

    session: Session
    messages: tuple[Message, ...] = ()

    def mended(self) -> Conversation:
        """This conversation with every text :func:`mended` (itself when none needs it).

        >>> Conversation(Session(id="s\\ud800")).mended().session.id
        's\ufffd'
        """
        session = _texts_mended(self.session, _SESSION_TEXTS,
                                f"session {briefly(self.session.id)}")
        messages = tuple(m if _plain(m) else _message_mended(m) for m in self.messages)
        if session is self.session and all(map(operator.is_, messages, self.messages)):
            return self
        return Conversation(session, messages)

    def __attrs_post_init__(self) -> None:
        positions = set()
        for message in self.messages:
            if message.session_id != self.session.id:
                raise ValueError(
                    f"message of session {message.session_id!r} inside session {self.session.id!r}"
                )
            if message.position in positions:
                raise ValueError(f"two messages at position {message.position} in session "
                                 f"{self.session.id!r}")
            positions.add(message.position)


_SESSION_TEXTS = ("id", "source", "model", "title", "parent_session_id", "end_reason",
                  "project")
_MESSAGE_TEXTS = ("session_id", "content", "tool_name", "tool_call_id")
_CALL_TEXTS = ("id", "name", "arguments")


def _texts_mended(record: _R, names: tuple[str, ...], where: str) -> _R:
    changes: dict[str, Any] = {}
    for name in names:
        value = getattr(record, name)
        if not isinstance(value, str):
            if value is None and name == "parent_session_id":  # a root session
                continue
            raise TypeError(f"{type(record).__name__}.{name} must be text (str), got "
                            f"{briefly(value)} ({where})")
        if not value.isascii() and _LONE_SURROGATE.search(value):
            changes[name] = mended(value)
    return attrs.evolve(record, **changes) if changes else record


def _plain(message: Message) -> bool:
    # ASCII holds no surrogate; each text's isascii reads a flag, half the cost of joining them
    # first. Anything but a str, tuple, ToolCall (None, a subclass) goes the long way.
    calls = message.tool_calls
    if type(calls) is not tuple:
        return False
    for text in (message.content, message.session_id, message.tool_name, message.tool_call_id):
        if type(text) is not str or not text.isascii():
            return False
    for call in calls:  # a third of messages carry calls
        if type(call) is not ToolCall:
            return False
        for text in (call.id, call.name, call.arguments):
            if type(text) is not str or not text.isascii():
                return False
    return True


def _message_mended(message: Message) -> Message:
    where = f"session {briefly(message.session_id)}, message {message.position}"
    if not isinstance(message.tool_calls, tuple | list) or not all(
            isinstance(c, ToolCall) for c in message.tool_calls):
        raise TypeError(f"Message.tool_calls must be a tuple of ToolCall records, got "
                        f"{briefly(message.tool_calls)} ({where})")
    calls = tuple(_texts_mended(c, _CALL_TEXTS, f"{where}, tool call") for c in
                  message.tool_calls)
    message = _texts_mended(message, _MESSAGE_TEXTS, where)
    if all(map(operator.is_, calls, message.tool_calls)):
        return message
    return attrs.evolve(message, tool_calls=calls)


@attrs.frozen(kw_only=True)
class MessageHit:
    """A message that matched a query, with the store's relevance score (higher is better).

    ``timestamp`` is when the message was written: its own stamp, else its session's
    start (the time the stores' ``since``/``until`` filters read), None when neither is known.
    ``content`` is the text searched (:meth:`Message.text_for_search`), or its first
    :data:`~harkback.stages.long_text.LONGEST_READ` characters when longer; ``length`` is
    then the whole text's length in index tokens (the store's count), so a ranker can weigh
    the part it reads as a sample of the whole (None: ``content`` is the whole text).
    """

    session_id: str
    position: int
    role: Role
    content: str
    score: float
    timestamp: float | None = None
    source: str = ""
    length: int | None = None


@attrs.frozen(kw_only=True)
class TitleHit:
    """A session whose title, source or project's name matched a query, with the store's
    relevance score (higher is better) and the session's start (the time the stores'
    filters read).

    >>> TitleHit(session_id="s1", title="CORS fix for the API", source="cli", score=2.0).title
    'CORS fix for the API'
    """

    session_id: str
    title: str
    source: str = ""
    score: float
    started_at: float | None = None
    project: str = ""
    """The session's project folder (its name is searched beside the title)."""


@attrs.frozen(kw_only=True)
class Candidate:
    """A lineage root chosen for recall, with every hit that its lineage contributed."""

    root: Session
    hits: tuple[MessageHit, ...]
    lineage: tuple[Session, ...] = ()

    @property
    def best_score(self) -> float:
        """The highest score among the candidate's hits."""
        return max((h.score for h in self.hits), default=0.0)


@attrs.frozen(kw_only=True)
class Transcript:
    """A candidate's conversation rendered as text and cut to a budget around the matches."""

    candidate: Candidate
    text: str
    full_chars: int
    truncated: bool
    preview: str = ""
    """The root's first request on one line (:mod:`~harkback.stages.first_request`), as
    ``recent`` lists it: what tells an untitled result apart."""


@attrs.frozen(kw_only=True)
class TokenUsage:
    """Tokens a model call consumed."""

    prompt: int = 0
    completion: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(prompt=self.prompt + other.prompt,
                          completion=self.completion + other.completion)


@attrs.frozen(kw_only=True)
class Summary:
    """A recall of one session, and how it was made."""

    text: str
    kind: SummaryKind
    note: str = ""
    usage: TokenUsage = attrs.field(factory=TokenUsage)
    cited_messages: tuple[int, ...] = ()


@attrs.frozen(kw_only=True)
class RerankReport:
    """What a rerank stage did: candidates shown, kept, model calls and their cost.

    ``note`` says why the lexical order stands for some or all candidates (empty when
    the model's judgement was used throughout).

    >>> RerankReport(shown=20, kept=4, calls=4).cached_calls
    0
    """

    shown: int = attrs.field(validator=attrs.validators.ge(0))
    kept: int = attrs.field(validator=attrs.validators.ge(0))
    calls: int = attrs.field(default=0, validator=attrs.validators.ge(0))
    cached_calls: int = attrs.field(default=0, validator=attrs.validators.ge(0))
    usage: TokenUsage = attrs.field(factory=TokenUsage)
    note: str = ""
    model_order: bool = True
    """Whether the model's answer set the order of any batch (False: it set none, and the
    lexical order stands throughout; ``note`` says why)."""


@attrs.frozen(kw_only=True)
class Summarized:
    """One transcript with its summary."""

    transcript: Transcript
    summary: Summary


@attrs.frozen(kw_only=True)
class SessionOverview:
    """A root session as listed by recent mode."""

    session: Session
    message_count: int
    preview: str
