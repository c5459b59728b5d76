"""The lexical ranker: sessions ranked by how well their best messages cover the query.

Plain FTS5 ranks messages, and a session is only as good as its single best row: a
long session that repeats one query word wins by volume, and a message that says
"bikes" is missed by a question about a "bike". This ranker:

1. drops stopwords, question framing ("how many", "what kind") and the words of a time
   the question names ("two weeks ago", "how many months";
   :func:`~harkback.stages.when.time_words`) from plain queries;
2. widens each word to its inflections found in the index (``bike`` → ``bikes``,
   ``biking``; an irregular verb's other forms, ``buy`` → ``bought``), asking the store
   for their document counts (:meth:`term_stats`), so every query word gets one IDF
   however it is spelled;
3. reads a bounded number of candidate messages from the store: an OR of the forms of
   the words found in at most ``max_scored`` messages (all forms counted together);
4. re-scores each candidate with BM25 over query *words* (forms merged), the user's own
   messages weighted up (:data:`ROLE_WEIGHTS`);
5. scores each session from its best few messages (geometrically decaying weights, so
   volume past the third hit adds nothing) plus the IDF-weighted share of the query
   that those messages cover together; noisy sources (cron) are scaled down, recent
   sessions can be scaled up, and a question that names a time ("two weeks ago")
   lifts the sessions from then (:data:`TIME_WEIGHT`);
6. returns hits grouped by session in that order, so the resolve stage's first hit
   per lineage reproduces the session ranking.

>>> stem("bikes"), stem("biking"), stem("babies"), stem("classes")
('bike', 'bike', 'babi', 'class')
>>> "bikes" in inflections("bike") and "biking" in inflections("bike")
True
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache

import attrs
from returns.future import FutureResult

from harkback.stages.errors import StoreUnavailable
from harkback.stages.flow import Matched
from harkback.stages.ports import DEFAULT_MAX_SCORED, MatchQuery, SessionStore, TermStats
from harkback.stages.query import (
    AnyOf,
    Node,
    ParsedQuery,
    Phrase,
    Term,
    Unit,
    parse_query,
    phrase_count,
    unit_matches,
)
from harkback.stages.records import MessageHit, Role
from harkback.stages.request import SearchRequest
from harkback.stages.stage import Step, pure, with_store
from harkback.stages.text.irregular import irregular_forms
from harkback.stages.text.tokens import ascii_words, index_tokens, is_cjk
from harkback.stages.when import closeness, time_window, time_words

QUESTION_WORDS = frozenset(
    "many much total number currently recently lately name kind type different".split())
"""Words that frame a question rather than name its topic; dropped when others remain."""

K1 = 1.2
B = 0.75
"""BM25's usual parameters (also FTS5's); message-level length normalisation."""

TIME_WEIGHT = 1.0
"""How much a question's own time ("two weeks ago", "last month") may lift a session.

A session inside the window :func:`~harkback.stages.when.time_window` reads from the
question scores up to twice as much, less the further it lies outside. Weights from
0.25 to 2 scored alike on the dev data (within 0.004), all a little above none.
"""

ROLE_WEIGHTS: tuple[tuple[Role, float], ...] = (("user", 1.5),)
"""Message scores by role, by default: the user's own words count half again.

People ask about what *they* said, decided and asked for; an assistant's turns are long
and reuse the question's words generically. Assistant and tool text still counts in
full, so "the script you wrote" is found; the weight only breaks near-ties. 1.25, 1.5
and 2.0 scored alike on the dev data (within 0.02 everywhere), so the middle is used.
"""

_VOWELS = frozenset("aeiou")


def _consonant(word: str, i: int) -> bool:
    if word[i] in _VOWELS:
        return False
    if word[i] == "y":
        return i == 0 or not _consonant(word, i - 1)
    return True


def _measure(word: str) -> int:
    # Porter's m: the number of vowel-consonant sequences.
    count, after_vowel = 0, False
    for i in range(len(word)):
        vowel = not _consonant(word, i)
        if after_vowel and not vowel:
            count += 1
        after_vowel = vowel
    return count


def _has_vowel(word: str) -> bool:
    return any(not _consonant(word, i) for i in range(len(word)))


def _ends_cvc(word: str) -> bool:
    n = len(word)
    return (n >= 3 and _consonant(word, n - 3) and not _consonant(word, n - 2)
            and _consonant(word, n - 1) and word[-1] not in "wxy")


def stem(word: str) -> str:
    """An English inflectional stem (Porter's steps 1 and 5a: plurals, -ed, -ing, -y, -e).

    Only inflections are removed, so ``conference`` and ``confer`` stay apart. Words
    that are not plain ASCII letters are returned unchanged.

    >>> [stem(w) for w in ("subscriptions", "attended", "hopping", "agreed", "status")]
    ['subscription', 'attend', 'hop', 'agre', 'status']
    """
    if len(word) <= 2 or not (word.isascii() and word.isalpha()):
        return word
    if word.endswith("sses") or word.endswith("ies"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    suffix_removed = False
    if word.endswith("eed"):
        if _measure(word[:-3]) > 0:
            word = word[:-1]
    elif word.endswith("ed") and _has_vowel(word[:-2]):
        word, suffix_removed = word[:-2], True
    elif word.endswith("ing") and _has_vowel(word[:-3]):
        word, suffix_removed = word[:-3], True
    if suffix_removed:
        if word.endswith(("at", "bl", "iz")):
            word += "e"
        elif len(word) >= 2 and word[-1] == word[-2] and _consonant(word, len(word) - 1) \
                and word[-1] not in "lsz":
            word = word[:-1]
        elif _measure(word) == 1 and _ends_cvc(word):
            word += "e"
    if len(word) > 2 and word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    # Porter's step 5a: a silent final e goes, so "service" and "serviced" meet.
    if word.endswith("e") and len(word) > 3:
        rest = word[:-1]
        if _measure(rest) > 1 or (_measure(rest) == 1 and not _ends_cvc(rest)):
            word = rest
    return word


def inflections(word: str) -> tuple[str, ...]:
    """``word`` and the spellings that share its stem: plural, -ed, -ing, -ies forms.

    Candidates are generated and kept only when :func:`stem` agrees, so the set is
    consistent with the stemmer by construction; the store says which exist. A form of
    an irregular verb (:func:`~harkback.stages.text.irregular.irregular_forms`) also reaches
    the verb's other forms and the regular inflections of its base ("bought" → "buy",
    "buys", "buying").

    >>> inflections("babies")
    ('babies', 'babi', 'babied', 'babie', 'babiing', 'baby', 'babys', 'babyed', 'babying')
    >>> inflections("中文")
    ('中文',)
    >>> inflections("rode")
    ('rode', 'ride', 'rides', 'rided', 'riding', 'ridden')
    """
    irregular = irregular_forms(word)
    if not irregular:
        return regular_inflections(word)
    base, *past = irregular
    forms = [word, *regular_inflections(base), *past]
    return tuple(dict.fromkeys(forms))


def regular_inflections(word: str) -> tuple[str, ...]:
    """``word`` and the spellings :func:`stem` joins to it (no irregular forms).

    >>> regular_inflections("bike")
    ('bike', 'bikes', 'biked', 'biking')
    """
    root = stem(word)
    if root == word and not (word.isascii() and word.isalpha()):
        return (word,)
    bases = {root, word}
    if root.endswith("i"):
        bases.add(root[:-1] + "y")
    if root.endswith("e"):
        bases.add(root[:-1])
    candidates = [word, root]
    for base in sorted(bases):
        candidates += [base, base + "s", base + "d"]
        if not base.endswith("e"):
            candidates += [base + "es", base + "ed", base + "e", base + "ing"]
        if base and base[-1] not in "aeiouwxy":
            candidates += [base + base[-1] + "ed", base + base[-1] + "ing"]
        if base.endswith("y"):
            candidates += [base[:-1] + "ies", base[:-1] + "ied"]
        if base.endswith("e"):
            candidates.append(base[:-1] + "ing")
    return tuple(c for c in dict.fromkeys(candidates) if stem(c) == root)


@attrs.frozen
class RankUnit:
    """One query word or phrase, the index tokens that count for it, and its weight."""

    unit: Unit
    forms: tuple[str, ...]
    idf: float = 0.0


def topic_units(parsed: ParsedQuery, framing: frozenset[str] = frozenset()
                ) -> tuple[Unit, ...]:
    """The units that carry the query's topic: question framing left out of plain queries.

    :data:`QUESTION_WORDS` and the words in ``framing`` (for the ranker, the query's
    :func:`~harkback.stages.when.time_words`) go when a topic word remains.

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


def plan_units(parsed: ParsedQuery, framing: frozenset[str] = frozenset()
               ) -> tuple[RankUnit, ...]:
    """Each topic unit (:func:`topic_units`) with the forms to look up: inflections for
    plain words.

    >>> [u.forms for u in plan_units(parse_query("bikes"))]
    [('bikes', 'bike', 'biked', 'biking')]
    """
    out = []
    for unit in topic_units(parsed, framing):
        if _expandable(unit, parsed):
            assert isinstance(unit, Term)
            out.append(RankUnit(unit, inflections(unit.text)))
        elif isinstance(unit, Term):
            out.append(RankUnit(unit, (unit.text,)))
        else:
            out.append(RankUnit(unit, unit.terms))
    return tuple(out)


def idf(documents: int, containing: int) -> float:
    """BM25's inverse document frequency in its non-negative form, ``ln(1 + (N-n+.5)/(n+.5))``.

    >>> round(idf(100, 1), 3), round(idf(100, 100), 3)
    (4.21, 0.005)
    """
    containing = min(max(containing, 0), documents)
    return math.log(1 + (documents - containing + 0.5) / (containing + 0.5))


def weigh_units(units: Sequence[RankUnit], stats: TermStats) -> tuple[RankUnit, ...]:
    """Keep the forms the index holds and give each unit its IDF.

    A word's document count is the sum over its forms (at most every document); a
    phrase counts as its rarest word, an upper bound on how often it occurs.
    """
    counts = dict(stats.counts)
    out = []
    for ru in units:
        if isinstance(ru.unit, Phrase):
            containing = min((counts.get(t, 0) for t in ru.forms), default=0)
            forms = ru.forms
        else:
            forms = tuple(f for f in ru.forms if counts.get(f, 0) > 0) or ru.forms[:1]
            containing = sum(counts.get(f, 0) for f in forms)
        out.append(RankUnit(ru.unit, forms, idf(stats.documents, max(containing, 1))))
    return tuple(out)


def search_expression(parsed: ParsedQuery, units: Sequence[RankUnit]) -> Node | None:
    """What the store is asked for: an OR of every form (plain), or the query as written."""
    if parsed.advanced or parsed.expression is None:
        return parsed.expression
    items: list[Node] = []
    for ru in units:
        if isinstance(ru.unit, Term) and _expandable(ru.unit, parsed):
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

    >>> from harkback.stages.query import to_fts5
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
    for ru in units:
        if not (isinstance(ru.unit, Term) and _expandable(ru.unit, parsed)):
            return None
        found = [f for f in ru.forms if counts.get(f, 0) > 0]
        if found and sum(counts[f] for f in found) <= cap:
            kept.extend(Term(f) for f in found)
    kept = list(dict.fromkeys(kept))
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else AnyOf(tuple(kept))


@attrs.frozen
class Scored:
    """A hit re-scored: its message score and the query units it covers."""

    hit: MessageHit
    score: float
    covered: frozenset[int]


# ASCII letters and digits lower-cased, every other ASCII character a space.
_ASCII_FOLD = {c: chr(c).lower() if chr(c).isalnum() else " " for c in range(128)}
# The same fold on bytes: ranking tokenizes every candidate, and on ASCII text
# ``bytes.translate`` with a 256-byte table is the cheapest pass there is.
_ASCII_FOLD_BYTES = bytes(ord(_ASCII_FOLD.get(c, " ")) for c in range(256))


def message_tokens(text: str) -> Sequence[str]:
    """The index tokens of a message (as :func:`index_tokens`), faster for ASCII text.

    On ASCII text the index's words are the runs of ``[a-z0-9]`` after lower-casing;
    one ``str.translate`` that lower-cases and blanks everything else, then a split,
    finds them about four times faster than a regex, and ranking does this to every
    candidate message.

    >>> message_tokens("Fixed the CORS-error (2x), then re_tried!")
    ['fixed', 'the', 'cors', 'error', '2x', 'then', 're', 'tried']
    """
    if text.isascii():
        return text.translate(_ASCII_FOLD).split()
    return index_tokens(text)


@lru_cache(maxsize=1024)
def _plain(unit: Unit) -> bool:
    # A whole word (not a prefix, not CJK) counts as exact tokens; anything else is matched.
    return isinstance(unit, Term) and not unit.prefix and not is_cjk(unit.text)


MessageScorer = Callable[[str], tuple[float, frozenset[int]]]


def message_scorer(units: Sequence[RankUnit], *, average_length: float,
                   k1: float = K1, b: float = B) -> MessageScorer:
    """A function giving a message's BM25 over ``units`` (forms merged) and the units it covers.

    What depends only on the query (which units are plain words, which unit each form
    counts for) is worked out once here, not once per candidate message. When every
    unit is a plain word, a message whose words are all ASCII (:func:`ascii_words`) is
    counted on its bytes: only the forms it holds are counted, found by one set
    intersection, and no set of its tokens is built.

    >>> score = message_scorer((RankUnit(Term("bike"), ("bike", "bikes"), 2.0),),
    ...                        average_length=5.0)
    >>> score("two bikes and a bike"), score("a car")
    ((2.75, frozenset({0})), (0.0, frozenset()))
    """
    plain = [_plain(ru.unit) for ru in units]
    owners: dict[bytes, list[int]] = {}
    for j, ru in enumerate(units):
        for form in dict.fromkeys(ru.forms):
            if form.isascii():
                owners.setdefault(form.encode("ascii"), []).append(j)
    ascii_forms = frozenset(owners)

    def norm(length: int) -> float:
        return k1 * (1 - b + b * length / average_length) if average_length > 0 else k1

    def total(counts: Mapping[int, int], length: int) -> tuple[float, frozenset[int]]:
        n = norm(length)
        # Summed in unit order, so the score is the same float on every path.
        score = 0.0
        for j, tf in sorted(counts.items()):
            score += units[j].idf * tf * (k1 + 1) / (tf + n)
        return score, frozenset(counts)

    def bytes_path(raw: bytes) -> tuple[float, frozenset[int]]:
        toks = raw.translate(_ASCII_FOLD_BYTES).split()
        counts: dict[int, int] = {}
        for form in ascii_forms.intersection(toks):
            tf = toks.count(form)
            for j in owners[form]:
                counts[j] = counts.get(j, 0) + tf
        return total(counts, len(toks))

    def token_path(text: str) -> tuple[float, frozenset[int]]:
        toks = message_tokens(text)
        token_set = frozenset(toks)
        counts: dict[int, int] = {}
        for j, ru in enumerate(units):
            if plain[j]:
                # Most forms are absent: a set lookup rules them out before counting in C.
                tf = sum(toks.count(f) for f in ru.forms if f in token_set)
            else:
                tf = _unit_count(ru.unit, toks, token_set)
            if tf:
                counts[j] = tf
        return total(counts, len(toks))

    def score(text: str) -> tuple[float, frozenset[int]]:
        if text.isascii():
            return bytes_path(text.encode("ascii"))
        folded = ascii_words(text)
        return token_path(text) if folded is None else bytes_path(folded)

    return score if all(plain) else token_path


def score_message(text: str, units: Sequence[RankUnit], *, average_length: float,
                  k1: float = K1, b: float = B) -> tuple[float, frozenset[int]]:
    """BM25 of one message over query units (forms merged), and the units it covers.

    To score many messages for one query, build :func:`message_scorer` once.

    >>> us = (RankUnit(Term("bike"), ("bike", "bikes"), 2.0),)
    >>> score_message("two bikes and a bike", us, average_length=5.0)
    (2.75, frozenset({0}))
    """
    return message_scorer(units, average_length=average_length, k1=k1, b=b)(text)


def _unit_count(unit: Unit, toks: Sequence[str], token_set: frozenset[str]) -> int:
    if isinstance(unit, Phrase):
        return phrase_count(unit, toks) if unit_matches(unit, toks, token_set) else 0
    if not unit_matches(unit, toks, token_set):
        return 0
    if unit.prefix or (len(unit.text) == 1 and is_cjk(unit.text)):
        return sum(1 for t in toks if t.startswith(unit.text))
    return toks.count(unit.text)


RECENCY_WEIGHT = 1.0
HALF_LIFE_DAYS = 90.0
"""How much recency lifts a session: up to 2x for today's, 1.5x at 90 days, fading.

People mostly ask about recent work, and the same words recur across months of
sessions. On LongMemEval's developer split (gold sessions a median 5.5 days before the
question) weights 0.5/1/2/4 with half-lives 7/30/90 days gave pooled recall_all@5
0.45-0.52 (0.42 without) and per-question 0.865-0.886 (0.886 without); a gentle lift
with a long half-life kept the per-question ranking whole (benchmarks/README.md).
"""

FUTURE_SLACK_DAYS = 1.0
"""How far after "now" a session may be dated and still count as fresh (clock skew)."""


@attrs.frozen(kw_only=True)
class SessionScoring:
    """How message scores become a session score (see :func:`rank_sessions`)."""

    top_messages: int = attrs.field(default=3, validator=attrs.validators.ge(1))
    decay: float = attrs.field(default=0.5, validator=[attrs.validators.ge(0.0),
                                                       attrs.validators.le(1.0)])
    coverage_weight: float = attrs.field(default=0.5, validator=attrs.validators.ge(0.0))
    demoted_sources: tuple[str, ...] = ("cron",)
    demotion: float = attrs.field(default=0.5, validator=attrs.validators.ge(0.0))
    recency_weight: float = attrs.field(default=RECENCY_WEIGHT, validator=attrs.validators.ge(0.0))
    half_life_days: float = attrs.field(default=HALF_LIFE_DAYS, validator=attrs.validators.gt(0.0))


def rank_sessions(scored: Sequence[Scored], weights: Sequence[float],
                  scoring: SessionScoring = SessionScoring()
                  ) -> tuple[tuple[str, float], ...]:
    """Session ids with their scores, best first (ties keep first-seen order).

    A session's score is the decaying sum of its best ``top_messages`` message scores,
    relative to the best message overall, plus ``coverage_weight`` times the
    IDF-weighted share of the query units its messages cover together (``weights``
    are the units' IDFs). Demoted sources are scaled by ``demotion``. Recency is
    weighed afterwards, from the sessions' times (:func:`weigh_by_recency`).

    >>> s = lambda sid, score, cov: Scored(MessageHit(session_id=sid, position=0,
    ...     role="user", content="", score=0.0), score, frozenset(cov))
    >>> rank_sessions([s("one", 5.0, {0}), s("two", 4.0, {0}), s("two", 4.0, {1})],
    ...               [1.0, 1.0])
    (('two', 1.7), ('one', 1.25))
    """
    if not scored:
        return ()
    top = max(s.score for s in scored) or 1.0
    total_weight = sum(weights) or 1.0
    per_session: dict[str, list[Scored]] = {}
    for s in scored:
        per_session.setdefault(s.hit.session_id, []).append(s)
    ranked = []
    for session_id, items in per_session.items():
        best = sorted((s.score for s in items), reverse=True)[:scoring.top_messages]
        volume = sum(score * scoring.decay ** i for i, score in enumerate(best)) / top
        covered = frozenset().union(*(s.covered for s in items))
        coverage = sum(weights[j] for j in covered) / total_weight
        value = volume + scoring.coverage_weight * coverage
        if items[0].hit.source in scoring.demoted_sources:
            value *= scoring.demotion
        ranked.append((session_id, round(value, 12)))
    order = {sid: i for i, sid in enumerate(per_session)}
    return tuple(sorted(ranked, key=lambda pair: (-pair[1], order[pair[0]])))


def weigh_by_recency(sessions: Sequence[tuple[str, float]], times: Mapping[str, float],
                     now: float, scoring: SessionScoring) -> tuple[tuple[str, float], ...]:
    """Sessions re-scored by how recent they are, best first (ties keep the given order).

    A session's score grows by up to ``recency_weight`` times itself, the lift halving
    every ``half_life_days`` before ``now``. A session of unknown time, or dated more
    than :data:`FUTURE_SLACK_DAYS` after ``now``, keeps its score.

    >>> day = 86400.0
    >>> weigh_by_recency((("undated", 2.0), ("new", 1.5)), {"new": 29 * day},
    ...                  30 * day, SessionScoring(recency_weight=1.0, half_life_days=1.0))
    (('new', 2.25), ('undated', 2.0))
    """
    return _rescaled(sessions, lambda sid: recency_factor(times.get(sid), now, scoring))


def recency_factor(moment: float | None, now: float, scoring: SessionScoring) -> float:
    """How much a session from ``moment`` is lifted at ``now``: from 1 up to 1 + weight.

    >>> scoring = SessionScoring(recency_weight=1.0, half_life_days=90.0)
    >>> day = 86400.0
    >>> [recency_factor(now - age * day, now, scoring) for now in [1e9] for age in (0, 90)]
    [2.0, 1.5]
    >>> recency_factor(1e9 + 5 * day, 1e9, scoring), recency_factor(None, 1e9, scoring)
    (1.0, 1.0)
    """
    if moment is None or not scoring.recency_weight:
        return 1.0
    age_days = (now - moment) / 86400
    if age_days < -FUTURE_SLACK_DAYS:
        # Dated after now: nothing the asker has lived through yet (a clock set
        # back, a store replayed as of a past date), so it gets no lift.
        return 1.0
    freshness: float = 0.5 ** (max(age_days, 0.0) / scoring.half_life_days)
    return 1.0 + scoring.recency_weight * freshness


def _rescaled(sessions: Sequence[tuple[str, float]], factor: Callable[[str], float]
              ) -> tuple[tuple[str, float], ...]:
    # Each score times its session's factor, best first, ties in the given order.
    rescored = [(sid, round(score * factor(sid), 12)) for sid, score in sessions]
    order = {sid: i for i, (sid, _) in enumerate(sessions)}
    return tuple(sorted(rescored, key=lambda pair: (-pair[1], order[pair[0]])))


def order_hits(scored: Sequence[Scored], sessions: Sequence[tuple[str, float]], *,
               per_session: int, limit: int) -> tuple[MessageHit, ...]:
    """Hits grouped by session in ranked order, each session's best ``per_session`` first.

    Each hit carries its own message score, so later stages can tell its best lines.
    """
    grouped: dict[str, list[Scored]] = {}
    for s in scored:
        grouped.setdefault(s.hit.session_id, []).append(s)
    out: list[MessageHit] = []
    for session_id, _ in sessions:
        best = sorted(grouped.get(session_id, ()), key=lambda s: -s.score)[:per_session]
        out.extend(attrs.evolve(s.hit, score=s.score) for s in best)
        if len(out) >= limit:
            break
    return tuple(out[:limit])


def weigh_by_time(sessions: Sequence[tuple[str, float]], times: Mapping[str, float],
                  window: tuple[float, float], weight: float) -> tuple[tuple[str, float], ...]:
    """Sessions re-scored by how close their time is to ``window``, best first.

    Each score grows by up to ``weight`` times itself (:func:`~harkback.stages.when.closeness`);
    a session of unknown time keeps its score. Ties keep the given order.

    >>> weigh_by_time((("old", 1.0), ("then", 0.9)), {"old": 0.0, "then": 5e6},
    ...               (4e6, 6e6), 0.5)
    (('then', 1.35), ('old', 1.125))
    """
    def factor(session_id: str) -> float:
        moment = times.get(session_id)
        return 1.0 if moment is None else 1.0 + weight * closeness(moment, window)

    return _rescaled(sessions, factor)


def session_times(hits: Sequence[MessageHit]) -> dict[str, float]:
    """When each session happened: the newest time among its hits (a hit's time is its
    message's stamp, else its session's start; :class:`MessageHit`).

    >>> h = lambda sid, t: MessageHit(session_id=sid, position=0, role="user", content="",
    ...                               score=0.0, timestamp=t)
    >>> session_times((h("a", 5.0), h("a", 9.0), h("b", None)))
    {'a': 9.0}
    """
    times: dict[str, float] = {}
    for hit in hits:
        if hit.timestamp is not None:
            times[hit.session_id] = max(hit.timestamp, times.get(hit.session_id, hit.timestamp))
    return times


@attrs.frozen(kw_only=True)
class LexicalMatch:
    """The default matcher: inflection-aware BM25 over candidates, ranked by session.

    ``scan_limit`` candidate messages are read from the store (one bounded search plus
    one :meth:`term_stats` lookup per query); words found in more than ``max_scored``
    messages select no rows (see :func:`selective`); ``hit_limit`` hits leave the stage, at most
    ``hits_per_session`` per session. ``role_weights`` (pairs such as ``("user", 1.5)``,
    default :data:`ROLE_WEIGHTS`) scale message scores by role; a role not named keeps
    1.0, and ``role_weights=()`` weighs every role alike. When the question names a
    time relative to now (:func:`~harkback.stages.when.time_window`), sessions from
    then are lifted by up to ``time_weight`` (0 turns it off; the time's words are not
    searched for either way, :func:`~harkback.stages.when.time_words`); a
    ``scoring.recency_weight`` lifts recent sessions (:func:`weigh_by_recency`). Both
    read a session's time from its hits (:func:`session_times`), so neither asks the
    store again.
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

    def __call__(self, request: SearchRequest) -> Step[Matched]:
        """Rank sessions for ``request.query``."""
        parsed = parse_query(request.query)
        if parsed.expression is None:
            return pure(Matched(request=request, parsed=parsed, hits=()))
        # The question's time ("two weeks ago") is weighed by its window, not its words.
        planned = plan_units(parsed, time_words(request.query))
        lookups = tuple(dict.fromkeys(f for ru in planned for f in ru.forms))

        def run(store: SessionStore, now: float) -> FutureResult[Matched, StoreUnavailable]:
            window = time_window(request.query, now) if self.time_weight else None

            def search(stats: TermStats) -> FutureResult[Matched, StoreUnavailable]:
                units = weigh_units(planned, stats)
                expression = search_expression(parsed, units)
                assert expression is not None
                narrow = selective(parsed, units, stats, self.max_scored)
                # Counts known: search the selective terms exactly, skipping the store's
                # own counting; otherwise the store bounds the search itself.
                query = MatchQuery(expression=narrow or expression, roles=request.roles,
                                   limit=self.scan_limit, since=request.since,
                                   until=request.until, hidden_sources=request.hidden_sources,
                                   max_scored=None if narrow else self.max_scored)
                return store.search(query).map(
                    lambda hits: self._rank(request, parsed, units, stats, hits, now, window))
            return store.term_stats(lookups).bind(search)

        return with_store(lambda deps: run(deps.store, deps.clock()))

    def _rank(self, request: SearchRequest, parsed: ParsedQuery, units: Sequence[RankUnit],
              stats: TermStats, hits: Sequence[MessageHit], now: float,
              window: tuple[float, float] | None = None) -> Matched:
        average = stats.average_length or 1.0
        role_weights = dict(self.role_weights)
        score = message_scorer(units, average_length=average, k1=self.k1, b=self.b)
        scored = []
        for hit in hits:
            value, covered = score(hit.content)
            value *= role_weights.get(hit.role, 1.0)
            scored.append(Scored(hit, value, covered))
        sessions = rank_sessions(scored, [u.idf for u in units], self.scoring)
        times = session_times(hits) if self.scoring.recency_weight or window else {}
        if self.scoring.recency_weight and times:
            sessions = weigh_by_recency(sessions, times, now, self.scoring)
        if window is not None and times:
            sessions = weigh_by_time(sessions, times, window, self.time_weight)
        ordered = order_hits(scored, sessions, per_session=self.hits_per_session,
                             limit=self.hit_limit)
        return Matched(request=request, parsed=parsed, hits=ordered)

