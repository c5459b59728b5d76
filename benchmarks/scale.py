"""Speed at scale: build stores of 10k to 1M generated messages and time every stage.

    .venv/bin/python -m benchmarks.scale --sizes 10k,100k,1m --out benchmarks/out

For each size it builds a SQLite store from :mod:`benchmarks.generate` (bulk ingest
in batches of 500 sessions, then incremental ingest of one new session per call); it
runs the query mix with a new ``harkback search`` process per question, as a person
meets the store after an import (:mod:`benchmarks.cold_search`), twice: right after the
bulk load and again after the incremental writes. Then it runs the fixed
query mix in a separate long-lived search process (so the build does not
pollute its peak memory), once with harkback's pipeline and once with the
reference system's (:mod:`benchmarks.reference`), each stage timed through the
facade's timings, the same code path users take. A third pass runs the model
summarizer against a local Chat Completions server that answers after a fixed
delay, so the time spent outside the model shows. It prints a table, and writes
``scale.json`` and ``scale.png`` (latency against store size, per stage) to ``--out``.
The PostgreSQL store's figures come from :mod:`benchmarks.scale_postgres`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs

from benchmarks.arguments import count, sizes
from benchmarks.cold_search import cold_samples, cold_stats
from benchmarks.entry import run_main
from benchmarks.generate import RARE_WORD, generate
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.compose import STAGE_NAMES, Pipeline
from harkback.pipeline.facade import Harkback
from harkback.pipeline.ingest import chunked
from harkback.stages.ports import SessionStore
from harkback.stages.records import Conversation

QUERY_MIX: tuple[tuple[str, str], ...] = (
    ("rare word", RARE_WORD),
    ("common words", "error config server"),
    ("question", "how did we fix the docker network bridge error last time?"),
    ("phrase", '"connection refused"'),
    ("prefix", "dock*"),
    ("chinese", "上次怎么解决数据库连接超时的问题"),
    ("recent", ""),
)
"""The query mix: (label, query). An empty query is recent mode."""

STAGES = (*STAGE_NAMES, "recent")
BATCH = 500
SEED = 0
MODEL_DELAY_S = 0.5

TARGETS = {"match_p50": 20.0, "match_p95": 100.0, "stages_p50": 60.0, "bulk": 40_000.0,
           "incremental": 10_000.0, "rss_mb": 200.0}


# --- building ------------------------------------------------------------------------------

@attrs.frozen(kw_only=True)
class Build:
    """What building one store measured."""

    messages: int
    bulk_seconds: float
    incremental_messages: int
    incremental_seconds: float
    store_bytes: int
    bulk_cpu_seconds: float = float("nan")

    @property
    def bulk_cpu_rate(self) -> float:
        """Messages per CPU second of bulk ingest (steadier than the wall-clock rate on a
        shared machine; the wait for the other cores' jobs does not count)."""
        return self.messages / self.bulk_cpu_seconds

    @property
    def bulk_rate(self) -> float:
        """Messages per second of bulk ingest."""
        return self.messages / self.bulk_seconds

    @property
    def incremental_rate(self) -> float:
        """Messages per second of ingesting one session per call."""
        return self.incremental_messages / self.incremental_seconds


def _remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


async def _timed_ingest(store: SessionStore, groups: Iterator[list[Conversation]]
                        ) -> tuple[int, float, float]:
    # Only the store's work is timed, not generating the sessions. Its CPU time is the
    # process's but the loop thread's generating: a large write's checkpoint runs on a
    # thread of its own, often while the next batch is generated (sqlite_checkpoints).
    count, spent, generating = 0, 0.0, 0.0
    cpu_started = time.process_time()
    while True:
        made = time.thread_time()
        group = next(groups, None)
        generating += time.thread_time() - made
        if group is None:
            break
        started = time.perf_counter()
        (await store.ingest(group)).unwrap()
        spent += time.perf_counter() - started
        count += sum(len(c.messages) for c in group)
    return count, spent, time.process_time() - cpu_started - generating


async def _timed_close(store: SqliteStore) -> tuple[float, float]:
    """Close ``store`` (which finishes the index merging its writes left pending): the
    wall and CPU seconds it took."""
    started, cpu_started = time.perf_counter(), time.process_time()
    await asyncio.to_thread(store.close)
    return time.perf_counter() - started, time.process_time() - cpu_started


def build_store(path: Path, messages: int, *, seed: int = SEED,
                incremental: int | None = None,
                after_bulk: Callable[[], None] | None = None) -> Build:
    """Build a fresh store at ``path`` and measure bulk and incremental ingest.

    ``after_bulk`` runs once the bulk load's store is closed and before the incremental
    writes open it again (untimed): what a person meets right after an import.
    """
    _remove(path)
    extra = incremental if incremental is not None else max(1000, min(20_000, messages // 20))

    async def run() -> Build:
        # The bulk load is one `harkback ingest`: its store's close (which finishes the
        # index merging the writes left pending) is timed with it; so is the close after
        # the sessions that arrive one at a time.
        # An ingest that fails (a Ctrl-C cancels it) still closes the store, untimed.
        store = SqliteStore.open(path).unwrap()
        try:
            count, spent, cpu = await _timed_ingest(store,
                                                    chunked(generate(messages, seed), BATCH))
        finally:
            closing, closing_cpu = await _timed_close(store)
        spent, cpu = spent + closing, cpu + closing_cpu
        if after_bulk is not None:
            await asyncio.to_thread(after_bulk)
        store = SqliteStore.open(path).unwrap()
        try:
            # New sessions that arrive one at a time, after the history (ids do not collide).
            later = generate(extra, seed + 1, prefix="n", start=time.time())
            more, more_spent, _ = await _timed_ingest(store, ([c] for c in later))
        finally:
            closing, _ = await _timed_close(store)  # merges what the small writes left pending
        more_spent += closing
        return Build(messages=count, bulk_seconds=spent, incremental_messages=more,
                     incremental_seconds=more_spent, store_bytes=path.stat().st_size,
                     bulk_cpu_seconds=cpu)

    return asyncio.run(run())


# --- searching (runs in its own process) ---------------------------------------------------

def _percentile(values: Sequence[float], share: float) -> float:
    """The ``share`` quantile by nearest rank (0.5: median, 0.95: p95).

    >>> _percentile([1.0, 2.0, 3.0, 4.0], 0.5), _percentile(list(range(1, 101)), 0.95)
    (2.0, 95)
    """
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = max(1, round(share * len(ordered) + 0.4999))
    return ordered[min(rank, len(ordered)) - 1]


def _pipeline(kind: str) -> Pipeline:
    if kind == "reference":
        from benchmarks.reference import reference_pipeline
        return reference_pipeline()
    return Pipeline()


def _with_model(hb: Harkback, kind: str, url: str) -> Harkback:
    """``hb`` summarising with a model at ``url`` (no summary cache: every call waits)."""
    # The model summarizer lives in its own issue; this is the hook that wires it.
    from harkback.adapters.models.chat_settings import ChatSettings
    from harkback.adapters.models.openai_chat import OpenAIChatModel
    from harkback.stages.summarize.model import LlmSummarize

    settings = ChatSettings(model="bench-model", base_url=url, api_key="none",
                            max_attempts=1, timeout=30.0, rate=1000.0, rate_period=1.0)
    # The reference sends the whole 100,000-character window (about 25,000 tokens).
    summarize = LlmSummarize(transcript_tokens=25_000) if kind == "reference" else LlmSummarize()
    return attrs.evolve(hb, model=OpenAIChatModel(settings), cache=None,
                        pipeline=attrs.evolve(hb.pipeline, summarize=summarize))


async def _search_all(db: Path, kind: str, repeat: int, model_url: str | None,
                      model_rounds: int) -> dict[str, Any]:
    store = SqliteStore.open(db, readonly=True).unwrap()
    hb = Harkback(store=store, pipeline=_pipeline(kind))
    samples: list[dict[str, Any]] = []
    try:
        for _label, query in QUERY_MIX:  # warm-up: first touch of the file's pages
            await hb.search(query)
        for round_ in range(repeat):
            for label, query in QUERY_MIX:
                started, cpu_started = time.perf_counter(), time.process_time()
                response = await hb.search(query)
                wall = (time.perf_counter() - started) * 1000.0
                cpu = (time.process_time() - cpu_started) * 1000.0
                if not response.ok:
                    raise SystemExit(f"{label}: {response.to_payload()}")
                samples.append({"query": label, "round": round_, "wall_ms": wall, "cpu_ms": cpu,
                                "count": len(response.to_payload().get("results", [])),
                                "timings": dict(response.timings)})
        end_to_end: list[dict[str, Any]] = []
        if model_url:
            with_model = _with_model(hb, kind, model_url)
            try:
                for round_ in range(model_rounds):
                    for label, query in QUERY_MIX:
                        if not query:
                            continue
                        started = time.perf_counter()
                        response = await with_model.search(query)
                        wall = (time.perf_counter() - started) * 1000.0
                        kinds = [r["summary_kind"]
                                 for r in response.to_payload().get("results", [])]
                        end_to_end.append({"query": label, "round": round_, "wall_ms": wall,
                                           "timings": dict(response.timings), "kinds": kinds})
            finally:
                await with_model.aclose()
    finally:
        await asyncio.to_thread(store.close)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {"kind": kind, "samples": samples, "end_to_end": end_to_end,
            "peak_rss_mb": usage.ru_maxrss / 1024.0}


def worker(argv: Sequence[str]) -> int:
    """The search process: run the query mix and print the measurements as JSON."""
    parser = argparse.ArgumentParser(prog="benchmarks.scale worker")
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--kind", choices=("harkback", "reference"), default="harkback")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--model-url", default=None)
    parser.add_argument("--model-rounds", type=int, default=2)
    args = parser.parse_args(argv)
    result = asyncio.run(_search_all(args.db, args.kind, args.repeat, args.model_url,
                                     args.model_rounds))
    print(json.dumps(result))
    return 0


def run_worker(db: Path, kind: str, repeat: int, model_url: str | None,
               model_rounds: int) -> dict[str, Any]:
    """Run :func:`worker` in a fresh interpreter and read its JSON."""
    command = [sys.executable, "-m", "benchmarks.scale", "worker", "--db", str(db),
               "--kind", kind, "--repeat", str(repeat), "--model-rounds", str(model_rounds)]
    if model_url:
        command += ["--model-url", model_url]
    done = subprocess.run(command, capture_output=True, text=True, check=False,
                          cwd=Path(__file__).resolve().parent.parent)
    if done.returncode != 0:
        raise SystemExit(f"search worker failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# --- the model server ----------------------------------------------------------------------

class ModelServer:
    """A local Chat Completions server answering every request after ``delay`` seconds."""

    def __init__(self, delay: float) -> None:
        """Prepare the server (tests/support/chat_server.py, reused)."""
        from tests.support.chat_server import ChatServer, Reply
        reply = Reply(content="The session fixed it by recreating the network.\nSOURCES: 1",
                      delay=delay)
        self._server = ChatServer(lambda _received: reply)

    def __enter__(self) -> str:
        """Start serving; returns the base URL."""
        self._server.start()
        return self._server.url

    def __exit__(self, *_exc: object) -> None:
        """Stop serving."""
        self._server.stop()


# --- reporting -----------------------------------------------------------------------------

def _stage_stats(samples: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    stats: dict[str, dict[str, float]] = {}
    for stage in STAGES:
        values = [s["timings"][stage] for s in samples if stage in s["timings"]]
        if values:
            stats[stage] = {"p50": _percentile(values, 0.5), "p95": _percentile(values, 0.95)}
    # The five stages of a search together (recent mode, one stage, is reported alone).
    totals = [sum(s["timings"].values()) for s in samples if "match" in s["timings"]]
    stats["all stages"] = {"p50": _percentile(totals, 0.5), "p95": _percentile(totals, 0.95)}
    return stats


def _search_cpu(samples: Sequence[dict[str, Any]]) -> dict[str, float]:
    """p50 and p95 of the process's CPU time per search (all its threads; recent mode
    left out): on a shared machine it moves much less than the wall-clock stage timings.

    >>> _search_cpu([{"cpu_ms": 9.0, "timings": {"match": 5.0}}, {"cpu_ms": 1.0,
    ...              "timings": {"recent": 1.0}}])
    {'p50': 9.0, 'p95': 9.0}
    """
    values = [s["cpu_ms"] for s in samples if "match" in s["timings"] and "cpu_ms" in s]
    if not values:
        return {}
    return {"p50": _percentile(values, 0.5), "p95": _percentile(values, 0.95)}


def _per_query(samples: Sequence[dict[str, Any]], stage: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for label, _query in QUERY_MIX:
        values = [s["timings"][stage] for s in samples
                  if s["query"] == label and stage in s["timings"]]
        if values:
            out[label] = statistics.median(values)
    return out


COLD_MOMENTS = (("cold_after_bulk", "right after the bulk load"),
                ("cold_after_incremental", "after the incremental writes"))
"""When a new ``harkback search`` process per question is measured: the row's key, in words."""


def summarize_size(size: int, build: Build, ours: dict[str, Any], ref: dict[str, Any],
                   model_delay: float, cold: Sequence[dict[str, Any]] = (),
                   cold_bulk: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """One size's measurements, reduced to what the table and the plot show: ``cold_bulk``
    and ``cold`` are the new processes' samples after the bulk load and after the
    incremental writes."""
    def e2e(result: dict[str, Any]) -> dict[str, float]:
        walls = [s["wall_ms"] for s in result["end_to_end"]]
        if not walls:
            return {}
        return {"p50": _percentile(walls, 0.5), "p95": _percentile(walls, 0.95),
                "overhead_p50": _percentile(walls, 0.5) - model_delay * 1000.0}

    return {
        "messages": size, "bulk_rate": build.bulk_rate, "bulk_cpu_rate": build.bulk_cpu_rate,
        "cold_after_bulk": cold_stats(cold_bulk) if cold_bulk else {},
        "cold_after_incremental": cold_stats(cold) if cold else {},
        "incremental_rate": build.incremental_rate, "store_mb": build.store_bytes / 1e6,
        "harkback": _stage_stats(ours["samples"]), "reference": _stage_stats(ref["samples"]),
        "search_cpu": {"harkback": _search_cpu(ours["samples"]),
                       "reference": _search_cpu(ref["samples"])},
        "match_by_query": {"harkback": _per_query(ours["samples"], "match"),
                           "reference": _per_query(ref["samples"], "match")},
        "end_to_end": {"harkback": e2e(ours), "reference": e2e(ref)},
        "peak_rss_mb": {"harkback": ours["peak_rss_mb"], "reference": ref["peak_rss_mb"]},
        "summary_kinds": sorted({k for s in ours["end_to_end"] for k in s["kinds"]}),
    }


def _label(size: int) -> str:
    """A size as the tables and file names give it: exact, so 500 is not "0k".

    >>> _label(1_000_000), _label(10_000), _label(2_500)
    ('1M', '10k', '2500')
    """
    if size % 1_000_000 == 0:
        return f"{size // 1_000_000}M"
    return f"{size // 1000}k" if size % 1000 == 0 else str(size)


def _vs(value: float, target: float, *, higher_is_better: bool = False) -> str:
    ok = value >= target if higher_is_better else value <= target
    if ok:
        return "ok"
    ratio = target / value if higher_is_better else value / target
    return f"MISSED x{ratio:.2f}"


def render_tables(rows: Sequence[dict[str, Any]]) -> str:
    """The markdown tables printed at the end of a run."""
    lines = ["| messages | bulk ingest msg/s | per CPU second | incremental msg/s | store MB | "
             "search peak RSS MB |", "|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {_label(r['messages'])} | {r['bulk_rate']:,.0f} | "
                     f"{r.get('bulk_cpu_rate', float('nan')):,.0f} | "
                     f"{r['incremental_rate']:,.0f} | {r['store_mb']:,.0f} | "
                     f"{r['peak_rss_mb']['harkback']:.0f} |")
    if any(r.get(key) for r in rows for key, _ in COLD_MOMENTS):
        lines += ["", "A new `harkback search` process per question (no optimize), ms:", "",
                  "| messages | searched | match p50 | p95 | all stages p50 | p95 | wall p50 | "
                  "process CPU p50 |", "|---:|---|---:|---:|---:|---:|---:|---:|"]
        for r in rows:
            for key, moment in COLD_MOMENTS:
                if c := r.get(key):
                    cpu = c.get("process CPU", {}).get("p50", float("nan"))
                    lines.append(f"| {_label(r['messages'])} | {moment} | "
                                 f"{c['match']['p50']:.1f} | {c['match']['p95']:.1f} | "
                                 f"{c['all stages']['p50']:.1f} | {c['all stages']['p95']:.1f} | "
                                 f"{c['wall']['p50']:.0f} | {cpu:.0f} |")
    if any(r.get("search_cpu", {}).get("harkback") for r in rows):
        lines += ["", "CPU time per search in the long-lived process (all its threads), ms:",
                  "", "| messages | harkback p50 | p95 | reference p50 | p95 |",
                  "|---:|---:|---:|---:|---:|"]
        for r in rows:
            ours_cpu = r.get("search_cpu", {}).get("harkback")
            ref_cpu = r["search_cpu"].get("reference") or {"p50": float("nan"),
                                                           "p95": float("nan")}
            if ours_cpu:
                lines.append(f"| {_label(r['messages'])} | {ours_cpu['p50']:.1f} | "
                             f"{ours_cpu['p95']:.1f} | {ref_cpu['p50']:.1f} | "
                             f"{ref_cpu['p95']:.1f} |")
    lines += ["", "Per-stage latency, ms, p50 / p95 (harkback | reference | reference ÷ harkback "
              "at p50):", "",
              "| messages | stage | harkback p50 | p95 | reference p50 | p95 | ratio |",
              "|---:|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        for stage in (*STAGES, "all stages"):
            ours, ref = r["harkback"].get(stage), r["reference"].get(stage)
            if not ours or not ref:
                continue
            ratio = ref["p50"] / ours["p50"] if ours["p50"] > 0 else float("nan")
            lines.append(f"| {_label(r['messages'])} | {stage} | {ours['p50']:.1f} | "
                         f"{ours['p95']:.1f} | {ref['p50']:.1f} | {ref['p95']:.1f} | "
                         f"{ratio:.1f}x |")
    last = rows[-1]
    lines += ["", f"Match stage by query at {_label(last['messages'])}, median ms:", "",
              "| query | harkback | reference | ratio |", "|---|---:|---:|---:|"]
    for label, ours_ms in last["match_by_query"]["harkback"].items():
        ref_ms = last["match_by_query"]["reference"].get(label, float("nan"))
        lines.append(f"| {label} | {ours_ms:.1f} | {ref_ms:.1f} | {ref_ms / ours_ms:.1f}x |")
    if last["end_to_end"]["harkback"]:
        lines += ["", "End to end with a model that answers after a fixed delay, ms:", "",
                  "| messages | harkback p50 | p95 | outside the model p50 | reference p50 | "
                  "p95 | outside the model p50 |", "|---:|---:|---:|---:|---:|---:|---:|"]
        for r in rows:
            ours, ref = r["end_to_end"]["harkback"], r["end_to_end"]["reference"]
            lines.append(f"| {_label(r['messages'])} | {ours['p50']:.0f} | {ours['p95']:.0f} | "
                         f"{ours['overhead_p50']:.0f} | {ref['p50']:.0f} | {ref['p95']:.0f} | "
                         f"{ref['overhead_p50']:.0f} |")
    lines += ["", f"Targets at {_label(last['messages'])}:", "", "| target | measured | verdict |",
              "|---|---:|---|"]
    ours = last["harkback"]
    checks = [
        ("match p50 ≤ 20 ms", ours["match"]["p50"], TARGETS["match_p50"], False),
        ("match p95 ≤ 100 ms", ours["match"]["p95"], TARGETS["match_p95"], False),
        ("all five stages p50 ≤ 60 ms", ours["all stages"]["p50"], TARGETS["stages_p50"],
         False),
        ("bulk ingest ≥ 40,000 msg/s", last["bulk_rate"], TARGETS["bulk"], True),
        ("incremental ingest ≥ 10,000 msg/s", last["incremental_rate"], TARGETS["incremental"],
         True),
        ("search peak RSS ≤ 200 MB", last["peak_rss_mb"]["harkback"], TARGETS["rss_mb"], False),
    ]
    for key, moment in COLD_MOMENTS:
        if c := last.get(key):
            checks += [
                (f"match p50 ≤ 20 ms, a new process per question {moment}", c["match"]["p50"],
                 TARGETS["match_p50"], False),
                (f"all five stages p50 ≤ 60 ms, a new process per question {moment}",
                 c["all stages"]["p50"], TARGETS["stages_p50"], False)]
    for name, value, target, higher in checks:
        lines.append(f"| {name} | {value:,.1f} | {_vs(value, target, higher_is_better=higher)} |")
    return "\n".join(lines)


def plot(rows: Sequence[dict[str, Any]], path: Path) -> None:
    """Latency (p50, log scale) against store size, one line per stage; reference dashed."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [r["messages"] for r in rows]
    fig, ax = plt.subplots(figsize=(7.5, 4.5), dpi=90)
    for index, stage in enumerate((*STAGES, "all stages")):
        color = f"C{index}"
        for kind, style in (("harkback", "-"), ("reference", "--")):
            points = [(s, r[kind][stage]["p50"]) for s, r in zip(sizes, rows, strict=True)
                      if stage in r[kind]]
            if points:
                ax.plot([p[0] for p in points], [max(p[1], 0.01) for p in points], style,
                        marker="o", color=color,
                        label=stage if kind == "harkback" else None)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("messages in the store")
    ax.set_ylabel("p50 latency, ms")
    ax.set_title("harkback per-stage latency (solid) vs reference (dashed)")
    ax.axhline(TARGETS["match_p50"], color="grey", linewidth=0.6, linestyle=":")
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(True, which="both", linewidth=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def machine() -> dict[str, Any]:
    """Facts about the machine a run measured on."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import sqlite3
    return {"nproc": os.cpu_count(), "cpu": model, "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version,
            "date": datetime.now(UTC).isoformat(timespec="seconds"),
            "load_before": os.getloadavg()}


def main(argv: Sequence[str] | None = None) -> int:
    """Build, measure, print the table and write the JSON and the plot."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["worker"]:
        return worker(args_list[1:])
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scale", description=__doc__)
    parser.add_argument("--sizes", type=sizes, default="10k,100k,1m",
                        help="comma-separated message counts (default 10k,100k,1m)")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out"))
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--repeat", type=count, default=5, help="rounds of the query mix")
    parser.add_argument("--model-delay", type=float, default=MODEL_DELAY_S,
                        help="seconds the local model server waits before answering")
    parser.add_argument("--no-model", action="store_true", help="skip the end-to-end pass")
    parser.add_argument("--cold-rounds", type=int, default=3,
                        help="rounds of the mix with a new harkback process per question, "
                             "right after the bulk load and again after the incremental "
                             "writes (0: none)")
    parser.add_argument("--reuse", action="store_true",
                        help="search stores already built in --out instead of rebuilding")
    args = parser.parse_args(args_list)
    args.out.mkdir(parents=True, exist_ok=True)
    facts = machine()
    print(f"machine: {facts}", flush=True)
    rows = []
    results_path = args.out / "scale.json"
    for size in args.sizes:
        db = args.out / f"scale-{_label(size)}.db"
        built_path = args.out / f"scale-{_label(size)}.build.json"
        cold_bulk: list[dict[str, Any]] = []
        if args.reuse and db.exists() and built_path.exists():
            build = Build(**json.loads(built_path.read_text()))
        else:
            print(f"building {_label(size)} ...", flush=True)

            def after_bulk(db: Path = db, into: list[dict[str, Any]] = cold_bulk) -> None:
                # As a person meets the store right after an import, before anything else.
                if args.cold_rounds:
                    into += cold_samples(db, QUERY_MIX, args.cold_rounds)
            build = build_store(db, size, seed=args.seed, after_bulk=after_bulk)
            built_path.write_text(json.dumps(attrs.asdict(build)))
        print(f"  bulk {build.bulk_rate:,.0f} msg/s ({build.bulk_cpu_rate:,.0f} per CPU s), "
              f"incremental {build.incremental_rate:,.0f} msg/s, "
              f"{build.store_bytes / 1e6:,.0f} MB; load {os.getloadavg()[0]:.2f}", flush=True)
        # Again after the one-session writes (they leave FTS5 its most unmerged segments),
        # before the long-lived searches touch the store.
        cold = cold_samples(db, QUERY_MIX, args.cold_rounds) if args.cold_rounds else []
        if args.no_model:
            ours = run_worker(db, "harkback", args.repeat, None, 0)
            ref = run_worker(db, "reference", args.repeat, None, 0)
        else:
            with ModelServer(args.model_delay) as url:
                ours = run_worker(db, "harkback", args.repeat, url, 2)
                ref = run_worker(db, "reference", args.repeat, url, 2)
        rows.append(summarize_size(size, build, ours, ref, args.model_delay, cold, cold_bulk))
        print(f"  searched; load {os.getloadavg()[0]:.2f}", flush=True)
        results_path.write_text(json.dumps({"machine": facts, "rows": rows}, indent=1))
    facts["load_after"] = os.getloadavg()
    results_path.write_text(json.dumps({"machine": facts, "rows": rows}, indent=1))
    print()
    print(render_tables(rows))
    try:
        plot(rows, args.out / "scale.png")
    except ModuleNotFoundError as error:  # matplotlib is the optional `bench` extra
        print(f"\nwrote {results_path}; no plot ({error.name} is not installed: "
              "pip install -e '.[bench]')")
        return 0
    print(f"\nwrote {results_path} and {args.out / 'scale.png'}")
    return 0


if __name__ == "__main__":
    run_main(main)
