"""Replace secrets by typed placeholders: one pass over a text, counts by kind.

:func:`redact` lowercases the text once and looks for each rule's triggers (plain
substring scans); when none is there (most messages) the text comes back as it was.
Otherwise the rules whose triggers are present are joined into one alternation (compiled
once per combination and kept) and applied in one ``re.sub`` pass.

>>> text, counts = redact('db = "postgres://app:hunter2@db.internal:5432/prod"')
>>> text, counts.by_kind
('db = "postgres://app:[secret:password]@db.internal:5432/prod"', (('password', 1),))
>>> redact("password reset link sent")
('password reset link sent', SecretCounts(by_kind=()))
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

import attrs

from harkback.stages.records import Conversation, Message, Session
from harkback.stages.redact.rules import PLACEHOLDER, RULES, TOKENS

_NAMED = re.compile(r"\(\?P<(\w+)>|\(\?P=(\w+)\)|\(\?\((\w+)\)")


@attrs.frozen
class SecretCounts:
    """How many secrets of each kind were replaced, kinds in name order.

    >>> (SecretCounts((("jwt", 1),)) + SecretCounts((("jwt", 2), ("aws-access-key", 1)))).total
    4
    """

    by_kind: tuple[tuple[str, int], ...] = ()

    @property
    def total(self) -> int:
        """All secrets replaced, whatever their kind."""
        return sum(n for _, n in self.by_kind)

    def __add__(self, other: SecretCounts) -> SecretCounts:
        if not other.by_kind:
            return self
        if not self.by_kind:
            return other
        merged = dict(self.by_kind)
        for kind, n in other.by_kind:
            merged[kind] = merged.get(kind, 0) + n
        return SecretCounts(tuple(sorted(merged.items())))

    def describe(self) -> str:
        """A few words for people.

        >>> SecretCounts((("jwt", 2), ("password", 1))).describe()
        '3 secret(s) redacted (jwt 2, password 1)'
        """
        kinds = ", ".join(f"{kind} {n}" for kind, n in self.by_kind)
        return f"{self.total} secret(s) redacted ({kinds})" if self.by_kind else "no secrets found"


NO_SECRETS = SecretCounts()

_TRIGGERS = tuple((bit, rule.triggers) for bit, rule in enumerate(RULES))


def _renamed(pattern: str, index: int) -> str:
    """``pattern`` with every group name prefixed by its rule's, so rules can be joined."""
    def rename(match: re.Match[str]) -> str:
        group, backref, conditional = match.groups()
        if group:
            return f"(?P<r{index}{group}>"
        if backref:
            return f"(?P=r{index}{backref})"
        return f"(?(r{index}{conditional})"
    return _NAMED.sub(rename, pattern)


@functools.lru_cache(maxsize=256)
def _combined(mask: int) -> re.Pattern[str]:
    """One pattern of the rules whose bits are set in ``mask``, in table order."""
    parts = [f"(?P<r{i}>{_renamed(rule.pattern, i)})"
             for i, rule in enumerate(RULES) if mask >> i & 1]
    return re.compile("|".join(parts), re.ASCII)


_TOKEN_SHAPES = tuple((rule.kind, re.compile(rule.pattern, re.ASCII)) for rule in TOKENS)


def token_kind(value: str) -> str | None:
    """The kind of the vendor token ``value`` is in whole, if it is one.

    >>> token_kind("AKIAIOSFODNN7EXAMPLE"), token_kind("hunter2")
    ('aws-access-key', None)
    """
    for kind, shape in _TOKEN_SHAPES:
        if shape.fullmatch(value):
            return kind
    return None


def assignment_kind(key: str, before: str, value: str) -> str:
    """The placeholder kind of a value assigned to ``key`` (``before`` is the text up to it).

    A value that is itself a known token keeps that token's kind.

    >>> assignment_kind("KEY", "AWS_SECRET_ACCESS", "x"), assignment_kind("_KEY", "", "x")
    ('aws-secret-key', 'api-key')
    >>> assignment_kind("token", "", "ghp_" + "a" * 36)
    'github-token'
    """
    known = token_kind(value)
    if known:
        return known
    name = key.lower()
    if name.startswith("passw") or name == "passphrase":
        return "password"
    if name in ("token", "secret"):
        return name
    tail = before[-24:].lower()
    if "aws" in tail and "secret" in tail + name:
        return "aws-secret-key"
    return "api-key"


_CODE_VALUE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|[0-9]{1,7}|None|null|nil|true|false|"
                         r"True|False|undefined|\*+|x+|X+", re.ASCII)
"""Bare values that are code or nothing: ``self.password``, ``5``, ``None``, ``****``."""


def _is_secret_value(value: str, text: str, match: re.Match[str], index: int) -> bool:
    """Whether the value of an assignment is worth redacting (not code, not a reference)."""
    if value[:1] in "$%{<*" or _CODE_VALUE.fullmatch(value):
        return False
    if token_kind(value):
        return True
    key = match.group(f"r{index}k")
    end = match.end()
    if end < len(text) and text[end] in "(.[":
        return False  # password=getpass(...): a call or an attribute, so code
    separator = match.group(f"r{index}pre")[len(key):]
    bare = match.group(f"r{index}q") is None
    if value.isidentifier() and bare and (
            (" " in separator and "=" in separator) or key.lower().strip("_-") in value.lower()):
        return False  # password = pw, token=access_token: a variable
    name = key.lower()
    if name.startswith("passw") or name == "passphrase":
        return True
    if separator == "=" and _is_env_name(text, match.start(f"r{index}k"), key):
        return True
    return (len(value) >= 8 and not any(c.isspace() for c in value)
            and (len(value) >= 20 or any(c.isdigit() for c in value)))


def _is_env_name(text: str, start: int, key: str) -> bool:
    """Is ``key`` at ``start`` the end of an upper-case ``.env`` name (``[export] NAME=``)?"""
    line = text[text.rfind("\n", 0, start) + 1:start].lstrip()
    if line.startswith("export "):
        line = line[7:].lstrip()
    name = line + key
    return name.replace("_", "").isalnum() and name.upper() == name


def redact(text: str) -> tuple[str, SecretCounts]:
    """``text`` with every secret replaced by its placeholder, and the counts by kind."""
    if not text:
        return text, NO_SECRETS
    lowered = text.lower()
    mask = 0
    for bit, triggers in _TRIGGERS:
        for trigger in triggers:
            if trigger in lowered:
                mask |= 1 << bit
                break
    if not mask:
        return text, NO_SECRETS
    found: dict[str, int] = {}

    def replace(match: re.Match[str]) -> str:
        name = match.lastgroup or ""
        index = int(name[1:])
        rule = RULES[index]
        start, end = match.span()
        pre = match.group(f"r{index}pre") if "(?P<pre>" in rule.pattern else None
        post = match.group(f"r{index}post") if "(?P<post>" in rule.pattern else None
        secret_start = start + len(pre or "")
        secret_end = end - len(post or "")
        kind = rule.kind
        if kind == "assignment":
            value = text[secret_start:secret_end]
            if not _is_secret_value(value, text, match, index):
                return match.group(0)
            key = match.group(f"r{index}k")
            kind = assignment_kind(key, text[:match.start(f"r{index}k")], value)
        elif kind == "bearer-token":
            kind = token_kind(text[secret_start:secret_end]) or kind
        found[kind] = found.get(kind, 0) + 1
        return (pre or "") + PLACEHOLDER.format(kind=kind) + (post or "")

    redacted = _combined(mask).sub(replace, text)
    if not found:
        return text, NO_SECRETS
    return redacted, SecretCounts(tuple(sorted(found.items())))


def redact_session(session: Session) -> tuple[Session, SecretCounts]:
    """``session`` with its title redacted."""
    title, counts = redact(session.title)
    return (session if not counts.by_kind else attrs.evolve(session, title=title)), counts


def redact_message(message: Message) -> tuple[Message, SecretCounts]:
    """``message`` with its content and tool-call arguments redacted."""
    content, counts = redact(message.content)
    calls = message.tool_calls
    if calls:
        new_calls = []
        for call in calls:
            arguments, more = redact(call.arguments)
            counts += more
            new_calls.append(call if not more.by_kind else attrs.evolve(call, arguments=arguments))
        calls = tuple(new_calls)
    if not counts.by_kind:
        return message, NO_SECRETS
    return attrs.evolve(message, content=content, tool_calls=calls), counts


def redact_conversation(conversation: Conversation) -> tuple[Conversation, SecretCounts]:
    """``conversation`` with its title, contents and tool-call arguments redacted.

    >>> from harkback.stages.records import Message, Session
    >>> said = Message(session_id="s", position=0, role="user", content="token: ghp_" + "x" * 36)
    >>> redact_conversation(Conversation(Session(id="s"), (said,)))[0].messages[0].content
    'token: [secret:github-token]'
    """
    session, counts = redact_session(conversation.session)
    messages = []
    changed = bool(counts.by_kind)
    for message in conversation.messages:
        clean, more = redact_message(message)
        if more.by_kind:
            counts += more
            changed = True
        messages.append(clean)
    if not changed:
        return conversation, NO_SECRETS
    return Conversation(session, tuple(messages)), counts


def redact_all(conversations: Sequence[Conversation]
               ) -> tuple[tuple[Conversation, ...], SecretCounts]:
    """Every conversation redacted, and the counts of all of them together."""
    total = NO_SECRETS
    clean = []
    for conversation in conversations:
        redacted, counts = redact_conversation(conversation)
        total += counts
        clean.append(redacted)
    return tuple(clean), total
