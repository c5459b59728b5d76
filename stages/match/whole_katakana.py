"""The katakana words a question's units count, each only in the katakana runs that fit it.

A question's katakana word is searched by its bigrams (ポー, ート for ポート), and サポート
(support) holds each of them: counted by its bigrams, the word matched in full inside any
longer katakana word starting or ending with it, and a session about the support form came
before the one about the port. The store still finds the candidates by the bigrams; each
unit that is katakana knows the words it stands for (:attr:`RankUnit.whole`), and the
ranker counts them in the runs that fit them: the word itself, its last long vowel written
or not, a member of a compound, the pieces of the question's compound
(:func:`~harkback.stages.text.katakana.part_count`,
:func:`~harkback.stages.match.counting.unit_counter`).

>>> [u.whole for u in whole_words((RankUnit(Term("ロッ"), ("ロッ",)),
...     RankUnit(Phrase(("ポー", "ート")), ("ポー", "ート")),
...     RankUnit(Term("日志"), ("日志", "ログ"))), {"ロック"})]
[('ロック',), ('ポート',), ('ログ',)]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

from harkback.stages.match.runs import bigram_runs, run_text
from harkback.stages.match.score import RankUnit
from harkback.stages.query import Phrase, Term
from harkback.stages.text.katakana import is_katakana


def whole_words(units: Sequence[RankUnit], question: Iterable[str] = ()
                ) -> tuple[RankUnit, ...]:
    """``units`` with the katakana words each counts: a bigram of the question's katakana
    word that word (those of ``question``'s words holding it,
    :func:`~harkback.stages.text.katakana.katakana_words`), a phrase of katakana bigrams
    the word it spells, a katakana form of a listed word (ログ for an English question's
    "log") the form itself; () for a unit with nothing katakana."""
    words = tuple(sorted(question))
    out = []
    for ru in units:
        unit = ru.unit
        whole: tuple[str, ...] = ()
        if isinstance(unit, Phrase):
            bigrams = [Term(t) for t in unit.terms]
            if (not unit.prefix and all(is_katakana(t) for t in unit.terms)
                    and bigram_runs(bigrams) == [(0, len(bigrams))]):
                whole = (run_text(bigrams),)  # a listed word's bigrams, as the index holds it
        elif not unit.prefix:
            # The question's own bigram stands for its words holding it; any other
            # katakana form is a word of its own.
            whole = tuple(dict.fromkeys(
                w for f in ru.forms if is_katakana(f)
                for w in ((tuple(q for q in words if f in q) or (f,)) if f == unit.text
                          else (f,))))
        out.append(attrs.evolve(ru, whole=whole) if whole else ru)
    return tuple(out)
