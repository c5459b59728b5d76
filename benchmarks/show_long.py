"""``harkback show`` of one very long session, on SQLite and PostgreSQL, this build against
an older one: CPU time and peak memory of the whole command, per page.

    .venv/bin/python -m benchmarks.show_long --old OLD_TREE [--messages 50k] [--rounds 3]

``OLD_TREE`` is a source tree of the build to compare with (its ``stages``, ``adapters``
and ``pipeline`` folders: ``git archive f900701 stages adapters pipeline | tar -x -C DIR``);
its modules are run by this environment's interpreter, put first on ``PYTHONPATH``, so
both builds run on the same dependencies. The stores hold one session of ``--messages``
messages (a long tool output of 20,000 characters every 50th, as an agent's session has)
and a :mod:`benchmarks.generate` corpus of 20,000 (``--background``) beside it; PostgreSQL runs on
``--url``'s server or a throwaway one. Each ``harkback show --json`` is a process of its
own: its CPU time (user + system) as the kernel counted it, its peak resident size as it
said when it exited; old and new take turns in every round after an untimed warm-up. The
table gives medians, and says whether both printed the same page (a digest of the
output). A page of a short session is the fixed cost of a start (interpreter, imports,
opening the store). Last, in this process, the reads alone: the session's every message
(what a page read before) against a page now.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NamedTuple

from benchmarks.arguments import count, size
from benchmarks.entry import run_main
from benchmarks.extras import needs_extra
from benchmarks.generate import generate
from benchmarks.scale import BATCH, SEED

try:
    from benchmarks.reads_postgres import as_url
    from benchmarks.scale_postgres import dropped_after, fresh_database, open_postgres, server
except ImportError as missing:
    raise needs_extra("postgres", missing) from None
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.ingest import chunked
from harkback.pipeline.wiring import open_store
from harkback.stages.ports import SessionStore
from harkback.stages.read_back import PageRequest, read_page
from harkback.stages.records import Conversation, Message, Role, Session, ToolCall

LONG_ID = "long-session"
TOOL_OUTPUT = 20_000
"""Characters of every 50th message: a file read or a build log."""
BACKGROUND = "20k"
"""Messages of the other sessions in the store (``--background``)."""


def long_session(messages: int) -> Conversation:
    """One session of ``messages`` messages: user, assistant (with a tool call), tool."""
    def message(position: int) -> Message:
        role: Role = ("user", "assistant", "tool")[position % 3]
        text = f"step {position}: checking the deploy logs of the worker pods again"
        if position % 50 == 0:
            text = (f"output {position}: " + "INFO worker-7 GET /healthz 200 3ms\n" * 600
                    )[:TOOL_OUTPUT]
        calls = (ToolCall(id=f"call{position}", name="bash",
                          arguments='{"command": "kubectl logs worker-7"}'),
                 ) if role == "assistant" else ()
        return Message(session_id=LONG_ID, position=position, role=role, content=text,
                       tool_name="bash" if role == "tool" else "", tool_calls=calls,
                       timestamp=1_771_000_000.0 + position)
    return Conversation(Session(id=LONG_ID, title="A very long session",
                                started_at=1_771_000_000.0),
                        tuple(message(p) for p in range(messages)))


def corpus(messages: int, background: int) -> Iterator[list[Conversation]]:
    """The long session first, then the background corpus, in ingest batches."""
    yield [long_session(messages)]
    yield from chunked(generate(background, SEED), BATCH)


async def fill(store: SessionStore, messages: int, background: int) -> None:
    """Ingest :func:`corpus` into ``store`` and optimize it (as an import leaves it)."""
    for batch in corpus(messages, background):
        (await store.ingest(batch).awaitable()).unwrap()
    (await store.optimize().awaitable()).unwrap()


_PEAK_OF_CHILD = """
import atexit, os, runpy, sys
def kept():
    with open("/proc/self/status") as status:
        peak = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    with open(os.environ["SHOW_LONG_PEAK"], "w") as out:
        out.write(peak)
atexit.register(kept)
sys.argv[0] = "harkback"
runpy.run_module("harkback.pipeline.cli", run_name="__main__")
"""
"""``python -m harkback.pipeline.cli`` that writes, as it exits, its peak resident size in
kB (``VmHWM``) to ``$SHOW_LONG_PEAK``. Not the kernel's ``ru_maxrss``: that counts the
benchmark's own size at the fork (Linux keeps the largest of the process's memories
before and after ``exec``), the same 180 MB for every page."""


class Run(NamedTuple):
    """One ``harkback show`` process: CPU seconds, peak resident MB, digest of its output."""

    cpu_s: float
    peak_mb: float
    digest: str


def shown(db: str, args: Sequence[str], old_path: Path | None) -> Run:
    """Run ``harkback show ARGS --db DB --json`` (the old build's modules first on the path
    when ``old_path``) in a process of its own; what the kernel counted of it."""
    env = {k: v for k, v in os.environ.items() if k not in ("HARKBACK_DB", "PYTHONPATH")}
    if old_path is not None:
        env["PYTHONPATH"] = str(old_path)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile() as peak:
        env["SHOW_LONG_PEAK"] = peak.name
        process = subprocess.Popen(
            [sys.executable, "-c", _PEAK_OF_CHILD, "show", *args, "--db", db, "--json"],
            stdout=out, stderr=err, env=env)
        # wait4, not wait: the kernel's count of this one process (its CPU, its peak size).
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            err.seek(0)
            raise SystemExit(f"harkback show {' '.join(args)} failed: "
                             f"{err.read().decode()[-500:]}")
        out.seek(0)
        printed = out.read()
        peak_kb = int(Path(peak.name).read_text(encoding="ascii"))
    return Run(cpu_s=usage.ru_utime + usage.ru_stime, peak_mb=peak_kb / 1024,
               digest=hashlib.sha256(printed).hexdigest()[:10])


def linked_tree(old_tree: Path, folder: Path) -> Path:
    """A folder whose ``harkback`` package is ``old_tree``'s (links to its three folders)."""
    package = folder / "harkback"
    package.mkdir(parents=True)
    for part in ("stages", "adapters", "pipeline"):
        if not (old_tree / part).is_dir():
            raise SystemExit(f"{old_tree} has no {part} folder: not a harkback source tree")
        (package / part).symlink_to((old_tree / part).resolve())
    return folder


def pages(messages: int) -> dict[str, list[str]]:
    """The pages shown, by name: ``show`` arguments."""
    return {"first page": [LONG_ID],
            "middle page": [LONG_ID, "--offset", str(messages // 2)],
            "last page": [LONG_ID, "--offset", str(messages - 20)],
            "around a message": [LONG_ID, "--around", f"{LONG_ID}:{messages * 3 // 4}"],
            "short session": ["s0000000"]}


class Row(NamedTuple):
    """One page on one store: old and new medians, and whether both printed the same."""

    store: str
    page: str
    old: Run
    new: Run
    same: bool


def measure(targets: dict[str, str], messages: int, rounds: int, old_path: Path
            ) -> list[Row]:
    """Every page on every store, old and new taking turns, ``rounds`` timed rounds."""
    found: list[Row] = []
    for name, db in targets.items():
        for page, args in pages(messages).items():
            runs: dict[str, list[Run]] = {"old": [], "new": []}
            for round_ in range(rounds + 1):  # the first warms the page cache, untimed
                order = ("old", "new") if round_ % 2 else ("new", "old")
                for build in order:
                    run = shown(db, args, old_path if build == "old" else None)
                    if round_:
                        runs[build].append(run)
            old, new = (Run(cpu_s=statistics.median(r.cpu_s for r in runs[b]),
                            peak_mb=statistics.median(r.peak_mb for r in runs[b]),
                            digest=runs[b][0].digest) for b in ("old", "new"))
            same = len({r.digest for r in runs["old"] + runs["new"]}) == 1
            found.append(Row(name, page, old, new, same))
            print(f"{name} {page}: old {old.cpu_s:.2f} s {old.peak_mb:.0f} MB, "
                  f"new {new.cpu_s:.2f} s {new.peak_mb:.0f} MB", flush=True)
    return found


async def reads_in_process(db: str, messages: int, rounds: int) -> tuple[float, float]:
    """Median ms of the reads themselves, in this process, on the store ``show`` opens:
    the long session's every message (what a page read before) and its middle page now."""
    store = open_store(db, readonly=True).unwrap()
    whole: list[float] = []
    page: list[float] = []
    try:
        for round_ in range(rounds + 1):
            started = time.perf_counter()
            (await store.messages((LONG_ID,)).awaitable()).unwrap()
            read = time.perf_counter()
            (await read_page(store, PageRequest(session_id=LONG_ID, offset=messages // 2))
             ).unwrap()
            if round_:
                whole.append((read - started) * 1000)
                page.append((time.perf_counter() - read) * 1000)
    finally:
        await asyncio.to_thread(store.close)
    return statistics.median(whole), statistics.median(page)


def render(rows: Sequence[Row]) -> str:
    """The table: per store and page, old and new CPU and peak memory, their ratios."""
    lines = ["| store | page | old CPU s | new CPU s | old/new | old peak MB | new peak MB | "
             "old/new | same page |", "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    lines += [f"| {r.store} | {r.page} | {r.old.cpu_s:.2f} | {r.new.cpu_s:.2f} | "
              f"{r.old.cpu_s / r.new.cpu_s:.1f}x | {r.old.peak_mb:.0f} | {r.new.peak_mb:.0f} | "
              f"{r.old.peak_mb / r.new.peak_mb:.1f}x | {'yes' if r.same else 'NO'} |"
              for r in rows]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Build both stores, show their pages with both builds, print the table."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.show_long",
                                     description=__doc__)
    parser.add_argument("--old", type=Path, required=True,
                        help="source tree of the build to compare with")
    parser.add_argument("--messages", type=size, default="50k",
                        help="messages of the long session")
    parser.add_argument("--background", type=size, default=BACKGROUND,
                        help="messages of the other sessions")
    parser.add_argument("--rounds", type=count, default=3, help="timed rounds of every page")
    parser.add_argument("--url", default=None,
                        help="a server's maintenance database (default: a throwaway server)")
    args = parser.parse_args(argv)
    with server(args.url) as maintenance, tempfile.TemporaryDirectory() as folder:
        old_path = linked_tree(args.old, Path(folder) / "old")
        sqlite = Path(folder) / "long.db"
        with dropped_after(maintenance, as_url(fresh_database(maintenance, args.messages))
                           ) as database:
            print(f"building a session of {args.messages:,} messages ...", flush=True)
            with SqliteStore.open(sqlite).unwrap() as store:
                asyncio.run(fill(store, args.messages, args.background))
            postgres = open_postgres(database)
            try:
                asyncio.run(fill(postgres, args.messages, args.background))
            finally:
                postgres.close()
            targets = {"sqlite": str(sqlite), "postgres": database}
            rows = measure(targets, args.messages, args.rounds, old_path)
            reads = {name: asyncio.run(reads_in_process(db, args.messages, args.rounds))
                     for name, db in targets.items()}
    print(render(rows))
    print("\n| store | every message of the session, ms | a page (read_page), ms |\n"
          "|---|---:|---:|")
    for name, (whole, page) in reads.items():
        print(f"| {name} | {whole:,.1f} | {page:,.1f} |")
    print(f"\nload {os.getloadavg()[0]:.2f}")
    return 0 if all(r.same for r in rows) else 1


if __name__ == "__main__":
    run_main(main)
