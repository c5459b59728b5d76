"""The pipeline: five swappable stages composed once.

Swap one stage with ``attrs.evolve``:

>>> from harkback.stages.summarize.plain import RawSummarize
>>> p = attrs.evolve(Pipeline(), summarize=RawSummarize(chars=300))
>>> type(p.summarize).__name__
'RawSummarize'
"""

from __future__ import annotations

import attrs

from harkback.pipeline.timing import timed
from harkback.stages.assemble import Assemble
from harkback.stages.flow import Loaded, Matched, Resolved, SummarizedSet
from harkback.stages.load.load import Load
from harkback.stages.match.lexical import LexicalMatch
from harkback.stages.recent import RecentSessions
from harkback.stages.request import SearchRequest
from harkback.stages.resolve import LineageResolve
from harkback.stages.result import BrowseResult, RecallResult
from harkback.stages.stage import Stage, Step
from harkback.stages.summarize.plain import ExtractiveSummarize

STAGE_NAMES = ("match", "resolve", "load", "summarize", "assemble")


@attrs.frozen(kw_only=True)
class Pipeline:
    """match → resolve → load → summarize → assemble, and recent mode for empty queries."""

    match: Stage[SearchRequest, Matched] = LexicalMatch()
    resolve: Stage[Matched, Resolved] = LineageResolve()
    load: Stage[Resolved, Loaded] = Load()
    summarize: Stage[Loaded, SummarizedSet] = ExtractiveSummarize()
    assemble: Stage[SummarizedSet, RecallResult] = Assemble()
    recent: Stage[SearchRequest, BrowseResult] = RecentSessions()

    def search(self, request: SearchRequest) -> Step[RecallResult]:
        """Run the five stages, each timed, on a non-empty query."""
        return (timed("match", self.match)(request)
                .bind(timed("resolve", self.resolve))
                .bind(timed("load", self.load))
                .bind(timed("summarize", self.summarize))
                .bind(timed("assemble", self.assemble)))

    def browse(self, request: SearchRequest) -> Step[BrowseResult]:
        """List recent sessions (no model call)."""
        return timed("recent", self.recent)(request)

    def run(self, request: SearchRequest) -> Step[RecallResult | BrowseResult]:
        """Search, or browse when the query is empty."""
        if request.is_browse:
            return self.browse(request).map(_widen_browse)
        return self.search(request).map(_widen_recall)


def _widen_browse(result: BrowseResult) -> RecallResult | BrowseResult:
    return result


def _widen_recall(result: RecallResult) -> RecallResult | BrowseResult:
    return result
