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


def whole(text: str, low: int, high: int | None = None) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"{low} or more"
        raise argparse.ArgumentTypeError(f"must be {bound}, got {value}")
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
