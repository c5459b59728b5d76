"""The in-memory store's matching kernel: each message's index tokens, how often a term or
phrase occurs in them (the phrase counts FTS5's ``bm25()`` scores), that score itself,
which messages a query's filters admit.

>>> from harkback.stages.query import parse_query
>>> item = Indexed.of(1, Message(session_id="s", position=0, role="user",
...                              content="docker bridge, docker network"))
>>> units = units_of(parse_query("docker").expression)
>>> [occurrences(unit, item.tokens, item.counts) for unit in units]
[2]
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import attrs

from harkback.stages.match.score import K1, B
from harkback.stages.ports import MatchQuery, NearestQuery
from harkback.stages.query import Node, Phrase, Term, Unit, Without, phrase_count
from harkback.stages.records import Message, Session
from harkback.stages.scope import in_scope
from harkback.stages.text.tokens import index_tokens


@attrs.frozen
class Indexed:
    """A stored message with its row id and index tokens; the tokens are also counted
    once, at ingest, so that a term's frequency in the message is one lookup."""

    row_id: int
    message: Message
    tokens: tuple[str, ...]
    counts: Counter[str]

    @classmethod
    def of(cls, row_id: int, message: Message) -> Indexed:
        """``message`` indexed as FTS5 indexes it: the tokens of its searchable text."""
        tokens = index_tokens(message.text_for_search())
        return cls(row_id, message, tokens, Counter(tokens))


def units_of(node: Node) -> list[Unit]:
    """Every term and phrase of the expression, in order and with repeats, as FTS5 scores them.

    >>> units_of(Without(Term("docker"), Term("docker")))
    [Term(text='docker', prefix=False), Term(text='docker', prefix=False)]
    """
    if isinstance(node, Term | Phrase):
        return [node]
    if isinstance(node, Without):
        return units_of(node.include) + units_of(node.exclude)
    return [leaf for item in node.items for leaf in units_of(item)]


def occurrences(unit: Unit, tokens: Sequence[str], counts: Counter[str]) -> int:
    """How often a term or phrase occurs in a message's index tokens (FTS5's phrase count).

    >>> occurrences(Term("do", prefix=True), ["docker", "do", "go"], Counter(["docker", "do"]))
    2
    """
    if isinstance(unit, Term):
        if unit.prefix:
            return sum(n for token, n in counts.items() if token.startswith(unit.text))
        return counts[unit.text]
    if any(term not in counts for term in unit.terms[:-1]):
        return 0
    return phrase_count(unit, tokens)


def written_at(message: Message, session: Session) -> float | None:
    """When a message was written: its own stamp, else its session's start."""
    return message.timestamp if message.timestamp is not None else session.started_at


def admits(query: MatchQuery | NearestQuery, message: Message, session: Session) -> bool:
    """Whether the query's roles, sources and time bounds let ``message`` through.

    >>> query = MatchQuery(expression=Term("x"), roles=("user",), since=5.0)
    >>> message = Message(session_id="s", position=0, role="user", content="x")
    >>> admits(query, message, Session(id="s", started_at=6.0))
    True
    >>> admits(query, message, Session(id="s", started_at=4.0))
    False
    """
    if message.role not in query.roles or not in_scope(query, session.source, session.project):
        return False
    when = written_at(message, session)
    if query.since is not None and (when is None or when < query.since):
        return False
    return query.until is None or (when is not None and when <= query.until)


def bm25(frequencies: Sequence[float], idfs: Sequence[float], length: int,
         average_length: float) -> float:
    """FTS5's BM25 of one message (positive: higher is better).

    >>> round(bm25([1], [2.0], 10, 10.0), 3)
    2.0
    """
    norm = K1 * (1 - B + B * length / average_length) if average_length else K1
    return sum(idf * (f * (K1 + 1)) / (f + norm) for f, idf in zip(frequencies, idfs, strict=True))


def idf(total: int, containing: int) -> float:
    """FTS5's inverse document frequency, never below a tiny positive floor.

    >>> idf(10, 9) == 1e-6
    True
    """
    value = math.log((total - containing + 0.5) / (containing + 0.5))
    return value if value > 0 else 1e-6
