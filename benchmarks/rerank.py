"""Rerank benchmark: what the model rerank stage buys, and what it costs.

Per-question protocol (:func:`benchmarks.retrieval.per_question`'s setting: each
question against a fresh SQLite store holding only its haystack, the stages' clock at
the question's date). Each question is ranked twice by the default lexical ranker and
the product's resolve: as is (the best 5), and with :class:`ModelRerank` choosing 5 of
a shortlist of 20. Prints recall_all@5 / recall_any@5 both ways and the rerank's cost:
model calls, prompt and completion tokens, seconds, and how often the lexical order
stood because the model failed::

    .venv/bin/python -m benchmarks.rerank --data DEV.json.gz --questions 30 --base-url URL

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
from benchmarks.clocks import ASKED
from benchmarks.entry import run_main
from benchmarks.longmemeval import Dataset, Question
from benchmarks.metrics import mean_scores, score
from benchmarks.retrieval import _open, ingest
from harkback.adapters.models.chat_settings import ChatSettings
from harkback.adapters.models.openai_chat import OpenAIChatModel
from harkback.stages.flow import Resolved
from harkback.stages.match.lexical import LexicalMatch
from harkback.stages.ports import ChatModel, Deps, SessionStore
from harkback.stages.records import RerankReport
from harkback.stages.request import SearchRequest
from harkback.stages.rerank.model import ModelRerank
from harkback.stages.resolve import LineageResolve

LIMIT = 5
LOCAL_MODEL = "smollm2-135m"


@attrs.frozen(kw_only=True)
class Row:
    """One question's outcome: scores both ways and the rerank's report and seconds."""

    plain: dict[str, float]
    reranked: dict[str, float]
    report: RerankReport
    seconds: float


async def resolve(store: SessionStore, question: Question, deps: Deps,
                  shortlist: int = 0) -> Resolved:
    """The lexical ranker and resolve for ``question`` (``shortlist`` for a rerank)."""
    request = SearchRequest(query=question.text, limit=LIMIT, shortlist=shortlist)
    outcome = await LexicalMatch()(request).bind(LineageResolve())(deps).awaitable()
    return unsafe_perform_io(outcome.unwrap())  # a failed store is a broken benchmark


async def ask(store: SessionStore, question: Question, model: ChatModel,
              rerank: ModelRerank) -> Row:
    """Rank ``question`` without and with the rerank stage."""
    now = ASKED.now(question)
    deps = Deps(store=store, clock=lambda: now, model=model)
    plain = await resolve(store, question, deps)
    wide = await resolve(store, question, deps, shortlist=rerank.shortlist)
    started = time.perf_counter()
    outcome = await rerank(wide)(deps).awaitable()
    seconds = time.perf_counter() - started
    reranked = unsafe_perform_io(outcome.unwrap())
    assert reranked.rerank is not None
    return Row(plain=score([c.root.id for c in plain.candidates], question.gold),
               reranked=score([c.root.id for c in reranked.candidates], question.gold),
               report=reranked.rerank, seconds=seconds)


async def run(data: Dataset, questions: Sequence[Question], settings: ChatSettings,
              rerank: ModelRerank) -> list[Row]:
    """Every question against its own haystack, one after another."""
    model = OpenAIChatModel(settings)
    rows: list[Row] = []
    try:
        with tempfile.TemporaryDirectory(prefix="harkback-rerank-") as folder:
            for i, question in enumerate(questions, 1):
                store = _open(Path(folder) / f"q{i}.db")
                try:
                    await ingest(store, data.haystack(question))
                    rows.append(await ask(store, question, model, rerank))
                finally:
                    store.close()
                print(f"{i}/{len(questions)}: {rows[-1].seconds:.1f} s "
                      f"{rows[-1].report.note or 'ok'}", file=sys.stderr, flush=True)
    finally:
        await model.aclose()
    return rows


def render(rows: Sequence[Row], model: str) -> str:
    """The table: recall both ways, then the cost per question and in total."""
    plain, reranked = mean_scores(r.plain for r in rows), mean_scores(r.reranked for r in rows)
    calls = sum(r.report.calls for r in rows)
    prompt = sum(r.report.usage.prompt for r in rows)
    completion = sum(r.report.usage.completion for r in rows)
    seconds = sum(r.seconds for r in rows)
    fell_back = sum(bool(r.report.note) for r in rows)
    n = max(len(rows), 1)
    return "\n".join([
        f"rerank benchmark, per-question, asked today, {len(rows)} questions, model {model}",
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
    ])


def build_parser() -> argparse.ArgumentParser:
    """Arguments of ``python -m benchmarks.rerank``."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.rerank",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True,
                        help="LongMemEval JSON file (.json or .json.gz)")
    parser.add_argument("--questions", type=count, default=30)
    parser.add_argument("--model", default=None, help=f"default: {LOCAL_MODEL} (local)")
    parser.add_argument("--base-url", default=None,
                        help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)")
    parser.add_argument("--max-concurrency", type=int, default=4)
    parser.add_argument("--deadline", type=float, default=120.0,
                        help="rerank deadline per question, seconds (default 120: a CPU "
                             "model is slow)")
    parser.add_argument("--timeout", type=float, default=120.0,
                        help="timeout of one model call, seconds")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print its tables (Markdown)."""
    args = build_parser().parse_args(argv)
    data = Dataset.read(args.data)
    questions = data.scored()[:args.questions]
    rerank = ModelRerank(deadline_s=args.deadline)
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
    rows = asyncio.run(run(data, questions, settings(base_url, model), rerank))
    print(render(rows, model))
    return 0


if __name__ == "__main__":
    run_main(main)
