"""Expected failures, as values carried in ``returns`` containers.

>>> QueryRejected(reason="limit must be 1..10").message()
'query rejected: limit must be 1..10'
"""

from __future__ import annotations

from typing import Any, ClassVar

import attrs


@attrs.frozen
class _Reasoned:
    """An expected failure of a recall: why, and a one-line description for people."""

    reason: str
    label: ClassVar[str]

    def __init_subclass__(cls, *, label: str | None = None, **kwargs: Any) -> None:
        # Each kind names itself in its class statement; the record itself is shared. (A
        # kind with fields of its own is made again by attrs, without the label: it keeps
        # the one its class statement gave.)
        super().__init_subclass__(**kwargs)
        if label is not None:
            cls.label = label

    def message(self) -> str:
        """A one-line description for people."""
        return f"{self.label}: {self.reason}"


class QueryRejected(_Reasoned, label="query rejected"):
    """The request cannot be run as given (bad limit, bad time bound, ...)."""


@attrs.frozen
class StoreUnavailable(_Reasoned, label="session store unavailable"):
    """The session store could not be read or written (missing, locked, corrupt).

    ``transient``: what failed may pass by itself, so trying again later may succeed (its
    server stopped or restarting, its file locked by another writer, a lock another
    connection holds): set by the store, which knows its library's errors; what waits
    for the store (``sync --watch``) reads it, never the words of ``reason``. A refusal
    that waiting does not mend (a wrong password, a database dropped, a certificate that
    fails verification, a corrupt file) is not transient.

    >>> StoreUnavailable("cannot reach the server", transient=True).message()
    'session store unavailable: cannot reach the server'
    >>> StoreUnavailable("h.db: the file is not a SQLite database").transient
    False
    """

    transient: bool = attrs.field(default=False, kw_only=True)


class NoStore(StoreUnavailable):
    """The place named holds no store yet (an empty PostgreSQL database, a SQLite file not
    there, opened read-only): nothing is broken, nothing was made; a dry run compares with
    an empty store, every other command says so.

    >>> NoStore("postgresql:///h holds no harkback store").message()
    'session store unavailable: postgresql:///h holds no harkback store'
    """


class SourceUnreadable(StoreUnavailable, label="source unreadable"):
    """What an import reads (another agent's history, an ingest file) could not be read:
    missing, damaged, not what it should be. A :class:`StoreUnavailable` to every caller,
    but named for what failed: the store itself is fine.

    >>> SourceUnreadable("x.db is not a Hermes state.db").message()
    'source unreadable: x.db is not a Hermes state.db'
    """


class ModelFailed(_Reasoned, label="model failed"):
    """A model call failed after its retries (timeout, HTTP error, unusable answer)."""


class NotFound(_Reasoned, label="not found"):
    """What was asked for is not stored (an unknown session, a page past the end)."""


@attrs.frozen
class BadRecord:
    """An outside record (a JSON line, a row) that does not describe a valid session."""

    reason: str
    line: int | None = None

    def message(self) -> str:
        """A one-line description for people."""
        where = f"line {self.line}: " if self.line is not None else ""
        return f"{where}{self.reason}"


RecallError = QueryRejected | StoreUnavailable | ModelFailed
"""Everything a recall can fail with."""
