"""What a PostgreSQL store remembers of its words' counts between searches.

A ranker asks for its words' counts, then searches by them: the search's counts come from
here instead of a second walk over the index; so do the estimates of words past the exact
count limit (two index walks each, a large share of a search at a million messages).

Every ingest, whichever machine wrote, moves the index's *generation*. Exact counts are
forgotten then: they decide scores, and a store nobody writes to must rank exactly as the
SQLite store does. What is only approximate already (a word known to be past the limit,
an estimate of how far) is kept while ingests alone have grown the message total by at
most :data:`GROWTH_TOLERANCE` since it was made: on a shared server, writers move the
generation several times a second, and making those again cost every search hundreds of
milliseconds at a million messages. A total that shrank (a removal) forgets everything.

>>> from harkback.stages.query import Term
>>> memo = CountMemo()
>>> memo.keep(1, 100_000, "messages", {Term("error"): 8_001, Term("kiwi"): 3}, 8_000)
False
>>> memo.keep(2, 100_050, "messages", {}, 8_000)  # another machine's ingest
False
>>> memo.known("messages", Term("error"), 8_000), memo.known("messages", Term("kiwi"), 8_000)
(8001, None)
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from harkback.adapters.stores.postgres_text import tsquery
from harkback.stages.query import Unit

GROWTH_TOLERANCE = 0.01
"""How far ingests may grow the message total before approximate counts are made again."""


class CountMemo:
    """Unit counts and estimates a store has seen (see the module's documentation)."""

    def __init__(self) -> None:
        """Start empty."""
        self._lock = threading.Lock()
        self.generation: int | None = None
        self._base: int | None = None
        """The message total when the oldest approximate entry kept was made."""
        self._counts: dict[tuple[str, str], tuple[int, bool]] = {}
        self._estimates: dict[str, int] = {}

    def known(self, table: str, unit: Unit, cap: int | None) -> int | None:
        """The count of ``unit`` as a census reports it under ``cap``, if known."""
        with self._lock:
            found = self._counts.get((table, tsquery(unit)))
        if found is None:
            return None
        number, exact = found
        if exact:
            return number if cap is None else min(number, cap + 1)
        return cap + 1 if cap is not None and number > cap else None

    def keep(self, generation: int, messages: int, table: str, counted: dict[Unit, int],
             cap: int | None) -> bool:
        """Remember counts made at ``generation`` (the index then holding ``messages``);
        False when the generation moved since the last call (see :meth:`known` for what
        is still remembered)."""
        with self._lock:
            moved = generation != self.generation
            if moved:
                self._advance(generation, messages)
            for unit, number in counted.items():
                self._counts[(table, tsquery(unit))] = (number, cap is None or number <= cap)
            return not moved

    def _advance(self, generation: int, messages: int) -> None:
        grown = self._base is not None and (
            self._base <= messages <= self._base * (1 + GROWTH_TOLERANCE))
        if grown:
            self._counts = {key: entry for key, entry in self._counts.items() if not entry[1]}
        else:
            self._counts.clear()
            self._estimates.clear()
            self._base = messages
        self.generation = generation

    def estimated(self, terms: Sequence[str]) -> dict[str, int]:
        """The estimates known for ``terms``."""
        with self._lock:
            return {t: self._estimates[t] for t in terms if t in self._estimates}

    def keep_estimates(self, generation: int, estimates: dict[str, int]) -> None:
        """Remember estimates made at ``generation`` if it is still the current one."""
        with self._lock:
            if generation == self.generation:
                self._estimates.update(estimates)

