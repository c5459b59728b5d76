"""A real store that counts the calls made of its :class:`~harkback.stages.ports.SessionStore`
port, by name: what a test of "how many times is the store asked" reads.

>>> from harkback.adapters.stores.memory import MemoryStore
>>> counted = CallsCounted(MemoryStore())
>>> _ = counted.sessions(("x",))
>>> counted.calls, counted.asked["sessions"]
(Counter({'sessions': 1}), [('x',)])
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from harkback.stages.ports import SessionStore


class CallsCounted:
    """``store``, passed through, its port's calls counted in :attr:`calls` (not the
    facade's running of a whole search on the store's own thread), and the first argument
    of each in :attr:`asked`."""

    def __init__(self, store: SessionStore) -> None:
        self._store = store
        self.calls: Counter[str] = Counter()
        self.asked: dict[str, list[Any]] = {}

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._store, name)
        if not callable(found) or not hasattr(SessionStore, name):
            return found

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            self.asked.setdefault(name, []).append(args[0] if args else None)
            return found(*args, **kwargs)
        return counted
