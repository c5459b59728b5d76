"""The assemble stage: final records, with metadata from each lineage root."""

from __future__ import annotations

from datetime import tzinfo

import attrs

from harkback.stages.flow import SummarizedSet
from harkback.stages.read_back import message_id
from harkback.stages.records import Summarized
from harkback.stages.result import Recall, RecallResult, when_text
from harkback.stages.stage import Step, pure


def to_recall(item: Summarized, tz: tzinfo | None = None) -> Recall:
    """One summarized transcript as a :class:`Recall`."""
    candidate = item.transcript.candidate
    root = candidate.root
    # A title's hit points at the first message, which may have matched too: counted once,
    # as the ids list it ("hits 3" beside two ids).
    ids = tuple(dict.fromkeys(message_id(h.session_id, h.position) for h in candidate.hits))
    return Recall(
        session_id=root.id, when=when_text(root.started_at, tz), started_at=root.started_at,
        source=root.source, model=root.model, title=root.title, project=root.project,
        preview=item.transcript.preview,
        summary=item.summary.text, summary_kind=item.summary.kind,
        summary_note=item.summary.note, matched_messages=len(ids), matched_message_ids=ids,
        matched_sessions=tuple(dict.fromkeys(h.session_id for h in candidate.hits)),
        lineage=tuple(s.id for s in candidate.lineage), truncated=item.transcript.truncated,
        transcript_chars=len(item.transcript.text), usage=item.summary.usage,
        cited_messages=item.summary.cited_messages)


@attrs.frozen
class Assemble:
    """Build the :class:`RecallResult`; ``tz`` formats ``when`` (None: local time)."""

    tz: tzinfo | None = None

    def __call__(self, summarized: SummarizedSet) -> Step[RecallResult]:
        """Assemble the result."""
        return pure(RecallResult(
            query=summarized.request.query,
            results=tuple(to_recall(item, self.tz) for item in summarized.items),
            sessions_searched=summarized.sessions_searched, rerank=summarized.rerank,
            notes=summarized.notes))
