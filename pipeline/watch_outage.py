"""A store that cannot be reached for a while during ``sync --watch`` (its PostgreSQL server
restarting): the watch goes on.

The first round that finds it unavailable says so once on stderr, naming the store and
that the watch tries again; the sources due then are held back and tried again after a
wait that doubles from :data:`FIRST_WAIT_S` up to :data:`LONGEST_WAIT_S` (changes met
meanwhile join them); the first round that reaches the store says once that it is back.
Nothing is lost or stored twice: a round the store refused stored nothing (it could not
take the store's sync lock), and each source's marks say what it holds. A store lost in
the middle of a round (:func:`passing`: its server gone, its file locked by another
writer) is waited for alike, once its sync lock taken again says it is out of reach for
now (not refused for good): the sources of the round not synced yet wait with the one
that met it, whose marks were not moved past what it stored.

>>> said = []
>>> outage = Outage(say=said.append, clock=lambda: 0.0)
>>> outage.failed(["codex"], "postgresql:///h", "server closed the connection")
>>> said[0][:72]
'harkback: the store at postgresql:///h is unavailable (server closed the'
>>> outage.due(["hermes"]), outage.held
([], ['codex', 'hermes'])
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from harkback.pipeline.sync import SourceReport

T = TypeVar("T")

FIRST_WAIT_S = 1.0
"""The wait before the first try again."""
LONGEST_WAIT_S = 60.0
"""The longest wait between two tries."""


def passing(report: SourceReport) -> bool:
    """Whether ``report`` failed on the store being out of reach for now, as the store
    itself said (:attr:`~harkback.stages.errors.StoreUnavailable.transient`: its server
    stopped, starting or not answering, a lock another connection holds, a SQLite file
    another writer holds locked); not on its source, nor on a refusal that waiting does not
    mend (a wrong password, a certificate that fails verification).

    >>> passing(SourceReport(kind="codex", location="/x", status="failed", store_failed=True,
    ...                      store_transient=True, error="cannot reach the PostgreSQL server"))
    True
    >>> passing(SourceReport(kind="codex", location="/x", status="failed", store_failed=True,
    ...                      error="cannot reach the PostgreSQL server of postgresql:///h: "
    ...                            "SSL error: certificate verify failed"))
    False
    """
    return report.store_failed and report.store_transient


class Outage(Generic[T]):
    """Whether the store is out of reach, since when it is said, and what waits for it."""

    def __init__(self, say: Callable[[str], None],
                 clock: Callable[[], float] = time.monotonic) -> None:
        """``say``: prints a line (on stderr); ``clock``: seconds, for the waits."""
        self.say, self.clock = say, clock
        self.held: list[T] = []
        self.where = ""
        self.reason = ""
        self.wait = 0.0
        self.next_try = 0.0

    @property
    def down(self) -> bool:
        """Whether the last round found the store out of reach."""
        return bool(self.where)

    def due(self, due: Sequence[T]) -> list[T]:
        """What to sync now: ``due`` with those held back, or none while the wait runs
        (``due`` is then held back too)."""
        for item in due:
            if item not in self.held:
                self.held.append(item)
        if self.down and self.clock() < self.next_try:
            return []
        taken, self.held = self.held, []
        return taken

    def failed(self, due: Sequence[T], where: str, reason: str) -> None:
        """The round of ``due`` found the store at ``where`` out of reach (``reason``)."""
        if not self.down:
            self.say(f"harkback: the store at {where} is unavailable ({reason}); the watch "
                     f"keeps what changed and tries again (in {FIRST_WAIT_S:g} s, then less "
                     f"often, up to every {LONGEST_WAIT_S:g} s)")
        self.where, self.reason = where, reason
        self.wait = min(LONGEST_WAIT_S, self.wait * 2 or FIRST_WAIT_S)
        self.next_try = self.clock() + self.wait
        self.held = [*due, *(item for item in self.held if item not in due)]

    def stopped(self, due: Sequence[T]) -> None:
        """The round of ``due`` was stopped (Ctrl-C) before it ended: a store out of reach
        was not seen back, and ``due`` still waits for it (the watch ends failing on it)."""
        if self.down:
            self.held = [*due, *(item for item in self.held if item not in due)]

    def reached(self) -> None:
        """A round reached the store: said once when it was out of reach."""
        if self.down:
            self.say(f"harkback: the store at {self.where} is back; what changed "
                     "meanwhile is synced")
        self.where, self.reason, self.wait = "", "", 0.0
