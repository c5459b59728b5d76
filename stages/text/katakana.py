"""Katakana words as a message writes them: a run of katakana is one word, or a compound of
words, so ロック (lock) is not in ブロック (block), nor ポート (port) in サポート (support),
nor ログ (log) in ブログ (blog).

Japanese writes a loanword as one katakana run; a run that goes on (another katakana
letter, or the long vowel mark ー, before or after it) is another word. A word stands
whole after a kanji, hiragana, a space or a middle dot (ポート・フォワード), and before a
particle. A word's last long vowel is written or not (サーバ and サーバー, ユーザ and
ユーザー are one word): it fits either way. A question may write a compound in one run
(メモリリーク, memory leak) that a message writes in pieces (メモリが…リークして): a run
that is a piece of the question's word fits it too, and a message's compound
(パスエイリアス, path alias) holds a word as one member of it (:data:`COMPOUND_PART`).
The ranker counts a question's katakana words so
(:mod:`~harkback.stages.match.whole_katakana`); the store still finds a message by their
bigrams.

>>> sorted(katakana_words("ブロックの ﾛｯｸ が外れない"))
['ブロック', 'ロック']
>>> runs = katakana_runs("ブロックとロック、サーバーのメモリ")
>>> part_count(runs, "ロッ", "ロック"), part_count(runs, stem("サーバ"), "サーバ")
(1, 1)
>>> part_count(runs, "メモ", "メモリリーク"), part_count(runs, "ブロ", "ロック")
(1, 0)
>>> part_count(katakana_runs("パスエイリアスとサーバレス"), "パス", "パス")
1
>>> part_count(katakana_runs("パスエイリアスとサーバレス"), "サーバ", "サーバ")
0
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from harkback.stages.text.tokens import normalize, overlapping_count

_LETTERS = "\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff\u3099\u309a"
"""Katakana as a word is written in it: its letters (not the middle dot ・, U+30FB, which
parts words), the long vowel mark ー and the iteration marks, the small letters of the
extension block, and the voicing marks a letter may still carry."""
_WORD = re.compile(f"[{_LETTERS}]{{2,}}")
_ALL = re.compile(f"[{_LETTERS}]+")


def katakana_words(text: str) -> frozenset[str]:
    """The katakana words of ``text`` (its runs of two letters or more), normalized as the
    index's text is (half-width kana made full-width)."""
    return frozenset(_WORD.findall(normalize(text)))


def is_katakana(text: str) -> bool:
    """Whether ``text`` is katakana alone, two letters or more (a word, or a bigram of one).

    >>> is_katakana("ロッ"), is_katakana("ク解"), is_katakana("ロ")
    (True, False, False)
    """
    return len(text) >= 2 and _ALL.fullmatch(text) is not None


def stem(word: str) -> str:
    """``word`` without its last long vowel, where two letters or more are left.

    >>> stem("サーバー"), stem("サーバ"), stem("ソー")
    ('サーバ', 'サーバ', 'ソー')
    """
    shorter = word[:-1] if word.endswith("ー") else word
    return shorter if len(shorter) >= 2 else word


def katakana_runs(folded: str) -> list[str]:
    """The katakana runs of the normalized text ``folded``, each a word or a compound."""
    return _ALL.findall(folded)


COMPOUND_PART = 3
"""The fewest letters the rest of a longer run must have, before and after a word, for the
word to be one member of a compound there (パス in パスエイリアス, path alias; ロック in
ロックファイル): ブ of ブロック, サ of サポート and レス of サーバレス are no words."""


def part_count(runs: Sequence[str], part: str, *words: str) -> int:
    """How often ``part`` (a bigram of one of ``words``, or the :func:`stem` of one) occurs
    in those of ``runs`` that fit one of ``words``: the word itself, its last long vowel
    written or not, a piece of it, or a compound holding it as a member
    (:data:`COMPOUND_PART`). A run that fits two of the words counts once.

    >>> part_count(katakana_runs("ロックが外れない"), "ロッ", "ブロック", "ロック")
    1
    """
    found = 0
    for run in runs:
        if part not in run:
            continue
        if any(stem(run) in word for word in words):
            found += overlapping_count(run, part)
        else:
            found += max(sum(overlapping_count(member, part) for member in _members(run, word))
                         for word in words)
    return found


def _members(run: str, word: str) -> list[str]:
    # Where ``word`` stands in ``run`` as one member of a compound: the rest on each side
    # none or a word's length.
    short = stem(word)
    out = []
    at = run.find(short)
    while at >= 0:
        end = at + len(short) + run.startswith("ー", at + len(short))
        if all(rest == 0 or rest >= COMPOUND_PART for rest in (at, len(run) - end)):
            out.append(run[at:end])
        at = run.find(short, at + 1)
    return out
