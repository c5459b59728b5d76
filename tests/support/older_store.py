"""A caller's own store written before the port named one of its calls: every call but
that one is the wrapped store's (what harkback must answer without a traceback).

>>> from harkback.adapters.stores.memory import MemoryStore
>>> hasattr(OlderStore(MemoryStore(), "ids_alike"), "ids_alike")
False
"""

from __future__ import annotations

from typing import Any


class OlderStore:
    """``store`` without its call ``lacking``."""

    def __init__(self, store: object, lacking: str) -> None:
        self._store = store
        self._lacking = lacking

    def __getattr__(self, name: str) -> Any:
        if name == self._lacking:
            raise AttributeError(name)
        return getattr(self._store, name)
