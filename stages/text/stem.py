"""English inflectional stemming: a word's stem, and the spellings that share it.

Query words are widened to their inflections (``bike`` → ``bikes``, ``biking``) so a
question about a "bike" finds a message about "bikes". Only inflections are removed
(Porter's steps 1 and 5a), never derivations.

>>> [stem(w) for w in ("repairs", "repaired", "repairing")]
['repair', 'repair', 'repair']
>>> "bought" in inflections("buy") and "buying" in inflections("bought")
True
"""

from __future__ import annotations

from harkback.stages.text.irregular import irregular_forms

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
