"""``NOT_TWICE`` (:mod:`~harkback.stages.weekend_words`) starts with a look-ahead for the
first characters of the words read after it, so that the engine passes every other
character cheaply: a word starting with another one would never be read. Each pattern of
the stages that holds it is found, and the words after it are read for their first
characters from the pattern's own parse."""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Iterator
from re import _constants as ops  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

import pytest

import harkback.stages
from harkback.stages.weekend_words import NOT_TWICE, NOT_TWICE_FIRST

_ZERO_WIDTH = (ops.ASSERT, ops.ASSERT_NOT, ops.AT)


def _chars(items: list[tuple[Any, Any]]) -> set[str]:
    # The characters a class ([...]) takes; a negated or category class takes any.
    chars: set[str] = set()
    for op, value in items:
        if op is ops.LITERAL:
            chars.add(chr(value))
        elif op is ops.RANGE and value[1] - value[0] < 1000:
            chars.update(chr(c) for c in range(value[0], value[1] + 1))
        else:
            return {"<any>"}
    return chars


def _starts(items: Any) -> tuple[set[str], bool]:
    """The characters a match of the parsed ``items`` can start with, and whether it can
    be empty ("<any>": a class of any character)."""
    firsts: set[str] = set()
    for op, value in items:
        if op in _ZERO_WIDTH:
            continue
        if op is ops.LITERAL:
            return firsts | {chr(value)}, False
        if op is ops.IN:
            return firsts | _chars(value), False
        if op is ops.BRANCH:
            parts = [_starts(branch) for branch in value[1]]
        elif op is ops.SUBPATTERN:
            parts = [_starts(value[-1])]
        elif op in (ops.MAX_REPEAT, ops.MIN_REPEAT):
            inner, empty = _starts(value[2])
            parts = [(inner, empty or value[0] == 0)]
        else:
            return firsts | {"<any>"}, False
        for chars, _ in parts:
            firsts |= chars
        if not any(empty for _, empty in parts):
            return firsts, False
    return firsts, True


def _patterns() -> Iterator[tuple[str, str]]:
    """Each pattern (as text) of the stages' modules that holds NOT_TWICE, by name."""
    def walk(name: str, value: object) -> Iterator[tuple[str, str]]:
        if isinstance(value, re.Pattern) and isinstance(value.pattern, str):
            value = value.pattern
        if isinstance(value, str) and NOT_TWICE in value and value != NOT_TWICE:
            yield name, value
        elif isinstance(value, (tuple, list)):
            for index, item in enumerate(value):
                yield from walk(f"{name}[{index}]", item)
    for module in pkgutil.walk_packages(harkback.stages.__path__, "harkback.stages."):
        loaded = importlib.import_module(module.name)
        for attribute, value in vars(loaded).items():
            yield from walk(f"{module.name}.{attribute}", value)


PATTERNS = dict(_patterns())
BODIES = {name: text.removeprefix(NOT_TWICE) for name, text in PATTERNS.items()
          if text.startswith(NOT_TWICE) and NOT_TWICE not in text.removeprefix(NOT_TWICE)}


def test_the_patterns_are_found() -> None:
    """The search finds the words of last week and month, their weekends and days, and the
    parts of a month (the test reads nothing when it finds none)."""
    assert {"harkback.stages.cjk_times.CJK_LAST_WEEK", "harkback.stages.month_parts._CJK",
            "harkback.stages.weekday_words._LAST_WEEKS[0]",
            "harkback.stages.weekend_words.CJK_LAST_WEEKEND"} <= set(BODIES)


@pytest.mark.parametrize("name", sorted(BODIES))
def test_each_word_after_it_starts_with_a_character_it_looks_ahead_for(name: str) -> None:
    firsts, empty = _starts(_parser.parse(BODIES[name]))
    assert not empty
    assert firsts <= set(NOT_TWICE_FIRST), sorted(firsts - set(NOT_TWICE_FIRST))


@pytest.mark.parametrize("name", sorted(set(PATTERNS) - set(BODIES)))
def test_a_pattern_made_of_several_holds_only_those_read(name: str) -> None:
    """A pattern joining several (_PREVIOUS's alternatives) holds NOT_TWICE only before
    one of the words checked alone."""
    text = PATTERNS[name]
    at = [m.start() for m in re.finditer(re.escape(NOT_TWICE), text)]
    assert at and all(any(text.startswith(NOT_TWICE + body, i) for body in BODIES.values())
                      for i in at)
