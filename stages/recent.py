"""Recent mode: an empty query lists recent root sessions; no summarizer runs."""

from __future__ import annotations

from datetime import tzinfo

import attrs

from harkback.stages.lineage import load_ancestry, root_of
from harkback.stages.ports import RecentQuery
from harkback.stages.records import Session, SessionOverview
from harkback.stages.request import SearchRequest
from harkback.stages.result import BrowseResult, RecentEntry
from harkback.stages.stage import Step, with_store


@attrs.frozen
class RecentSessions:
    """List ``request.limit`` recent roots, newest first, the caller's lineage left out."""

    tz: tzinfo | None = None

    def __call__(self, request: SearchRequest) -> Step[BrowseResult]:
        """Browse recent sessions."""
        current = (request.current_session_id,) if request.current_session_id else ()

        def listing(known: dict[str, Session]) -> RecentQuery:
            root = root_of(request.current_session_id or "", known)
            return RecentQuery(limit=request.limit, exclude_roots=(root.id,) if root else (),
                               hidden_sources=request.hidden_sources, since=request.since,
                               until=request.until)

        def entries(rows: tuple[SessionOverview, ...]) -> BrowseResult:
            return BrowseResult(results=tuple(RecentEntry.from_overview(r, self.tz)
                                              for r in rows))

        return (with_store(lambda deps: load_ancestry(deps.store, current))
                .map(listing)
                .bind(lambda query: with_store(lambda deps: deps.store.recent(query)))
                .map(entries))
