"""What a PostgreSQL store remembers of its words' counts between searches.

A ranker asks for its words' counts, then searches by them: the search's counts come from
here instead of a second walk over the index; so do the estimates of words past the exact
count limit (two index walks each, a large share of a search at a million messages).

Every ingest, whichever machine wrote, moves the index's *generation*. An exact count
made before is not taken as it is then: exact counts decide scores, and a store nobody
writes to must rank exactly as the SQLite store does. While no message row was deleted or
rewritten since (the :class:`Snapshot`'s ``rewrites`` stayed) and at most
:data:`CATCH_UP_ROWS` were added, it is *behind*: the caller brings it forward by counting
only the rows past the highest id it saw (:mod:`~harkback.adapters.stores.postgres_catch_up`);
otherwise it is forgotten and counted again. What is only approximate already (a word
known to be past the limit, an estimate of how far) is kept while ingests alone have grown
the message total by at most :data:`GROWTH_TOLERANCE` since it was made: on a shared
server, writers move the generation several times a second. A deletion or rewrite forgets
that too.

>>> from harkback.stages.query import Term
>>> memo = CountMemo()
>>> memo.keep(Snapshot(1, 100_000, top=100_000), "messages",
...           {Term("error"): 8_001, Term("kiwi"): 3}, 8_000)
False
>>> memo.keep(Snapshot(2, 100_050, top=100_050), "messages", {}, 8_000)  # another machine
False
>>> memo.known("messages", Term("error"), 8_000), memo.known("messages", Term("kiwi"), 8_000)
(8001, None)
>>> memo.behind("messages", [Term("kiwi")])[Term("kiwi")]  # ingests only: catch it up
(3, Snapshot(generation=1, messages=100000, rewrites=0, top=100000))
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import attrs

from harkback.adapters.stores.postgres_text import tsquery
from harkback.stages.query import Unit

GROWTH_TOLERANCE = 0.01
"""How far ingests may grow the message total before approximate counts are made again."""

CATCH_UP = True
"""Whether exact counts are brought forward at all (the benchmark switches it off to
compare: every exact count is then made again after any write)."""

CATCH_UP_ROWS = 20_000
"""How many rows may have been added since an exact count was made for it to be brought
forward (a walk over those rows) rather than counted again (a walk over the index)."""


@attrs.frozen
class Snapshot:
    """What one counting statement saw of the index: its generation, the messages it held,
    how many deletions or rewrites of message rows it had seen, and its highest message id."""

    generation: int
    messages: int
    rewrites: int = 0
    top: int = 0

    def appended_since(self, earlier: Snapshot) -> int | None:
        """How many rows were only added between ``earlier`` and this snapshot (None: rows
        were deleted or rewritten, or this one is older).

        >>> Snapshot(3, 120, 1, 130).appended_since(Snapshot(2, 100, 1, 110))
        20
        >>> Snapshot(3, 120, 2, 130).appended_since(Snapshot(2, 100, 1, 110)) is None
        True
        """
        grown = self.messages - earlier.messages
        if self.rewrites != earlier.rewrites or grown < 0 or self.top < earlier.top:
            return None
        return grown


Entry = tuple[int, bool, Snapshot]
"""A count, whether it is exact (else: past the cap it was made under), when it was made."""


class CountMemo:
    """Unit counts and estimates a store has seen (see the module's documentation)."""

    def __init__(self) -> None:
        """Start empty."""
        self._lock = threading.Lock()
        self.now: Snapshot | None = None
        """The latest snapshot a count was kept at."""
        self._base: int | None = None
        """The message total when the oldest approximate entry kept was made."""
        self._counts: dict[tuple[str, str], Entry] = {}
        self._estimates: dict[str, int] = {}

    @property
    def generation(self) -> int | None:
        """The generation of :attr:`now`."""
        return None if self.now is None else self.now.generation

    def known(self, table: str, unit: Unit, cap: int | None) -> int | None:
        """The count of ``unit`` as a census reports it under ``cap``, if known now."""
        with self._lock:
            found = self._counts.get((table, tsquery(unit)))
        if found is None:
            return None
        number, exact, made = found
        if exact:
            if made.generation != self.generation:
                return None  # behind: see behind()
            return number if cap is None else min(number, cap + 1)
        return cap + 1 if cap is not None and number > cap else None

    def behind(self, table: str, units: Sequence[Unit]) -> dict[Unit, tuple[int, Snapshot]]:
        """The exact counts of ``units`` made before :attr:`now` that only appends have
        passed since (as far as :attr:`now` tells), with the snapshot each was made at."""
        found: dict[Unit, tuple[int, Snapshot]] = {}
        if table != "messages":  # sessions are keyed by name, not in write order
            return found
        with self._lock:
            for unit in units:
                entry = self._counts.get((table, tsquery(unit)))
                if entry is not None and entry[1] and self._can_catch_up(entry[2]):
                    found[unit] = (entry[0], entry[2])
        return found

    def _can_catch_up(self, made: Snapshot) -> bool:
        if not CATCH_UP or self.now is None or made.generation == self.now.generation:
            return False
        grown = self.now.appended_since(made)
        return grown is not None and grown <= CATCH_UP_ROWS

    def keep(self, snapshot: Snapshot, table: str, counted: dict[Unit, int], cap: int | None
             ) -> bool:
        """Remember counts made at ``snapshot`` (None as ``cap``: exact whatever their size);
        False when the generation moved since the last call (see :meth:`known` and
        :meth:`behind` for what is still remembered)."""
        with self._lock:
            moved = snapshot.generation != self.generation
            # A statement of another thread that began before the last one kept: what
            # it counted is behind already; what is kept stays.
            if self.now is None or snapshot.generation > self.now.generation:
                self._advance(snapshot)
            for unit, number in counted.items():
                self._counts[(table, tsquery(unit))] = (number, cap is None or number <= cap,
                                                        snapshot)
            return not moved

    def _advance(self, snapshot: Snapshot) -> None:
        # Rows deleted or rewritten (the total may be the same) can make a common word rare.
        grown = (self._base is not None and self.now is not None
                 and self.now.rewrites == snapshot.rewrites
                 and self._base <= snapshot.messages <= self._base * (1 + GROWTH_TOLERANCE))
        if not grown:
            self._estimates.clear()
            self._base = snapshot.messages
        self.now = snapshot
        self._counts = {key: entry for key, entry in self._counts.items()
                        if (grown and not entry[1])
                        or (entry[1] and key[0] == "messages" and self._can_catch_up(entry[2]))}

    def estimated(self, terms: Sequence[str]) -> dict[str, int]:
        """The estimates known for ``terms``."""
        with self._lock:
            return {t: self._estimates[t] for t in terms if t in self._estimates}

    def keep_estimates(self, generation: int, estimates: dict[str, int]) -> None:
        """Remember estimates made at ``generation`` if it is still the current one."""
        with self._lock:
            if generation == self.generation:
                self._estimates.update(estimates)
