"""Expected failures, as values carried in ``returns`` containers.

>>> QueryRejected(reason="limit must be 1..10").message()
'query rejected: limit must be 1..10'
"""

from __future__ import annotations

import attrs


@attrs.frozen
class QueryRejected:
    """The request cannot be run as given (bad limit, bad time bound, ...)."""

    reason: str

    def message(self) -> str:
        """A one-line description for people."""
        return f"query rejected: {self.reason}"


@attrs.frozen
class StoreUnavailable:
    """The session store could not be read or written (missing, locked, corrupt)."""

    reason: str

    def message(self) -> str:
        """A one-line description for people."""
        return f"session store unavailable: {self.reason}"


@attrs.frozen
class ModelFailed:
    """A model call failed after its retries (timeout, HTTP error, unusable answer)."""

    reason: str

    def message(self) -> str:
        """A one-line description for people."""
        return f"model failed: {self.reason}"


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
