"""Across languages: the names a question's words have in another language, as units of
their own, and what the stages after matching need to find them.

A developer asks in Chinese about a session held in English ("数据库连接超时": "database
connection timeout"), or writes English words in a Chinese question ("repo 太大"). The
planner (:func:`~harkback.stages.match.plan.plan_units`) adds the listed words' names
(:mod:`~harkback.stages.text.glossary`) as units: an English name weighs
:data:`FOREIGN_SHARE` of the word as the question writes it, the question's own language's
word in full. A Chinese, Japanese or Korean word's unit also holds the words the two
other CJK languages write for it, where the index holds them as one token (경고 is also
警告): a Korean question about a Japanese session shares no English with it either.
An English question's listed word weighs the three languages' one-token words for it at
:data:`FOREIGN_SHARE` of its own weight; they are searched only where the store holds
them in few messages (:attr:`~harkback.stages.match.score.RankUnit.searched`,
:func:`~harkback.stages.match.plan.weigh_units`).
:func:`with_names` hands them, and every other spelling the ranker searched a word by, on
to load and summarize.

>>> from harkback.stages.query import parse_query
>>> [(u.forms[:2], u.share) for u in foreign_units(parse_query("超时").units,
...                                                 (RankUnit(Term("超时"), ("超时",)),), None)]
[(('timeout', 'timeouts'), 0.5)]
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from harkback.stages.match.runs import bigram_runs, run_text, unit_text
from harkback.stages.match.score import RankUnit
from harkback.stages.query import ParsedQuery, Phrase, Term, Unit
from harkback.stages.text.glossary import LANGUAGES, longer_words, named_spans, native_words
from harkback.stages.text.glossary import english_names as single_names
from harkback.stages.text.scripts import Script
from harkback.stages.text.stem import inflections
from harkback.stages.text.tokens import is_bigram, is_cjk, tokens

FOREIGN_SHARE = 0.5
"""The weight of a word's English name (:mod:`~harkback.stages.text.glossary`) against the
word as the question writes it: a session on the topic in the question's own language
stays ahead of one on a like topic in English."""

FOREIGN_FLOOR = 0.6
"""For a session held outside the question's writing (an English session asked about in
Chinese), the English names weigh together at least this share of what the question's
words they name weigh, each name lifted by one factor (:func:`for_foreign_sessions`).

A word's weight is its IDF: in a store of mostly English sessions the English name
("config", "cache") is common and weighs little, while the question's own word (設定,
キャッシュ) is rare and weighs much, so at :data:`FOREIGN_SHARE` of the share alone the
English session answering the question lost to a session in the question's language that
shared one or two of its words. Sessions in the question's writing keep the weights as
they are (a Chinese session quoting "upload" must not gain on one saying 上传), and so
does an English question. On the cross-language seed set: 0.5 gains two questions with
and two without 100k other messages, 0.6 four and three, 0.75 loses a tuned one
(ja-docker-network, whose Japanese answer beats an English look-alike by the 5 % script
lift alone); none of the other three sets lost a question at 0.5 or 0.6."""


def foreign_units(topic: Sequence[Unit], planned: Sequence[RankUnit],
                  script: Script | None) -> list[RankUnit]:
    """The units to add for ``topic`` (planned as ``planned``, in the same order) in a
    question written in ``script``: English names of its listed CJK words (with the
    two-character words of the other CJK languages for them), and that language's words
    for its English words (in an English question, ``script`` None, the three languages'
    words, weighed only), none spelled like a planned form."""
    # Each listed word's names, weighed as what the word weighs in the question (the share
    # of the bigrams that spell it, or 1 for an English word); an English name at
    # FOREIGN_SHARE of that, the words of the question's own language in full.
    weighed: dict[tuple[str, ...], float] = {}
    spans: dict[tuple[str, ...], tuple[int, ...]] = {}
    unsearched: dict[tuple[str, ...], int] = {}
    longer: list[RankUnit] = []
    seen: set[str] = set()
    for start, end, names in english_names(topic):
        share = FOREIGN_SHARE * sum(ru.share for ru in planned[start:end])
        if share > weighed.get(names, 0.0):
            spans[names] = tuple(range(start, end))
        weighed[names] = max(weighed.get(names, 0.0), share)
    if script is not None:
        for ru in planned:
            if isinstance(ru.unit, Term) and not is_cjk(ru.unit.text):
                # An English word of a CJK question, by every spelling the plan gave it.
                native = tuple(w for f in ru.forms for w in native_words(f, script))
                weighed[native] = max(weighed.get(native, 0.0), ru.share)
    else:
        for j, ru in enumerate(planned):
            if isinstance(ru.unit, Term) and not ru.unit.prefix:
                # An English question's listed word, by the one-token words of the three
                # CJK languages, at FOREIGN_SHARE: a session in one of them names it so.
                native = tuple(dict.fromkeys(w for f in ru.forms for lang in LANGUAGES
                                             for w in native_words(f, lang)))
                if native and native not in weighed:
                    weighed[native] = FOREIGN_SHARE * ru.share
                    unsearched[native] = j
                longer += _longer_units(ru, j, seen)
    held = {f for ru in planned for f in ru.forms}
    out = []
    for group, share in weighed.items():
        # A word the question names is also looked for in the two other CJK languages,
        # as one more form of its names where the index holds it as one token.
        words = (*group, *(w for n in group for lang in LANGUAGES if lang != script
                           for w in native_words(n, lang))) if group in spans else group
        forms = tuple(dict.fromkeys(f for w in words for f in (
            (w,) if is_cjk(w) else inflections(w)) if f not in held))
        if forms:
            held.update(forms)
            # An English question's CJK words name its word: they weigh by that word's
            # count (plan.weigh_units), searched only when the store holds them rarely.
            named = (unsearched[group],) if group in unsearched else spans.get(group, ())
            out.append(RankUnit(Term(forms[0]), forms, share=round(share, 3), names=named,
                                searched=group not in unsearched))
    return out + longer


def _longer_units(ru: RankUnit, at: int, seen: set[str]) -> list[RankUnit]:
    # An English question's listed word (at position ``at``) by the words of the three CJK
    # languages longer than one index token (웹소켓, インデックス, 消费者), each the phrase of
    # its bigrams, weighed as the one-token words are (not searched unless rare). Counted
    # in ``seen``: a word two of the question's words name is one unit.
    out = []
    for word in (w for f in ru.forms for lang in LANGUAGES for w in longer_words(f, lang)):
        bigrams = tokens(word)
        if word in seen or len(bigrams) < 2 or not all(is_bigram(b) for b in bigrams):
            continue
        seen.add(word)
        out.append(RankUnit(Phrase(bigrams), bigrams, share=round(FOREIGN_SHARE * ru.share, 3),
                            names=(at,), searched=False))
    return out


def for_foreign_sessions(units: Sequence[RankUnit]) -> tuple[RankUnit, ...] | None:
    """``units`` as a session held outside the question's writing is scored by: the
    English names (units with :attr:`~harkback.stages.match.score.RankUnit.names`) lifted
    together, by one factor, to the weight they would have each at least
    :data:`FOREIGN_FLOOR` of the weight of the words it names; None when no unit names a
    word of the question.

    One factor keeps the names' weights relative to one another. Lifted one by one, every
    name would weigh what its CJK word weighs, and in a large English store every CJK word
    is about as rare as any other (its script is): "config" or "test" would weigh as much
    as "deadlock" or "django", and any English session saying "config" would compete with
    the one on the question's topic. Names no message holds (weight 0) are left out of
    both sums. Measured on the seed sets (:mod:`benchmarks.seeds`) inside a copy of a
    100k-message English store (``--background``): crosslang 13 -> 15 of 35
    (x-ja-deadlock, x-ko-django-upgrade, whose "deadlock" and "django" now outweigh a
    background session's "table" and "version"); nothing lost in tuned, heldout,
    heldout2 or crosslang, with or without the background.

    >>> units = (RankUnit(Term("设置"), ("设置",), 5.0), RankUnit(Term("config"), ("config",), 1.0,
    ...                                                      0.5, names=(0,)))
    >>> [u.idf for u in for_foreign_sessions(units)]
    [5.0, 3.0]
    >>> units = (RankUnit(Term("死锁"), ("死锁",), 10.0), RankUnit(Term("表"), ("表",), 10.0),
    ...          RankUnit(Term("deadlock"), ("deadlock",), 4.0, 0.5, names=(0,)),
    ...          RankUnit(Term("table"), ("table",), 1.0, 0.5, names=(1,)))
    >>> [u.idf for u in for_foreign_sessions(units)][2:]
    [9.6, 2.4]
    """
    if not any(u.names for u in units):
        return None
    named = [u for u in units if u.names and u.idf > 0]
    own = sum(u.idf for u in named)
    lifted = sum(max(u.idf, FOREIGN_FLOOR * sum(units[j].idf for j in u.names)) for u in named)
    factor = lifted / own if own else 1.0
    return tuple(attrs.evolve(u, idf=u.idf * factor) if u.names else u for u in units)


def with_names(parsed: ParsedQuery, units: Sequence[RankUnit]) -> ParsedQuery:
    """``parsed`` as the stages after matching need it to find what the ranker found in a
    transcript (where to cut it, which lines a summary shows): the words :func:`plan_units`
    added in another language as units of their own, and each word's other spellings the
    store holds (:func:`weigh_units`) as its :attr:`~ParsedQuery.spellings`. "how many
    bikes" was answered by "my bike was serviced"; a Chinese question by a "timeout".

    >>> from harkback.stages.match.plan import plan_units
    >>> from harkback.stages.query import parse_query
    >>> parsed = parse_query("超时")
    >>> widened = with_names(parsed, plan_units(parsed))
    >>> [u.text for u in widened.units], widened.spellings[1][:1]
    (['超时', 'timeout'], ('timeouts',))
    """
    forms = {ru.unit: ru.forms for ru in units if isinstance(ru.unit, Term) and not ru.unit.prefix}
    every = parsed.units + tuple(dict.fromkeys(ru.unit for ru in units
                                               if ru.unit not in parsed.units))
    spellings = tuple(tuple(f for f in forms.get(u, ()) if f != u.text)
                      if isinstance(u, Term) else () for u in every)
    if every == parsed.units and not any(spellings):
        return parsed
    return attrs.evolve(parsed, units=every, spellings=spellings)


def english_names(units: Sequence[Unit]) -> list[tuple[int, int, tuple[str, ...]]]:
    """The English names of the listed words the CJK bigrams spell, each with the units
    ``(start, end)`` of the bigrams wholly inside it; a listed word of one character
    standing alone (a Korean noun: 큐 for 큐에, :mod:`~harkback.stages.text.korean`) is a
    unit of its own.

    A run of bigrams spells one stretch of text ("数据" "据库" "库连" … for 数据库连接…);
    its listed words are found in that text.

    >>> english_names((Term("数据"), Term("据库"), Term("库连"), Term("连接")))
    [(0, 2, ('database', 'db')), (3, 4, ('connection',))]
    """
    found = []
    for start, end in bigram_runs(units):
        if not is_bigram(unit_text(units[start])):
            # A word of one character (a Korean noun: 큐, 락) is a run of its own.
            if names := single_names(unit_text(units[start])):
                found.append((start, end, names))
            continue
        text = run_text(units[start:end])
        # The word at characters [begin, finish) holds the bigrams starting begin..finish-2.
        found += [(start + begin, start + finish - 1, names)
                  for begin, finish, names in named_spans(text)]
    return found
