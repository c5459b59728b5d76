"""Replace secrets by typed placeholders: one pass over a text, counts by kind.

:func:`redact` looks for every rule's triggers with plain substring scans (in the text
lowercased once, for the rules that ignore case); when none is there (most messages) the
text comes back as it was. Otherwise each place a trigger stands is tried once, left to
right, with the rule anchored there (so no regular expression ever scans the whole text);
a match replaces its span, and places inside a replaced span are skipped.

>>> text, counts = redact('db = "postgres://app:hunter2@db.internal:5432/prod"')
>>> text, counts.by_kind
('db = "postgres://app:[secret:password]@db.internal:5432/prod"', (('password', 1),))
>>> redact("password reset link sent")
('password reset link sent', SecretCounts(by_kind=()))
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Sequence

import attrs

from harkback.stages.records import Conversation
from harkback.stages.redact.rules import CJK_KEYS, GATES, PLACEHOLDER, RULES, TOKENS


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

    def describe(self, done: str = "redacted") -> str:
        """A few words for people (``done``: what happened to them; a dry run finds them).

        >>> SecretCounts((("jwt", 2), ("password", 1))).describe()
        '3 secret(s) redacted (jwt 2, password 1)'
        """
        kinds = ", ".join(f"{kind} {n}" for kind, n in self.by_kind)
        return f"{self.total} secret(s) {done} ({kinds})" if self.by_kind else "no secrets found"


NO_SECRETS = SecretCounts()

_COMPILED = tuple(re.compile(rule.pattern, re.ASCII) for rule in RULES)


Members = tuple[tuple[str, tuple[tuple[int, int], ...]], ...]
"""Triggers, each with the rules (index, lead) that start at it."""


def _gated(exact: bool) -> tuple[tuple[str, Members], ...]:
    """Each gate of the rules that are ``exact`` (or not) with the triggers it guards; a
    trigger no gate holds is its own gate."""
    groups: dict[str, dict[str, list[tuple[int, int]]]] = {}
    for index, rule in enumerate(RULES):
        if rule.exact == exact:
            for trigger in rule.triggers:
                gate = next((g for g in GATES if re.search(g, trigger)), trigger)
                groups.setdefault(gate, {}).setdefault(trigger, []).append((index, rule.lead))
    return tuple((gate, tuple((t, tuple(rules)) for t, rules in members.items()))
                 for gate, members in groups.items())


_EXACT_GATES = tuple((g, m) for g, m in _gated(exact=True) if "(" not in g)
_PATTERN_GATES = tuple((re.compile(g).search, m) for g, m in _gated(exact=True) if "(" in g)
_LOWER_GATES = _gated(exact=False)
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
    if key in CJK_KEYS:
        return CJK_KEYS[key]
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
                         r"True|False|undefined|\*+|x+|X+"
                         # type names after a colon: password: str, token: string;
                         r"|str|string|String|bytes|int|integer|number|bool|boolean|any"
                         r"|unknown|object|char|text|varchar|SecretStr", re.ASCII)
"""Bare values that are code or nothing: ``self.password``, ``5``, ``None``, ``****``,
``str``."""
_OPEN_KEYS = frozenset({"PUBLIC", "PRIMARY", "FOREIGN", "SORT", "PARTITION", "CACHE", "ROUTING",
                        "IDEMPOTENCY", "HOT", "LOOKUP", "UNIQUE", "SHARD", "DEDUP", "GROUP",
                        "INDEX", "RANGE"})
"""Words before an upper-case ``_KEY`` that name no secret: ``SORT_KEY=created_at``,
``RSA_PUBLIC_KEY=...``, ``CACHE_KEY=users:v2``."""
_CONTRACTION = re.compile(r"['\u2019](?:ll|s|t|re|ve|d|m)\b", re.IGNORECASE)
"""The ending of a contraction (``I'll``, ``it's``, ``don't``), where a bare value of letters
stops: that value is a sentence's word, never a password."""
_IS_WORDS = frozenset("it that there here what who where how he she let everything "
                      "nothing something".split())
"""The words whose ``'s`` opens a sentence (``it's``); any other word's is a possessive, and
``Summer's`` after ``password:`` may well be the password."""
_NSSWITCH = re.compile(r"files|compat|systemd|sss|ldap|nis|winbind|db", re.ASCII)
"""Where ``/etc/nsswitch.conf``'s ``passwd:`` line looks up accounts: never a password."""


def _is_secret_value(value: str, text: str, match: re.Match[str]) -> bool:
    """Whether the value of an assignment is worth redacting (not code, not a reference)."""
    # "=" first: the second "=" of a comparison (password == other), not an assignment
    if value[:1] in "$%{<*=" or _CODE_VALUE.fullmatch(value):
        return False
    if token_kind(value):
        return True
    key = match.group("k")
    if key == "KEY" and _word_before(text, match.start("k")) in _OPEN_KEYS:
        return False
    end = match.end()
    bare = match.group("q") is None
    if bare and end < len(text) and text[end] in "(.[":
        return False  # password=getpass(...): a call or an attribute, so code
    separator = match.group("pre")[len(key):]
    # Only after a colon and a space, where a sentence goes on: PASSWORD=Summer's is one.
    if bare and separator.strip() == ":" and separator[-1].isspace() and _is_contracted(
            value, text, end):
        return False  # "a password: I'll add ...": a sentence's first word, cut at "'ll"
    if value.isidentifier() and bare and (
            (" " in separator and "=" in separator) or key.lower().strip("_-") in value.lower()):
        return False  # password = pw, token=access_token: a variable
    name = key.lower()
    if name == "passwd" and separator.startswith(":") and _NSSWITCH.fullmatch(value):
        return False
    if name.startswith("passw") or name == "passphrase" or CJK_KEYS.get(key) == "password":
        return True
    if separator == "=" and _is_env_name(text, match.start("k"), key):
        return True
    return (len(value) >= 8 and not any(c.isspace() for c in value)
            and (len(value) >= 20 or any(c.isdigit() for c in value)))


def _is_contracted(value: str, text: str, end: int) -> bool:
    """Is ``value`` (ending at ``end`` of ``text``) a word of a contraction (``I'll``,
    ``don’t``: the typographic apostrophe stays in the value, the plain one ends it)?

    An ``'s`` counts only after a word of :data:`_IS_WORDS`: ``Summer's`` is no sentence's
    first word.

    >>> _is_contracted("I", "password: I'll add it", 11), _is_contracted("x9", "x9's", 2)
    (True, False)
    >>> _is_contracted("Summer", "password: Summer's", 16)
    False
    """
    word, _, ending = value.partition("\u2019")
    found = (_CONTRACTION.fullmatch("\u2019" + ending) if ending
             else _CONTRACTION.match(text, end))
    if not word.isalpha() or found is None:
        return False
    return found.group(0)[1:].lower() != "s" or word.lower() in _IS_WORDS


def _word_before(text: str, start: int) -> str:
    """The word of an ``A_B_KEY`` name just before its ``_KEY`` at ``start``.

    >>> _word_before("export RSA_PUBLIC_KEY=x", 18)
    'PUBLIC'
    """
    head = text[max(0, start - 40):start].rstrip("_-")
    return re.split(r"[^A-Za-z0-9]", head)[-1].upper()


def _is_env_name(text: str, start: int, key: str) -> bool:
    """Is ``key`` at ``start`` the end of an upper-case ``.env`` name (``[export] NAME=``)?"""
    line = text[text.rfind("\n", 0, start) + 1:start].lstrip()
    if line.startswith("export "):
        line = line[7:].lstrip()
    name = line + key
    return name.replace("_", "").isalnum() and name.upper() == name


_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def _lowered(text: str) -> str:
    """``text`` in lowercase, each character still at its place (``"İ".lower()`` is two
    characters long: such a text is lowercased in its ASCII letters only)."""
    lowered = text.lower()
    return lowered if len(lowered) == len(text) else text.translate(_ASCII_LOWER)


def _places(text: str) -> list[tuple[int, int]]:
    """Where a rule may match, with its index, in order (rules in table order at a place).

    Exact triggers are looked for in ``text`` itself, the others in its lowercase. The
    gates are tried in one comprehension each: Python's own steps per gate cost about as
    much as the scan of a short text, so only the open gates get a loop."""
    lowered = _lowered(text)
    open_gates = ([(text, members) for gate, members in _EXACT_GATES if gate in text]
                  + [(text, members) for found, members in _PATTERN_GATES if found(text)]
                  + [(lowered, members) for gate, members in _LOWER_GATES if gate in lowered])
    places: list[tuple[int, int]] = []
    for haystack, members in open_gates:
        for trigger, rules in members:
            at = haystack.find(trigger)
            while at >= 0:
                for index, lead in rules:
                    places.append((at - lead, index))
                at = haystack.find(trigger, at + 1)
    places.sort()
    return places


def redact(text: str) -> tuple[str, SecretCounts]:
    """``text`` with every secret replaced by its placeholder, and the counts by kind."""
    places = _places(text) if text else []
    return _replaced(text, places) if places else (text, NO_SECRETS)


def _replaced(text: str, places: list[tuple[int, int]]) -> tuple[str, SecretCounts]:
    """``text`` with the secrets that start at ``places`` replaced, in one pass."""
    found: dict[str, int] = {}
    pieces: list[str] = []
    done = 0
    for at, index in places:
        if at < done:
            continue
        match = _COMPILED[index].match(text, at)
        if match is None:
            continue
        replacement = _replacement(match, RULES[index].kind, text)
        if replacement is None:
            continue
        kind, new = replacement
        found[kind] = found.get(kind, 0) + 1
        pieces.append(text[done:at])
        pieces.append(new)
        done = match.end()
    if not found:
        return text, NO_SECRETS
    pieces.append(text[done:])
    return "".join(pieces), SecretCounts(tuple(sorted(found.items())))


def _replacement(match: re.Match[str], kind: str, text: str) -> tuple[str, str] | None:
    """The kind and the text that replace ``match``, or None when it is no secret."""
    groups = match.groupdict()
    pre, post = groups.get("pre") or "", groups.get("post") or ""
    value = text[match.start() + len(pre):match.end() - len(post)]
    if kind == "assignment":
        if not _is_secret_value(value, text, match):
            return None
        key_start = match.start("k")
        kind = assignment_kind(match.group("k"), text[:key_start], value)
    elif kind == "bearer-token":
        kind = token_kind(value) or kind
    return kind, pre + PLACEHOLDER.format(kind=kind) + post


def redact_conversation(conversation: Conversation,
                        redact_text: Callable[[str], tuple[str, SecretCounts]] = redact
                        ) -> tuple[Conversation, SecretCounts]:
    """``conversation`` with its title, project, contents and tool-call arguments redacted (the
    same object when it holds no secret); each non-empty text by ``redact_text``
    (:func:`redact`, or one that remembers what it redacted before).

    >>> from harkback.stages.records import Message, Session
    >>> said = Message(session_id="s", position=0, role="user", content="token: ghp_" + "x" * 36)
    >>> redact_conversation(Conversation(Session(id="s"), (said,)))[0].messages[0].content
    'token: [secret:github-token]'
    """
    session = conversation.session
    # The project too: a folder path can hold a token (a clone at ``/src/ghp_…/api``).
    texts = [session.title, session.project]
    for message in conversation.messages:
        texts.append(message.content)
        texts.extend(call.arguments for call in message.tool_calls)
    clean, counts = list(texts), NO_SECRETS
    for which, text in enumerate(texts):
        if text:
            clean[which], found = redact_text(text)
            counts += found
    if not counts.by_kind:
        return conversation, NO_SECRETS
    given = iter(clean)
    title, project = next(given), next(given)
    messages = []
    for message in conversation.messages:
        content = next(given)
        calls = tuple(call if (arguments := next(given)) == call.arguments
                      else attrs.evolve(call, arguments=arguments) for call in message.tool_calls)
        messages.append(message if content == message.content and calls == message.tool_calls
                        else attrs.evolve(message, content=content, tool_calls=calls))
    if (title, project) != (session.title, session.project):
        session = attrs.evolve(session, title=title, project=project)
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
