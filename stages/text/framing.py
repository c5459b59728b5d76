"""The framing of a Chinese, Japanese or Korean question: the words that ask, not name.

"上次 nginx 超时是怎么处理的？" asks about nginx timeouts; 上次 (last time), 是, 怎么
(how), 处理 (handle) and 的 frame the question, and every past session shares them.
Written without spaces, such words also glue to the topic ("超时是" makes the bigram
"时是"), so they are taken out of the question's text before it is cut into bigrams,
leaving the topic words whole. Each language has its list below; Korean, written with
spaces, drops a framing word with its endings (해결했지, 문제를) and the particle at the end
of a longer word (에러를 → 에러). English framing is the stopword list of
:mod:`~harkback.stages.text.tokens`.

>>> without_framing("上次 nginx 超时是怎么处理的？")
'  nginx 超时    ?'
>>> without_framing("지난번 CORS 에러를 어떻게 해결했지?")
'  cors 에러    ?'
"""

from __future__ import annotations

import re
from functools import lru_cache

from harkback.stages.text.tokens import normalize

CHINESE = """
做了 干了 做过 幹了 怎么办 怎麼辦 上次 上回 之前 以前 最后 最後 后来 後來 当时 當時 那次
那个 這個 这个 那個 怎么样 怎麼樣 怎么 怎麼 怎样 怎樣 如何 什么 什麼 为什么 為什麼 哪个
哪個 哪里 哪裡 哪些 解决 解決 处理 處理 问题 問題 方案 方法 办法 辦法 用了 用的 用什么
有没有 有沒有 是不是 一下 我们 我們 你们 你們 记得 記得 时候 時候 一次 的 了 吗 嗎 呢 吧
是 啊
""".split()
"""Chinese framing: when (上次), how (怎么), what (什么), solve/handle (解决, 处理),
problem/approach (问题, 方案), and the particles 的 了 吗 呢 吧 是 啊 (simplified and
traditional)."""

JAPANESE = """
前回 この前 以前 最後 結局 あの時 どうやって どうやった どうした どうすれば どう 何を なに
何 どの どこ いつ 解決 対応 問題 方法 しました した して します でした ですか ますか
だっけ けど ました 教えて 覚えて
""".split()
"""Japanese framing: last time (前回), how (どうやって), what (何), solve (解決), problem
(問題), approach (方法), and verb endings (した, でした, ですか, だっけ)."""

JAPANESE_PARTICLES = "のはがをにでともへか"
"""Japanese particles: dropped where they follow a word not written in hiragana
("Dockerの", "問題は"), never inside a hiragana word."""

KOREAN = """
지난번 지난 저번 이전 예전 그때 마지막 결국 어떻게 어떡 어떤 뭐 무엇 무슨 어디 언제 왜
해결 처리 문제 방법 했지 했어 했나 했었 했던 우리 그거 이거 기억
""".split()
"""Korean framing word stems (a word that starts with one goes whole): last time
(지난번), how (어떻게), what (뭐), solve/handle (해결, 처리), problem (문제), approach
(방법), did (했지)."""

KOREAN_PARTICLES = ("에서", "으로", "에게", "하고", "이랑", "을", "를", "이", "가", "은", "는",
                    "에", "의", "도", "로", "와", "과")
"""Korean particles, taken off the end of a word at least two syllables longer than the
particle (에러를 → 에러, never 속도 → 속)."""

KOREAN_VERB_ENDINGS = tuple("""
해서 아서 어서 워서 꿔서 와서 봐서 했던 었던 았던 였던 했지 었지 았지 였지
했어 었어 했나 는데 니까 려고 하던 됐던 했는 었는
""".split())
"""Korean verb endings: a word of three syllables or more ending in one is a verb form
(바꿔서 "by changing", 죽었던 "that died"), which frames; the topic is in the nouns."""

_HANGUL_WORD = re.compile(r"[가-힣]+")
_HIRAGANA = re.compile(r"[\u3040-\u309f]")
_KATAKANA = re.compile(r"[\u30a0-\u30ff\u31f0-\u31ff]")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# A particle glued to a Latin word or a number ("OOM으로", "CORS를", "3번을").
_GLUED_PARTICLE = re.compile(
    "(?<=[a-z0-9])(?:" + "|".join(KOREAN_PARTICLES) + ")(?![가-힣])")


@lru_cache(maxsize=1)
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    # Built from the normalised lists: the query text is normalised the same way
    # (NFKC, case-fold, marks stripped: ど becomes と), so both sides agree.
    phrases = sorted({normalize(p) for p in CHINESE + JAPANESE}, key=len, reverse=True)
    cjk = re.compile("|".join(re.escape(p) for p in phrases))
    particles = "".join(sorted({normalize(p) for p in JAPANESE_PARTICLES}))
    particle = re.compile(rf"(?<=[^\s\u3040-\u309f])[{re.escape(particles)}]")
    korean = re.compile("^(?:" + "|".join(re.escape(normalize(p)) for p in KOREAN) + ")")
    return cjk, particle, korean


def without_framing(text: str) -> str:
    """``text`` normalised, with the framing of CJK questions replaced by spaces."""
    cjk, particle, korean = _patterns()
    folded = normalize(text)
    folded = _GLUED_PARTICLE.sub("", folded)
    folded = _HANGUL_WORD.sub(lambda word: _korean_word(word.group(), korean), folded)
    folded = cjk.sub(" ", folded)
    return particle.sub(" ", folded)


def is_framing_bigram(token: str) -> bool:
    """True for a Japanese bigram that names nothing: one with hiragana in it (endings,
    particles: "とき", "きの"), or one across a katakana-kanji boundary
    ("ク言").

    >>> words = ("翻訳", "とき", "のフ", "フォ", "ク言", "言語", "端口")
    >>> [t for t in words if is_framing_bigram(t)]
    ['とき', 'のフ', 'ク言']
    """
    if len(token) != 2:
        return False
    if _HIRAGANA.search(token):
        return True
    return bool(_KATAKANA.search(token) and _HAN.search(token))


def _korean_word(word: str, framing: re.Pattern[str]) -> str:
    if framing.match(word):
        return " "
    if len(word) >= 3 and word.endswith(KOREAN_VERB_ENDINGS):
        return " "
    for ending in KOREAN_PARTICLES:
        if word.endswith(ending) and len(word) - len(ending) >= 2:
            return word[:-len(ending)]
    return word
