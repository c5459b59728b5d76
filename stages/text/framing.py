"""The framing of a Chinese, Japanese or Korean question: the words that ask, not name.

"上次 nginx 超时是怎么处理的？" asks about nginx timeouts; 上次 (last time), 是, 怎么
(how), 处理 (handle) and 的 frame the question, and every past session shares them.
Written without spaces, such words also glue to the topic ("超时是" makes the bigram
"时是"), so they are taken out of the question's text before it is cut into bigrams,
leaving the topic words whole. Each language has its list below; Korean, written with
spaces, drops a framing word with its endings (해결했지, 문제를), the particle at the end
of a longer word (에러를 → 에러) or of a noun of one syllable (큐에 → 큐, as
:mod:`~harkback.stages.text.korean` tells them from words like 속도), a particle written
apart after a Latin word or a number ("CloudFront 에서", :data:`KOREAN_APART`) and a verb's ending,
keeping a noun made a verb (배포했던 → 배포; a verb's own stem, 바꿨었지, goes whole).
English framing is the stopword list of :mod:`~harkback.stages.text.tokens`.

A one-character particle (的, 了, 是 ...) frames only at a word's edge: beside a framing
word, a space, a Latin word or punctuation ("超时是怎么" drops 是, "怎么处理的？" drops 的);
between two topic characters it may be part of a word and stays. A place (里, 上) or 用
("with") frames only standing alone ("k8s 上 pod": :data:`CHINESE_ALONE`). Words that hold a
framing word or particle as a part (目的 "purpose", 了解, 处理器 "processor") are
listed in :data:`CHINESE_WORDS` and kept whole.

>>> without_framing("上次 nginx 超时是怎么处理的？")
'  nginx 超时    ?'
>>> without_framing("处理器的目的").split()
['处理器', '目的']
>>> without_framing("지난번 CORS 에러를 어떻게 해결했지?")
'  cors 에러    ?'
>>> without_framing("배포했던 서버 바꿨었지")
'배포 서버  '
"""

from __future__ import annotations

import re
from functools import lru_cache

import attrs

from harkback.stages.text.counts import without_counts
from harkback.stages.text.glossary import listed_words
from harkback.stages.text.korean import noun_of
from harkback.stages.text.tokens import normalize

CHINESE = """
做了 干了 做过 幹了 怎么办 怎麼辦 上次 上回 之前 以前 最后 最後 后来 後來 当时 當時 那次
那个 這個 这个 那個 怎么样 怎麼樣 怎么 怎麼 怎样 怎樣 如何 什么 什麼 为什么 為什麼 哪个
哪個 哪里 哪裡 哪些 解决 解決 处理 處理 问题 問題 方案 方法 办法 辦法 用了 用的 用什么
有没有 有沒有 是不是 一下 我们 我們 你们 你們 记得 記得 时候 時候 一次 的 了 吗 嗎 呢 吧
是 啊
那回 这次 這次 那时 那時 当初 當初 之后 之後 以后 以後 然后 然後 最终 最終 结果 結果 后面
一直 老是 总是 總是 经常 經常 突然 明明 还是 還是 到底 具体 具體 原因 导致 導致 出现 出現
遇到 发现 發現 查出来 查出來 出来 出來 哪儿 哪兒 一大堆 一堆 没有 沒有 回事 弄的 搞的
弄好 搞定 修好 改好 咋 啥 天天 每天 一共 总共 總共
""".split()
"""Chinese framing: when (上次, 那次, 后来), how (怎么, 弄的), what (什么, 啥), solve/handle
(解决, 处理, 修好), problem/cause/approach (问题, 原因, 方案), how often (一直, 老是, 天天),
in all (一共, 总共: "这周一共做了什么" lists this week), the words of telling (出现, 遇到,
查出来), and the particles 的 了 吗 呢 吧 是 啊 (simplified and traditional; a
one-character particle frames at a word's edge only)."""

CHINESE_ALONE = "里上中下内用"
"""Chinese characters that frame standing alone, a character between Latin words, spaces
or punctuation: after a Latin word the places 里 上 中 下 内 ("in", "on", "under": "ES 里",
"k8s 上") and before one 用 ("with": "用 Excel 打开"). Searched, a lone character is a
prefix that weighs as a topic word (上* 3.8 in a question of heldout2) and matches 上线,
用户; inside a word (上线, 里面) it stays."""

CHINESE_WORDS = """
目的 了解 處理器 处理器 處理機 处理机 是非 条件 條件
""".split()
"""Words that hold a framing word or particle as a part: never cut (处理器 is not 处理 器,
条件 "condition" not 条 and the 件 of "cases")."""

JAPANESE = """
前回 この前 以前 最後 結局 あの時 どうやって どうやった どうした どうすれば どう 何を なに
何 どの どこ いつ 解決 対応 問題 方法 しました した して します でした ですか ますか
だっけ けど ました 教えて 覚えて
原因 理由 対処 対策 直した 直して 直す 直し 急に 突然 途中 結果 その後 あの件 件
""".split()
"""Japanese framing: last time (前回), how (どうやって), what (何), solve/handle (解決,
対処, 直した), problem/cause (問題, 原因), approach (方法), suddenly (急に), the matter
(件), and verb endings (した, でした, ですか, だっけ)."""

JAPANESE_PARTICLES = "のはがをにでともへか"
"""Japanese particles: dropped where they follow a word not written in hiragana
("Dockerの", "問題は"), never inside a hiragana word."""

KOREAN = """
지난번 지난 저번 이전 예전 그때 마지막 결국 어떻게 어떡 어떤 뭐 뭘 무엇 무슨 어디 언제 왜
해결 처리 문제 방법 원인 이유 때문 했지 했어 했나 했었 했던 우리 그거 이거 저거 기억 혹시
아까 다시 계속 그리고 그래서 그러면 그런데 그러니까 하지만 아니면 또는
""".split()
"""Korean framing word stems (a word that starts with one goes whole): last time
(지난번), how (어떻게), what (뭐, 뭘), solve/handle (해결, 처리), problem (문제), approach
(방법), cause (원인, 이유, 때문), did (했지), again and still (다시, 계속), and the
conjunctions (그리고, 그래서, 그러면, 그런데, 하지만, 아니면, 또는: searched, 그리고 was the
verb 그리다, "draw", and took 그림 along)."""

KOREAN_WORDS = frozenset("""
안 못 거 것 걸 건 게 때 좀 또 잘 다 한 할 된 될 해 걸로 나서
""".split())
"""Korean words that frame only as a whole word (as stems they would take 안전, 거리,
때때로 along): not (안, 못), thing (거, 것, 걸), when (때), a little (좀), again (또),
and the forms of 하다/되다 standing alone (한, 할, 된, 해)."""

KOREAN_APART = frozenset("""
가 이 를 을 는 은 와 과 로 으로 에 에서 에게 한테 의 도 만 랑 이랑 하고 까지 부터 처럼
에는 에도 에서는 에서도 로는 으로는 로도 으로도
""".split())
"""Korean particles written as a word of their own. Korean glues a particle to a Korean
word, but after a Latin word or a number people often write it apart ("CloudFront 에서",
"JPA 로", "iOS 랑"); alone it names nothing, and searched it would weigh as a topic word
(에서 3.2 in a question of the seed set blind8) or, one syllable, match as a noun."""

KOREAN_PARTICLES = ("에서", "으로", "에게", "하고", "이랑", "을", "를", "이", "가", "은", "는",
                    "에", "의", "도", "로", "와", "과")
"""Korean particles, taken off the end of a word at least two syllables longer than the
particle (에러를 → 에러, never 속도 → 속)."""

KOREAN_VERB_ENDINGS = tuple("""
해서 아서 어서 워서 꿔서 와서 봐서 는데 니까 려고 하던 더라 던
""".split())
"""Korean verb endings: a word longer than one of them and ending in it is a verb form
(바꿔서 "by changing", 죽던 "that died"), which frames; the topic is in the nouns. What is
left before the ending, less a light verb (해, 하, 되), is kept when it is two syllables
or more: a noun made a verb (배포하던 "that deployed" is 배포 "deploy"; 마이그레이션해서
is 마이그레이션). A word in the past tense (a syllable ending in ㅆ: 했던, 바꿨었지,
고쳤지, 느렸을) is cut at its first such syllable the same way."""

KOREAN_LIGHT_VERBS = ("해", "하", "되")
"""The syllables that make a noun a verb (하다, 되다), taken off with a verb ending."""

_HANGUL_WORD = re.compile(r"[가-힣]+")
_HIRAGANA = re.compile(r"[\u3040-\u309f]")
_KATAKANA = re.compile(r"[\u30a0-\u30ff\u31f0-\u31ff]")
_HAN_RANGES = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
# A character of CHINESE_ALONE that is a run of its own ("k8s 上 pod", "用 Excel").
_ALONE = re.compile(rf"(?<![{_HAN_RANGES}])[{CHINESE_ALONE}](?![{_HAN_RANGES}])")
# A particle glued to a Latin word or a number ("OOM으로", "CORS를", "3번을").
_GLUED_PARTICLE = re.compile(
    "(?<=[a-z0-9])(?:" + "|".join(KOREAN_PARTICLES) + ")(?![가-힣])")


@attrs.frozen
class _Patterns:
    words: re.Pattern[str]
    chars: re.Pattern[str]
    kept: frozenset[str]
    apart: frozenset[str]
    particle: re.Pattern[str]
    korean: re.Pattern[str]


@lru_cache(maxsize=1)
def _patterns() -> _Patterns:
    # Built from the normalised lists: the query text is normalised the same way
    # (NFKC, case-fold, Latin marks stripped, a kana's voicing kept), so both sides agree.
    listed = {normalize(p) for p in CHINESE + JAPANESE}
    apart = frozenset(normalize(w) for w in CHINESE_WORDS)
    # A glossary word holding a framing word or particle (文件 件, 批处理 处理, 名前解決 解決)
    # names a thing: kept whole too, but not set apart (大文件报 keeps its bigrams 大文, 件报).
    kept = apart | {w for w in listed_words() if w not in listed and any(p in w for p in listed)}
    # A listed word, or a word holding one (kept whole): longest first, so 处理器 wins over 处理.
    words = sorted(kept | {p for p in listed if len(p) > 1}, key=len, reverse=True)
    single = "".join(sorted(p for p in listed if len(p) == 1))
    # A one-character particle beside a non-Han character (a space left by a framing word,
    # Latin, kana, punctuation) or the text's edge; a kept word is matched first and stays.
    edge = (rf"(?<![{_HAN_RANGES}])[{single}]|[{single}](?![{_HAN_RANGES}])")
    chars = re.compile("|".join([*(re.escape(w) for w in sorted(kept, key=len, reverse=True)),
                                 edge]))
    particles = "".join(sorted({normalize(p) for p in JAPANESE_PARTICLES}))
    particle = re.compile(rf"(?<=[^\s\u3040-\u309f])[{re.escape(particles)}]")
    korean = re.compile("^(?:" + "|".join(re.escape(normalize(p)) for p in KOREAN) + ")")
    return _Patterns(words=re.compile("|".join(re.escape(w) for w in words)), chars=chars,
                     kept=kept, apart=apart, particle=particle, korean=korean)


def without_framing(text: str) -> str:
    """``text`` normalised, with the framing of CJK questions replaced by spaces."""
    p = _patterns()
    # Counts first: 何回 is a count before 何 alone is framing (counts.py).
    folded = without_counts(normalize(text))
    folded = _GLUED_PARTICLE.sub("", folded)
    folded = _HANGUL_WORD.sub(lambda word: _korean_word(word.group(), p.korean), folded)

    def cut(match: re.Match[str]) -> str:
        # A word of CHINESE_WORDS stands apart: its ends are word edges too (处理器的 drops 的).
        word = match.group()
        return f" {word} " if word in p.apart else word if word in p.kept else " "

    # Framing words first, so the particles beside them are then at an edge.
    folded = p.words.sub(cut, folded)
    folded = p.chars.sub(lambda m: m.group() if m.group() in p.kept else " ", folded)
    return _ALONE.sub(" ", p.particle.sub(" ", folded))


def is_framing_token(token: str) -> bool:
    """True for a Japanese token that names nothing: one hiragana character left between
    framing words (the ん of したんだっけ), a bigram with hiragana in it (endings,
    particles: "とき", "きの"), or one across a katakana-kanji boundary ("ク言").

    >>> words = ("翻訳", "とき", "のフ", "フォ", "ク言", "言語", "端口", "ん", "遅")
    >>> [t for t in words if is_framing_token(t)]
    ['とき', 'のフ', 'ク言', 'ん']
    """
    if len(token) == 1:
        return bool(_HIRAGANA.match(token))
    if len(token) != 2:
        return False
    if _HIRAGANA.search(token):
        return True
    return bool(_KATAKANA.search(token) and _han().search(token))


@lru_cache(maxsize=1)
def _han() -> re.Pattern[str]:
    # 28,000 code points: compiled at the first katakana bigram, not by every process
    # (1.3-7 ms of a new one).
    return re.compile(f"[{_HAN_RANGES}]")


def _korean_word(word: str, framing: re.Pattern[str]) -> str:
    if named := _glossary_word(word):
        return named
    if framing.match(word) or _korean_function_word(word):
        return " "
    past = next((i for i, syllable in enumerate(word) if _past_tense(syllable)), None)
    if past is not None:
        # 설치했던 leaves 설치 (a noun made a verb); 바꿨었지, 고쳤지 leave one syllable of
        # a verb's own stem, which frames. Nouns have no ㅆ-final syllable.
        return _noun_before(word[:past])
    ending = next((e for e in KOREAN_VERB_ENDINGS if word.endswith(e) and len(word) > len(e)),
                  None)
    if ending is not None:
        # 죽던 leaves 죽 (a verb's own stem): it frames. 재시작되던 leaves 재시작, a noun.
        return _noun_before(word[:-len(ending)])
    # 큐에 ("at the queue") and 값으로 are 큐 and 값; 속도 is a word (korean.py).
    if noun := noun_of(word):
        return noun
    for particle in KOREAN_PARTICLES:
        if word.endswith(particle) and len(word) - len(particle) >= 2:
            return word[:-len(particle)]
    return word


def _glossary_word(word: str) -> str | None:
    # A glossary word, alone or with a particle, names a thing: 디플로이 and 워크플로 end
    # as a particle would (이, 로), 처리량 ("throughput") starts as 처리 ("handle") does.
    listed = listed_words()
    if word in listed:
        return word
    # One syllable and a particle is korean.noun_of's to tell (추가 is not 추 and 가).
    return next((word[:-len(p)] for p in KOREAN_PARTICLES
                 if word.endswith(p) and len(word) - len(p) >= 2 and word[:-len(p)] in listed),
                None)


def _korean_function_word(word: str) -> bool:
    # 거, 때, 것을: a listed word alone or with a one-syllable particle; a particle alone.
    return word in KOREAN_WORDS or word in KOREAN_APART or (word[:-1] in KOREAN_WORDS
                                     and word[-1] in KOREAN_PARTICLES)


def _noun_before(stem: str) -> str:
    # What a verb ending leaves, less a light verb (하, 되): a noun of two syllables or more.
    if stem.endswith(KOREAN_LIGHT_VERBS):
        stem = stem[:-1]
    return stem if len(stem) >= 2 else " "


def _past_tense(syllable: str) -> bool:
    # A Hangul syllable whose final consonant is ㅆ (했, 었, 꿨, 졌): a past-tense verb form.
    code = ord(syllable) - 0xAC00
    return 0 <= code < 11172 and code % 28 == 20
