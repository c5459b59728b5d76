"""What a recall returns, and its JSON-ready form.

>>> when_text(1772547300.0, UTC)
'March 03, 2026 at 02:15 PM UTC'
"""

from __future__ import annotations

from datetime import UTC, datetime, tzinfo
from typing import Any

import attrs

from harkback.stages.local_days import zone_label
from harkback.stages.records import RerankReport, SessionOverview, SummaryKind, TokenUsage

__all__ = ["UTC", "BrowseResult", "Recall", "RecallResult", "RecentEntry", "when_text"]


def when_text(epoch: float | None, tz: tzinfo | None = None) -> str:
    """A readable time such as ``March 03, 2026 at 02:15 PM UTC-08:00`` (local time unless
    ``tz``), ending with its offset from UTC so it reads the same in any zone.

    A time the local zone cannot show (in the year 10000 there, before the year 1, or a
    zone a whole day off UTC, as ``TZ=UTC+24`` is) is shown in UTC, as its label says;
    only one outside the years 1 to 9999 even in UTC reads as ``unknown time``.

    >>> when_text(None), when_text(1e20), when_text(-62135596800.0)
    ('unknown time', 'unknown time', 'January 01, 0001 at 12:00 AM UTC')
    """
    if epoch is None:
        return "unknown time"
    for zone in (tz, UTC) if tz else (None, UTC):
        try:
            moment = datetime.fromtimestamp(epoch, zone) if zone else \
                datetime.fromtimestamp(epoch).astimezone()
        except (OverflowError, OSError, ValueError):
            continue
        # %Y is not padded on every platform (glibc writes the year 1 as "1")
        return (f"{moment.strftime('%B %d')}, {moment.year:04d} at "
                f"{moment.strftime('%I:%M %p')} {zone_label(moment.utcoffset())}")
    return "unknown time"


@attrs.frozen(kw_only=True)
class Recall:
    """One recalled session: metadata from the lineage root, and its summary.

    ``matched_message_ids`` are the matched messages as ``SESSION_ID:POSITION``, best
    first: the ids ``harkback show SESSION_ID --around ID`` opens (human output prints
    that command for the first).
    """

    session_id: str
    when: str
    started_at: float | None
    source: str
    model: str
    title: str
    summary: str
    project: str = ""
    preview: str = ""
    """The session's first request on one line, as ``recent`` lists it
    (:mod:`~harkback.stages.first_request`; ``""`` when it has none)."""
    summary_kind: SummaryKind
    summary_note: str = ""
    matched_messages: int = 0
    matched_message_ids: tuple[str, ...] = ()
    matched_sessions: tuple[str, ...] = ()
    lineage: tuple[str, ...] = ()
    truncated: bool = False
    transcript_chars: int = 0
    usage: TokenUsage = attrs.field(factory=TokenUsage)
    cited_messages: tuple[int, ...] = ()

    def to_payload(self) -> dict[str, Any]:
        """The JSON form of this result."""
        payload: dict[str, Any] = {
            "session_id": self.session_id, "when": self.when, "started_at": self.started_at,
            "source": self.source, "model": self.model, "title": self.title,
            "project": self.project, "preview": self.preview, "summary": self.summary,
            "summary_kind": self.summary_kind,
            "matched_messages": self.matched_messages,
            "matched_message_ids": list(self.matched_message_ids),
            "matched_sessions": list(self.matched_sessions), "lineage": list(self.lineage),
            "truncated": self.truncated, "transcript_chars": self.transcript_chars,
        }
        if self.summary_note:
            payload["summary_note"] = self.summary_note
        if self.usage.prompt or self.usage.completion:
            payload["usage"] = {"prompt_tokens": self.usage.prompt,
                                "completion_tokens": self.usage.completion}
        if self.cited_messages:
            payload["cited_messages"] = list(self.cited_messages)
        return payload


@attrs.frozen(kw_only=True)
class RecallResult:
    """The answer to a search: recalled sessions, best first, what a rerank did, and
    notes on what a stage left out (meaning, when the embedder failed)."""

    query: str
    results: tuple[Recall, ...]
    sessions_searched: int
    rerank: RerankReport | None = None
    notes: tuple[str, ...] = ()

    @property
    def usage(self) -> TokenUsage:
        """Model tokens used by all summaries together (a rerank's are in its report)."""
        total = TokenUsage()
        for recall in self.results:
            total = total + recall.usage
        return total

    def to_payload(self) -> dict[str, Any]:
        """The JSON form: ``{"success": true, "query", "results", "count", ...}``."""
        payload: dict[str, Any] = {
            "success": True, "mode": "search", "query": self.query,
            "results": [r.to_payload() for r in self.results], "count": len(self.results),
            "sessions_searched": self.sessions_searched,
        }
        if not self.results:
            payload["message"] = self._none_found()
        usage = self.usage
        if usage.prompt or usage.completion:
            payload["usage"] = {"prompt_tokens": usage.prompt,
                                "completion_tokens": usage.completion}
        notes = list(self.notes)
        if self.rerank is not None:
            payload["rerank"] = rerank_payload(self.rerank)
            notes += [self.rerank.note] if self.rerank.note else []
        if notes:
            payload["notes"] = notes
        return payload


    def _none_found(self) -> str:
        """Why no session is returned: none matched, or the rerank's model kept none of
        those that did (then "No matching sessions found." was untrue).

        >>> RecallResult(query="q", results=(), sessions_searched=3,
        ...              rerank=RerankReport(shown=3, kept=0, calls=1))._none_found()
        'The model judged none of the 3 matching sessions relevant.'
        """
        shown = self.rerank.shown if self.rerank is not None and self.rerank.model_order else 0
        if shown:
            return (f"The model judged none of the {shown} matching "
                    f"session{'s' if shown > 1 else ''} relevant.")
        return "No matching sessions found."


def rerank_payload(report: RerankReport) -> dict[str, Any]:
    """The JSON form of a rerank report.

    >>> rerank_payload(RerankReport(shown=20, kept=3, calls=4))["kept"]
    3
    """
    return {"shown": report.shown, "kept": report.kept, "calls": report.calls,
            "cached_calls": report.cached_calls, "prompt_tokens": report.usage.prompt,
            "completion_tokens": report.usage.completion, "model_order": report.model_order}


@attrs.frozen(kw_only=True)
class RecentEntry:
    """One session listed by recent mode."""

    session_id: str
    title: str
    source: str
    when: str
    started_at: float | None
    message_count: int
    preview: str
    project: str = ""
    model: str = ""
    """The session's model, as a search result names it ("" when the agent kept none)."""

    @classmethod
    def from_overview(cls, overview: SessionOverview, tz: tzinfo | None = None) -> RecentEntry:
        """Build an entry from a store's overview row."""
        s = overview.session
        return cls(session_id=s.id, title=s.title, source=s.source,
                   when=when_text(s.started_at, tz), started_at=s.started_at,
                   message_count=overview.message_count, preview=overview.preview,
                   project=s.project, model=s.model)

    def to_payload(self) -> dict[str, Any]:
        """The JSON form of this entry."""
        return attrs.asdict(self)


@attrs.frozen(kw_only=True)
class BrowseResult:
    """Recent mode's answer: root sessions, newest first; for a question that names only a
    time, the ``query`` asked and the ``window`` (epoch seconds) it was read to name.

    >>> BrowseResult(results=(), query="what did I do yesterday?",
    ...              window=(86400.0, 172800.0)).to_payload()["window"]
    {'since': 86400.0, 'until': 172800.0}
    """

    results: tuple[RecentEntry, ...]
    query: str = ""
    window: tuple[float | None, float | None] | None = None
    notes: tuple[str, ...] = ()

    def to_payload(self) -> dict[str, Any]:
        """The JSON form: ``{"success": true, "mode": "recent", "query", "results", "count"}``,
        ``"window": {"since", "until"}`` when the question named the time listed, and
        ``"notes"`` on what it could not list."""
        payload = {"success": True, "mode": "recent", "query": self.query,
                   "results": [r.to_payload() for r in self.results], "count": len(self.results)}
        if self.window is not None:
            payload["window"] = {"since": self.window[0], "until": self.window[1]}
        if self.notes:
            payload["notes"] = list(self.notes)
        return payload
