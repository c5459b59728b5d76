"""What ``harkback mcp`` loads at its first tool call: the handlers, the store, the model.

:mod:`~harkback.pipeline.mcp_server` answers the client's handshake without this module
(it brings the stages, the stores and, with a model, the ``openai`` SDK) and imports it
in a worker thread when the first call comes (:class:`~harkback.pipeline.mcp_server.Deferred`).

>>> import asyncio
>>> from harkback.pipeline.settings import effective
>>> from pathlib import Path
>>> given = effective({"db": "/no/such/folder/h.db"}, {}, path=Path("/nonexistent")).unwrap()
>>> calls = ToolCalls(given, said=lambda line: None)
>>> print(asyncio.run(calls.call("recent_sessions", {})).failure())
session store unavailable: no harkback database at /no/such/folder/h.db...
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from returns.result import Failure, Result

from harkback.pipeline import wiring
from harkback.pipeline.mcp_store import LazyStore
from harkback.pipeline.mcp_tools import call_tool, recall_settings
from harkback.pipeline.settings import Settings


class ToolCalls:
    """The tools run on the store of ``settings`` (opened at the first call, see
    :class:`LazyStore`), searching with its model and embedder; ``limits`` bound the model
    (``max_concurrency``, ``rate`` ...), one client for all calls. ``said`` is given each
    line on why the store cannot be opened, once until it changes (the server's stderr)."""

    def __init__(self, settings: Settings, limits: Mapping[str, Any] | None = None, *,
                 said: Callable[[str], None]) -> None:
        recall = recall_settings(settings, None, limits)
        self.settings = settings
        self.store = LazyStore(settings.db, recall)
        # One for all calls: its limits (max_concurrency, rate) hold for the server, and
        # its connection is kept.
        self.model = None if recall.chat is None else wiring.chat_model(recall.chat)
        self._said = said
        self._last: str | None = None

    async def call(self, name: str, arguments: Mapping[str, Any] | None
                   ) -> Result[dict[str, Any], str]:
        """The tool's payload, or the one line saying why not."""
        async with self.store.lease() as opened:
            if isinstance(opened, Failure):
                # Said on stderr too: a client may show the tool error to the agent only,
                # and the person reading the server's log would see nothing wrong.
                if opened.failure() != self._last:
                    self._said(opened.failure())
                self._last = opened.failure()
                return Failure(opened.failure())
            self._last = None
            return await call_tool(opened.unwrap(), name, arguments, self.settings, self.model)

    async def aclose(self) -> None:
        """Close the model's connection and the store."""
        try:
            if self.model is not None:
                await self.model.aclose()
        finally:
            self.store.close()
