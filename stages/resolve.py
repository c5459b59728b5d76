"""The resolve stage: one candidate per lineage root, the caller's own lineage left out.

>>> hits = (_h("child", 3.0), _h("other", 2.0), _h("root", 1.0))
>>> known = {s.id: s for s in (SessionLink("root"), SessionLink("other"),
...                            SessionLink("child", parent_session_id="root"))}
>>> [(root.id, len(hits)) for root, hits in group_by_root(hits, known, exclude_root=None,
...                                                       hidden_sources=())]
[('root', 2), ('other', 1)]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs
from returns.future import FutureResult

from harkback.stages.defaults import MAX_LIMIT
from harkback.stages.errors import StoreUnavailable
from harkback.stages.flow import Matched, Resolved
from harkback.stages.lineage import LinkedT, descends_from, load_links, root_of
from harkback.stages.ports import SessionStore
from harkback.stages.records import Candidate, MessageHit, Session, SessionLink
from harkback.stages.stage import Step, with_store


def group_by_root(hits: Sequence[MessageHit], known: Mapping[str, LinkedT], *,
                  exclude_root: str | None, hidden_sources: Sequence[str],
                  exclude_descendants_of: str | None = None
                  ) -> tuple[tuple[LinkedT, tuple[MessageHit, ...]], ...]:
    """Group hits under their lineage root (of ``known``: sessions or their links), roots
    in order of their best hit.

    Hits in ``exclude_root``'s lineage are left out, and so are those in sessions descending
    from ``exclude_descendants_of`` (the caller's session, which may not be stored yet).
    Stable and idempotent: the order of roots follows the order of ``hits``.
    """
    grouped: dict[str, list[MessageHit]] = {}
    roots: dict[str, LinkedT] = {}
    for hit in hits:
        root = root_of(hit.session_id, known)
        if root is None or root.id == exclude_root or root.source in hidden_sources:
            continue
        if exclude_descendants_of and descends_from(hit.session_id, exclude_descendants_of,
                                                    known):
            continue
        grouped.setdefault(root.id, []).append(hit)
        roots[root.id] = root
    return tuple((roots[rid], tuple(group)) for rid, group in grouped.items())


def with_roots(groups: Sequence[tuple[SessionLink, tuple[MessageHit, ...]]],
               roots: Sequence[Session]) -> tuple[Candidate, ...]:
    """A candidate of each group whose root is among the whole ``roots`` read (one removed
    since its link was read is left out: :class:`LineageResolve` reads the links again
    once first).

    >>> hits = (_h("a", 1.0),)
    >>> [c.root.title for c in with_roots([(SessionLink("a"), hits), (SessionLink("gone"), hits)],
    ...                                   [Session(id="a", title="the fix")])]
    ['the fix']
    """
    whole = {s.id: s for s in roots}
    return tuple(Candidate(root=whole[root.id], hits=hits) for root, hits in groups
                 if root.id in whole)


def moved_on(groups: Sequence[tuple[SessionLink, tuple[MessageHit, ...]]],
             roots: Sequence[Session]) -> bool:
    """Whether a root of ``groups`` is not among the whole ``roots`` read, or is stored
    otherwise than its link was read (another parent, source or start).

    >>> hits = (_h("a", 1.0),)
    >>> moved_on([(SessionLink("a"), hits)], [Session(id="a", title="the fix")])
    False
    >>> moved_on([(SessionLink("a"), hits)], [Session(id="a", source="tool")])
    True
    """
    read = {s.id: SessionLink.of(s) for s in roots}
    return any(read.get(root.id) != root for root, _ in groups)


@attrs.frozen
class LineageResolve:
    """Trace hits to their lineage roots; keep the best ``request.limit`` of them.

    ``max_candidates`` caps the limit whatever the request says; a request's
    ``shortlist`` (set for a rerank stage) keeps that many when it is more. Lineages are
    walked by their sessions' links and only the roots kept are read whole; a root removed
    or stored otherwise between the two reads (:func:`moved_on`) sends the walk round once
    more, as a search begun then walks it.
    """

    max_candidates: int = attrs.field(default=MAX_LIMIT, validator=attrs.validators.ge(1))

    def __call__(self, matched: Matched) -> Step[Resolved]:
        """Resolve ``matched.hits`` into candidates."""
        request = matched.request
        ids = [h.session_id for h in matched.hits]
        if request.current_session_id:
            ids.append(request.current_session_id)

        def resolved(store: SessionStore, known: dict[str, SessionLink], walks: int = 1
                     ) -> FutureResult[Resolved, StoreUnavailable]:
            current = root_of(request.current_session_id or "", known)
            groups = group_by_root(
                matched.hits, known, exclude_root=current.id if current else None,
                hidden_sources=request.hidden_sources,
                exclude_descendants_of=request.current_session_id)
            limit = max(min(request.limit, self.max_candidates), request.shortlist)
            kept = groups[:limit]

            def done(roots: Sequence[Session]) -> FutureResult[Resolved, StoreUnavailable]:
                if walks and moved_on(kept, roots):
                    # A sync meanwhile: a root removed (its continuations are roots now,
                    # others may take its place), or stored again from a hidden source or
                    # under a parent. The links are read again, as a search begun now reads
                    # them.
                    return load_links(store, ids).bind(
                        lambda fresh: resolved(store, fresh, walks - 1))
                return FutureResult.from_value(Resolved(
                    request=request, parsed=matched.parsed, candidates=with_roots(kept, roots),
                    sessions_searched=len(groups), notes=matched.notes))

            # Lineages are walked by their links; only the roots kept are read whole.
            if not kept:
                return done(())
            return store.sessions([root.id for root, _ in kept]).bind(done)

        # The ranker may have read the lineages already (lexical): only the rest is asked.
        known = {s.id: s for s in matched.lineage}
        return with_store(lambda deps: load_links(deps.store, ids, known=known).bind(
            lambda links: resolved(deps.store, links)))


def _h(session_id: str, score: float) -> MessageHit:
    """A hit for examples and tests."""
    return MessageHit(session_id=session_id, position=0, role="user", content="", score=score)
