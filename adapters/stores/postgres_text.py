"""Text as the PostgreSQL store keeps it: harkback's tokens in a ``tsvector``, queries as a
``tsquery``, and text with NUL characters made storable.

The full-text column holds exactly the tokens the SQLite store gives FTS5
(:func:`~harkback.stages.text.tokens.index_tokens`: normalised words, CJK bigrams and a
run's last character), written as a ``tsvector`` literal with their positions, so the
``simple`` configuration's matching (no stemming, no stopwords) sees the same words. A
query's expression becomes the matching ``tsquery``: ``&``, ``|``, ``!``, ``<->`` for
phrases and ``:*`` for prefixes (the query parser already makes a lone CJK character one).

>>> tsvector_literal(("docker", "bridge", "docker"))
"'docker':1 'bridge':2 'docker':3"
>>> tsvector_literal(("it's", "docker", "it's"))
"'it''s':1,3 'docker':2"
>>> from harkback.stages.query import parse_query
>>> tsquery(parse_query('"bridge network" OR dock* NOT swarm').expression)
"('bridge' <-> 'network' | ('dock':* & !('swarm')))"
>>> restore(storable("a\\x00b\\ufffe")) == "a\\x00b\\ufffe"
True
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import chain

from harkback.stages.query import AllOf, Node, Phrase, Term, Without

MAX_POSITION = 16383
"""The last position a ``tsvector`` records; later words are kept at it."""

MAX_POSITIONS = 256
"""A ``tsvector`` keeps at most this many positions of one word."""

MAX_LEXEME_CHARS = 500
"""Longer tokens are cut to this many characters (a lexeme holds at most 2046 bytes) in
the index and in queries alike; the store checks candidates against the full tokens."""

MAX_VECTOR_BYTES = 900_000
"""A ``tsvector`` holds at most 1 MiB; a message whose distinct words pass this budget
keeps the words that fit (searchable), the rest are not indexed."""


def lexeme(token: str) -> str:
    """``token`` quoted as a ``tsvector``/``tsquery`` lexeme (cut to :data:`MAX_LEXEME_CHARS`).

    >>> lexeme("it's")
    "'it''s'"
    """
    cut = token[:MAX_LEXEME_CHARS]
    return "'" + cut.replace("\\", "\\\\").replace("'", "''") + "'"


FAST_TEXT_CHARS = 500_000
"""Below this many characters of tokens (and :data:`MAX_POSITION` tokens), a message's
literal names each token at its position and the server merges repeats
(:func:`by_position`); above, this process merges them first (:func:`merged`), so the
literal stays within the server's limit."""

_PLACES = tuple(f"':{place} '" for place in range(1, MAX_POSITION + 1))
"""What follows the lexeme at each position (quote, position, the next lexeme's quote)."""


def tsvector_literal(tokens: Sequence[str]) -> str:
    """The ``tsvector`` of a message's index tokens, positions counted from 1."""
    if not tokens:
        return ""
    if (len(tokens) <= MAX_POSITION and max(map(len, tokens)) <= MAX_LEXEME_CHARS
            and _plain_words(tokens)):
        return by_position(tokens)
    return merged(tokens)


def by_position(tokens: Sequence[str]) -> str:
    """Each of at most :data:`MAX_POSITION` tokens (nothing to quote, none too long) at
    its position, repeats left to the server.

    >>> by_position(("kiwi", "pie", "kiwi"))
    "'kiwi':1 'pie':2 'kiwi':3"
    """
    # Lexemes and what follows each, interleaved and joined in C: a format call per token
    # was a quarter of this process's share of an ingest.
    return "'" + "".join(chain.from_iterable(zip(tokens, _PLACES, strict=False)))[:-2]


def merged(tokens: Sequence[str]) -> str:
    """Each distinct lexeme once with its positions, as the server keeps them (cut, capped,
    at most :data:`MAX_POSITIONS` each, within :data:`MAX_VECTOR_BYTES`).

    >>> merged(("kiwi", "pie", "kiwi"))
    "'kiwi':1,3 'pie':2"
    """
    positions: dict[str, list[int]] = {}
    for place, token in enumerate(tokens, 1):
        kept = positions.setdefault(token[:MAX_LEXEME_CHARS], [])
        if len(kept) < MAX_POSITIONS:
            kept.append(min(place, MAX_POSITION))
    parts: list[str] = []
    size = 0
    for word, places in positions.items():
        size += len(word.encode()) + 2 * len(places) + 8
        if size > MAX_VECTOR_BYTES:
            break
        parts.append(f"{lexeme(word)}:{','.join(map(str, dict.fromkeys(places)))}")
    return " ".join(parts)


def _plain_words(tokens: Sequence[str]) -> bool:
    # Index tokens are runs of word characters: no quote or backslash to escape. Checked,
    # not assumed, on the joined text (one pass in C).
    text = "".join(tokens)
    return "'" not in text and "\\" not in text and len(text) < FAST_TEXT_CHARS


def tsquery(node: Node, *, loose: bool = False) -> str:
    """``node`` as ``tsquery`` text (every lexeme quoted, so no input can break it).

    ``loose`` asks for a query matching at least every row ``node`` matches without
    reading positions (a phrase is its words, an exclusion is dropped), for messages
    longer than a ``tsvector`` keeps positions of.

    >>> from harkback.stages.query import parse_query
    >>> tsquery(parse_query('"closing phrase" NOT x').expression, loose=True)
    "'closing' & 'phrase'"
    """
    if isinstance(node, Term):
        return lexeme(node.text) + (":*" if node.prefix else "")
    if isinstance(node, Phrase):
        words = [lexeme(t) for t in node.terms]
        if node.prefix:
            words[-1] += ":*"
        return (" & " if loose else " <-> ").join(words)
    if isinstance(node, Without):
        if loose:
            return tsquery(node.include, loose=True)
        return f"({tsquery(node.include)} & !({tsquery(node.exclude)}))"
    joiner = " & " if isinstance(node, AllOf) else " | "
    return "(" + joiner.join(tsquery(item, loose=loose) for item in node.items) + ")"


def reads_positions(node: Node) -> bool:
    """Whether matching ``node`` needs word positions (it holds a phrase or an exclusion).

    >>> from harkback.stages.query import parse_query
    >>> reads_positions(parse_query("bridge network").expression)
    False
    """
    if isinstance(node, Term):
        return False
    if isinstance(node, Phrase | Without):
        return True
    return any(reads_positions(item) for item in node.items)


def matching(alias: str, node: Node) -> tuple[str, list[str]]:
    """The SQL condition (and its values) that a row of ``alias`` matches ``node``: its
    ``tsvector``, or for a row longer than :data:`MAX_POSITION` tokens, the loose query
    (the caller checks such rows against their full tokens).

    >>> matching("m", Term("docker"))
    ('m.tokens @@ %s::tsquery', ["'docker'"])
    """
    exact = f"{alias}.tokens @@ %s::tsquery"
    if not reads_positions(node):
        return exact, [tsquery(node)]
    return (f"({exact} OR ({alias}.length > {MAX_POSITION} AND {alias}.tokens @@ %s::tsquery))",
            [tsquery(node), tsquery(node, loose=True)])


_MARK = "\ufffe"
_ESCAPED = re.compile(f"{_MARK}([01])")


def storable(text: str) -> str:
    """``text`` without NUL characters (PostgreSQL's text cannot hold them), reversibly:
    NUL becomes U+FFFE then ``0``, and U+FFFE itself becomes U+FFFE then ``1``."""
    if "\x00" not in text and _MARK not in text:
        return text
    return text.replace(_MARK, _MARK + "1").replace("\x00", _MARK + "0")


def restore(text: str) -> str:
    """The inverse of :func:`storable`."""
    if _MARK not in text:
        return text
    return _ESCAPED.sub(lambda found: "\x00" if found.group(1) == "0" else _MARK, text)


def maybe(text: str | None) -> str | None:
    """:func:`storable` of ``text``, None staying None."""
    return None if text is None else storable(text)
