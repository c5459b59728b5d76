"""Rerank benchmark: what the model rerank stage buys, and what it costs.

Per-question protocol by default (:func:`benchmarks.retrieval.per_question`'s setting:
each question against a fresh SQLite store holding only its haystack); with
``--pooled-db PATH`` the pooled one (every question against one store of every distinct
session, built there by ``benchmarks.retrieval --pooled-db`` or by this run). Each
question is ranked twice by the default lexical ranker and the product's resolve: as is
(the best 5), and with :class:`ModelRerank` choosing 5 of a shortlist of 20. Prints
recall_all@5 / recall_any@5 both ways, how many questions had every gold session in the
shortlist (what a rerank can reach), and the rerank's cost: model calls, prompt and
completion tokens, seconds, and how often the lexical order stood because the model
failed. ``--only misses`` reranks only the questions the lexical ranking misses
(recall_all@5 below 1), the ones a rerank is for, and ``--only fixable`` only those of
them with every gold session in the shortlist, the only ones whose recall_all@5 a
rerank can change; ``--half`` keeps one half of the questions (:mod:`benchmarks.halves`:
tune on A, check on B)::

    .venv/bin/python -m benchmarks.rerank --data DEV.json.gz --questions 30 --base-url URL
    .venv/bin/python -m benchmarks.rerank --data DEV.json.gz --pooled-db P.db --half A \\
        --only fixable --clock published --today 2026-12-01 --base-url URL

For the local model, start the llama.cpp server of the test set-up first
(``.venv/bin/python -m tests.support.llama_server`` prints ``ready URL``; SmolLM2-135M)
and pass that URL. No summary cache: every call is paid for.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import attrs
from returns.unsafe import unsafe_perform_io

from benchmarks.arguments import count
from benchmarks.clocks import ASKED, CLOCK_MODES, Clock, read_today
from benchmarks.entry import run_main
from benchmarks.halves import HALVES, half
from benchmarks.longmemeval import Dataset, Question
from benchmarks.metrics import mean_scores, recall_all, score
from benchmarks.retrieval import _open, ingest
from harkback.adapters.models.chat_settings import ChatSettings
from harkback.adapters.models.openai_chat import OpenAIChatModel
from harkback.stages.flow import Resolved
from harkback.stages.match.lexical import LexicalMatch
from harkback.stages.ports import ChatModel, Deps, SessionStore
from harkback.stages.records import RerankReport
from harkback.stages.request import SearchRequest
from harkback.stages.rerank.model import BATCH_SIZE, SHORTLIST, ModelRerank
from harkback.stages.resolve import LineageResolve

LIMIT = 5
ONLY = {"all": "all", "misses": "lexical misses",
        "fixable": "lexical misses with every gold session in the shortlist"}
"""``--only``'s choices and how the table's title names them."""
LOCAL_MODEL = "smollm2-135m"


@attrs.frozen(kw_only=True)
class Row:
    """One question's outcome: scores both ways, whether every gold session was in the
    shortlist the model saw, and the rerank's report and seconds."""

    question: str
    plain: dict[str, float]
    reranked: dict[str, float]
    reachable: bool
    report: RerankReport
    seconds: float

    def line(self) -> str:
        """The progress line: recall_all@5 both ways, reachability, seconds, note."""
        return (f"{self.question}: all@5 {self.plain['recall_all@5']:.0f} -> "
                f"{self.reranked['recall_all@5']:.0f}, gold in shortlist "
                f"{'yes' if self.reachable else 'no'}, {self.seconds:.1f} s "
                f"{self.report.note or 'ok'}")


@attrs.frozen(kw_only=True)
class Setting:
    """How the questions are asked: the stages' clock, which questions are reranked
    (the others are left out, returned as None), and after how many to stop."""

    clock: Clock = ASKED
    only: str = "all"
    """``all``, ``misses`` (lexical recall_all@5 below 1) or ``fixable`` (misses with
    every gold session in the shortlist)."""
    limit: int | None = None
    """Stop once this many questions were reranked (None: ask them all)."""

    def done(self, outcomes: Sequence[Row | None]) -> bool:
        """Whether ``limit`` questions were reranked already."""
        return self.limit is not None and sum(o is not None for o in outcomes) >= self.limit


async def resolve(store: SessionStore, question: Question, deps: Deps,
                  shortlist: int = 0) -> Resolved:
    """The lexical ranker and resolve for ``question`` (``shortlist`` for a rerank)."""
    request = SearchRequest(query=question.text, limit=LIMIT, shortlist=shortlist)
    outcome = await LexicalMatch()(request).bind(LineageResolve())(deps).awaitable()
    return unsafe_perform_io(outcome.unwrap())  # a failed store is a broken benchmark


async def ask(store: SessionStore, question: Question, model: ChatModel,
              rerank: ModelRerank, setting: Setting = Setting()) -> Row | None:
    """Rank ``question`` without and with the rerank stage (None: a lexical hit that
    ``setting`` leaves out, not sent to the model)."""
    now = setting.clock.now(question)
    deps = Deps(store=store, clock=lambda: now, model=model)
    plain = score([c.root.id for c in (await resolve(store, question, deps)).candidates],
                  question.gold)
    if setting.only != "all" and plain["recall_all@5"] == 1.0:
        return None
    wide = await resolve(store, question, deps, shortlist=rerank.shortlist)
    shown = [c.root.id for c in wide.candidates]
    reachable = recall_all(shown, question.gold, len(shown)) == 1.0
    if setting.only == "fixable" and not reachable:
        return None
    started = time.perf_counter()
    outcome = await rerank(wide)(deps).awaitable()
    seconds = time.perf_counter() - started
    reranked = unsafe_perform_io(outcome.unwrap())
    assert reranked.rerank is not None
    return Row(question=question.id, plain=plain,
               reranked=score([c.root.id for c in reranked.candidates], question.gold),
               reachable=reachable,
               report=reranked.rerank, seconds=seconds)


def _progress(i: int, total: int, row: Row | None) -> None:
    print(f"{i}/{total} {row.line() if row else 'left out'}",
          file=sys.stderr, flush=True)


async def run(data: Dataset, questions: Sequence[Question], settings: ChatSettings,
              rerank: ModelRerank, setting: Setting = Setting()) -> list[Row | None]:
    """Every question against its own haystack, one after another: a row per question
    asked (None for a lexical hit left out)."""
    model = OpenAIChatModel(settings)
    outcomes: list[Row | None] = []
    try:
        with tempfile.TemporaryDirectory(prefix="harkback-rerank-") as folder:
            for i, question in enumerate(questions, 1):
                if setting.done(outcomes):
                    break
                store = _open(Path(folder) / f"q{i}.db")
                try:
                    await ingest(store, data.haystack(question))
                    outcomes.append(await ask(store, question, model, rerank, setting))
                finally:
                    store.close()
                _progress(i, len(questions), outcomes[-1])
    finally:
        await model.aclose()
    return outcomes


async def run_pooled(data: Dataset, questions: Sequence[Question], settings: ChatSettings,
                     rerank: ModelRerank, db: Path, setting: Setting = Setting()
                     ) -> list[Row | None]:
    """Every question against one store of every distinct session: ``db``, reused when
    it exists (as ``benchmarks.retrieval --pooled-db`` built it), else built there."""
    model = OpenAIChatModel(settings)
    fresh = not db.exists()
    store = _open(db)
    outcomes: list[Row | None] = []
    try:
        if fresh:
            await ingest(store, data.pooled())
        for i, question in enumerate(questions, 1):
            if setting.done(outcomes):
                break
            outcomes.append(await ask(store, question, model, rerank, setting))
            _progress(i, len(questions), outcomes[-1])
    finally:
        store.close()
        await model.aclose()
    return outcomes


def render(rows: Sequence[Row], model: str, title: str = "per-question, asked today") -> str:
    """The table: recall both ways, then the cost per question and in total."""
    plain, reranked = mean_scores(r.plain for r in rows), mean_scores(r.reranked for r in rows)
    calls = sum(r.report.calls for r in rows)
    prompt = sum(r.report.usage.prompt for r in rows)
    completion = sum(r.report.usage.completion for r in rows)
    seconds = sum(r.seconds for r in rows)
    fell_back = sum(bool(r.report.note) for r in rows)
    n = max(len(rows), 1)
    return "\n".join([
        f"rerank benchmark, {title}, {len(rows)} questions, model {model}",
        "",
        "| ranking | recall_all@5 | recall_any@5 | ndcg@5 |",
        "|---|---|---|---|",
        *(f"| {name} | {s.get('recall_all@5', 0):.3f} | {s.get('recall_any@5', 0):.3f} | "
          f"{s.get('ndcg@5', 0):.3f} |" for name, s in (("lexical", plain),
                                                         ("lexical + rerank", reranked))),
        "",
        "| cost | total | per question |",
        "|---|---|---|",
        f"| model calls | {calls} | {calls / n:.1f} |",
        f"| prompt tokens | {prompt} | {prompt / n:.0f} |",
        f"| completion tokens | {completion} | {completion / n:.0f} |",
        f"| seconds (rerank stage) | {seconds:.1f} | {seconds / n:.1f} |",
        f"| questions with a lexical fallback (some batch) | {fell_back} | |",
        f"| questions with every gold session in the shortlist | "
        f"{sum(r.reachable for r in rows)} | |",
    ])


def build_parser() -> argparse.ArgumentParser:
    """Arguments of ``python -m benchmarks.rerank``."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.rerank",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True,
                        help="LongMemEval JSON file (.json or .json.gz)")
    parser.add_argument("--questions", type=count, default=30,
                        help="how many questions (with --only: how many of those) to "
                             "rerank; default 30")
    parser.add_argument("--model", default=None, help=f"default: {LOCAL_MODEL} (local)")
    parser.add_argument("--base-url", default=None,
                        help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)")
    parser.add_argument("--max-concurrency", type=int, default=4)
    parser.add_argument("--deadline", type=float, default=120.0,
                        help="rerank deadline per question, seconds (default 120: a CPU "
                             "model is slow)")
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="timeout of one model call, seconds")
    parser.add_argument("--pooled-db", type=Path, default=None,
                        help="pooled protocol on this store (reused if it exists, else "
                             "built); default: per-question")
    parser.add_argument("--half", choices=HALVES, default=None,
                        help="only the questions of one half (benchmarks/halves.py)")
    parser.add_argument("--only", choices=ONLY, default="all",
                        help="misses: only the questions the lexical ranking misses "
                             "(recall_all@5 < 1); fixable: only those with every gold "
                             "session in the shortlist")
    parser.add_argument("--clock", choices=CLOCK_MODES, default="asked",
                        help="the stages' clock: each question's date (asked, default) or "
                             "one fixed --today (published)")
    parser.add_argument("--today", default=None, metavar="ISO",
                        help="today of the published clock (default: now)")
    parser.add_argument("--shortlist", type=count, default=SHORTLIST)
    parser.add_argument("--batch-size", type=count, default=BATCH_SIZE)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its tables (Markdown)."""
    args = build_parser().parse_args(argv)
    data = Dataset.read(args.data)
    questions = [q for q in data.scored() if args.half is None or half(q.id) == args.half]
    if args.only == "all":
        questions = questions[:args.questions]
    rerank = ModelRerank(deadline_s=args.deadline, shortlist=args.shortlist,
                         batch_size=args.batch_size)
    clock = Clock(args.clock, today=read_today(args.today))
    setting = Setting(clock=clock, only=args.only,
                      limit=None if args.only == "all" else args.questions)
    base_url = args.base_url or os.environ.get("OPENAI_BASE_URL")

    def settings(url: str, model: str) -> ChatSettings:
        made = ChatSettings.from_env(os.environ, model=model, base_url=url,
                                     max_concurrency=args.max_concurrency,
                                     timeout=args.timeout)
        assert made is not None
        return made

    if not base_url:
        raise SystemExit("--base-url (or OPENAI_BASE_URL) is required; for the local model "
                         "start `.venv/bin/python -m tests.support.llama_server` first")
    model = args.model or os.environ.get("HARKBACK_MODEL") or LOCAL_MODEL
    chat = settings(base_url, model)
    if args.pooled_db is None:
        outcomes = asyncio.run(run(data, questions, chat, rerank, setting))
    else:
        outcomes = asyncio.run(run_pooled(data, questions, chat, rerank, args.pooled_db,
                                          setting))
    rows = [row for row in outcomes if row is not None]
    title = ", ".join(filter(None, [
        "pooled" if args.pooled_db else "per-question", clock.label(),
        f"half {args.half}" if args.half else "",
        f"{ONLY[args.only]} only ({len(rows)} of the first {len(outcomes)} questions)"
        if args.only != "all" else ""]))
    print(render(rows, model, title))
    return 0


if __name__ == "__main__":
    run_main(main)
