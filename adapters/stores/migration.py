"""Schema versions of a store and the forward steps between them, whatever the database.

A store keeps one ordered tuple of :class:`Migration` steps (SQLite's is
:data:`harkback.adapters.stores.sql.migrations.MIGRATIONS`): the first layout a store ever
wrote is version 1 and step *n* leads from version *n* to *n + 1*. Opening a store reads its
version, then applies :func:`pending` steps (a writable open, or ``harkback migrate``),
reads through the steps' read views (a read-only open), or refuses a version newer than
:func:`latest` with :func:`too_new`'s line.

>>> steps = (Migration(2, "add a column", ("ALTER TABLE t ADD COLUMN c",)),)
>>> latest(steps), [m.version for m in pending(steps, 1)], pending(steps, 2)
(2, [2], ())
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

import attrs

from harkback.stages.shell_words import shell_quoted

C = TypeVar("C")

FIRST_VERSION = 1
"""The version of a store's original layout, written before versions moved."""


@attrs.frozen
class Migration(Generic[C]):
    """One forward step: the statements that lead to ``version`` from the version before,
    then ``rewrite``, work in Python on the store's connection ``C`` in the same
    transaction (rows whose derived text changed: re-indexing them), when there is any.

    ``read_view`` makes a read-only connection see a store of the version before as if
    it were of ``version``, creating nothing in the store (SQLite: ``TEMP`` views; an
    empty tuple when the rows read as they are); None when that cannot be done, so a
    read-only open asks for ``harkback migrate``.
    """

    version: int
    about: str
    statements: tuple[str, ...]
    read_view: tuple[str, ...] | None = None
    rewrite: Callable[[C], object] | None = None


@attrs.frozen
class Migrated:
    """What an open found and left: the store's schema version before and after, what
    each step applied did (its ``about``), and the latest version of the store's own kind
    (SQLite's and PostgreSQL's differ), which every construction must say: a default (it
    was 0, "never behind") let a search that forgot it open an older store writable, and
    so migrate it.

    >>> Migrated(4, 4, latest=5).behind, Migrated(6, 6, latest=7).behind
    (True, True)
    >>> Migrated(5, 5, latest=5).behind, Migrated(5, 5, ("add a column",), latest=5)
    (False, Migrated(before=5, after=5, applied=('add a column',), latest=5))
    >>> Migrated(5, 5)
    Traceback (most recent call last):
    TypeError: Migrated.__init__() missing 1 required keyword-only argument: 'latest'
    """

    before: int
    after: int
    applied: tuple[str, ...] = ()
    # Not compared: two opens that found and left the same versions are the same.
    latest: int = attrs.field(eq=False, kw_only=True)
    unfinished: str | None = attrs.field(default=None, eq=False, repr=False, kw_only=True)
    """What was left to finish after the store closed, said as a note (SQLite: a
    checkpoint that could not copy the last commits into the file); None: nothing."""

    @property
    def behind(self) -> bool:
        """Whether the store is left at an older version than its kind's latest (read as it
        is, read-only); a writable open of it would migrate it."""
        return self.after < self.latest

    def describe(self, where: str) -> str:
        """One line for ``harkback migrate``.

        >>> print(Migrated(1, 2, ("add a column",), latest=2).describe("h.db"))
        h.db: schema version 1 -> 2 (add a column)
        >>> print(Migrated(2, 2, latest=2).describe("h.db"))
        h.db: schema version 2, up to date
        """
        if self.before == self.after:
            return f"{where}: schema version {self.after}, up to date"
        steps = f" ({'; '.join(self.applied)})" if self.applied else ""
        return f"{where}: schema version {self.before} -> {self.after}{steps}"


def latest(steps: Sequence[Migration[Any]]) -> int:
    """The version the steps lead to (the first version when there are none)."""
    return steps[-1].version if steps else FIRST_VERSION


def check_order(steps: Sequence[Migration[Any]]) -> None:
    """Raise ValueError unless the steps lead from version 1 one version at a time.

    >>> check_order((Migration(3, "skips 2", ()),))
    Traceback (most recent call last):
    ...
    ValueError: migration 1 leads to version 3, expected 2
    """
    for index, step in enumerate(steps):
        if step.version != FIRST_VERSION + index + 1:
            raise ValueError(f"migration {index + 1} leads to version {step.version}, "
                             f"expected {FIRST_VERSION + index + 1}")


def pending(steps: Sequence[Migration[C]], found: int) -> tuple[Migration[C], ...]:
    """The steps a store of version ``found`` still needs, in order."""
    return tuple(step for step in steps if step.version > found)


def too_new(where: str, found: int, known: int) -> str:
    """The line that refuses a store newer than this harkback.

    >>> too_new("h.db", 3, 2)
    'h.db has harkback schema version 3, newer than this harkback knows (2): upgrade harkback'
    """
    return (f"{where} has harkback schema version {found}, newer than this harkback knows "
            f"({known}): upgrade harkback")


def needs_migrate(where: str, found: int, known: int) -> str:
    """The line that asks for ``harkback migrate`` when a read-only open cannot read.

    The command is quoted for a shell, so it can be pasted: a socket URL's ``&port=``
    would send it to the background, a space would split a path.

    >>> needs_migrate("h.db", 1, 2)
    'h.db has harkback schema version 1; run `harkback migrate --db h.db` to bring it to 2'
    >>> needs_migrate("postgresql:///h?host=/s&port=5433", 1, 2).split("`")[1]
    "harkback migrate --db 'postgresql:///h?host=/s&port=5433'"
    """
    return (f"{where} has harkback schema version {found}; run `harkback migrate --db "
            f"{shell_quoted(where)}` to bring it to {known}")


def moved_on(found: int, known: int, *, refused: str = "nothing was written") -> str:
    """The line that refuses a write (or a search: ``refused`` says which) to a store whose
    schema version changed while this harkback had it open: another harkback migrated it,
    and what this one would write (its tokens, its rows) or ask may no longer be what the
    store's version holds.

    >>> moved_on(4, 3).startswith("the store is now at harkback schema version 4, not 3")
    True
    >>> moved_on(4, 3).split(": ")[1]
    'nothing was written; restart with a harkback that knows version 4'
    >>> moved_on(4, 3, refused="nothing was searched").split(": ")[1][:20]
    'nothing was searched'
    """
    return (f"the store is now at harkback schema version {found}, not {known} as when this "
            f"harkback opened it (another harkback migrated it): {refused}; restart "
            f"with a harkback that knows version {found}")
