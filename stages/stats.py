"""How much a store holds: sessions, messages, sources, time span, vectors, summaries.

What ``harkback stats`` prints; a store that can count answers
:meth:`~harkback.stages.ports.SessionStore.stats`.

>>> stats = StoreStats(sessions=2, messages=5, sources=(SourceCount("cli", 2, 5),),
...                    oldest=0.0, newest=86400.0, bytes_on_disk=None,
...                    vectors=(("minilm", 3),), cached_summaries=1, schema_version=None)
>>> payload = stats.to_payload()
>>> payload["newest"], payload["sources"][0], payload["schema_version"]
('1970-01-02T00:00:00Z', {'source': 'cli', 'sessions': 2, 'messages': 5}, None)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import attrs

from harkback.stages.records import Session


@attrs.frozen
class SourceCount:
    """The sessions and messages of one source."""

    source: str
    sessions: int
    messages: int


@attrs.frozen(kw_only=True)
class StoreStats:
    """A store's totals. ``oldest``/``newest`` are session start times (epoch seconds;
    None when no session has one); ``bytes_on_disk`` is None for a store that is not a
    file; ``vectors`` counts message vectors per embedding model; ``schema_version`` is
    None for a store without one."""

    sessions: int
    messages: int
    sources: tuple[SourceCount, ...]
    oldest: float | None
    newest: float | None
    bytes_on_disk: int | None
    vectors: tuple[tuple[str, int], ...]
    cached_summaries: int
    schema_version: int | None

    def to_payload(self) -> dict[str, Any]:
        """The JSON form: times as ISO 8601 UTC (and epoch seconds), sources most first."""
        return {
            "sessions": self.sessions, "messages": self.messages,
            "sources": [attrs.asdict(s) for s in self.sources],
            "oldest": _iso(self.oldest), "newest": _iso(self.newest),
            "oldest_timestamp": self.oldest, "newest_timestamp": self.newest,
            "bytes_on_disk": self.bytes_on_disk,
            "vectors": {model: count for model, count in self.vectors},
            "cached_summaries": self.cached_summaries,
            # A number, as ``harkback migrate`` gives ``from`` and ``to`` (null: none).
            "schema_version": self.schema_version,
        }


def _iso(moment: float | None) -> str | None:
    if moment is None:
        return None
    text = datetime.fromtimestamp(moment, UTC).isoformat(timespec="seconds")
    return text.replace("+00:00", "Z")


def by_source(counts: Iterable[SourceCount]) -> tuple[SourceCount, ...]:
    """Sources with the most sessions first (then by name).

    >>> [s.source for s in by_source([SourceCount("a", 1, 9), SourceCount("b", 2, 1)])]
    ['b', 'a']
    """
    return tuple(sorted(counts, key=lambda s: (-s.sessions, s.source)))


def count_sessions(sessions: Iterable[Session], messages: Mapping[str, int]
                   ) -> tuple[int, int, tuple[SourceCount, ...], float | None, float | None]:
    """Sessions, messages, per-source counts and the span of start times, of sessions
    held in memory (``messages`` counts each session's messages by id).

    >>> count_sessions([Session(id="a", started_at=5.0), Session(id="b", source="x")],
    ...                {"a": 2})[:2]
    (2, 2)
    """
    per_source: dict[str, list[int]] = {}
    starts = []
    for session in sessions:
        tally = per_source.setdefault(session.source, [0, 0])
        tally[0] += 1
        tally[1] += messages.get(session.id, 0)
        if session.started_at is not None:
            starts.append(session.started_at)
    sources = by_source(SourceCount(s, n, m) for s, (n, m) in per_source.items())
    return (sum(s.sessions for s in sources), sum(s.messages for s in sources), sources,
            min(starts, default=None), max(starts, default=None))
