"""Recent mode: an empty query lists recent root sessions; no summarizer runs.

A question that names only a time ("what did I do last week?", "上周做了什么") has no
topic to search for: it lists the sessions of that time (:func:`browse_window`).
"""

from __future__ import annotations

from datetime import tzinfo

import attrs
from returns.future import FutureResult

from harkback.stages.lineage import load_ancestry, root_of
from harkback.stages.match.plan import QUESTION_WORDS
from harkback.stages.named_times import NamedTimes, named_times
from harkback.stages.ports import RecentQuery
from harkback.stages.query import parse_query, topic_tokens
from harkback.stages.records import Session, SessionOverview
from harkback.stages.request import DEMOTED_SOURCES, SearchRequest
from harkback.stages.result import BrowseResult, RecentEntry
from harkback.stages.since_words import EVERY_SINCE_WORD
from harkback.stages.stage import Stage, Step, pure, with_store
from harkback.stages.undated import undated_left_out
from harkback.stages.when import DAY

_ACTIVITY = frozenset("work works worked working happen happened happening busy show list "
                      "session sessions 工作 作業 작업".split())
"""Words that ask what went on rather than name a topic, beside a time: "what was I working
on yesterday", "list the sessions of last week", 어제 무슨 작업했지 list those times."""


def browse_window(request: SearchRequest, now: float, said: NamedTimes | None = None
                  ) -> SearchRequest | None:
    """``request`` as a listing of the time its question names, when it names nothing else
    (``said``: its :func:`~harkback.stages.named_times.named_times` as of ``now``, if read).

    >>> day = 86400.0
    >>> listed = browse_window(SearchRequest(query="what did I do last week?"), 100 * day)
    >>> listed.query, listed.since / day, round(listed.until / day, 9)  # Monday to Monday (UTC)
    ('', 88.0, 95.0)
    >>> listed.until < 95 * day  # just before: a session at Monday's midnight is this week's
    True
    >>> browse_window(SearchRequest(query="how did we fix nginx last week"), 100 * day)
    >>> browse_window(SearchRequest(query="上周我做了什么"), 100 * day).query
    ''
    >>> listed = browse_window(SearchRequest(query="what did I do yesterday and last week?"),
    ...                        100 * day)
    >>> listed.since / day, round(listed.until / day, 9)  # last week's Monday to yesterday's end
    (88.0, 100.0)
    """
    if parse_query(request.query).advanced:
        return None
    said = said or named_times(request.query, now)
    framing = said.words | QUESTION_WORDS | _ACTIVITY | EVERY_SINCE_WORD
    # A bigram across a time expression's edge (周我 of 上周我做了什么) names nothing.
    rest = frozenset(topic_tokens(said.rest))
    if any(t not in framing and t in rest for t in topic_tokens(request.query)):
        return None
    if said.window is None:
        return None
    # "Until Wednesday" has no start: the caller's, if any.
    since = said.since if request.since is None else (
        request.since if said.since is None else max(said.since, request.since))
    until = min(said.window[1], request.until) if request.until is not None \
        else said.window[1]
    return attrs.evolve(request, query="", since=since, until=until)


def own_work_first(listing: Stage[SearchRequest, BrowseResult], request: SearchRequest,
                   demoted: tuple[str, ...] = DEMOTED_SOURCES) -> Step[BrowseResult]:
    """``request`` listed by ``listing`` with the sessions of ``demoted`` sources (a
    scheduler's) after the others, each part newest first.

    "What did I do last week?" asks for the user's work: seven nightly jobs listed newest
    first took two of its three places. They still fill the places left, and a listing of
    ``--source cron`` alone lists them as before.
    """
    kept = tuple(s for s in demoted if s not in request.hidden_sources
                 and (not request.sources or s in request.sources))
    if not kept:
        return listing(request)

    def then_demoted(own: BrowseResult) -> Step[BrowseResult]:
        room = request.limit - len(own.results)
        if room <= 0:
            return pure(own)
        later = attrs.evolve(request, sources=kept, limit=room)
        return listing(later).map(lambda scheduled: attrs.evolve(
            own, results=(*own.results, *scheduled.results)))

    first = attrs.evolve(request, hidden_sources=(*request.hidden_sources, *kept))
    return listing(first).bind(then_demoted)


def listing_query(request: SearchRequest) -> Step[RecentQuery]:
    """What the store is asked to list for ``request``: its bounds and filters, the
    caller's lineage left out (a search with time bounds counts what they leave out by it,
    :func:`~harkback.stages.undated.undated_left_out`)."""
    current = (request.current_session_id,) if request.current_session_id else ()

    def mine(known: dict[str, Session]) -> Step[tuple[str, ...]]:
        root = root_of(request.current_session_id or "", known)
        if root is not None or not current:
            return pure((root.id,) if root else ())
        # The caller's session is not stored yet, but its sub-agents may be: stored
        # without their parent, each is a root of its own.
        return with_store(lambda deps: deps.store.children(current).map(
            lambda children: tuple(c.id for c in children)))

    def listing(excluded: tuple[str, ...]) -> RecentQuery:
        return RecentQuery(limit=request.limit, exclude_roots=excluded,
                           hidden_sources=request.hidden_sources, since=request.since,
                           until=request.until, sources=request.sources,
                           projects=request.projects)

    return (with_store(lambda deps: load_ancestry(deps.store, current))
            .bind(mine)
            .map(listing))


def ahead_note(results: tuple[RecentEntry, ...], now: float) -> tuple[str, ...]:
    """The note on the sessions of ``results`` dated more than a day after ``now``: a
    clock set wrong where they were recorded keeps them on top of every newest-first
    listing, so the listing says why they are there (they stay listed: the date may be right
    and this machine's clock the wrong one).

    >>> def at(moment):
    ...     return RecentEntry(session_id="s", title="", source="", when="", started_at=moment,
    ...                        message_count=1, preview="")
    >>> ahead_note((at(3 * DAY), at(None)), 0.0)[0][:56], ahead_note((at(DAY),), 0.0)
    ('1 session listed is dated more than a day after now (a c', ())
    """
    ahead = sum(1 for r in results if r.started_at is not None and r.started_at > now + DAY)
    if not ahead:
        return ()
    said, them = ((f"{ahead} sessions listed are", "them") if ahead > 1
                  else ("1 session listed is", "it"))
    return (f"{said} dated more than a day after now (a clock set wrong where recorded?), "
            f"so newest first puts {them} on top; a time bound up to today leaves {them} out",)


@attrs.frozen
class RecentSessions:
    """List ``request.limit`` recent roots, newest first, the caller's lineage left out."""

    tz: tzinfo | None = None

    def __call__(self, request: SearchRequest) -> Step[BrowseResult]:
        """Browse recent sessions."""
        def entries(rows: tuple[SessionOverview, ...]) -> BrowseResult:
            return BrowseResult(results=tuple(RecentEntry.from_overview(r, self.tz)
                                              for r in rows))

        def noted(query: RecentQuery) -> Step[BrowseResult]:
            listed = with_store(lambda deps: deps.store.recent(query)).map(entries)
            # Time bounds cannot place a session with no time: say how many were left out.
            # A date is wrong when after the real now, not after a moment asked as of.
            return listed.bind(lambda result: undated_left_out(query, "listed").bind(
                lambda notes: with_store(lambda deps: FutureResult.from_value(
                    deps.wall_clock())).map(
                    lambda now: attrs.evolve(
                        result, notes=(*notes, *ahead_note(result.results, now))))))

        return listing_query(request).bind(noted)


def projects_hold_any(request: SearchRequest) -> Step[bool]:
    """Whether any stored session passes ``request``'s project filter (with its sources,
    hidden ones left out): True without one, with time bounds (a search bounds a message's
    time, a listing a session's start: not the same sessions), or when the store cannot
    say. Two listings of one session each: roots, then the others."""
    if not request.projects or request.since is not None or request.until is not None:
        return pure(True)

    def listed(parts: bool) -> Step[bool]:
        query = RecentQuery(limit=1, hidden_sources=request.hidden_sources, parts=parts,
                            sources=request.sources, projects=request.projects)
        return with_store(lambda deps: deps.store.recent(query)).map(bool)

    return (listed(False).bind(lambda roots: pure(True) if roots else listed(True))
            .lash(lambda _error: pure(True)))
