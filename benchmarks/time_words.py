"""CPU of reading a question's time words (``named_times``), which every search in plain words
does to see whether it asks for a listing (``recent.browse_window``), by the question's length
and script.

    .venv/bin/python -m benchmarks.time_words [--seconds 2] [--against NAME]

A question may be a pasted page (the first 10,000 characters are read): each pattern of the
time words runs over all of it. ``--against NAME`` reads each question with another copy of
the package too, importable as ``NAME`` (made as :mod:`benchmarks.search_cpu` says), the two
alternating in one process in search_cpu's loop (:class:`~benchmarks.search_cpu.Alternation`,
the collector paused), and gives the ratio (CPU time: steadier than wall time on a shared
machine); both must read the same window.

>>> [len(text) for text in QUESTIONS.values()][:2]
[62, 10000]
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from typing import Any

from benchmarks.entry import run_main
from benchmarks.search_cpu import Alternation

NOW = 1772712000.0  # Thursday 2026-03-05 12:00 UTC

_PROSE = ("The deploy of the api gateway failed after we moved the certificates; the health "
          "check kept timing out, so we rolled back and read the nginx logs again. ")
QUESTIONS = {
    "short question": "what did I do last week about the nginx config since yesterday",
    "10,000 chars of English prose": (_PROSE * 70)[:10_000],
    "10,000 chars of log, 'since last week' a line": (
        "2026-03-01 12:00:01 ERROR conn refused to db:5432 retry 3 since last week\n" * 200
    )[:10_000],
    "10,000 chars of Chinese": ("上周部署失败了从周一开始我们一直在重试构建上上周也是这样"
                                * 400)[:10_000],
}
"""The questions read, by what they are."""


def _reader(package: str) -> Callable[[str, float], Any]:
    return importlib.import_module(f"{package}.stages.named_times").named_times  # type: ignore[no-any-return]


def cpu_ms(readers: list[Callable[[str, float], Any]], text: str, seconds: float
           ) -> list[float]:
    """Milliseconds of CPU each reader takes to read ``text``, alternating in
    :mod:`benchmarks.search_cpu`'s loop (who goes first swaps every round, the collector
    paused) for about ``seconds`` in all."""
    turns = Alternation(range(len(readers)), (text,), seconds=seconds)
    for index, _ in turns:
        readers[index](text, NOW)
    return [turns.ms(index, text) for index in range(len(readers))]


def main() -> int:
    parser = argparse.ArgumentParser(prog="benchmarks.time_words", description=__doc__)
    parser.add_argument("--seconds", type=float, default=2.0, help="CPU per question")
    parser.add_argument("--against", help="another copy of the package, to compare with")
    args = parser.parse_args()
    readers = [_reader("harkback")] + ([_reader(args.against)] if args.against else [])
    print("| question | ms of CPU" + (f" | {args.against} ms | ratio |" if args.against else " |"))
    print("|---|---" + ("|---|---|" if args.against else "|"))
    for name, text in QUESTIONS.items():
        windows = {repr(read(text, NOW).window) for read in readers}
        if len(windows) > 1:
            print(f"{name}: the two read different windows: {sorted(windows)}")
            return 1
        figures = cpu_ms(readers, text, args.seconds)
        if args.against:
            ratio = figures[0] / figures[1]
            print(f"| {name} | {figures[0]:.2f} | {figures[1]:.2f} | x{ratio:.2f} |")
        else:
            print(f"| {name} | {figures[0]:.2f} |")
    return 0


if __name__ == "__main__":
    run_main(main)
