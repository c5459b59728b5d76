"""harkback's public API: what a script, an agent or a researcher imports.

Everything named in ``__all__`` is kept stable; every other module of ``harkback.*`` is
internal and may change. Names load on first use, so ``import harkback.pipeline`` (and
the command line) stays fast until a part is needed.

>>> import asyncio
>>> from harkback.pipeline import Harkback, open_store
>>> hb = Harkback(store=open_store(":memory:").unwrap())
>>> asyncio.run(hb.search("docker network")).to_payload()["count"]
0
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    __version__: str
    from harkback.adapters.models.chat_settings import ChatSettings
    from harkback.adapters.models.local_embedder import LocalEmbedder
    from harkback.pipeline.compose import Pipeline
    from harkback.pipeline.facade import Harkback, Response, run_sync
    from harkback.pipeline.timing import RecordingObserver
    from harkback.pipeline.tool import (
        SESSION_SEARCH_TOOL,
        handle_session_search,
        handle_session_search_sync,
    )
    from harkback.pipeline.wiring import (
        STORES,
        RecallSettings,
        open_store,
        recall,
        store_kind,
        with_model,
    )
    from harkback.stages.defaults import DEFAULT_RANKER
    from harkback.stages.errors import (
        BadRecord,
        ModelFailed,
        NoStore,
        NotFound,
        QueryRejected,
        RecallError,
        StoreUnavailable,
    )
    from harkback.stages.flow import Loaded, Matched, Resolved, SummarizedSet
    from harkback.stages.match.rankers import RANKERS
    from harkback.stages.observe import Observer, StageEvent
    from harkback.stages.ports import (
        ChatModel,
        Deps,
        Embedder,
        SessionStore,
        SummaryCache,
        VectorStore,
    )
    from harkback.stages.read_back import SessionPage
    from harkback.stages.records import Conversation, Message, MessageHit, Session
    from harkback.stages.request import SearchRequest
    from harkback.stages.rerank.model import ModelRerank
    from harkback.stages.result import BrowseResult, Recall, RecallResult, RecentEntry
    from harkback.stages.stage import Stage, Step
    from harkback.stages.summarize.summarizers import DEFAULT_SUMMARIZER, SUMMARIZERS

_HOMES: dict[str, tuple[str, ...]] = {
    # the facade, the pipeline and its timing
    "harkback.pipeline.facade": ("Harkback", "Response", "run_sync"),
    "harkback.pipeline.compose": ("Pipeline",),
    "harkback.pipeline.timing": ("RecordingObserver",),
    # wiring: stores by location, stages by name, a model
    "harkback.pipeline.wiring": ("open_store", "store_kind", "STORES", "RecallSettings",
                                 "recall", "with_model"),
    "harkback.adapters.models.chat_settings": ("ChatSettings",),
    "harkback.adapters.models.local_embedder": ("LocalEmbedder",),
    # the agent tool: its schema and its handlers
    "harkback.pipeline.tool": ("SESSION_SEARCH_TOOL", "handle_session_search",
                               "handle_session_search_sync"),
    "harkback.stages.match.rankers": ("RANKERS",),
    "harkback.stages.defaults": ("DEFAULT_RANKER",),
    "harkback.stages.summarize.summarizers": ("SUMMARIZERS", "DEFAULT_SUMMARIZER"),
    "harkback.stages.rerank.model": ("ModelRerank",),
    # what a stage is, what flows between stages, the ports adapters implement
    "harkback.stages.stage": ("Stage", "Step"),
    "harkback.stages.request": ("SearchRequest",),
    "harkback.stages.read_back": ("SessionPage",),
    "harkback.stages.flow": ("Matched", "Resolved", "Loaded", "SummarizedSet"),
    "harkback.stages.result": ("RecallResult", "Recall", "BrowseResult", "RecentEntry"),
    "harkback.stages.ports": ("Deps", "SessionStore", "VectorStore", "Embedder", "ChatModel",
                              "SummaryCache"),
    "harkback.stages.observe": ("StageEvent", "Observer"),
    "harkback.stages.records": ("Conversation", "Session", "Message", "MessageHit"),
    # errors, as values
    "harkback.stages.errors": ("QueryRejected", "StoreUnavailable", "NoStore", "ModelFailed",
                               "BadRecord", "NotFound", "RecallError"),
}
_HOME_OF = {name: module for module, names in _HOMES.items() for name in names}

__all__ = [
    "DEFAULT_RANKER", "DEFAULT_SUMMARIZER", "RANKERS", "SESSION_SEARCH_TOOL", "STORES",
    "SUMMARIZERS", "BadRecord", "BrowseResult", "ChatModel", "ChatSettings", "Conversation",
    "Deps", "Embedder", "Harkback", "Loaded", "LocalEmbedder", "Matched", "Message",
    "MessageHit", "ModelFailed", "ModelRerank", "NoStore", "NotFound", "Observer", "Pipeline",
    "QueryRejected", "Recall", "RecallError", "RecallResult", "RecallSettings", "RecentEntry",
    "RecordingObserver", "Resolved", "Response", "SearchRequest", "Session", "SessionPage",
    "SessionStore", "Stage", "StageEvent", "Step", "StoreUnavailable", "SummarizedSet",
    "SummaryCache", "VectorStore", "__version__", "handle_session_search",
    "handle_session_search_sync", "open_store", "recall", "run_sync", "store_kind", "with_model",
]
"""The public names; a test pins them."""


def _version() -> str:
    # importlib.metadata takes tens of milliseconds to import: read only when asked.
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("harkback")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


def __getattr__(name: str) -> Any:
    """Import a public name from its home module on first use."""
    if name == "__version__":
        value: Any = _version()
        globals()[name] = value
        return value
    home = _HOME_OF.get(name)
    if home is None:
        raise AttributeError(f"module 'harkback.pipeline' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
