"""What the command line's parser reads values with: whole numbers in bounds, a registry's
names read when first asked for, a ``--db`` value, and ``--version``.

Light like :mod:`~harkback.pipeline.cli`, which builds its parser from it before it knows
the command: it loads nothing but the standard library.

>>> limit("3")
3
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Iterator, Sequence
from typing import Any

from harkback.stages.defaults import MAX_LIMIT, MAX_PAGE_LIMIT
from harkback.stages.shown_number import DIGITS, long_number, shown_given, shown_number


def whole(text: str, low: int, high: int | None = None) -> int:
    """``text`` as a whole number from ``low`` to ``high``; what it echoes, short.

    >>> whole("9" * 5000, 1, 10)
    Traceback (most recent call last):
    argparse.ArgumentTypeError: must be between 1 and 10, got a number of more than 30 digits
    """
    bound = f"between {low} and {high}" if high is not None else f"{low} or more"
    try:
        value = int(text)
    except ValueError:
        if not long_number(text):
            raise argparse.ArgumentTypeError(f"not a whole number: {shown_given(text)}"
                                             ) from None
        # int() refuses more than 4,300 digits: a number still, out of bounds
        said = f"must be {bound}" if high is not None else f"must have at most {DIGITS} digits"
        raise argparse.ArgumentTypeError(f"{said}, got {shown_given(text)}") from None
    if value < low or (high is not None and value > high):
        raise argparse.ArgumentTypeError(f"must be {bound}, got {shown_number(value)}")
    return value


def limit(text: str) -> int:
    return whole(text, 1, MAX_LIMIT)


def page_size(text: str) -> int:
    return whole(text, 1, MAX_PAGE_LIMIT)


def offset(text: str) -> int:
    return whole(text, 0)


class Names:
    """The names of a registry, as argparse ``choices``; the registry loads when they are
    first read (a ``--ranker`` given, a subcommand's help), not to print ``--help``.
    An option with these choices names a ``metavar``: without one argparse reads the
    choices while building the parser."""

    def __init__(self, module: str, registry: str) -> None:
        self._where = (module, registry)

    def _names(self) -> list[str]:
        module, registry = self._where
        return sorted(getattr(importlib.import_module(module), registry))

    def __contains__(self, name: object) -> bool:
        return name in self._names()

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())


class Version(argparse.Action):
    """``--version``: reads the package metadata only when asked."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        from harkback.pipeline import __version__
        print(f"{parser.prog} {__version__}")
        parser.exit()


class DbValue(str):
    """A ``--db`` value as written: a file path (completed as one) or a server URL (which a
    ``Path`` would fold)."""

    names_a_file = True
