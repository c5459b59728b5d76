"""Text kernel shared by indexing and querying: normalisation, tokens, CJK bigrams.

SQLite's ``unicode61`` tokenizer keeps a run of Chinese, Japanese or Korean
characters as one token, so ``上次怎么解决`` could never match ``怎么解决``. harkback
therefore feeds the index its own token stream: Latin and digit words as they
are, and every CJK run as overlapping character bigrams plus the run's last
character alone (so that a one-character query, searched as a prefix, finds
every occurrence). Queries go through the same function, so both sides agree.

>>> tokens("修改youer服务端")
('修改', 'youer', '服务', '务端')
>>> index_tokens("上次怎么")
('上次', '次怎', '怎么', '么')
>>> tokens("ＣＯＲＳ error, Café!")
('cors', 'error', 'cafe')
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache, lru_cache

# Han, kana, Hangul, CJK compatibility and half-width kana: scripts written without spaces.
_CJK_RANGES = (
    "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0003134f"
)
# Each class over these ranges costs a new process 2-9 ms to compile (``re`` walks every
# code point of a range), so one pattern answers both "a CJK character?" and "a CJK run".
_RUN = re.compile(rf"[{_CJK_RANGES}]+|[^\W_{_CJK_RANGES}]+")
_CJK_RUN = re.compile(rf"[{_CJK_RANGES}]+")
_OTHER_WORD = re.compile(rf"[^\W_{_CJK_RANGES}]+")
# On ASCII text the index's words are the runs of [^\W_], that is [a-zA-Z0-9], lower-cased.
ASCII_FOLD = {c: chr(c).lower() if chr(c).isalnum() else " " for c in range(128)}
"""A ``str.translate`` table for ASCII text: letters and digits lower-cased, every other
character a space, so that ``split()`` then gives the index's tokens."""
ASCII_FOLD_BYTES = bytes(ord(ASCII_FOLD.get(c, " ")) for c in range(256))
""":data:`ASCII_FOLD` for ``bytes.translate`` (bytes beyond ASCII become spaces): on ASCII
text, encoded, it is the cheapest pass there is, and ranking and the summary fold every
candidate and every line that may cover the query."""
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
MARKLESS = ("\u2000-\u206f\u3000-\u3029\u3030-\u303f"
            "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af")
"""General punctuation (curly quotes, dashes), CJK punctuation (。、「」), Han ideographs
and Hangul syllables: no combining mark among them (a test checks). A run of them is
not searched for marks, so Chinese text's 。 or English text's ’ costs no Python call."""
# The runs that may hold a combining mark: neither ASCII nor of MARKLESS.
_MAY_HOLD_MARKS = re.compile(rf"[^\x00-\x7f{MARKLESS}]+")
_NON_ASCII_WORD = re.compile(r"[^\W\x00-\x7f]")

STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing done down during each few for from
further had has have having he her here hers herself him himself his how i if in into is it
its itself just me more most my myself no nor not now of off on once only or other our ours
ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we were
what when where which while who whom why will with would you your yours yourself yourselves
last time remember recall previously earlier ago did tell told again also us let lets get got
please thanks thank know think thing things something anything way ever need needs needed
的 了 吗 呢 吧 啊 是 在 和 也 就 都 我 你 他 她 它 这 那 有 个 么
怎么 什么 上次 如何 为什 为何 我们 你们 之前 一下 时候 の は が を に で と も た です ます
""".split())


_PLAIN = ("\x00-\x7f\uff01-\uff5e\u3001-\u3002\u3008-\u3011"
          "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3")
"""ASCII, its full-width forms (！，？ＡＢ), CJK punctuation (、。《》「」【】), Han ideographs
and Hangul syllables: on text of these alone, NFKC only makes the full-width forms ASCII,
case-folding only lower-cases, and nothing decomposes or composes (a test checks each
character)."""
_NOT_PLAIN = re.compile(f"[^{_PLAIN}]")
_FULL_WIDTH = re.compile("[\uff01-\uff5e]+")
_NARROW = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)}


def _narrowed(run: re.Match[str]) -> str:
    return run.group().translate(_NARROW)


def normalize(text: str) -> str:
    """NFKC-fold (full-width to ASCII, half-width kana to kana), case-fold and strip
    diacritics, but for the voiced sound marks of kana (ガ is not カ, バ not パ nor ハ:
    :mod:`~harkback.stages.text.voicing`).

    >>> normalize("ＡＢＣ Ünïcode"), normalize("修改ＣＯＲＳ配置！")
    ('abc unicode', '修改cors配置!')
    >>> normalize("バケット パケット ｶﾞ ゛")
    'バケット パケット ガ  '
    """
    if text.isascii():
        # NFKC leaves ASCII alone and casefold() of ASCII is lower(): skip both.
        return text.lower()
    if _NOT_PLAIN.search(text) is None:
        # Most Chinese and Korean text: the three Unicode passes below cost ~4x this.
        return _FULL_WIDTH.sub(_narrowed, text).lower()
    folded = unicodedata.normalize("NFKC", text).casefold()
    if folded.isascii():
        return folded
    decomposed = unicodedata.normalize("NFD", folded)
    # Marks are never ASCII, nor Han or Hangul, and translating with a large table costs
    # a lookup per character: only the other runs go through it (most of a text is ASCII,
    # or Chinese or Korean).
    marks = _combining_marks()
    stripped = _MAY_HOLD_MARKS.sub(lambda run: run.group().translate(marks), decomposed)
    # Hangul syllables decompose into jamo under NFD, and voiced kana into kana and mark;
    # recompose so they stay searchable. A voicing mark left alone (゛, or after a letter
    # that takes none) is dropped as the other marks are.
    composed = unicodedata.normalize("NFC", stripped)
    if "\u3099" in composed or "\u309a" in composed:
        return composed.replace("\u3099", "").replace("\u309a", "")
    return composed


_FULL_WIDTH_WORD = re.compile("[\uff10-\uff19\uff21-\uff3a\uff41-\uff5a]+")
"""The full-width forms that NFKC makes word characters: digits and Latin letters."""


def folded_words(text: str) -> str:
    """:func:`normalize` but for full-width punctuation, which may stay as it is: the same
    words (a separator either way), for what only counts words.

    Chinese text is full of ！，？ and narrowing each run in Python cost a third of a
    candidate message's normalizing when ranking.

    >>> folded_words("修改ＣＯＲＳ配置！"), normalize("修改ＣＯＲＳ配置！")
    ('修改cors配置！', '修改cors配置!')
    """
    if _NOT_PLAIN.search(text) is None and not text.isascii():
        return _FULL_WIDTH_WORD.sub(_narrowed, text).lower()
    return normalize(text)


def ascii_words(text: str) -> bytes | None:
    """``text`` normalized to ASCII bytes when all its words are ASCII after folding, else None.

    Most non-ASCII text is English with curly quotes, dashes or emoji: those separators
    become ``?``, which no token holds, so the words of the result (runs of ``[a-z0-9]``)
    are exactly :func:`index_tokens` of ``text``, and a caller can count them on bytes.

    >>> ascii_words("It’s “Café” 🙂"), ascii_words("привет"), ascii_words("上次")
    (b'it?s ?cafe? ?', None, None)
    """
    return _ascii_folded(normalize(text))


def _ascii_folded(folded: str) -> bytes | None:
    # Only the non-ASCII runs can hold a non-ASCII word character, and a character of
    # the CJK ranges is a token even where Unicode has not assigned it yet.
    runs = "".join(_NON_ASCII.findall(folded))
    if _NON_ASCII_WORD.search(runs) is not None or _CJK_RUN.search(runs) is not None:
        return None
    return folded.encode("ascii", "replace")


_VOICING = (0x3099, 0x309A)


class _MarkTable(dict[int, int | None]):
    """A ``str.translate`` table deleting combining marks (but kana's voicing marks),
    filled as characters are met.

    Listing every mark up front took ~40 ms at the first accented or CJK text of each new
    process (the first search of a ``harkback search`` command paid it).

    >>> "cafe\u0301".translate(_MarkTable())
    'cafe'
    """

    def __missing__(self, code: int) -> int | None:
        # The kana's voicing marks (U+3099, U+309A) are kept: バ is not ハ.
        kept = None if unicodedata.combining(chr(code)) and code not in _VOICING else code
        self[code] = kept
        return kept


@cache
def _combining_marks() -> _MarkTable:
    """The one table :func:`normalize` fills as it goes."""
    return _MarkTable()


def is_cjk(text: str) -> bool:
    """True when ``text`` contains a character of a script written without spaces.

    >>> is_cjk("abc"), is_cjk("abc中")
    (False, True)
    """
    return _CJK_RUN.search(text) is not None


def word_stream(text: str) -> bytes | Folded:
    """``text`` normalized once, to be tokenized as the index does: ASCII bytes whose
    runs of ``[a-z0-9]``, once lower-cased, are its tokens when every word is ASCII
    (ASCII text as it is, else :func:`ascii_words`), else the :class:`Folded` text.

    Ranking reads every candidate message this way: asking :func:`ascii_words` and then
    :func:`index_tokens` normalized a CJK message twice. The text is normalized as
    :func:`folded_words` does (full-width punctuation may stay): only its words count.

    >>> word_stream("It’s"), word_stream("上次ok").tokens()
    (b'it?s', ['上次', '次', 'ok'])
    """
    if text.isascii():
        return text.encode("ascii")
    folded = folded_words(text)
    if _CJK_RUN.search(folded) is not None:
        return Folded(folded)  # a CJK character is a word: no need to look further
    stream = _ascii_folded(folded)
    return stream if stream is not None else Folded(folded)


def plain_cjk(text: str) -> tuple[bytes, int] | None:
    """``text`` as UTF-8 and its count of CJK characters, when it holds one and folding it
    (:func:`folded_words`) would only lower-case its ASCII letters; else None.

    That is text of :data:`_PLAIN` characters but full-width letters and digits: most
    Chinese and Korean messages. Every character beyond ASCII then takes three bytes, and
    only CJK punctuation (U+3001-U+3011) opens with ``e3 80``, only full-width punctuation
    with ``ef``, so the count needs no pass in Python or over a class of the CJK ranges;
    the bytes, translated as ASCII text is (non-ASCII bytes become spaces), give the
    text's other words, and hold a bigram's UTF-8 as often as the text holds the bigram.
    Ranking reads every candidate so.

    >>> raw, cjk = plain_cjk("修改Docker配置，好！")
    >>> raw.decode(), cjk, plain_cjk("ＣＯＲＳ配置"), plain_cjk("ok。")
    ('修改Docker配置，好！', 5, None, None)
    """
    if _NOT_PLAIN.search(text) is not None:
        return None
    raw = text.encode()
    wide = raw.count(b"\xef")
    if wide and _FULL_WIDTH_WORD_UTF8.search(raw) is not None:
        return None  # NFKC makes a full-width letter or digit ASCII
    cjk = (len(raw) - len(text)) // 2 - raw.count(b"\xe3\x80") - wide
    return (raw, cjk) if cjk else None


_FULL_WIDTH_WORD_UTF8 = re.compile(rb"\xef\xbc[\x90-\x99\xa1-\xba]|\xef\xbd[\x81-\x9a]")
""":data:`_FULL_WIDTH_WORD` in UTF-8: U+FF10-U+FF19, U+FF21-U+FF3A, U+FF41-U+FF5A."""


class Folded(str):
    """Normalized text (:func:`normalize`) holding a word that is not ASCII.

    Its index tokens are its words that are not CJK, each a token, and for each run of
    CJK characters one token per character (the run's bigrams and its last character):
    :meth:`words` and :meth:`cjk_chars` give their count without listing them, and a
    CJK bigram's count is how often the text holds it.

    >>> f = Folded("修改docker配置 ok")
    >>> f.tokens(), f.words(), f.cjk_chars(), f.bigram_count("配置")
    (['修改', '改', 'docker', '配置', '置', 'ok'], ['docker', 'ok'], 4, 1)
    """

    __slots__ = ()

    def tokens(self) -> list[str]:
        """The index tokens (as :func:`index_tokens`)."""
        return _split_folded(self, index=True)

    def words(self) -> list[str]:
        """The tokens that are not CJK."""
        return _OTHER_WORD.findall(self)

    def cjk_chars(self) -> int:
        """How many CJK characters the text holds: as many tokens as its CJK runs give."""
        return len(self) - len(_CJK_RUN.sub("", self))

    def bigram_count(self, bigram: str) -> int:
        """How many tokens are ``bigram``, two CJK characters (overlapping: 哈哈 is twice
        in 哈哈哈)."""
        if bigram[0] != bigram[1]:
            return self.count(bigram)  # occurrences of two different characters never overlap
        return overlapping_count(self, bigram)


def overlapping_count(text: str | bytes, needle: str | bytes) -> int:
    """How often ``needle`` occurs in ``text``, overlaps counted (``str.count`` skips them).

    >>> overlapping_count("a a a", "a a"), "a a a".count("a a")
    (2, 1)
    """
    found = 0
    at = text.find(needle)  # type: ignore[arg-type]
    while at >= 0:
        found += 1
        at = text.find(needle, at + 1)  # type: ignore[arg-type]
    return found


def is_bigram(token: str) -> bool:
    """Is ``token`` two CJK characters, a token only of a CJK run?

    >>> is_bigram("配置"), is_bigram("配"), is_bigram("ok")
    (True, False, False)
    """
    return len(token) == 2 and _CJK_RUN.fullmatch(token[0]) is not None and (
        _CJK_RUN.fullmatch(token[1]) is not None)


def _split(text: str, *, index: bool) -> list[str]:
    # Ingest and ranking call this on every message, so the common cases stay in C:
    # ASCII text is one translate and a split; otherwise only CJK runs take the Python loop.
    if text.isascii():
        return text.translate(ASCII_FOLD).split()  # about four times faster than a regex
    return _split_folded(normalize(text), index=index)


def _split_folded(folded: str, *, index: bool) -> list[str]:
    runs = _RUN.findall(folded)
    # Every CJK character lies in a CJK run, so one search in C says whether any run is one.
    if _CJK_RUN.search(folded) is None:
        return runs
    out: list[str] = []
    for run in runs:
        if run.isascii() or len(run) == 1 or not _CJK_RUN.match(run):
            out.append(run)
        else:
            out.extend([run[i:i + 2] for i in range(len(run) - 1)])
            if index:
                out.append(run[-1])
    return out


@lru_cache(maxsize=4096)
def tokens(text: str) -> tuple[str, ...]:
    """Query-side tokens: words, and CJK runs as bigrams (a lone character stays alone)."""
    return tuple(_split(text, index=False))


def index_tokens(text: str) -> tuple[str, ...]:
    """Index-side tokens: as :func:`tokens`, plus each CJK run's last character alone."""
    return tuple(_split(text, index=True))


def index_text(text: str) -> str:
    """The token stream the full-text index stores for ``text``, space-separated."""
    return " ".join(_split(text, index=True))


def is_stopword(token: str) -> bool:
    """True for function words that carry no topic (:data:`STOPWORDS`, normalised as
    tokens are: "Ｔｈｅ" is searched as "the", so the list's words are normalised too).

    >>> is_stopword("the"), is_stopword(tokens("で")[0]), is_stopword("て")
    (True, True, False)
    """
    return token in _normalized_stopwords()


@cache
def _normalized_stopwords() -> frozenset[str]:
    return frozenset(normalize(word) for word in STOPWORDS)


def token_matches(query_token: str, text_tokens: frozenset[str], *, prefix: bool) -> bool:
    """Does a query token occur among ``text_tokens`` (as a prefix when ``prefix``)?

    As the SQLite and PostgreSQL stores match it: a one-character CJK token is a prefix
    only when asked (the query parser asks for a question's lone character); a Korean noun
    the planner searches by its forms (큐, :mod:`~harkback.stages.text.korean`) is a whole
    token, never 큐브.

    >>> token_matches("猫", frozenset({"猫咪"}), prefix=True)
    True
    >>> token_matches("큐", frozenset({"큐브"}), prefix=False)
    False
    """
    if query_token in text_tokens:
        return True
    if prefix:
        return any(t.startswith(query_token) for t in text_tokens)
    return False
