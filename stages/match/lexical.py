"""The lexical ranker: sessions ranked by how well their best messages cover the query.

Plain FTS5 ranks messages, and a session is only as good as its single best row: a
long session that repeats one query word wins by volume, and a message that says
"bikes" is missed by a question about a "bike". This ranker:

1. drops stopwords, question framing ("how many", "what kind") and the words of a time the
   question names ("two weeks ago", "how many months"; :func:`~harkback.stages.when.time_words`)
   from plain queries (:mod:`~harkback.stages.match.plan`, as are steps 2 and 3);
2. widens each word to its inflections found in the index (``bike`` → ``bikes``,
   ``biking``; an irregular verb's other forms, ``buy`` → ``bought``;
   :mod:`~harkback.stages.text.stem`), asking the store
   for their document counts (:meth:`term_stats`), so every query word gets one IDF
   however it is spelled (a lone CJK character, matched as a prefix, is counted as one);
3. reads a bounded number of candidate messages from the store: an OR of the forms of
   the words found in at most ``max_scored`` messages (all forms counted together); when
   those find fewer than it reads, messages holding two of the other (common) words
   together fill the rest (:func:`~harkback.stages.match.plan.common_pairs`);
4. re-scores each candidate with BM25 over query *words* (forms merged), the user's own
   messages weighted up (:mod:`~harkback.stages.match.score`,
   :data:`~harkback.stages.match.score.ROLE_WEIGHTS`); a session held outside a CJK
   question's writing weighs the English names of its words as distinctive as the words,
   in its messages and in its share of the query (step 5;
   :func:`~harkback.stages.match.across.for_foreign_sessions`); a word the candidates
   repeat within few sessions weighs more than one scattered over many
   (:func:`~harkback.stages.match.spread.by_sessions`);
5. scores each session from its best few messages (geometrically decaying weights, so
   volume past the third hit adds nothing) plus the IDF-weighted share of the query
   that those messages cover together, and that of a CJK question's Latin words, the
   names it is about (:mod:`~harkback.stages.match.latin_names`); noisy sources (cron)
   are scaled down, recency breaks near-ties (within 2 %), and a question naming a time
   lifts the sessions from then (:mod:`~harkback.stages.match.sessions`,
   :data:`~harkback.stages.match.sessions.TIME_WEIGHT`); a question about several
   things ("between the day I X and the day I Y", "X or Y", "me, my parents and my
   grandparents") has each clause ranked on its own too, and the first ten sessions
   reordered by both (:mod:`~harkback.stages.match.clauses`);
6. returns hits grouped by session in that order, so the resolve stage's first hit
   per lineage reproduces the session ranking; a session, its continuations and its
   sub-agents are scored as one conversation (:mod:`~harkback.stages.match.lineages`).

Sessions whose title matches the question count it as one more user message
(:mod:`~harkback.stages.match.titles`), and come back even when no message matches.

>>> from harkback.stages.text.stem import inflections, stem
>>> stem("bikes"), stem("biking"), stem("babies"), stem("classes")
('bike', 'bike', 'babi', 'class')
>>> "bikes" in inflections("bike") and "biking" in inflections("bike")
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import attrs
from returns.future import FutureResult

from harkback.stages.errors import StoreUnavailable
from harkback.stages.flow import Matched
from harkback.stages.lineage import load_links
from harkback.stages.match.across import for_foreign_sessions, with_names
from harkback.stages.match.clause_parts import clause_parts
from harkback.stages.match.clauses import (
    CLAUSE_K,
    CLAUSE_WEIGHT,
    clause_units,
    fuse,
    split_clauses,
)
from harkback.stages.match.latin_names import latin_names, names_script
from harkback.stages.match.lineages import (
    as_lineages,
    by_members,
    lineage_hits,
    lineage_roots,
    looked_up,
    nearest_times,
)
from harkback.stages.match.plan import (
    common_pairs,
    known_counts,
    lookups,
    plan_units,
    search_expression,
    selective,
    split_exclusions,
    store_query,
    weigh_units,
)
from harkback.stages.match.read_as import read_as
from harkback.stages.match.score import (
    K1,
    ROLE_WEIGHTS,
    B,
    MessageScorer,
    RankUnit,
    Scored,
    message_scorer,
    scored_hit,
)
from harkback.stages.match.sessions import (
    TIME_WEIGHT,
    SessionScoring,
    rank_sessions,
    session_times,
    weigh_by_recency,
    weigh_by_script,
    weigh_by_time,
)
from harkback.stages.match.spread import by_sessions
from harkback.stages.match.titles import TITLE_B, title_evidence, title_query
from harkback.stages.match.typos import Corrected, corrected
from harkback.stages.match.widen import joined, more_rows, wanted, widened
from harkback.stages.named_times import weighed_times
from harkback.stages.ports import DEFAULT_MAX_SCORED, MatchQuery, SessionStore, TermStats
from harkback.stages.query import ParsedQuery, parse_query
from harkback.stages.records import MessageHit, Role, SessionLink, TitleHit
from harkback.stages.request import SearchRequest
from harkback.stages.stage import Step, pure, with_store
from harkback.stages.text.katakana import katakana_words
from harkback.stages.text.predicates import predicate_bigrams
from harkback.stages.text.scripts import Script, cjk_script, written_in
from harkback.stages.when import time_words


def _written_in(hits: Sequence[MessageHit], titles: Sequence[TitleHit],
                script: Script | None) -> set[str]:
    # The sessions a hit or a title of which holds the question's CJK writing (each
    # session's texts looked at until one does).
    found: set[str] = set()
    if script is None:
        return found
    for session_id, text in [*((h.session_id, h.content) for h in hits),
                             *((t.session_id, t.title) for t in titles)]:
        if session_id not in found and written_in(text, script):
            found.add(session_id)
    return found


@attrs.frozen(kw_only=True)
class LexicalMatch:
    """The default matcher: inflection-aware BM25 over candidates, ranked by session.

    ``scan_limit`` candidate messages are read from the store (one bounded search plus
    one :meth:`term_stats` lookup per query); words found in more than ``max_scored``
    messages select no rows (see :func:`~harkback.stages.match.plan.selective`);
    ``hit_limit`` hits leave the stage, at most ``hits_per_session`` per session.
    ``role_weights`` (pairs such as ``("user", 1.5)``, default
    :data:`~harkback.stages.match.score.ROLE_WEIGHTS`) scale message scores by role; a
    role not named keeps 1.0, and ``role_weights=()`` weighs every role alike. When the
    question names a time relative to now (:func:`~harkback.stages.named_times.weighed_times`;
    of several, each session by the nearest), sessions from then are lifted by up to
    ``time_weight`` (0 turns it off; the time's words are not searched for either way,
    :func:`~harkback.stages.when.time_words`); a ``scoring.recency_weight`` lifts recent sessions
    (:func:`~harkback.stages.match.sessions.weigh_by_recency`). Both read a session's
    time from its hits (:func:`~harkback.stages.match.sessions.session_times`), so
    neither asks the store again. Each clause of a question about several events is also
    ranked on its own and the rankings fused into the first ten places, weighed by
    ``clause_weight`` (0 turns it off; :mod:`~harkback.stages.match.clauses`, rank
    constant ``clause_k``).
    """

    scan_limit: int = attrs.field(default=300, validator=attrs.validators.ge(1))
    hit_limit: int = attrs.field(default=60, validator=attrs.validators.ge(1))
    hits_per_session: int = attrs.field(default=3, validator=attrs.validators.ge(1))
    scoring: SessionScoring = SessionScoring()
    role_weights: tuple[tuple[Role, float], ...] = ROLE_WEIGHTS
    k1: float = K1
    b: float = B
    max_scored: int = attrs.field(default=DEFAULT_MAX_SCORED, validator=attrs.validators.ge(1))
    time_weight: float = attrs.field(default=TIME_WEIGHT, validator=attrs.validators.ge(0.0))
    clause_weight: float = attrs.field(default=CLAUSE_WEIGHT, validator=attrs.validators.ge(0.0))
    clause_k: float = attrs.field(default=CLAUSE_K, validator=attrs.validators.gt(0.0))

    def __call__(self, request: SearchRequest) -> Step[Matched]:
        """Rank sessions for ``request.query``."""
        parsed = parse_query(request.query)
        if parsed.expression is None:
            return pure(Matched(request=request, parsed=parsed, hits=()))
        # The question's time ("two weeks ago") is weighed by its window, not its words.
        planned = plan_units(parsed, time_words(request.query), script=cjk_script(request.query),
                             predicates=predicate_bigrams(request.query),
                             katakana=katakana_words(request.query))
        terms, prefixes = lookups(planned)

        def run(store: SessionStore, now: float) -> FutureResult[Matched, StoreUnavailable]:
            # Read already by the pipeline, which asked whether the question lists a time.
            windows = [] if not self.time_weight else weighed_times(request.query, now) \
                if request.weighed is None else list(request.weighed)

            def search(found: Corrected) -> FutureResult[Matched, StoreUnavailable]:
                read, stats = found
                units = weigh_units(read, stats, self.max_scored)
                narrow = selective(parsed, units, stats, self.max_scored)
                # Its own words common, none rare: CJK names weigh unsearched (x1.3 CPU, 100k).
                common = any(u.count > self.max_scored for u in units if u.searched)
                units = weigh_units(read, stats) if common and not narrow else units
                # What was read for a word no message holds is said (read_as.py).
                said = read_as(planned, units)
                expression = search_expression(parsed, units)
                assert expression is not None
                # Counts known: search the selective terms exactly; otherwise the store
                # bounds the search itself, told the counts it gave (not to count them again).
                query = store_query(request, narrow or expression, limit=self.scan_limit,
                                    max_scored=None if narrow else self.max_scored,
                                    known_counts=() if narrow else known_counts(stats))
                pairs = common_pairs(parsed, units, stats, self.max_scored) if narrow else None

                def fill(hits: Sequence[MessageHit]
                         ) -> FutureResult[Sequence[MessageHit], StoreUnavailable]:
                    # The rarer words found fewer rows than the ranker reads: the rest are
                    # messages holding two of the common words (newest first, as the
                    # store fills a bounded search), not an incidental word's rows alone.
                    if pairs is None or len(hits) >= self.scan_limit:
                        return FutureResult.from_value(hits)
                    more = store_query(request, pairs, limit=self.scan_limit - len(hits),
                                       max_scored=self.max_scored,
                                       known_counts=known_counts(stats))
                    return store.search(more).map(lambda extra: joined(hits, extra))

                # One long conversation filling the search hides the others: ask for them too.
                ranked = store.search(query).bind(fill).bind(lambda hits: self._titles(
                    store, request, parsed, title_query(query, expression, self.max_scored)
                ).bind(lambda titles: widened(
                    store, query, hits, want=wanted(request), also=looked_up((), titles),
                    rows=more_rows(query, want=wanted(request), least=self.hits_per_session),
                    current=request.current_session_id
                ).bind(lambda found: load_links(
                    store, looked_up(found.hits, titles), known=found.links).map(
                    lambda known: self._rank(request, parsed, units, stats, found.hits, now,
                                             windows, titles, known)))))
                return ranked.map(lambda m: attrs.evolve(m, notes=(*m.notes, *said)))
            # Prefixes only when there are any: a library caller's own store written to
            # the one-argument form still answers every question without one.
            stats_of = (store.term_stats(terms, prefixes) if prefixes
                        else store.term_stats(terms))
            # A misspelt word ("dokcer") is asked again by its spellings one edit away.
            return stats_of.bind(lambda stats: corrected(
                store, planned, stats, literal=parsed.advanced)).bind(search)

        return with_store(lambda deps: run(deps.store, deps.clock()))

    @staticmethod
    def _titles(store: SessionStore, request: SearchRequest, parsed: ParsedQuery,
                query: MatchQuery) -> FutureResult[tuple[TitleHit, ...], StoreUnavailable]:
        # A title counts as a user message: evidence when user messages are searched, and
        # for FTS syntax ('"CORS fix"') unless it holds a NOT, which a title cannot honour.
        if "user" not in request.roles or parsed.expression is None or split_exclusions(
                parsed.expression)[1] is not None:
            return FutureResult.from_value(())
        return store.search_titles(query)

    def _rank(self, request: SearchRequest, parsed: ParsedQuery, units: Sequence[RankUnit],
              stats: TermStats, hits: Sequence[MessageHit], now: float,
              windows: Sequence[tuple[float, float]] = (),
              titles: Sequence[TitleHit] = (),
              known: Mapping[str, SessionLink] | None = None) -> Matched:
        average = stats.average_length or 1.0
        role_weights = dict(self.role_weights)
        score = message_scorer(units, average_length=average, k1=self.k1, b=self.b)
        script = cjk_script(request.query)
        # A session held outside the question's writing can match its words only by their
        # English names, weighed as distinctive as the words they name (across.py).
        foreign = for_foreign_sessions(units) if script is not None else None
        # Which sessions are held in the question's writing: for those weights and for the
        # script lift, nothing else.
        in_script = (_written_in(hits, titles, script)
                     if foreign is not None or self.scoring.script_weight else set[str]())
        score_foreign = score if foreign is None else message_scorer(
            foreign, average_length=average, k1=self.k1, b=self.b)

        def scorer(session_id: str) -> MessageScorer:
            return score if session_id in in_script else score_foreign

        scored = []
        for hit in hits:  # a hit found by a project line's labels alone is none
            if (read := scored_hit(scorer(hit.session_id), hit, role_weights)) is not None:
                scored.append(read)
        titles_from = len(scored)
        # A title is one more of its session's messages, its length weighed by
        # titles.TITLE_B; the messages' scorers serve when it is their b (by default).
        title_own, title_foreign = score, score_foreign
        if self.b != TITLE_B:
            title_own = message_scorer(units, average_length=average, k1=self.k1, b=TITLE_B)
            title_foreign = title_own if foreign is None else message_scorer(
                foreign, average_length=average, k1=self.k1, b=TITLE_B)
        scored += [s for title in titles for s in title_evidence(
            (title,), title_own if title.session_id in in_script else title_foreign,
            role_weights.get("user", 1.0))]
        # A word repeated through one conversation weighs more than one scattered over
        # many: a lineage's sessions are one (lineages.py).
        roots = lineage_roots({s.hit.session_id for s in scored}, known or {})
        spread = by_sessions(units, ((j, roots.get(s.hit.session_id, s.hit.session_id))
                                     for s in scored for j in s.covered), stats.documents)
        if spread != tuple(units):
            scored = self._rescored(scored, units, spread, in_script, script is not None)
            units = spread
        # A lineage is one conversation: its sessions' messages rank together, and it is
        # held in the question's writing when one of them is.
        each = scored
        scored = as_lineages(each, roots, known or {})
        lineages_in_script = {roots.get(sid, sid) for sid in in_script}
        # Recency reads a lineage's newest session; a named time, its nearest one.
        times = (session_times([s.hit for s in scored])
                 if self.scoring.recency_weight or windows else {})
        when = (nearest_times(session_times([s.hit for s in each]), roots, windows)
                if windows and roots else times)

        def lift(ranked: Sequence[tuple[str, float]]) -> Sequence[tuple[str, float]]:
            if lineages_in_script and self.scoring.script_weight:
                ranked = weigh_by_script(ranked, lineages_in_script, self.scoring.script_weight)
            if self.scoring.recency_weight and times:
                ranked = weigh_by_recency(ranked, times, now, self.scoring)
            if windows and when:
                ranked = weigh_by_time(ranked, when, windows, self.time_weight)
            return ranked

        # A CJK question's Latin words name what it is about: their share counts again.
        names = latin_names(units, names_script(request.query))
        # A session outside the question's writing covers it at the weights its messages
        # were scored by (the names lifted as spread left them), not at the names' own.
        outside = for_foreign_sessions(units) if foreign is not None else None
        sessions = lift(rank_sessions(
            scored, [u.idf for u in units], self.scoring, names,
            foreign=None if outside is None else ([u.idf for u in outside], lineages_in_script)))
        if self.clause_weight and not parsed.advanced:
            def by_clause(part: Sequence[Scored], group: frozenset[int]
                          ) -> Sequence[tuple[str, float]]:
                # A clause ranks as the whole question does, on its own units' weights:
                # its Latin names and, outside the question's writing, the lifted ones.
                def only(ws: Sequence[RankUnit]) -> list[float]:
                    return [u.idf if j in group else 0.0 for j, u in enumerate(ws)]
                return lift(rank_sessions(
                    part, only(units), self.scoring, names & group,
                    foreign=None if outside is None else (only(outside), lineages_in_script)))

            sessions = self._decomposed(
                request.query, units, outside, in_script, each, titles_from,
                lambda part: as_lineages(part, roots, known or {}),
                sessions, average, role_weights, by_clause)
        ordered = lineage_hits(each, sessions, roots, per_session=self.hits_per_session,
                               limit=self.hit_limit)
        return Matched(request=request, parsed=with_names(parsed, units), hits=ordered,
                       session_scores=by_members(sessions, each, roots),
                       lineage=tuple(known.values()) if known else ())

    @staticmethod
    def _rescored(scored: Sequence[Scored], before: Sequence[RankUnit],
                  after: Sequence[RankUnit], in_script: set[str], cjk: bool
                  ) -> list[Scored]:
        # Each message's score scaled by how its units' weights changed, weighted by what
        # each weighed: exact for a message covering one unit (its score is that unit's
        # weight times its count's part), and for several exact when their counts' parts
        # are alike; scoring every message again costs about a tenth of a CJK search.
        def factors(old: Sequence[RankUnit], new: Sequence[RankUnit]
                    ) -> tuple[Sequence[RankUnit], list[float]]:
            return old, [n.idf / o.idf if o.idf else 1.0 for o, n in zip(old, new, strict=True)]

        own = factors(before, after)
        foreign = own
        if cjk and (old := for_foreign_sessions(before)) and (new := for_foreign_sessions(after)):
            foreign = factors(old, new)
        out = []
        for s in scored:
            weights, change = own if s.hit.session_id in in_script else foreign
            if len(s.covered) == 1:
                (j,) = s.covered
                factor = change[j]
            else:
                was = sum(weights[j].idf for j in s.covered)
                factor = sum(weights[j].idf * change[j] for j in s.covered) / was if was else 1.0
            # Most candidates' units keep their weights: those Scored stay as they are.
            out.append(s if factor == 1.0 else Scored(s.hit, s.score * factor, s.covered, s.read))
        return out

    def _decomposed(self, query: str, units: Sequence[RankUnit],
                    outside: Sequence[RankUnit] | None, in_script: set[str],
                    each: Sequence[Scored], titles_from: int, as_one: Callable[
                        [Sequence[Scored]], Sequence[Scored]],
                    sessions: Sequence[tuple[str, float]],
                    average: float, role_weights: Mapping[Role, float],
                    by_clause: Callable[[Sequence[Scored], frozenset[int]],
                                        Sequence[tuple[str, float]]]
                    ) -> Sequence[tuple[str, float]]:
        # Each clause's units alone rank the candidates as the whole question's do
        # (same scoring, recency and time), and the rankings are fused. A message is read
        # once for all the clauses, as the whole question read it (clause_parts.py), and
        # a lineage's then ranked as one (``as_one``).
        clauses = split_clauses(query)
        # A question about one thing (most) stops here: its clause is not read again.
        groups = clause_units(clauses, units) if len(clauses) > 1 else ()
        if not groups:
            return sessions
        parts = clause_parts(each, units, groups, titles_from=titles_from,
                             read_as_own=lambda sid: outside is None or sid in in_script,
                             outside=outside, average=average, role_weights=role_weights,
                             k1=self.k1, b=self.b)
        rankings = [by_clause(as_one(part), group) for part, group in zip(parts, groups,
                                                                          strict=True)]
        return fuse(sessions, rankings, self.clause_weight, self.clause_k)
