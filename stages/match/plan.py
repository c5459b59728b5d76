"""Query planning: which words of a question to rank by, their forms, their weights.

A plain question loses its framing ("how many", the words of a time it names), each
remaining word is widened to its inflections (:func:`~harkback.stages.text.stem.inflections`),
for a developer's short form to what it stands for
(:func:`~harkback.stages.text.abbreviations.expansions`), and across languages to the
English name of a Chinese, Japanese or Korean word, or the reverse
(:mod:`~harkback.stages.text.glossary`),
the store's document counts give each word one IDF however it is spelled, and the
store is asked for an OR of the forms, or only of the rarer words' forms
(:func:`selective`). A query in FTS syntax is searched as written.

>>> from harkback.stages.query import parse_query
>>> [u.forms for u in plan_units(parse_query("how many bikes"))]
[('bikes', 'biked', 'biking', 'bike')]
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs

from harkback.stages.match.across import foreign_units
from harkback.stages.match.exclusions import split_exclusions as split_exclusions
from harkback.stages.match.near import read_near, stand_ins, unnamed
from harkback.stages.match.runs import bigram_runs, continues, unit_text
from harkback.stages.match.score import RankUnit, idf
from harkback.stages.match.whole_katakana import whole_words
from harkback.stages.match.within_script import within_script
from harkback.stages.ports import DEFAULT_MAX_SCORED, MatchQuery, TermStats
from harkback.stages.query import AllOf, AnyOf, Node, ParsedQuery, Phrase, Term, Unit
from harkback.stages.request import SearchRequest
from harkback.stages.text.abbreviations import expansions
from harkback.stages.text.korean import noun_forms
from harkback.stages.text.predicates import stem_forms
from harkback.stages.text.scripts import Script
from harkback.stages.text.stem import inflections
from harkback.stages.text.tokens import is_cjk

QUESTION_WORDS = frozenset(
    "many much total number currently recently lately name kind type different "
    "fix fixed fixing".split())
"""Words that frame a question rather than name its topic; dropped when others remain."""


def topic_units(parsed: ParsedQuery, framing: frozenset[str] = frozenset()
                ) -> tuple[Unit, ...]:
    """The units that carry the query's topic: question framing left out of plain queries.

    :data:`QUESTION_WORDS` and the words in ``framing`` (for the ranker, the query's
    :func:`~harkback.stages.when.time_words`) go when a topic word remains.

    >>> from harkback.stages.query import parse_query
    >>> [u.text for u in topic_units(parse_query("how many bikes did I repair"))]
    ['bikes', 'repair']
    >>> [u.text for u in topic_units(parse_query("what did I bake two weeks ago"),
    ...                              frozenset({"two", "weeks", "ago"}))]
    ['bake']
    """
    if parsed.advanced:
        return parsed.units
    dropped = QUESTION_WORDS | framing
    kept = tuple(u for u in parsed.units
                 if not (isinstance(u, Term) and u.text in dropped))
    return kept or parsed.units


def _expandable(unit: Unit, parsed: ParsedQuery) -> bool:
    return (not parsed.advanced and isinstance(unit, Term) and not unit.prefix
            and not is_cjk(unit.text))


def _nominal(unit: Term, parsed: ParsedQuery) -> tuple[str, ...]:
    # The forms of a plain question's Korean noun of one syllable, or ().
    return () if parsed.advanced or len(unit.text) != 1 else noun_forms(unit.text)


def plan_units(parsed: ParsedQuery, framing: frozenset[str] = frozenset(), *,
               script: Script | None = None, predicates: frozenset[str] = frozenset(),
               katakana: frozenset[str] = frozenset()) -> tuple[RankUnit, ...]:
    """Each topic unit (:func:`topic_units`) with the forms to look up (inflections for
    plain words), then the names of its listed words in another language as units of
    their own (:func:`~harkback.stages.match.across.foreign_units`; ``script`` is the
    :func:`~harkback.stages.text.scripts.cjk_script` of the question's text). A unit in
    ``predicates`` ends a Korean predicate and is searched by its conjugated forms
    (:func:`~harkback.stages.text.predicates.predicate_bigrams` of the question's text).
    A katakana unit counts its word only where a message writes it whole, the question's
    own by its words in ``katakana``
    (:func:`~harkback.stages.text.katakana.katakana_words` of its text;
    :mod:`~harkback.stages.match.whole_katakana`).

    >>> from harkback.stages.query import parse_query
    >>> [u.forms for u in plan_units(parse_query("bikes"))]
    [('bikes', 'biked', 'biking', 'bike')]
    >>> [(u.forms[:2], u.share) for u in plan_units(parse_query("超时"))]
    [(('超时',), 1.0), (('timeout', 'timeouts'), 0.5)]
    """
    out = []
    topic = topic_units(parsed, framing)
    for unit, share in zip(topic, bigram_shares(topic), strict=True):
        if _expandable(unit, parsed):
            assert isinstance(unit, Term)
            # "prod db" is also "production database": one word, every spelling.
            forms = (unit.text, *expansions(unit.text))
            own = tuple(dict.fromkeys(f for w in forms for f in inflections(w)))
            # "speed up" is also "faster" and "slow", where the store writes no "speed".
            out.append(RankUnit(unit, own, stand_ins=stand_ins(unit.text, own)))
        elif isinstance(unit, Term) and (nominal := _nominal(unit, parsed)):
            # A Korean noun of one syllable, as a whole token with its particles (큐, 큐에,
            # 큐가), not as a prefix (큐브, 시큐리티).
            out.append(RankUnit(Term(unit.text), nominal, share=share))
        elif isinstance(unit, Term) and not parsed.advanced and unit.text in predicates:
            # The end of a Korean predicate, as each conjugation writes it: 깨지 (깨지는) is
            # also 깨져, 깨졌, 깨진 and 깨집 (깨져요, 깨졌어요, 깨진대요, 깨집니다).
            out.append(RankUnit(unit, stem_forms(unit.text), share=share))
        elif isinstance(unit, Term):
            out.append(RankUnit(unit, (unit.text,), share=share))
        else:
            out.append(RankUnit(unit, unit.terms))
    if not parsed.advanced:
        out += foreign_units(topic, out, script)
    return whole_words(unnamed(out), katakana)


_KATAKANA_OR_HANGUL = re.compile(r"^[\u30a0-\u30ff\u31f0-\u31ff\uff66-\uff9f\uac00-\ud7af]+$")


def bigram_shares(units: Sequence[Unit]) -> tuple[float, ...]:
    """How much of a word each unit is: CJK bigrams of one run share their word's weight.

    A CJK run of n characters is searched as n-1 overlapping bigrams; counted as n-1
    words, "ネットワーク" (network) would weigh five times "docker" beside it. A katakana
    or Hangul run is one word (a loanword; Korean is written with spaces), so its
    bigrams share one weight. A run of Chinese characters holds words of about two
    characters, so its n-1 bigrams weigh (n+1)/2 words together.

    >>> bigram_shares((Term("docker"), Term("ネッ"), Term("ット"), Term("トワ"), Term("ワー")))
    (1.0, 0.25, 0.25, 0.25, 0.25)
    >>> bigram_shares((Term("死锁"),)), bigram_shares((Term("订单"), Term("单表"), Term("表死")))
    ((1.0,), (0.667, 0.667, 0.667))
    """
    shares = [1.0] * len(units)
    for start, end in bigram_runs(units):
        n = end - start
        if n > 1:
            text = "".join(unit_text(u) for u in units[start:end])
            share = 1 / n if _KATAKANA_OR_HANGUL.match(text) else (n + 1) / (2 * n)
            shares[start:end] = [round(share, 3)] * n
    return tuple(shares)


def _is_prefix(unit: Unit) -> bool:
    return isinstance(unit, Term) and unit.prefix


def lookups(units: Sequence[RankUnit]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What to ask the store's ``term_stats`` of, for :func:`weigh_units`: the forms of
    the units matched as whole tokens, and the prefix terms (a lone CJK character).

    >>> from harkback.stages.query import parse_query
    >>> lookups(plan_units(parse_query("改 bikes")))
    (('bikes', 'biked', 'biking', 'bike'), ('改',))
    """
    # An English question's CJK words are counted too: a rare one is searched (weigh_units).
    # A word's near-synonyms are counted only where it is absent (typos.typo_lookups).
    terms = (f for ru in units if not _is_prefix(ru.unit) for f in ru.forms)
    prefixes = (unit_text(ru.unit) for ru in units if _is_prefix(ru.unit))
    return tuple(dict.fromkeys(terms)), tuple(dict.fromkeys(prefixes))


def weigh_units(units: Sequence[RankUnit], stats: TermStats, cap: int | None = None
                ) -> tuple[RankUnit, ...]:
    """Keep the forms the index holds and give each unit its IDF.

    An English question's CJK words (``searched`` False) weigh a share of the word they
    name; those in at most ``cap`` messages, of a word in at most as many, are searched too,
    so a Chinese session writing none of its English words ("shrink the frontend bundle":
    前端打包) is read; a common one (错误), or one of a common word, reads no rows.

    A word's document count is the sum over its forms (at most every document); a
    phrase counts as its rarest word, an upper bound on how often it occurs; a prefix
    (a lone CJK character) as the messages it matches. A CJK word weighs at most a
    bounded amount more than among the messages of its own script
    (:func:`~harkback.stages.match.within_script.within_script`).

    >>> from harkback.stages.query import parse_query
    >>> stats = TermStats(documents=1000, counts=(("改", 1),), prefix_counts=(("改", 400),))
    >>> [round(u.idf, 2) for u in weigh_units(plan_units(parse_query("改")), stats)]
    [0.92]
    >>> round(idf(1000, 1), 2)  # what the character alone, as a token, would weigh
    6.5
    """
    counts = dict(stats.counts)
    prefixed = dict(stats.prefix_counts)
    out: list[RankUnit] = []
    found = []
    for ru in units:
        if isinstance(ru.unit, Phrase):
            containing = min((counts.get(t, 0) for t in ru.forms), default=0)
            forms = ru.forms
        elif _is_prefix(ru.unit):
            # Matched as a prefix (改 finds 改成), so counted as one: the character alone is
            # rarely a token (only where a run ends), and counted as that it would weigh as
            # the question's rarest word wherever it matched.
            containing = prefixed.get(unit_text(ru.unit), 0)
            forms = ru.forms
        else:
            held = tuple(f for f in ru.forms if counts.get(f, 0) > 0)
            containing = sum(counts.get(f, 0) for f in held)
            # The question's own spelling stays, held or not: a title or a project's name
            # may be all that holds it ("tumblr", read as "tumbler" too: typos.py).
            forms = tuple(dict.fromkeys((*ru.forms[:1], *held)))
            # A word the store never writes: read by its near-synonyms (near.py).
            forms, containing, share = read_near(ru, forms, containing, counts)
            ru = ru if share == ru.share else attrs.evolve(ru, share=share)
        # A bigram of a longer CJK run found in no message is most likely one across two
        # words ("表死" in 订单表死锁); weighed, it would only dilute the share of the
        # query every session covers. A whole word found nowhere keeps its weight: a
        # session's title may hold it (titles are not counted in ``stats``).
        absent = not containing and ru.share < 1.0
        weight = 0.0 if absent else idf(stats.documents, max(containing, 1)) * ru.share
        searched = ru.searched
        if not ru.searched:
            # An English question's CJK words: as rare as the word they name, at their
            # share of it, whatever their own count; searched too when rare, unless the word
            # they name is common (部署 of "deploy": their rows would crowd the rare words').
            weight = sum(out[j].idf / out[j].share for j in ru.names) * ru.share
            searched = cap is not None and 0 < containing <= cap and weight > 0 \
                and all(out[j].count <= cap for j in ru.names)
            forms = tuple(f for f in ru.forms if counts.get(f, 0) > 0) if searched else ru.forms
            containing = 0  # weighed from the word they name, never re-weighed by their own
        out.append(attrs.evolve(ru, forms=forms, idf=weight, count=containing,
                                searched=searched, stand_ins=()))
        found.append(containing)
    return within_script(out, found, stats.documents)


def search_expression(parsed: ParsedQuery, units: Sequence[RankUnit]) -> Node | None:
    """What the store is asked for: an OR of every form (plain), or the query as written."""
    if parsed.advanced or parsed.expression is None:
        return parsed.expression
    items: list[Node] = []
    for ru in units:
        if not ru.searched:
            continue  # an English word's CJK names weigh what is read, add no rows
        # A word's names in other languages are searched by every spelling, also when
        # the first is a CJK word (路径 for 경로, the question holding "path" already).
        if isinstance(ru.unit, Term) and (_expandable(ru.unit, parsed)
                                          or _nominal(ru.unit, parsed) or ru.names):
            items.extend(Term(f) for f in ru.forms)
        else:
            items.append(ru.unit)
    items = list(dict.fromkeys(items))
    if not items:
        return parsed.expression
    return items[0] if len(items) == 1 else AnyOf(tuple(items))


def selective(parsed: ParsedQuery, units: Sequence[RankUnit], stats: TermStats,
              cap: int) -> Node | None:
    """The OR of the forms of every word found in at most ``cap`` messages, or None.

    A word is counted over all its forms together, as its IDF is (:func:`weigh_units`):
    a common word selects no rows even when one rare spelling of it would. Only plain
    queries of whole words qualify (anything else gives None). Common words add little
    to BM25 and select rows by the thousand, so leaving them out bounds the store's
    work; the ranker still counts them in the rows it reads.

    >>> from harkback.stages.query import parse_query, to_fts5
    >>> stats = TermStats(documents=10**6, counts=(("bike", 900), ("bikes", 300),
    ...                                           ("day", 1_500), ("days", 900)))
    >>> parsed = parse_query("bikes day")
    >>> to_fts5(selective(parsed, weigh_units(plan_units(parsed), stats), stats, 2000))
    '("bikes" OR "bike")'
    """
    if parsed.advanced:
        return None
    counts = dict(stats.counts)
    kept: list[Node] = []
    own = False  # a word of the question's own is selective
    for ru in units:
        if not ru.searched:
            continue  # weighed only: never the reason a row is read
        if isinstance(ru.unit, Phrase) and ru.names:
            # A longer CJK word of an English question's word: searched only when rare.
            kept.append(ru.unit)
            continue
        if not (isinstance(ru.unit, Term) and (_expandable(ru.unit, parsed) or ru.names)):
            return None
        found, total = _found(ru, counts)
        if found and total <= cap:
            kept.extend(Term(f) for f in found)
            own = own or not ru.names
    # An English question's rare CJK words join its own selective words; alone they would
    # decide which rows a question of common English words reads.
    kept = list(dict.fromkeys(kept)) if own else []
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else AnyOf(tuple(kept))


def _found(unit: RankUnit, counts: dict[str, int]) -> tuple[tuple[str, ...], int]:
    # A word's forms the index holds, and the messages holding any of them: one count
    # decides whether the word is common, however it is spelled.
    found = tuple(f for f in unit.forms if counts.get(f, 0) > 0)
    return found, sum(counts[f] for f in found)


PAIRED_WORDS = 6
"""How many of a question's common words :func:`common_pairs` pairs (the rarest first)."""


def common_pairs(parsed: ParsedQuery, units: Sequence[RankUnit], stats: TermStats,
                 cap: int) -> Node | None:
    """An OR of every two of the words :func:`selective` leaves out as common, or None.

    In a large store the words that name a topic ("restore", "postgres", "backups") can
    each be in thousands of messages, and only an incidental word of the question
    ("take") stays selective; its rows alone would decide which sessions are ranked.
    A message holding two of the common words together is far rarer than either word
    and much more likely on topic, so the ranker fills the rest of its candidates from
    these (:class:`~harkback.stages.match.lexical.LexicalMatch`). Two bigrams of one CJK
    run are no pair (they stand together in any text holding the word); only the
    :data:`PAIRED_WORDS` rarest common words are paired. None for fewer than two common
    words and for queries that are not plain words.

    >>> from harkback.stages.query import parse_query, to_fts5
    >>> stats = TermStats(documents=10**5, counts=(("take", 70), ("restore", 2500),
    ...                                           ("postgres", 3600), ("backup", 4000)))
    >>> parsed = parse_query("take restore postgres backups")
    >>> to_fts5(common_pairs(parsed, weigh_units(plan_units(parsed), stats), stats, 2000))
    '(("restore" AND "postgres") OR ("restore" AND "backup") OR ("postgres" AND "backup"))'
    """
    if parsed.advanced:
        return None
    counts = dict(stats.counts)
    common: list[tuple[RankUnit, Node]] = []
    for ru in units:
        if not ru.searched or (isinstance(ru.unit, Phrase) and ru.names):
            continue  # weighed only, or rare (selective reads it), as in selective
        if not isinstance(ru.unit, Term) or ru.unit.prefix:
            return None
        found, total = _found(ru, counts)
        if found and total > cap:
            terms = tuple(Term(f) for f in found)
            common.append((ru, terms[0] if len(terms) == 1 else AnyOf(terms)))
    rarest = sorted(common, key=lambda c: -c[0].idf)[:PAIRED_WORDS]
    kept = [c for c in common if c in rarest]  # in the question's order
    pairs = tuple(AllOf((a, b)) for i, (left, a) in enumerate(kept)
                  for right, b in kept[i + 1:] if not continues(left.unit, right.unit))
    if not pairs:
        return None
    return pairs[0] if len(pairs) == 1 else AnyOf(pairs)


def known_counts(stats: TermStats) -> tuple[tuple[str, int], ...]:
    """What ``stats`` tells the store's search (``MatchQuery.known_counts``): each term's
    count, and each prefix's under its text and ``*``.

    >>> known_counts(TermStats(counts=(("dock", 2),), prefix_counts=(("dock", 9),)))
    (('dock', 2), ('dock*', 9))
    """
    return (*stats.counts, *((prefix + "*", n) for prefix, n in stats.prefix_counts))


def store_query(request: SearchRequest, expression: Node, *, limit: int,
                max_scored: int | None = DEFAULT_MAX_SCORED,
                known_counts: tuple[tuple[str, int], ...] = ()) -> MatchQuery:
    """What a ranker asks the store for ``expression``: the request's filters, its
    ``NOT`` parts as sessions to exclude (:func:`split_exclusions`).

    >>> from harkback.stages.query import parse_query
    >>> q = store_query(SearchRequest(query="x", sources=("codex",)),
    ...                 parse_query("a NOT b").expression, limit=5)
    >>> q.expression, q.excluded, q.sources
    (Term(text='a', prefix=False), Term(text='b', prefix=False), ('codex',))
    """
    kept, excluded = split_exclusions(expression)
    return MatchQuery(expression=kept, excluded=excluded, roles=request.roles, limit=limit,
                      since=request.since, until=request.until,
                      hidden_sources=request.hidden_sources, sources=request.sources,
                      projects=request.projects, max_scored=max_scored,
                      known_counts=known_counts)
