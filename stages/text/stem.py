"""English stemming: a word's Snowball stem, and the spellings of it a question reaches.

Query words are widened to their inflections (``bike`` → ``bikes``, ``biking``) so a
question about a "bike" finds a message about "bikes". Which spellings are one word is
decided by the Snowball English stemmer (Porter2, from the maintained
``snowballstemmer`` package), the same stemmer for every store, since the widening
happens on the query side before any store is asked. Candidate spellings come only
from inflecting the query word (plural, -ed, -ing), so "news" stays apart from "new"
and "conference" from "confer"; irregular forms ("ran", "children") come from a table.

>>> [stem(w) for w in ("repairs", "repaired", "repairing")]
['repair', 'repair', 'repair']
>>> "bought" in inflections("buy") and "buying" in inflections("bought")
True
>>> "new" in inflections("news"), "child" in inflections("children")
(False, True)
"""

from __future__ import annotations

import threading
from functools import lru_cache

import snowballstemmer

from harkback.stages.text.irregular import irregular_forms

_LOCAL = threading.local()


def _stemmer() -> snowballstemmer.stemmer:
    # A Snowball stemmer keeps state while it works: one per thread.
    made = getattr(_LOCAL, "stemmer", None)
    if made is None:
        made = _LOCAL.stemmer = snowballstemmer.stemmer("english")
    return made


LONGEST_WORD = 40
"""Longer tokens are not words (hashes, base64, runs of a letter): neither stemmed nor
inflected, which would cost time growing with the square of their length."""


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The Snowball English stem of a lower-case word; other words are returned unchanged.

    >>> [stem(w) for w in ("subscriptions", "attended", "hopping", "babies", "status")]
    ['subscript', 'attend', 'hop', 'babi', 'status']
    >>> stem("端口"), stem("ipv6s")
    ('端口', 'ipv6s')
    """
    if not 2 < len(word) <= LONGEST_WORD or not (word.isascii() and word.isalpha()):
        return word
    stemmed: str = _stemmer().stemWord(word)
    return stemmed


def _bases(word: str) -> set[str]:
    """The spellings ``word`` may be an inflection of: itself with a plural, past or
    progressive ending taken off (a doubled consonant undone, a silent e or a y put back)."""
    bases = {word}
    for ending in ("s", "es", "ed", "d", "ing"):
        if word.endswith(ending) and len(word) - len(ending) >= 2:
            bare = word[:-len(ending)]
            bases.add(bare)
            if ending in ("ed", "ing") and not bare.endswith("e"):
                bases.add(bare + "e")  # "biking" is "bike"
            if ending in ("ed", "ing") and len(bare) >= 3 and bare[-1] == bare[-2]:
                bases.add(bare[:-1])  # "hopping" is "hop"
    for ending in ("ies", "ied"):
        if word.endswith(ending) and len(word) > 4:
            bases.add(word[:-3] + "y")
    return bases


_ES_AFTER = ("s", "x", "z", "ch", "sh", "o", "i")
"""The endings after which a plural or third person takes -es (boxes, echoes, chilies); after
any other, "-es" makes no word (configes, kafkaes), only a lookup in the store for nothing."""

_VOWELS = "aeiou"


def _doubles(base: str) -> bool:
    """Whether a base may double its last consonant before -ed and -ing: it ends in one
    vowel and a consonant (stop, commit, travel; equip, whose u follows q), so that
    "configurationned" or "cooled" as "coolled" are not made.

    >>> [_doubles(w) for w in ("stop", "up", "equip", "migration", "cool", "fix")]
    [True, True, True, False, False, False]
    """
    if len(base) < 2 or base[-1] in "aeiouwxy" or base[-2] not in _VOWELS:
        return False
    return len(base) == 2 or base[-3] not in _VOWELS or base[-4:-2] == "qu"


def inflections(word: str) -> tuple[str, ...]:
    """``word`` and the spellings that share its stem: plural, -ed, -ing, -ies forms.

    Candidates are generated and kept only when :func:`stem` agrees, so the set is
    consistent with the stemmer by construction; the store says which exist. A form of
    an irregular verb (:func:`~harkback.stages.text.irregular.irregular_forms`) also reaches
    the verb's other forms and the regular inflections of its base ("bought" → "buy",
    "buys", "buying").

    >>> inflections("babies")
    ('babies', 'babi', 'babis', 'babied', 'babiing', 'babie', 'baby', 'babys', 'babyed', 'babying')
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
    if len(word) > LONGEST_WORD or not (word.isascii() and word.isalpha()):
        return (word,)
    root = stem(word)
    candidates = [word]
    for base in sorted(_bases(word)):
        candidates += [base, base + "s", base + "d"]
        if not base.endswith("e"):
            # No e is added to a base: a silent e an ending took off is back in _bases
            # ("biking" is "bike"), and the word with an e is another one (locale, fixe).
            candidates += [base + "es"] if base.endswith(_ES_AFTER) else []
            candidates += [base + "ed", base + "ing"]
        if _doubles(base):
            candidates += [base + base[-1] + "ed", base + base[-1] + "ing"]
        if base.endswith("y"):
            candidates += [base[:-1] + "ies", base[:-1] + "ied"]
        if base.endswith("e"):
            candidates.append(base[:-1] + "ing")
    return tuple(c for c in dict.fromkeys(candidates) if stem(c) == root)
