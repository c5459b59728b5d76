"""What ``harkback check`` found in a store: what is fine, what is damaged, and the next
step, in words a user acts on (the SQLite check: :mod:`sqlite_check`, its repair:
:mod:`sqlite_repair`; PostgreSQL's: :mod:`postgres_check`).

>>> found = Diagnosis(fine=("schema version 5",), damaged=("3 messages are missing from "
...     "the full-text index",), rebuildable=True, db="h.db")
>>> found.healthy, found.next_step[:37]
(False, 'harkback check --repair --db h.db: it')
>>> print(Diagnosis(fine=("schema version 5",), db="h.db").describe())
h.db: fine
  fine: schema version 5
"""

from __future__ import annotations

import attrs

from harkback.stages.shell_words import shell_quoted as quoted

ROOM = 20
"""The most damage lines a check keeps (SQLite's integrity_check finds one per broken row:
thousands for one torn page); the rest are counted in one line."""


def way_out(db: str, *, rows_whole: bool = False) -> str:
    """What a user can do when the stored sessions and messages themselves are damaged
    (``rows_whole``: they read whole, but an index cannot be rebuilt in place): nothing
    harkback rebuilds, and nothing is written into the damaged file.

    >>> way_out("h.db")[:52]
    'the stored messages themselves are damaged: restore '
    >>> way_out("h.db", rows_whole=True)[:58]
    'the stored messages read whole, but SQLite cannot mend the'
    """
    file = quoted(db)
    said = ("the stored messages read whole, but SQLite cannot mend the damaged index in "
            "the file itself" if rows_whole else "the stored messages themselves are damaged")
    # .recover keeps the file's application_id and schema version (a .dump does not, and
    # harkback would not take its copy for a store); the check of the copy says the rest.
    return (f"{said}: restore {file} from a backup; or "
            f"save what SQLite can read into a new file (sqlite3 {file} .recover | "
            f"sqlite3 new.db), then harkback check --db new.db, which says what it needs "
            f"(harkback migrate, check --repair); or move {file} aside and import the "
            f"agents' histories again (harkback sync)")


@attrs.frozen
class Diagnosis:
    """One check of the store ``db``: ``damaged`` empty means healthy; ``rebuildable``
    says every damage found is in what harkback rebuilds from the stored messages (the
    indexes), so ``harkback check --repair`` mends it."""

    fine: tuple[str, ...] = ()
    damaged: tuple[str, ...] = ()
    rebuildable: bool = False
    db: str = ""
    advice: str | None = None
    """A next step of the check's own (a migration first), said instead of the default."""

    @property
    def healthy(self) -> bool:
        return not self.damaged

    @property
    def next_step(self) -> str:
        if self.advice is not None:
            return self.advice
        if self.healthy:
            return "none"
        if self.rebuildable:
            return (f"harkback check --repair --db {quoted(self.db)}: it rebuilds the "
                    f"damaged indexes from the stored messages, in one transaction")
        return way_out(self.db)

    def to_payload(self) -> dict[str, object]:
        """The JSON form: ``healthy``, ``fine``, ``damaged``, ``rebuildable``, ``next_step``."""
        return {"db": self.db, "healthy": self.healthy, "fine": list(self.fine),
                "damaged": list(self.damaged), "rebuildable": self.rebuildable,
                "next_step": self.next_step}

    def describe(self) -> str:
        """Lines for a terminal: the verdict, then each finding, then the next step."""
        verdict = "fine" if self.healthy else "damaged"
        # Quoted: a control character of the file's name is shown, not sent to the terminal.
        lines = [f"{quoted(self.db)}: {verdict}", *(f"  fine: {line}" for line in self.fine),
                 *(f"  damaged: {line}" for line in self.damaged)]
        if not self.healthy or self.advice is not None:
            lines.append(f"next step: {self.next_step}")
        return "\n".join(lines)


def bounded(lines: list[str]) -> tuple[str, ...]:
    """At most :data:`ROOM` of ``lines``, the rest counted in a last one.

    >>> bounded([f"row {i}" for i in range(25)])[-1]
    '5 more lines like these'
    """
    if len(lines) <= ROOM:
        return tuple(lines)
    return (*lines[:ROOM], f"{len(lines) - ROOM} more lines like these")
