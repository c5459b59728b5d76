"""The seed-scenario corpus: realistic agent sessions and the questions people ask about them.

The corpus lives in ``tests/fixtures/seeds/*.json`` (one file per language, plus
``mixed.json`` for CJK questions with Latin terms and ``noise.json`` for cron jobs). Each
file holds ``{"sessions": [...], "questions": [...]}``. A session is the README's ingest
format with three changes, so that recency is live whatever day the tests run:

- ``age_days`` (how many days before "now" it started) replaces ``started_at``;
  ``ages`` (a list) makes one copy per age, ids suffixed ``-0``, ``-1``, ... (a cron job);
- ``parent`` is ``parent_session_id``;
- each message is a short list: ``["user" | "assistant", text]``, ``["call", tool,
  command]`` (an assistant turn calling ``tool`` with ``{"command": command}``) or
  ``["tool", tool, output]`` (the answer to the last call).

Messages are one minute apart. A question is ``{"id", "q", "answers", "current"}``:
``answers`` are the lineage roots a recall must return (one: it must come first; several:
all in the first three), ``current`` the session the question is asked from, whose
lineage must not come back. Its language is its file's name.

>>> corpus = load_corpus()
>>> by_id = {c.session.id: c for c in conversations(corpus, now=1_800_000_000.0)}
>>> session = by_id["en-ci-cache"].session
>>> (1_800_000_000.0 - session.started_at) / 86400, session.source
(35.0, 'codex')
>>> by_id["cron-health-0"].session.source, by_id["en-migration-child"].session.parent_session_id
('cron', 'en-migration')
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from harkback.pipeline import Harkback
from harkback.stages.ingest_format import conversation_from_json
from harkback.stages.records import Conversation

SEEDS = Path(__file__).resolve().parent.parent / "fixtures" / "seeds"
"""Where the corpus files are."""
HELDOUT = SEEDS.parent / "seeds-heldout"
"""A second corpus in the same format, written without looking at the ranking's word lists
and measured once before any change (so it says how the ranking does on questions it was
not tuned on)."""
HELDOUT2 = SEEDS.parent / "seeds-heldout2"
"""A third corpus, written the same way as :data:`HELDOUT` and aimed at how people really
ask: abbreviations and synonyms, other word forms, identifiers, short keyword queries,
typos, and questions in one language about a session held in another."""
CROSSLANG = SEEDS.parent / "seeds-crosslang"
"""A fourth corpus, written the same way and from the users' side: questions in one language
about sessions held in another (a Chinese, Japanese or Korean question in the words a
native developer uses, 超时, キャッシュ, 저장소, about a session held in English, and back),
with controls whose answer is in the question's language beside an English look-alike."""
BLIND4 = SEEDS.parent / "seeds-blind4"
"""A fifth corpus, written blind to the ranking like :data:`CROSSLANG`: about ten questions
each in English, Chinese, Japanese and Korean, half about a session held in another
language (テラフォーム, 回调, 센트리 about English sessions; English about CJK ones), half
about a same-language session weeks old beside recent look-alikes that share only the
question's generic words, on everyday topics (timezones, locales, gradle, terraform state,
nginx rewrites, SSH keys, fonts, CSV encodings, mobile builds and signing, webhooks)."""
BLIND5 = SEEDS.parent / "seeds-blind5"
"""A sixth corpus, written blind to the ranking like :data:`BLIND4` (after BLIND4 had been
studied): ten questions each in English, Chinese, Japanese and Korean on other topics
(Postgres bloat, Python wheels, Redis eviction, git bisect and reflog, OOMKilled pods,
flaky tests, hydration errors, OAuth refresh tokens, CORS preflight, Go private modules,
S3 and KMS, rate limits, feature flags, DNS TTLs, Celery, Airflow, gRPC deadlines ...),
half about a session held in another language, with two-answer questions, answers held
by a delegated child and questions asked from a live session with the same words."""
BLIND6 = SEEDS.parent / "seeds-blind6"
"""A seventh corpus, written blind to the ranking like :data:`BLIND5`: ten questions each in
English, Chinese, Japanese and Korean on topics no earlier set covers (CRLF line endings,
KEDA scaling, GPG signing, pydantic v2, OCR, WeChat mini programs, ClickHouse views, argon2,
restic, CSP, DingTalk, dbt, uv, PostGIS, Helm, RabbitMQ dead letters, CUDA OOM, turbo cache,
wareki dates, NFKC search, Ansible, Cloud Run, NAT costs, BigQuery partitions, WSL clocks,
TOTP, MySQL replication lag, Vault tokens, OpenTelemetry, Tailwind, Supabase RLS, Loki,
SQLite WAL ...), half about a session held in another language, with two-answer questions,
answers held by a delegated child and questions asked from a live session."""
BLIND7 = SEEDS.parent / "seeds-blind7"
"""An eighth corpus, written blind to the ranking like :data:`BLIND6`, shaped after a real
store: ten questions each in English, Chinese, Japanese and Korean on topics no earlier set
covers (Prisma drift, php-fpm, pgvector, notarization, Argo CD, Alipay, Nacos, gh-ost,
Redisson, kintone, Sidekiq, Keycloak, Unity Addressables, ESLint flat config, SSE, ZFS,
Postgres enums, HAProxy, Polars, PyInstaller, R8, universal links, JPA batching, coturn,
Karpenter, Firestore rules, Datadog metrics, buf, Swift concurrency ...), half about a
session held in another language; half the answers are from this week (1-6 days old)
beside look-alikes just as recent, half weeks old beside recent look-alikes."""
BLIND8 = SEEDS.parent / "seeds-blind8"
"""A ninth corpus, written blind to the ranking like :data:`BLIND7` and shaped the same way
(half cross-language, half the answers from this week beside look-alikes as recent), on
other topics (Kafka consumer lag, Alembic heads, pnpm and Metro, certbot renewal, systemd
timers, Playwright timezones, S3 lifecycle, Rust borrows, Prometheus alerts, tmux colours,
gunicorn, buildx, go -race, JWT clock skew, ES mappings, MyBatis batches, SecureRandom,
deadlocks, tracemalloc, LFS quotas, Redis clients, Vite env, startup probes, parquet,
CocoaPods, pg_bigm, Laravel queues, logrotate, bullet, CloudFront, MongoDB indexes, sharp,
QueuePool, ghcr, coroutines, Kakao login, Content-Disposition, ShedLock, tsc memory), with
two-answer questions, delegated children, continuations, cron noise and live sessions."""
BLIND9 = SEEDS.parent / "seeds-blind9"
"""A tenth corpus, written blind to the ranking like :data:`BLIND8` and shaped the same way
(half cross-language, Korean about Japanese and Chinese about Korean among them; half the
answers from this week), on other topics (ffmpeg subtitles, ISR revalidation, dind TLS,
CronJob overlap, SQLAlchemy 2.0, Apps Script quotas, MLflow aliases, Sphinx nitpicky,
pip-audit, pandas memory, openapi enums, Compose healthchecks, Feishu bots, utf8mb4, DataX,
QLoRA, DataLoader, Jenkins failFast, Room migrations, Backlog, Active Storage, SnapStart,
colima, Vercel env, goroutine leaks, MinIO multipart, padding side, pre-commit, Toss
Payments, Flutter dark mode, pg_partman, HPA), with two-answer questions, delegated
children, continuations, cron noise and live sessions."""
BLIND10 = SEEDS.parent / "seeds-blind10"
"""An eleventh corpus, written blind to the ranking like :data:`BLIND9` and shaped the same
way (half cross-language, Chinese and Korean about Japanese sessions, Japanese and Korean
about Chinese ones, Chinese and Japanese about Korean ones among them; half the answers
from this week), on other topics (Electron white windows, Puppeteer in Docker, SwiftPM,
Django admin counts, Workers CPU limits, Cognito, Stripe test clocks, Storybook 8, LCP,
zod nullish, poetry lock, GitHub OIDC, Jakarta, Hermes source maps, Jest fake timers,
RocketMQ, Canal, uni-app, Dubbo retries, pinia, Rails credentials, pyenv, EasyExcel,
Spring Batch, Lambda size, LINE bots, SmartHR, multiprocessing spawn, EventBridge,
FlatList, NestJS cycles, PgBouncer, WidgetKit, Gin zero values, Svelte 5, Alimtalk,
PortOne, QueryDSL, BigDecimal, React Query), with two-answer questions, delegated
children, continuations, cron noise and live sessions."""
BLIND11 = SEEDS.parent / "seeds-blind11"
"""A twelfth corpus, written blind to the ranking like :data:`BLIND10` and shaped the same
way (half cross-language, each CJK language asked about sessions held in English and in
the two other CJK languages; half the answers from this week), on other topics (tokenizers
fork warnings, sccache, Module Federation, replication slots, musl DNS, Twilio, Pulumi
import, Yarn PnP, Renovate groups, Bun mocks, Tauri updater, NFD filenames, Compose
stability, Nuxt useFetch, Step Functions Map, Seata, IK dictionaries, ShardingSphere,
XXL-JOB, ECharts, mise, Dify, BlockHound, R2 presigned URLs, keep-alive, freee, Apex
SOQL limits, Turbo Streams, Firebase channels, IL2CPP stripping, EAS keystores, Next.js
middleware, Flink checkpoints, jackson-module-kotlin, Cypress, Debezium, gateway rate
limits, Android 14 services, Nexus cleanup, TypeORM), with two-answer questions,
delegated children, continuations, cron noise and live sessions."""
BLIND12 = SEEDS.parent / "seeds-blind12"
"""A thirteenth corpus, written blind to the ranking like :data:`BLIND11` and shaped the
same way (half cross-language, CJK-to-CJK pairs among them; half the answers from this
week), on other topics (WeCom callbacks, Xcode script sandboxing, data.go.kr service keys,
@Transactional self-calls, pytest-xdist databases, SQS duplicates, API Gateway's 29 s,
sequences after a restore, Ollama num_ctx, trivy --ignore-unfixed, vLLM max_model_len,
sparse-checkout, NICE identity checks, Caddy behind Cloudflare, StoreKit 2 notifications,
OSS STS uploads, WeChat Pay public keys, el-table fixed columns, HarmonyOS permissions,
ONLY_FULL_GROUP_BY, Istio mTLS, Redis CROSSSLOT, datasets fingerprints, Flutter intl,
KSP, Chatwork, 3-D Secure returns, StrictMode effects, CMake OpenSSL, KEN_ALL, sqlc nulls,
asyncio task references, Spark skew, Vue 3 v-model, Snowflake auto-suspend, sops, NATS
redelivery, Traefik priority, distutils, DynamoDB hot partitions), with two-answer
questions, delegated children, continuations, cron noise and live sessions."""
BLIND13 = SEEDS.parent / "seeds-blind13"
"""A fourteenth corpus, written blind to the ranking like :data:`BLIND12` and shaped the
same way (half cross-language, CJK-to-CJK pairs among them; half the answers from this
week), on other topics (torch.compile recompiles, rootless Podman ports, Spring Security 6
CSRF, DuckDB on S3, duplicate log lines, Cassandra tombstones, Temporal nondeterminism,
PodDisruptionBudgets, ESM-only packages, PowerShell execution policy, prompt caching, PWA
service workers, Flutter Impeller, Velero restores, Whisper timestamps, WeChat JS-SDK,
Dameng migration, Sentinel rules, AMap keys, logical deletes, cert-manager DNS01, FAISS
nprobe, nested tokio runtimes, Angular change detection, GGUF quantization, Zengin files,
konbini payments, privacy manifests, zsh startup, devcontainers, Meilisearch filters,
16 KB pages, Dask memory, offline wandb, Astro islands, SENS SMS, KakaoPay approval,
idle-in-transaction, business number checks, DVC remotes), with two-answer questions,
delegated children, continuations, cron noise and live sessions."""
SEED_SETS = {"tuned": SEEDS, "heldout": HELDOUT, "heldout2": HELDOUT2, "crosslang": CROSSLANG,
             "blind4": BLIND4, "blind5": BLIND5, "blind6": BLIND6, "blind7": BLIND7,
             "blind8": BLIND8, "blind9": BLIND9, "blind10": BLIND10,
             "blind11": BLIND11, "blind12": BLIND12, "blind13": BLIND13}
"""The corpora by name."""

LANGUAGES = ("en", "zh", "ja", "ko", "mixed")
"""The question groups, in report order (a file's name is its group)."""

DAY = 86_400.0
STEP = 60.0
"""Seconds between two messages of a session."""


@attrs.frozen(kw_only=True)
class Question:
    """One question as a person asks it, and the sessions that answer it: the one answer
    must come first, several must all be in the top three (:meth:`passed`)."""

    id: str
    language: str
    text: str
    answers: tuple[str, ...]
    current: str | None = None

    def passed(self, ranked: Sequence[str]) -> bool:
        """One answer must come first; several must all be in the first three; the
        session the question is asked from never comes back.

        >>> q = Question(id="q", language="en", text="?", answers=("a", "b"))
        >>> q.passed(["b", "x", "a"]), q.passed(["a", "x", "y", "b"])
        (True, False)
        >>> attrs.evolve(q, answers=("a",), current="live").passed(["a", "live"])
        False
        """
        if self.current is not None and self.current in ranked:
            return False
        if len(self.answers) == 1:
            return bool(ranked) and ranked[0] == self.answers[0]
        return set(self.answers) <= set(ranked[:3])


@attrs.frozen(kw_only=True)
class Corpus:
    """The raw sessions (undated) and the questions of every corpus file."""

    sessions: tuple[Mapping[str, Any], ...]
    questions: tuple[Question, ...]


def load_corpus(directory: Path = SEEDS) -> Corpus:
    """Read every ``*.json`` file of ``directory``."""
    sessions: list[Mapping[str, Any]] = []
    questions: list[Question] = []
    for path in sorted(directory.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        sessions.extend(data["sessions"])
        questions.extend(
            Question(id=q["id"], language=path.stem, text=q["q"], answers=tuple(q["answers"]),
                     current=q.get("current"))
            for q in data["questions"])
    return Corpus(sessions=tuple(sessions), questions=tuple(questions))


def conversations(corpus: Corpus, *, now: float) -> list[Conversation]:
    """The corpus's sessions as conversations dated relative to ``now``."""
    return [conversation_from_json(obj).unwrap()
            for raw in corpus.sessions for obj in _dated(raw, now)]


def _dated(raw: Mapping[str, Any], now: float) -> Iterable[dict[str, Any]]:
    # One ingest-format object per age (a cron job runs on several days).
    if "ages" in raw:
        for index, age in enumerate(raw["ages"]):
            yield _ingest_object(raw, f"{raw['id']}-{index}", now - age * DAY)
    else:
        yield _ingest_object(raw, raw["id"], now - raw["age_days"] * DAY)


def _ingest_object(raw: Mapping[str, Any], session_id: str, start: float) -> dict[str, Any]:
    messages = [_message(item, position, start + position * STEP)
                for position, item in enumerate(raw["messages"])]
    return {"id": session_id, "source": raw.get("source", "cli"), "title": raw.get("title", ""),
            "model": raw.get("model", ""), "started_at": start,
            "ended_at": start + max(len(messages) - 1, 0) * STEP,
            "parent_session_id": raw.get("parent"), "end_reason": raw.get("end_reason", ""),
            "messages": messages}


def _message(item: Sequence[str], position: int, when: float) -> dict[str, Any]:
    kind = item[0]
    call_id = f"call-{position}"
    if kind == "call":
        _, tool, command = item
        return {"role": "assistant", "content": "", "timestamp": when,
                "tool_calls": [{"id": call_id, "type": "function",
                                "function": {"name": tool, "arguments": {"command": command}}}]}
    if kind == "tool":
        _, tool, output = item
        # Answers the call just before it.
        return {"role": "tool", "tool_name": tool, "tool_call_id": f"call-{position - 1}",
                "content": output, "timestamp": when}
    if kind not in ("user", "assistant"):
        raise ValueError(f"unknown message kind {kind!r}")
    return {"role": kind, "content": item[1], "timestamp": when}


async def ask(harkback: Harkback, question: Question, *, limit: int = 5) -> tuple[str, ...]:
    """The session ids recalled for ``question``, best first, asked from its ``current``."""
    payload = (await harkback.search(question.text, limit=limit,
                                     current_session_id=question.current)).to_payload()
    if not payload["success"]:
        raise AssertionError(f"{question.id}: {payload['error']}")
    return tuple(result["session_id"] for result in payload["results"])
