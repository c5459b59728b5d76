"""The resolve stage: one candidate per lineage root, the caller's own lineage left out.

>>> hits = (_h("child", 3.0), _h("other", 2.0), _h("root", 1.0))
>>> known = {s.id: s for s in (Session(id="root"), Session(id="other"),
...                            Session(id="child", parent_session_id="root"))}
>>> [c.root.id for c in group_by_root(hits, known, exclude_root=None, hidden_sources=())]
['root', 'other']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from harkback.stages.defaults import MAX_LIMIT
from harkback.stages.flow import Matched, Resolved
from harkback.stages.lineage import descends_from, load_ancestry, root_of
from harkback.stages.records import Candidate, MessageHit, Session
from harkback.stages.stage import Step, with_store


def group_by_root(hits: Sequence[MessageHit], known: Mapping[str, Session], *,
                  exclude_root: str | None, hidden_sources: Sequence[str],
                  exclude_descendants_of: str | None = None) -> tuple[Candidate, ...]:
    """Group hits under their lineage root, roots in order of their best hit.

    Hits in ``exclude_root``'s lineage are left out, and so are those in sessions descending
    from ``exclude_descendants_of`` (the caller's session, which may not be stored yet).
    Stable and idempotent: the order of roots follows the order of ``hits``.
    """
    grouped: dict[str, list[MessageHit]] = {}
    roots: dict[str, Session] = {}
    for hit in hits:
        root = root_of(hit.session_id, known)
        if root is None or root.id == exclude_root or root.source in hidden_sources:
            continue
        if exclude_descendants_of and descends_from(hit.session_id, exclude_descendants_of,
                                                    known):
            continue
        grouped.setdefault(root.id, []).append(hit)
        roots[root.id] = root
    return tuple(Candidate(root=roots[rid], hits=tuple(group)) for rid, group in grouped.items())


@attrs.frozen
class LineageResolve:
    """Trace hits to their lineage roots; keep the best ``request.limit`` of them.

    ``max_candidates`` caps the limit whatever the request says; a request's
    ``shortlist`` (set for a rerank stage) keeps that many when it is more.
    """

    max_candidates: int = attrs.field(default=MAX_LIMIT, validator=attrs.validators.ge(1))

    def __call__(self, matched: Matched) -> Step[Resolved]:
        """Resolve ``matched.hits`` into candidates."""
        request = matched.request
        ids = [h.session_id for h in matched.hits]
        if request.current_session_id:
            ids.append(request.current_session_id)

        def resolved(known: dict[str, Session]) -> Resolved:
            current = root_of(request.current_session_id or "", known)
            candidates = group_by_root(
                matched.hits, known, exclude_root=current.id if current else None,
                hidden_sources=request.hidden_sources,
                exclude_descendants_of=request.current_session_id)
            limit = max(min(request.limit, self.max_candidates), request.shortlist)
            return Resolved(request=request, parsed=matched.parsed,
                            candidates=candidates[:limit], sessions_searched=len(candidates),
                            notes=matched.notes)

        # The ranker may have read the lineages already (lexical): only the rest is asked.
        known = {s.id: s for s in matched.lineage}
        return with_store(lambda deps: load_ancestry(deps.store, ids, known=known)).map(resolved)


def _h(session_id: str, score: float) -> MessageHit:
    """A hit for examples and tests."""
    return MessageHit(session_id=session_id, position=0, role="user", content="", score=score)
