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
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harkback.adapters.models.openai_chat import ChatSettings
    from harkback.pipeline.compose import Pipeline
    from harkback.pipeline.facade import Harkback, Response, run_sync
    from harkback.pipeline.timing import RecordingObserver
    from harkback.pipeline.wiring import (
        STORES,
        RecallSettings,
        open_store,
        recall,
        store_kind,
        with_model,
    )
    from harkback.stages.errors import (
        BadRecord,
        ModelFailed,
        QueryRejected,
        RecallError,
        StoreUnavailable,
    )
    from harkback.stages.flow import Loaded, Matched, Resolved, SummarizedSet
    from harkback.stages.match.rankers import DEFAULT_RANKER, RANKERS
    from harkback.stages.ports import (
        ChatModel,
        Deps,
        Embedder,
        Observer,
        SessionStore,
        StageEvent,
        SummaryCache,
        VectorStore,
    )
    from harkback.stages.records import Conversation, Message, MessageHit, Session
    from harkback.stages.request import SearchRequest
    from harkback.stages.result import BrowseResult, Recall, RecallResult, RecentEntry
    from harkback.stages.stage import Stage, Step
    from harkback.stages.summarize.summarizers import DEFAULT_SUMMARIZER, SUMMARIZERS

_HOMES: dict[str, str] = {
    # the facade and the pipeline
    "Harkback": "harkback.pipeline.facade", "Response": "harkback.pipeline.facade",
    "run_sync": "harkback.pipeline.facade", "Pipeline": "harkback.pipeline.compose",
    "RecordingObserver": "harkback.pipeline.timing",
    # wiring: stores by location, stages by name, a model
    "open_store": "harkback.pipeline.wiring", "store_kind": "harkback.pipeline.wiring",
    "STORES": "harkback.pipeline.wiring", "RecallSettings": "harkback.pipeline.wiring",
    "recall": "harkback.pipeline.wiring", "with_model": "harkback.pipeline.wiring",
    "ChatSettings": "harkback.adapters.models.openai_chat",
    "RANKERS": "harkback.stages.match.rankers", "DEFAULT_RANKER": "harkback.stages.match.rankers",
    "SUMMARIZERS": "harkback.stages.summarize.summarizers",
    "DEFAULT_SUMMARIZER": "harkback.stages.summarize.summarizers",
    # what a stage is, and what flows between stages
    "Stage": "harkback.stages.stage", "Step": "harkback.stages.stage",
    "Deps": "harkback.stages.ports", "StageEvent": "harkback.stages.ports",
    "Observer": "harkback.stages.ports",
    "SearchRequest": "harkback.stages.request",
    "Matched": "harkback.stages.flow", "Resolved": "harkback.stages.flow",
    "Loaded": "harkback.stages.flow", "SummarizedSet": "harkback.stages.flow",
    "RecallResult": "harkback.stages.result", "Recall": "harkback.stages.result",
    "BrowseResult": "harkback.stages.result", "RecentEntry": "harkback.stages.result",
    # the ports adapters implement
    "SessionStore": "harkback.stages.ports", "VectorStore": "harkback.stages.ports",
    "Embedder": "harkback.stages.ports", "ChatModel": "harkback.stages.ports",
    "SummaryCache": "harkback.stages.ports",
    # records
    "Conversation": "harkback.stages.records", "Session": "harkback.stages.records",
    "Message": "harkback.stages.records", "MessageHit": "harkback.stages.records",
    # errors, as values
    "QueryRejected": "harkback.stages.errors", "StoreUnavailable": "harkback.stages.errors",
    "ModelFailed": "harkback.stages.errors", "BadRecord": "harkback.stages.errors",
    "RecallError": "harkback.stages.errors",
}

__all__ = [
    "DEFAULT_RANKER",
    "DEFAULT_SUMMARIZER",
    "RANKERS",
    "STORES",
    "SUMMARIZERS",
    "BadRecord",
    "BrowseResult",
    "ChatModel",
    "ChatSettings",
    "Conversation",
    "Deps",
    "Embedder",
    "Harkback",
    "Loaded",
    "Matched",
    "Message",
    "MessageHit",
    "ModelFailed",
    "Observer",
    "Pipeline",
    "QueryRejected",
    "Recall",
    "RecallError",
    "RecallResult",
    "RecallSettings",
    "RecentEntry",
    "RecordingObserver",
    "Resolved",
    "Response",
    "SearchRequest",
    "Session",
    "SessionStore",
    "Stage",
    "StageEvent",
    "Step",
    "StoreUnavailable",
    "SummarizedSet",
    "SummaryCache",
    "VectorStore",
    "__version__",
    "open_store",
    "recall",
    "run_sync",
    "store_kind",
    "with_model",
]
"""The public names; a test pins them."""

try:
    __version__ = version("harkback")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"


def __getattr__(name: str) -> Any:
    """Import a public name from its home module on first use."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'harkback.pipeline' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
