"""Seed scenarios: questions people ask about their own agent sessions, asked today.

The corpus (:mod:`tests.support.seeds`) holds developer sessions in English, Chinese,
Japanese and Korean, dated relative to now: the session that answers a question is weeks
or months old, and recent sessions (0-3 days) share the question's generic words ("fix",
"issue", 上次, 怎么, 解决, 前回, 지난번 ...) but not its topic. Around them: cron jobs with
repetitive vocabulary, answers held by a delegated child or a compression continuation
(the root comes back), and questions asked from a live session that holds the same words
(its lineage must not come back).

Each question is one test, through the public API and a real SQLite file, with the
default pipeline: one answer session must come first, several must all be in the first
three. Questions the current ranking gets wrong are listed in :data:`KNOWN_WRONG` and
marked ``xfail(strict=True)``: a fix makes them pass, which fails the suite until they
leave the list. ``python -m benchmarks.seeds`` prints the rates per language and ranker.

Fourteen corpora run under the same rules: the suite's own ("tuned", written while the ranking
was tuned on it), a held-out one (``tests/fixtures/seeds-heldout``, new sessions and
questions written without looking at the ranking's word lists, measured once before any
change: lexical 35/36, bm25 34/36), a second held-out one
(``tests/fixtures/seeds-heldout2``: abbreviations, synonyms, identifiers, typos, keyword
queries, questions in one language about a session in another; first measured at lexical
45/53, bm25 45/53) and a third (``tests/fixtures/seeds-crosslang``, written blind to the
ranking: Chinese, Japanese and Korean questions in a native developer's words, 超时,
キャッシュ, 저장소, about sessions held in English, English questions about CJK sessions, and
four controls whose answer is in the question's language beside an English look-alike;
first measured at lexical 10/35, bm25 9/35, the controls all passing) and a fourth blind
one (``tests/fixtures/seeds-blind4``: ten questions each in English, Chinese, Japanese and
Korean on everyday topics, timezones, gradle, terraform state, nginx rewrites, SSH keys,
fonts, CSV encodings, mobile builds, webhooks; half about a session held in another
language, テラフォーム or 센트리 for an English session, half about a same-language session
weeks old beside recent look-alikes; first measured at lexical 29/40, bm25 25/40, every
same-language question passing and 9/20 cross-language ones with lexical), and a fifth
blind one (``tests/fixtures/seeds-blind5``, written after blind4 had been studied: ten
questions per language on other topics, Postgres bloat, wheels, Redis eviction, git reflog,
OOMKilled pods, OAuth refresh tokens, CORS preflight, Celery, gRPC deadlines; half
cross-language, with two-answer questions, delegated children and live sessions), and a
sixth blind one (``tests/fixtures/seeds-blind6``, written the same way on topics no earlier
set covers: CRLF line endings, KEDA, pydantic v2, dbt, PostGIS, Helm, wareki dates, NFKC
search, Ansible, TOTP, MySQL replication lag, Vault tokens, Loki, SQLite WAL ...), and a
seventh blind one (``tests/fixtures/seeds-blind7``, shaped after a real store: half its
answers are from this week, 1-6 days old, beside look-alikes just as recent, the other half
weeks old beside recent look-alikes; Prisma drift, pgvector, Nacos, gh-ost, kintone, SSE,
Karpenter, Firestore rules, buf ...), and an eighth blind one
(``tests/fixtures/seeds-blind8``, shaped like blind7 on other topics: Kafka lag, Alembic
heads, systemd timers, go -race, pg_bigm, logrotate, ShedLock, Kakao login ..., with
lineage, cron noise and live sessions), and a ninth blind one
(``tests/fixtures/seeds-blind9``, shaped like blind8 on other topics: ffmpeg subtitles,
dind TLS, Apps Script quotas, MLflow aliases, Feishu bots, DataX, Backlog, SnapStart, MinIO
multipart, Toss Payments, pg_partman, HPA ..., Korean questions about Japanese sessions
and Chinese ones about Korean sessions among the cross-language half), and a tenth blind
one (``tests/fixtures/seeds-blind10``, shaped like blind9 on other topics: Electron white
windows, Cognito, Stripe test clocks, RocketMQ, Canal, Dubbo retries, LINE bots, SmartHR,
EventBridge double runs, Alimtalk, PortOne, QueryDSL ..., each CJK language asked about
sessions held in the two others), and an eleventh blind one (``tests/fixtures/seeds-blind11``,
shaped like blind10 on other topics: tokenizers fork warnings, sccache, replication slots,
Twilio, Pulumi import, Seata, XXL-JOB, Dify, freee, Apex limits, Flink checkpoints,
Debezium, Nexus cleanup ...), and a twelfth blind one (``tests/fixtures/seeds-blind12``,
shaped like blind11 on other topics: WeCom callbacks, data.go.kr keys, SQS duplicates,
vLLM context, WeChat Pay public keys, HarmonyOS, Istio mTLS, Redis CROSSSLOT, Chatwork,
KEN_ALL, sqlc nulls, Spark skew, sops, NATS redelivery, DynamoDB hot partitions ...), and a
thirteenth blind one (``tests/fixtures/seeds-blind13``, shaped like blind12 on other topics:
torch.compile recompiles, rootless Podman, Temporal nondeterminism, Velero restores,
Sentinel rules, Zengin files, konbini payments, Dask memory, SENS SMS, KakaoPay approval,
idle-in-transaction, DVC remotes ...).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator
from functools import partial

import attrs
import pytest

from harkback.pipeline import SUMMARIZERS, Harkback, Pipeline, open_store, run_sync
from tests.support.seeds import LANGUAGES, SEED_SETS, Question, ask, conversations, load_corpus

CORPORA = {name: load_corpus(folder) for name, folder in SEED_SETS.items()}
CORPUS = CORPORA["tuned"]
QUESTIONS = {(name, q.id): q for name, corpus in CORPORA.items() for q in corpus.questions}

KNOWN_WRONG: tuple[str, ...] = (
    # "nginx 설정" (nginx config): the English and Chinese nginx sessions changed nginx's
    # config too and hold "nginx" in their titles; both Korean ones are not in the top 3.
    "ko-nginx-both",
    # heldout2: the answer never says 遅い (slow) but "25 minutes", and "CI" alone is left.
    # (repo/clone against 仓库/克隆 and タイムアウト against "timeout" pass through the
    # glossary, stages/text/glossary.py.)
    "h2-ja-ci-slow",
    # crosslang: a question's topic words in one script, the answer's in another. The
    # glossary (stages/text/glossary.py) joins the listed words, the framing lists drop the
    # words a question is told in (后来, 急に, 어떻게 했지), and an English session weighs
    # the names as distinctive as the words (across.FOREIGN_FLOOR); what is left is words
    # with no listed name, or listed words that a session in the question's language holds
    # at full weight:
    "x-zh-migration-rollback",  # 回滚 alone, at full weight, in a Chinese rollback control
    "x-zh-cert-renew",  # 证书/过期 at full weight in two Chinese certificate sessions
    # (x-ja-build-cache passes since a word repeated within few sessions weighs more than
    # one scattered over many, match/spread.py; x-ko-config-not-applied since an English
    # session covers the question at its names' lifted weights, sessions.rank_sessions)
    "x-ja-port-in-use",  # 開発/サーバー in a recent Japanese dev-server session win
    "x-ko-dep-conflict",  # 설치 in a Korean laptop-setup session; "conflict" in a merge one
    "x-ko-secret-history",  # 저장소/파일 in a Korean new-repo session; 실수/올린/기록 not listed
    # English questions about CJK sessions weigh their words' CJK names at half a word,
    # searching none (across.foreign_units; x-mixed-en-ws-ingress passes since); these
    # still lose to an English look-alike:
    "x-mixed-en-kafka-backlog",  # backlog/consumers vs 积压/消费者: an English queue backlog wins
    "x-mixed-en-nightly-backup",  # backups/failing vs 백업/실패: an English backup session wins
    # blind4: the same pattern on everyday topics; every same-language question passes,
    # these are all cross-language ones, and what comes first shares words in the question's
    # own script (a generic word, or a topic word of another incident; b4-ja-ios-sign passes
    # since a CJK question's Latin words count again, match/latin_names.py):
    "b4-en-shiftjis",  # the English Excel-BOM session says "csv" and "garbage characters" too
    "b4-ja-date-shift",  # 日付/一日ずれ vs UTC/JST: nothing shared; a Japanese 原因 one wins
    "b4-ko-hangul-sort",  # 한글/정렬 vs collation: nothing shared; the 한글 Excel session wins
    "b4-ko-sentry-stack",  # 센트리/스택 vs sentry/stack trace: recent 에러/알림 sessions win
    "b4-zh-cron-tz",  # 定时任务/晚 8 个小时 vs cron/UTC: the Chinese MySQL 8 小时 session wins
    # blind5 (measured once at f14d1eb, lexical 33/40): every same-language question passes;
    # each of these asks about a session in another language, and a recent session in the
    # question's own language comes first (the answer is second or third; b5-ja-reflog and
    # b5-ko-mongo-index pass since a listed word is also looked for in the other CJK
    # languages, across.foreign_units; b5-ko-ts-paths, b5-ko-slack-scope and
    # b5-zh-systemd-timer since a CJK question's Latin words count again, latin_names.py):
    "b5-ja-gha-cancel",  # a Japanese "GitHub Actions Node 16 warning" session comes first
    "b5-zh-dns-ttl",  # a Chinese "CDN cached the old page" session comes first
    # blind6 (measured once at ba2f872, lexical 35/40): four cross-language misses and one
    # same-language two-answer question:
    "b6-ja-nfkc-both",  # the normalize session first; the backfill one not in the top 3
    "b6-ko-tailwind",  # the Korean "turbo remote cache" session first, the answer third
    "b6-zh-fastapi-bg",  # a Chinese "node 18 to 20 upgrade" session first, answer not in top 3
    "b6-zh-rabbitmq-dlx",  # a Chinese "queue backlog alert" session first, the answer second
    # blind7 (measured once at 77e7678, lexical 30/40): eight cross-language misses, one
    # same-language this-week question and one this-week two-answer question; each time a
    # session of about the same age in the question's language comes first
    # (b7-ko-brew-python passes since 업데이트/파이썬's Japanese words are looked for too;
    # b7-zh-nacos and b7-zh-kintone since a word repeated within few sessions weighs more
    # than one scattered over many, match/spread.py; b7-ja-raspi and b7-ko-swift-mainactor
    # since a CJK question's Latin words count again, match/latin_names.py):
    "b7-en-pgvector-both",  # hnsw index first; "windows build" second, recall fix not in top 3
    "b7-en-jp-holidays",  # an English "invoice due date off by one" session first, answer 2nd
    "b7-en-naver-maps",  # an English "staging auth failure" session first, answer not in top 3
    "b7-zh-keycloak",  # a Chinese "oauth callback config" session first, the answer third
    # blind8 (measured once at 547915c, lexical 34/40): five cross-language misses and one
    # same-language weeks-old one; each time a session in the question's language that shares
    # its generic words (build, slow, cache, index, 批量, 慢) comes first
    # (b8-en-certbot-gateway passes since an English word counts its CJK words, xlang23;
    # b8-en-pnpm-metro and b8-zh-mybatis-batch since a word repeated within few sessions
    # weighs more than one scattered over many, match/spread.py):
    "b8-ko-cloudfront-stale",  # a Korean "browser cache" session first, answer not in top 3
    "b8-ko-mongo-index",  # Korean "index not used" and "MySQL slow query" first, answer 3rd
    "b8-zh-buildx-arm64",  # a Chinese "docker image too large" session first, the answer second
    # "a few days ago" is days 2-5 back: the answer (3 days) passed only while that read as
    # day 3 alone and the question was asked after noon; an English "lockfile conflict" first
    "b8-en-alembic-heads",
    # (b8-ko-excel-filename passes since a Korean predicate is searched by its conjugated
    # forms: the question's 깨지(는) meets the answers' 깨져요 and 깨진대요, text/predicates.py)
    # blind9 (measured once at 08c7567, lexical 33/40): seven cross-language misses, every
    # same-language question passing; each time a session in the question's language that
    # shares its generic words comes first and the answer is second or third
    # (b9-ja-safari-nan passes since a CJK question's Latin words count again,
    # match/latin_names.py):
    "b9-en-isr-stale",  # an English "CMS preview 404" session first, the answer second
    "b9-en-cronjob-overlap",  # an English "k8s Job keeps retrying" session first, answer 2nd
    "b9-ko-goroutine",  # the Korean "runner disk full" session first, the answer second
    "b9-zh-android-rotate",  # a Chinese "signup form validation" session first, answer 3rd
    "b9-zh-runner-disk",  # a Chinese "disk full, clean logs" session first, the answer third
    "b9-zh-compose-order",  # a Chinese "database connection error" session first, answer 2nd
    # blind10 (measured once at 0634bf8, lexical 38/40): two cross-language misses, every
    # same-language question passing:
    "b10-en-electron-white",  # an English "invoice shows wrong tax" session first, answer 3rd
    "b10-ko-widget",  # a Korean "list not refreshed after edit" session first, answer not top 3
    # blind11 (measured once at 95d7b81, lexical 33/40): five cross-language misses and two
    # same-language ones, the answer always second or third (b11-zh-sharding-time passes
    # since a session and its continuation rank as one, match/lineages.py; b11-en-alpine-5s
    # since tour37, an English word weighing its longer CJK names):
    "b11-ko-i18n-loop",  # a Korean "Next.js middleware login check" session first, answer 2nd
    "b11-ko-cypress-alias",  # an English "bun mock.module" session first, the answer third
    "b11-ko-nexus",  # a Korean "build server disk full" session first, the answer second
    "b11-zh-nfd",  # a Chinese "git shows Chinese filenames escaped" session first, answer 2nd
    "b11-zh-compose-jank",  # the Chinese "Dify HTTP node timeout" session first, answer 2nd
    # blind12 (measured once at 426b50d, lexical 29/40): nine cross-language misses and two
    # same-language this-week ones; each time a session in the question's language sharing
    # its generic words comes first:
    "b12-en-datago-key",  # an English "Maps API key rejected" session first, answer not top 3
    "b12-en-transactional-self",  # an English "Flyway rollback" session first, the answer third
    "b12-en-xdist-db",  # an English "test database keeps old rows" session first, answer 2nd
    "b12-ko-async-vanish",  # a Korean "ResourceWarning" session first, the answer not in top 3
    "b12-ko-spark-straggler",  # a Korean "Spark executor OOM" session first, the answer second
    "b12-ko-snowflake-cost",  # Korean "idle RDS" and "log storage" cost sessions first, not top 3
    "b12-zh-vllm-len",  # a Chinese "vLLM throughput" session first, the answer third
    "b12-zh-sparse-dir",  # a Chinese "lint only the changed dirs" session first, the answer third
    "b12-zh-iap-refund",  # a Chinese "Apple login token verification" session first, answer 3rd
    "b12-zh-fixed-col",  # a Chinese "table sorts amounts wrong" session first, the answer second
    "b12-zh-harmony-net",  # a Chinese "mini program request fails" session first, answer second
    # blind13 (measured once at e810cbc, lexical 27/40): twelve cross-language misses and one
    # same-language weeks-old one; each time a session in the question's language sharing
    # its generic or neighbouring words comes first:
    "b13-en-post-403",  # an English "javax to jakarta imports" session first, the answer second
    "b13-en-log-twice",  # an English "JSON logs not parsed" session first, the answer third
    "b13-ja-faiss-recall",  # a Japanese "full-text search accuracy" session first, answer 2nd
    "b13-ja-tokio-nested",  # a Japanese "Rust build is slow" session first, the answer second
    "b13-ja-angular-devonly",  # a Japanese "Angular 17 build error" session first, answer 2nd
    "b13-ja-terminal-slow",  # a Japanese "VS Code terminal mojibake" session first, answer 2nd
    "b13-ko-meili-filter",  # a Korean "filter shows an empty list" session first, answer 2nd
    "b13-ko-16kb-page",  # a Korean "Play Console target SDK warning" session first, answer 2nd
    "b13-ko-astro-button",  # a Korean "button does nothing on mobile" session first, answer 2nd
    "b13-zh-prompt-cache",  # a Chinese "Redis cache hit rate low" session first, answer second
    "b13-zh-pwa-old-page",  # Chinese "white screen after release" and "CDN old images" first
    "b13-zh-flutter-flicker",  # a Chinese "Flutter list jank" session first, the answer third
    "b13-zh-whisper-drift",  # a Chinese "audio/video out of sync" session first, answer second
)
"""Questions the current default ranking answers wrongly (issue 17); empty it as it is fixed.
Question ids are unique across all corpora."""

MINIMUM_QUESTIONS = {"tuned": {"en": 25, "zh": 10, "ja": 10, "ko": 10, "mixed": 5},
                     "heldout": {"en": 12, "zh": 6, "ja": 6, "ko": 6, "mixed": 2},
                     "heldout2": {"en": 16, "zh": 6, "ja": 6, "ko": 6, "mixed": 6},
                     "crosslang": {"zh": 10, "ja": 9, "ko": 9, "mixed": 7},
                     "blind4": {"en": 10, "zh": 10, "ja": 10, "ko": 10},
                     "blind5": {"en": 10, "zh": 10, "ja": 10, "ko": 10},
                     "blind6": {"en": 10, "zh": 10, "ja": 10, "ko": 10},
                     "blind7": {"en": 10, "zh": 10, "ja": 10, "ko": 10},
                     "blind8": {"en": 10, "zh": 10, "ja": 10, "ko": 10},
                     "blind9": {"en": 10, "zh": 10, "ja": 10, "ko": 10},
                     "blind10": {"en": 10, "zh": 10, "ja": 10, "ko": 10},
                     "blind11": {"en": 10, "zh": 10, "ja": 10, "ko": 10},
                     "blind12": {"en": 10, "zh": 10, "ja": 10, "ko": 10},
                     "blind13": {"en": 10, "zh": 10, "ja": 10, "ko": 10}}
ANSWER_MIN_AGE_DAYS = {"blind7": 1, "blind8": 1, "blind9": 1, "blind10": 1, "blind11": 1,
                       "blind12": 1, "blind13": 1}
"""How many days old an answer must be: a week unless a set says otherwise (blind7 to
blind13 ask about this week too, as people do; never today, the day of the live session
asked from)."""


@pytest.fixture(scope="module", params=sorted(CORPORA))
def seed_set(request: pytest.FixtureRequest) -> str:
    """The name of a corpus."""
    return str(request.param)


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Harkback]]:
    """Each corpus in its own SQLite file, dated from now, behind the default pipeline."""
    opened = {}
    for name, corpus in CORPORA.items():
        store = open_store(tmp_path_factory.mktemp(f"seeds-{name}") / "seeds.db").unwrap()
        dated = conversations(corpus, now=time.time())
        ingested = store.ingest(dated)
        run_sync(lambda: ingested.awaitable()).unwrap()  # noqa: B023 (run at once)
        # No summary: what is asserted is which sessions come back, in which order.
        opened[name] = Harkback(store=store, pipeline=attrs.evolve(
            Pipeline(), summarize=SUMMARIZERS["none"]))
    yield opened
    for harkback in opened.values():
        harkback.store.close()


def question_param(key: tuple[str, str], known_wrong: tuple[str, ...] = KNOWN_WRONG,
                   reason: str = "known wrong with the current ranking (issue 17)") -> object:
    """A question as a test case: a strict expected failure when it is ``known_wrong``."""
    if key[1] in known_wrong:
        return pytest.param(key, id="-".join(key),
                            marks=pytest.mark.xfail(strict=True, reason=reason))
    return pytest.param(key, id="-".join(key))


@pytest.mark.parametrize("key", [question_param(key) for key in QUESTIONS])
def test_question_recalls_its_session(stores: dict[str, Harkback],
                                      key: tuple[str, str]) -> None:
    """One answer session comes first; several are all in the first three."""
    question = QUESTIONS[key]
    ranked = run_sync(lambda: ask(stores[key[0]], question))
    assert question.passed(ranked), f"{question.text!r}: wanted {question.answers}, got {ranked}"


def test_overall_rate_holds_and_is_reported(stores: dict[str, Harkback], seed_set: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Every question not known wrong passes; the rate per language is printed."""
    harkback, corpus = stores[seed_set], CORPORA[seed_set]
    asked: Counter[str] = Counter()
    passed: Counter[str] = Counter()
    failing: list[str] = []
    for question in corpus.questions:
        ok = question.passed(run_sync(partial(ask, harkback, question)))
        asked[question.language] += 1
        passed[question.language] += ok
        if not ok:
            failing.append(question.id)
    with capsys.disabled():
        print(f"\nseed scenarios, {seed_set} (default pipeline):", ", ".join(
            f"{lang} {passed[lang]}/{asked[lang]}" for lang in LANGUAGES if asked[lang]),
            f"| all {sum(passed.values())}/{sum(asked.values())}")
    newly_wrong = sorted(set(failing) - set(KNOWN_WRONG))
    assert not newly_wrong, f"newly wrong: {newly_wrong}"


@pytest.mark.parametrize("name", sorted(CORPORA))
def test_corpus_keeps_its_scenarios(name: str) -> None:
    """Enough questions per language, every answer a stored lineage root, weeks old (or as
    old as its set says), each with recent sessions (at most 3 days old) beside it."""
    corpus = CORPORA[name]
    counts = Counter(q.language for q in corpus.questions)
    assert all(counts[lang] >= n for lang, n in MINIMUM_QUESTIONS[name].items()), counts
    sessions = {s["id"]: s for s in corpus.sessions}
    answers = {a for q in corpus.questions for a in q.answers}
    assert answers <= set(sessions)
    min_age = ANSWER_MIN_AGE_DAYS.get(name, 7)
    assert all(sessions[a].get("parent") is None and sessions[a]["age_days"] >= min_age
               for a in answers)
    assert sum(1 for s in corpus.sessions if s.get("age_days", 99) <= 3) >= len(LANGUAGES)
    assert {q.current for q in corpus.questions if q.current} <= set(sessions)
    assert set(KNOWN_WRONG) <= {qid for _, qid in QUESTIONS}
    assert len({qid for _, qid in QUESTIONS}) == len(QUESTIONS)


def _lineage_kinds(question: Question) -> set[str]:
    children = [s for s in CORPUS.sessions if s.get("parent") in question.answers]
    return {"compression" if any(s["id"] == c["parent"] and s.get("end_reason") == "compression"
                                 for s in CORPUS.sessions) else "delegated" for c in children}


def test_corpus_has_lineage_cron_and_live_sessions() -> None:
    """Answers held by delegated children and by continuations, cron noise, live sessions."""
    kinds = set().union(*(_lineage_kinds(q) for q in CORPUS.questions))
    assert kinds == {"compression", "delegated"}
    assert sum(1 for s in CORPUS.sessions if s.get("source") == "cron") >= 3
    assert sum(1 for q in CORPUS.questions if q.current) >= 4
