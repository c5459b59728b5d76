"""Retrieval-quality benchmark: which sessions does each ranker put first?

Reads a LongMemEval-format file, ingests its sessions through the public API (a
:class:`~harkback.adapters.stores.sqlite.SqliteStore` in a temporary folder, the
product's default), asks every question through each ranker's ``match`` stage and
the product's ``resolve`` stage, and scores the ranked sessions with LongMemEval's
official metrics (:mod:`benchmarks.metrics`), abstention questions left out::

    .venv/bin/python -m benchmarks.retrieval \\
        --data ../shared/data/longmemeval-dev/longmemeval_s_cleaned.json.gz --protocol both

Protocols: ``per-question`` indexes only the question's own haystack (the official
setting); ``pooled`` indexes every distinct session once and asks every question
against the whole store; with ``--until-asked`` the pooled protocol runs again with
each question seeing only sessions dated up to its own date (``pooled-until``, as an
agent asking then would). All rankers run on the same store, one after another, and
each query's match + resolve time is its latency.

Clocks (``--clock``, :mod:`benchmarks.clocks`): every protocol is reported "as
published" (one fixed today, ``--today``, for every question: the sessions are years
old) and "asked today" (the stages' clock at each question's date, as if its sessions
were shifted so the question date is now), each ranker's recall_all@5 difference last.

``--from-cli`` evaluates any ingest file through the CLI instead: ``harkback ingest``
then ``harkback search --json --summarizer none --limit 10 --ranker NAME`` per
question (both with ``--embedder SPEC`` when given). Its question file is JSON lines,
one question per line::

    {"id": "q1", "question": "where is the backup script?", "gold": ["s12"],
     "type": "single-session"}

``id``, ``question`` and ``gold`` (session ids that answer it) are required; ``type``
groups the breakdown. Its questions carry no date, so it runs as published only, each
search given ``--as-of`` the run's today. ``python -m benchmarks.longmemeval export``
writes a LongMemEval file in this form (``sessions.jsonl`` for ``harkback ingest``,
``questions.jsonl``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from returns.io import IOResult
from returns.unsafe import unsafe_perform_io

from benchmarks.arguments import count
from benchmarks.clocks import ASKED, CLOCK_CHOICES, Clock, clocks_for, read_today
from benchmarks.entry import run_main
from benchmarks.halves import HALVES, half, halves_table
from benchmarks.longmemeval import Dataset, Question
from benchmarks.metrics import score
from benchmarks.model_load import load_table, made_embedder, warmed
from benchmarks.retrieval_report import (
    Answer,
    Answers,
    Report,
    compare_clocks,
    render,
    reports_by_clock,
    to_json,
)
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.embed import embed_missing
from harkback.stages.defaults import MAX_LIMIT
from harkback.stages.errors import RecallError
from harkback.stages.flow import Matched, Resolved
from harkback.stages.match.hybrid import HybridMatch
from harkback.stages.match.lexical import LexicalMatch
from harkback.stages.match.rankers import Bm25Match, CoverageMatch, ReferenceMatch
from harkback.stages.match.sessions import SessionScoring
from harkback.stages.ports import Deps, Embedder, SessionStore
from harkback.stages.records import Conversation
from harkback.stages.request import SearchRequest
from harkback.stages.resolve import LineageResolve
from harkback.stages.stage import Stage

VARIANTS: Mapping[str, Stage[SearchRequest, Matched]] = {
    "bm25": Bm25Match(),
    "reference": ReferenceMatch(),
    "coverage": CoverageMatch(),
    "lexical": LexicalMatch(),
    "lexical-flat": LexicalMatch(role_weights=()),
    "hybrid": HybridMatch(),
    "lexical-2x": LexicalMatch(scoring=SessionScoring(recency_weight=1.0)),
    "lexical-whole": LexicalMatch(clause_weight=0.0),
}
"""Rankers the benchmark knows: the product's registry under the same names, and
``lexical-flat``, the default with every role weighed alike, and ``lexical-2x``, recency
lifting a session up to twice (the first default; now 2 %, a tie-break), and
``lexical-whole``, the default without its clauses (every question ranked as one bag of
words, as before 2026-12-05; :mod:`~harkback.stages.match.clauses`) (ablations). ``hybrid``
needs ``--embedder``; the store's messages are embedded after each ingest (not timed)."""

DEFAULT_VARIANTS = ("bm25", "reference", "coverage", "lexical", "lexical-flat")
INGEST_BATCH = 500


async def rank(store: SessionStore, match: Stage[SearchRequest, Matched], question: Question,
               *, limit: int = MAX_LIMIT, until_asked: bool = False,
               embedder: Embedder | None = None, clock: Clock = ASKED
               ) -> tuple[tuple[str, ...], float]:
    """Ranked root session ids for ``question`` through ``match`` then resolve, and the ms.

    The stages' clock reads ``clock.now(question)``. With ``until_asked`` the request
    only sees what existed when the question was asked (``until`` = its date), as an
    agent asking at that moment would.
    """
    until = question.asked_at if until_asked else None
    request = SearchRequest(query=question.text, limit=limit, until=until)
    now = clock.now(question)
    vectors = store.vector_store() if embedder is not None else None
    deps = Deps(store=store, clock=lambda: now, embedder=embedder, vectors=vectors)
    started = time.perf_counter()
    outcome: IOResult[Resolved, RecallError] = await match(request).bind(
        LineageResolve())(deps).awaitable()
    elapsed = (time.perf_counter() - started) * 1000
    resolved = unsafe_perform_io(outcome.unwrap())  # a failed store is a broken benchmark
    return tuple(c.root.id for c in resolved.candidates), elapsed


async def ask_all(store: SessionStore, questions: Iterable[Question],
                  variants: Mapping[str, Stage[SearchRequest, Matched]],
                  answers: Answers, *, clocks: Sequence[Clock] = (ASKED,),
                  until_asked: bool = False, embedder: Embedder | None = None) -> None:
    """Ask each question of each ranker under each clock on ``store``, into ``answers``."""
    for question in questions:
        for clock in clocks:
            for name, match in variants.items():
                ranked, ms = await rank(store, match, question, until_asked=until_asked,
                                        embedder=embedder, clock=clock)
                answers.setdefault(clock, {}).setdefault(name, []).append(Answer(
                    question.id, question.type, ranked, score(ranked, question.gold), ms))


async def ingest(store: SqliteStore, conversations: Sequence[Conversation],
                 embedder: Embedder | None = None) -> int:
    """Ingest in batches through the store's public ``ingest``; the number of messages.

    With an ``embedder`` the new messages then get their vectors (``harkback embed``'s work).
    """
    messages = 0
    for start in range(0, len(conversations), INGEST_BATCH):
        outcome = await store.ingest(conversations[start:start + INGEST_BATCH]).awaitable()
        messages += unsafe_perform_io(outcome.unwrap()).messages
    if embedder is not None:
        summary = await embed_missing(store, embedder, progress=False)
        if summary.error is not None:
            raise SystemExit(summary.describe())
    return messages


def _open(path: Path) -> SqliteStore:
    return SqliteStore.open(path).unwrap()


async def per_question(data: Dataset, questions: Sequence[Question],
                       variants: Mapping[str, Stage[SearchRequest, Matched]],
                       progress: Callable[[str], None], embedder: Embedder | None = None,
                       clocks: Sequence[Clock] = (ASKED,)) -> tuple[Report, ...]:
    """Each question against a fresh store holding only its haystack; a report per clock."""
    answers: Answers = {}
    messages = sessions = 0
    with tempfile.TemporaryDirectory(prefix="harkback-bench-") as folder:
        for i, question in enumerate(questions, 1):
            path = Path(folder) / f"q{i}.db"
            store = _open(path)
            try:
                haystack = data.haystack(question)
                messages += await ingest(store, haystack, embedder)
                sessions += len(haystack)
                await ask_all(store, [question], variants, answers, clocks=clocks,
                              embedder=embedder)
            finally:
                store.close()
            for leftover in Path(folder).glob(f"q{i}.db*"):
                leftover.unlink()
            if i % 25 == 0:
                progress(f"per-question: {i}/{len(questions)}")
    return reports_by_clock("per-question", clocks, answers, sessions // max(len(questions), 1),
                    messages // max(len(questions), 1))


async def pooled(data: Dataset, questions: Sequence[Question],
                 variants: Mapping[str, Stage[SearchRequest, Matched]],
                 progress: Callable[[str], None], db: Path | None = None, *,
                 until_asked: bool = False, embedder: Embedder | None = None,
                 clocks: Sequence[Clock] = (ASKED,)) -> tuple[Report, ...]:
    """Every distinct session in one store; every question asked against all of it, under
    each clock (a report per clock).

    With ``db`` an existing store is reused as built by an earlier run (same data).
    With ``until_asked`` each question sees only sessions dated up to its own date
    (reported as the protocol ``pooled-until``).
    """
    conversations = data.pooled()
    with tempfile.TemporaryDirectory(prefix="harkback-bench-") as folder:
        path = db or Path(folder) / "pooled.db"
        fresh = not path.exists()
        store = _open(path)
        try:
            if fresh:
                started = time.perf_counter()
                messages = await ingest(store, conversations, embedder)
                progress(f"pooled: ingested {len(conversations)} sessions, {messages} messages "
                         f"in {time.perf_counter() - started:.0f} s")
            else:
                messages = sum(len(c.messages) for c in conversations)
                if embedder is not None:
                    await embed_missing(store, embedder, progress=False)
            answers: Answers = {}
            for i in range(0, len(questions), 50):
                await ask_all(store, questions[i:i + 50], variants, answers, clocks=clocks,
                              until_asked=until_asked, embedder=embedder)
                progress(f"pooled: {min(i + 50, len(questions))}/{len(questions)}")
        finally:
            store.close()
    return reports_by_clock("pooled-until" if until_asked else "pooled", clocks, answers,
                    len(conversations), messages)


# --- through the CLI ----------------------------------------------------------------------

def read_questions(path: Path) -> tuple[Question, ...]:
    """Questions from the ``--from-cli`` question file (JSON lines; see the module doc)."""
    out = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            try:
                out.append(Question(id=str(row["id"]), type=str(row.get("type", "")),
                                    text=str(row["question"]), asked_at=None,
                                    answer=str(row.get("answer", "")),
                                    gold=tuple(str(g) for g in row["gold"]),
                                    haystack=(), dates=()))
            except KeyError as missing:
                raise SystemExit(f"{path}:{number}: missing {missing}") from None
    return tuple(out)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", *args],
                          capture_output=True, text=True, check=False)


def from_cli(questions: Sequence[Question], sessions: Path, rankers: Sequence[str],
             progress: Callable[[str], None], embedder: str | None = None, *,
             today: float) -> Report:
    """Ingest ``sessions`` with ``harkback ingest`` and ask each question with the CLI,
    as published: every search ``--as-of`` ``today``.

    With an ``embedder`` spec both commands get ``--embedder``: ingest embeds the sessions
    and a ``hybrid`` search embeds the question (without it, hybrid ranks by words).
    """
    answers: dict[str, list[Answer]] = {}
    model = ("--embedder", embedder) if embedder else ()
    with tempfile.TemporaryDirectory(prefix="harkback-bench-") as folder:
        db = str(Path(folder) / "cli.db")
        done = _cli("ingest", str(sessions), "--db", db, "--no-progress", *model)
        if done.returncode not in (0, 1):
            raise SystemExit(f"harkback ingest failed: {done.stderr.strip()}")
        progress(done.stdout.strip() or done.stderr.strip())
        stats = json.loads(_cli("stats", "--db", db, "--json").stdout)  # what was indexed
        for i, question in enumerate(questions, 1):
            for name in rankers:
                started = time.perf_counter()
                done = _cli("search", question.text, "--db", db, "--json", "--summarizer",
                            "none", "--limit", str(MAX_LIMIT), "--ranker", name,
                            "--as-of", repr(today), *model)
                elapsed = (time.perf_counter() - started) * 1000
                payload = json.loads(done.stdout) if done.stdout.strip() else {}
                if not payload.get("success"):
                    raise SystemExit(f"harkback search failed for {question.id}: "
                                     f"{payload.get('error') or done.stderr.strip()}")
                ranked = tuple(r["session_id"] for r in payload["results"])
                answers.setdefault(name, []).append(Answer(
                    question.id, question.type, ranked, score(ranked, question.gold), elapsed))
            if i % 25 == 0:
                progress(f"cli: {i}/{len(questions)}")
    return Report("cli", Clock("published", today),
                  {k: tuple(v) for k, v in answers.items()}, stats["sessions"],
                  stats["messages"])


# --- command ------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    """Arguments of ``python -m benchmarks.retrieval``."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.retrieval",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, help="LongMemEval JSON file (.json or .json.gz)")
    parser.add_argument("--protocol", choices=("per-question", "pooled", "both"),
                        default="both")
    parser.add_argument("--until-asked", action="store_true",
                        help="pooled: also run each question seeing only sessions up to its "
                             "date (an agent asking then); reported as pooled-until")
    parser.add_argument("--clock", choices=CLOCK_CHOICES, default="both",
                        help="as published (one fixed today), asked today (each question "
                             "at its own date), or both (default)")
    parser.add_argument("--today", default=None, metavar="ISO",
                        help="the 'today' of the as-published clock (default: the wall "
                             "clock at the start of the run)")
    parser.add_argument("--rankers", default=",".join(DEFAULT_VARIANTS),
                        help=f"comma-separated, from {', '.join(VARIANTS)}")
    parser.add_argument("--questions", type=count, default=None,
                        help="only the first N scored questions (a quick run)")
    parser.add_argument("--half", choices=HALVES, default=None,
                        help="only the questions of one half (benchmarks/halves.py): tune "
                             "on A, check on B")
    parser.add_argument("--pooled-db", type=Path, default=None,
                        help="build the pooled store here, or reuse it if it exists")
    parser.add_argument("--json", type=Path, default=None, help="write every answer here")
    parser.add_argument("--embedder", default=None, metavar="SPEC",
                        help="embedding model for the hybrid ranker (as harkback's "
                             "--embedder, e.g. minilm)")
    parser.add_argument("--vector-cache", type=Path, default=None,
                        help="folder of passage vectors kept between runs "
                             "(benchmarks/vector_cache.py)")
    parser.add_argument("--from-cli", action="store_true",
                        help="evaluate --sessions/--question-file through the harkback CLI")
    parser.add_argument("--sessions", type=Path, help="ingest file (JSON lines) for --from-cli")
    parser.add_argument("--question-file", type=Path, help="question file for --from-cli")
    return parser


def _progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its tables (Markdown)."""
    args = build_parser().parse_args(argv)
    names = [n.strip() for n in args.rankers.split(",") if n.strip()]
    unknown = [n for n in names if n not in VARIANTS]
    if unknown:
        raise SystemExit(f"unknown ranker(s): {', '.join(unknown)}")
    if "hybrid" in names and not args.embedder:
        raise SystemExit("the hybrid ranker needs --embedder")
    today = read_today(args.today)
    clocks = clocks_for(args.clock, today)
    reports: list[Report] = []
    load: tuple[float, float] | None = None
    if args.from_cli:
        if not (args.sessions and args.question_file):
            raise SystemExit("--from-cli needs --sessions and --question-file")
        questions = [q for q in read_questions(args.question_file) if q.gold]
        reports.append(from_cli(questions[:args.questions], args.sessions, names, _progress,
                                args.embedder, today=today))
    else:
        if args.data is None:
            raise SystemExit("--data is required (or --from-cli)")
        data = Dataset.read(args.data)
        scored = [q for q in data.scored()
                  if args.half is None or half(q.id) == args.half][:args.questions]
        variants = {n: VARIANTS[n] for n in names}
        embedder = made_embedder(args.embedder, args.vector_cache)
        load = None if embedder is None else warmed(embedder)
        left_out = len(data.questions) - len(data.scored())
        _progress(f"{len(scored)} questions scored ({left_out} abstention left out)")
        if args.protocol in ("per-question", "both"):
            reports += asyncio.run(per_question(data, scored, variants, _progress, embedder,
                                                clocks))
        if args.protocol in ("pooled", "both"):
            reports += asyncio.run(pooled(data, scored, variants, _progress, args.pooled_db,
                                          embedder=embedder, clocks=clocks))
            if args.until_asked:
                reports += asyncio.run(pooled(data, scored, variants, _progress,
                                              args.pooled_db, until_asked=True,
                                              embedder=embedder, clocks=clocks))
    for report in reports:
        print(render(report))
    print(compare_clocks(reports))
    print(halves_table(reports))
    if load is not None:
        print(load_table(args.embedder, *load))
    if args.json:
        args.json.write_text(json.dumps([to_json(r) for r in reports], indent=1))
    return 0


if __name__ == "__main__":
    run_main(main)
