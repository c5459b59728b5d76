"""Argument types shared by the benchmarks' command lines, so that a typo is argparse's
one-line usage error rather than a traceback, and a count of zero (a table of NaN, or a
division by zero) is refused before anything is built.

>>> sizes("10k,1m"), count("3")
((10000, 1000000), 3)
>>> sizes("10q")
Traceback (most recent call last):
argparse.ArgumentTypeError: not a message count: '10q' (write 2500, 10k or 1m)
"""

from __future__ import annotations

import argparse

from benchmarks.generate import parse_size


def size(text: str) -> int:
    """A message count of at least one: ``2500``, ``10k`` or ``1m``."""
    try:
        found = parse_size(text)
    except ValueError:
        found = 0
    if found < 1:
        raise argparse.ArgumentTypeError(
            f"not a message count: {text!r} (write 2500, 10k or 1m)")
    return found


def sizes(text: str) -> tuple[int, ...]:
    """Comma-separated message counts, each as :func:`size` reads it."""
    return tuple(size(part) for part in text.split(","))


def counts(text: str) -> tuple[int, ...]:
    """Comma-separated whole numbers, each as :func:`count` reads it."""
    return tuple(count(part) for part in text.split(",") if part.strip())


def count(text: str) -> int:
    """A whole number of at least one (rounds, runs, calls, questions)."""
    try:
        found = int(text)
    except ValueError:
        found = 0
    if found < 1:
        raise argparse.ArgumentTypeError(f"needs a whole number of at least 1, not {text!r}")
    return found
