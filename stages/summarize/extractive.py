"""Query-focused extractive summaries: no model, deterministic, grounded.

The summary is made of transcript lines, never new words: first the lines that
together cover the most query units, then the lines next to them that carry
details worth recalling (commands, file paths, URLs, error messages), then the
opening user request, then details a little further off, then further matching
lines, all within a length bound.
Lines keep their role prefix and transcript order; ``…`` marks skipped lines.
When no line covers the query, the summary says so instead of guessing.

>>> from harkback.stages.query import parse_query
>>> text = ("[USER]: containers cannot reach each other on the docker bridge\\n\\n"
...         "[ASSISTANT]: Fixed it with a user-defined network:\\n"
...         "$ docker network create app-net\\n\\n"
...         "[USER]: thanks, unrelated: what is for lunch?")
>>> print(extractive_summary(text, parse_query("docker bridge network")).text)
[USER]: containers cannot reach each other on the docker bridge
[ASSISTANT]: Fixed it with a user-defined network:
[ASSISTANT]: $ docker network create app-net
>>> print(extractive_summary(text, parse_query("kubernetes ingress")).text)
This session does not appear to address the query.
[USER]: containers cannot reach each other on the docker bridge
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import NamedTuple

import attrs

from harkback.stages.load.truncate import first_place
from harkback.stages.query import ParsedQuery, Unit
from harkback.stages.records import Summary
from harkback.stages.spelled import spelled_units
from harkback.stages.summarize.clip import GAP, clip_line
from harkback.stages.summarize.coverage import line_coverage, line_heads
from harkback.stages.summarize.details import carries_detail

MAX_CHARS = 1200
MAX_LINES = 12
LINE_WIDTH = 160
NEAR = 3
"""Details this close to a covering line are kept before anything else is added."""
REACH = 8
"""Details up to this far from a covering line are kept when room is left."""

NO_MATCH = "This session does not appear to address the query."

_ROLE = re.compile(r"\[(?:USER|ASSISTANT|SYSTEM|TOOL(?::[^\]\n]*)?)\]: ?")
_MARKER = re.compile(r"\.\.\.\[[^\]]*\]\.\.\.|--- .* ---")
_MARKER_STARTS = ".-"
_CUT = "...["  # how the load stage's cut markers open (a session header opens with ---)

class _Line(NamedTuple):
    """A non-empty transcript line, split into its block's role prefix and its text.

    A tuple rather than a frozen ``attrs`` class: every line of every transcript is one,
    and a tuple is made in a third of the time.
    """

    number: int
    """Its place among the non-empty lines (a gap between two picks is shown as …)."""
    prefix: str
    body: str
    pickable: bool
    covered: frozenset[int]

    @property
    def spoken(self) -> bool:
        return self.prefix in ("[USER]: ", "[ASSISTANT]: ")


def _lines(text: str, units: Sequence[Unit], spellings: Sequence[Sequence[str]] = ()
           ) -> list[_Line]:
    lines: list[_Line] = []
    append, make = lines.append, tuple.__new__  # a _Line without its Python __new__
    prefix = ""
    # Every token of an ASCII line is a piece of the line in lower case, so a line that
    # holds no unit's first token as a piece covers nothing: it is not tokenized. A head
    # that an ASCII text does not hold at all is not looked for line by line.
    heads = line_heads(units, spellings)
    if heads and text.isascii():
        low_text = text.lower()
        heads = tuple(head for head in heads if head in low_text)
    covers = line_coverage(units, spellings)
    nothing: frozenset[int] = frozenset()
    # A role tag opens a block only where a block can start, at the top or after a blank
    # line (render.py's separator): a tool output quoting "[USER]: ..." line after line
    # (a recall pasted back) is the tool's text, not the user's.
    opens = True
    for stripped in map(str.strip, text.split("\n")):
        if not stripped:
            opens = True
            continue
        at_start, opens = opens, False
        # Both patterns need their first character: most lines are ruled out without them.
        first = stripped[0]
        if first in _MARKER_STARTS and _MARKER.fullmatch(stripped):
            # Cut markers and session headers end a block and are never picked.
            prefix = ""
            append(make(_Line, (len(lines), "", stripped, False, nothing)))
            continue
        if first == "[" and at_start and (role := _ROLE.match(stripped)):
            prefix = _prefix(role.group(0))
            stripped = stripped[role.end():].strip()
            if not stripped:
                continue
        covered = nothing
        if not stripped.isascii():
            covered = covers(stripped)
        elif heads:
            low = stripped.lower()
            for head in heads:  # a loop of ``in`` beats one regex of the heads fourfold
                if head in low:
                    covered = covers(stripped)
                    break
        append(make(_Line, (len(lines), prefix, stripped, True, covered)))
    return lines


@lru_cache(maxsize=256)
def _prefix(role: str) -> str:  # a block's role prefix as shown, from the role pattern's match
    return role.rstrip() + " "


def _focus(body: str, units: Sequence[Unit]) -> int:
    """Where the first query unit starts in ``body`` (0 when it cannot be placed)."""
    place = first_place(body, units)
    return place[0] if place else 0


def _show(line: _Line, spelled: Sequence[Sequence[Unit]], width: int) -> str:
    # ``spelled``: each unit with its other spellings, by place, for finding the match.
    room = max(width - len(line.prefix), 12)
    focus = _focus(line.body, [u for i in sorted(line.covered) for u in spelled[i]])
    return line.prefix + clip_line(line.body, room, focus)


def _shown_length(line: _Line, width: int) -> int:
    """The longest ``_show(line, units, width)`` can be, unshown: :func:`clip_line` keeps
    at most the room's length (less when a cut moves off a token's middle)."""
    return len(line.prefix) + min(len(line.body), max(width - len(line.prefix), 12))


@attrs.define
class _Picker:
    """Collects picks while the output stays within ``max_chars`` and ``max_lines``."""

    lines: Sequence[_Line]
    spelled: Sequence[Sequence[Unit]]
    """Each query unit with its other spellings (:attr:`ParsedQuery.spellings`), by place."""
    width: int
    max_chars: int
    max_lines: int
    picked: dict[int, str] = attrs.field(factory=dict)
    order: list[int] = attrs.field(factory=list)
    """The picked lines' numbers, ascending."""
    length: int = 0
    """How long :meth:`render` of the picks is."""

    def render(self, picks: dict[int, str]) -> str:
        out: list[str] = []
        previous: int | None = None
        for index in sorted(picks):
            if previous is not None and index > previous + 1:
                out.append(GAP)
            out.append(picks[index])
            previous = index
        return "\n".join(out)

    def length_with(self, number: int, size: int) -> int:
        """How long the rendered picks would be with a line of ``size`` characters picked
        as line ``number``, counted from the neighbours it gets, not rendered again: the
        picks and the gaps are lines joined by newlines.

        >>> p = _Picker((), (), 80, 100, 5, {2: "b", 5: "c"}, [2, 5])
        >>> p.length = len(p.render(p.picked))
        >>> p.length_with(3, len("xy")) == len(p.render({2: "b", 3: "xy", 5: "c"}))
        True
        """
        if not self.order:
            return size
        at = bisect.bisect_left(self.order, number)
        before = self.order[at - 1] if at else None
        after = self.order[at] if at < len(self.order) else None
        gap = len(GAP) + 1
        grown = self.length + size + 1
        if before is not None and after is not None and after > before + 1:
            grown -= gap  # the gap between the two is split by the new line
        if before is not None and number > before + 1:
            grown += gap
        if after is not None and after > number + 1:
            grown += gap
        return grown

    def add(self, line: _Line) -> bool:
        if line.number in self.picked or not line.pickable:
            return False
        if len(self.picked) >= self.max_lines:
            return False
        # Most lines tried do not fit: their length is known before placing the match.
        if self.picked and self.length_with(
                line.number, _shown_length(line, self.width)) > self.max_chars:
            return False
        shown = _show(line, self.spelled, self.width)
        if not self.picked:
            # The first pick always goes in, cut to fit if the bound is very tight.
            shown = _fit(shown, self.max_chars)
        length = self.length_with(line.number, len(shown))
        if length > self.max_chars:
            return False
        self.picked[line.number] = shown
        bisect.insort(self.order, line.number)
        self.length = length
        return True


class _Details(dict[int, bool]):
    """Whether each line asked about carries a detail (:func:`carries_detail`), asked once.

    Only the lines a choice turns on are asked: the summary's four regular expressions
    on every covering line were a third of its time, and most never decided anything.
    """

    def __init__(self, lines: Sequence[_Line]) -> None:
        super().__init__()
        self.lines = lines

    def __missing__(self, number: int) -> bool:
        found = self[number] = carries_detail(self.lines[number].body)
        return found


def _cover(picker: _Picker, matching: Sequence[_Line], detail: _Details) -> list[_Line]:
    """Greedy set cover: repeatedly take the line adding the most uncovered units."""
    covered: set[int] = set()
    chosen: list[_Line] = []
    pool = list(matching)
    fixed = [(len(ln.covered), ln.spoken) for ln in pool]
    keys: list[tuple[int, int, bool]] = []
    while pool:
        # A line ranks by the units it would add, the units it holds, being spoken, then
        # by carrying a detail and coming first: a detail is asked only of the lines tied
        # on the rest (the line numbers differ, so exactly one line is best). The keys
        # change only when a pick adds units (the picker refuses most lines once full).
        if not keys:
            keys = [(len(ln.covered - covered), size, spoken)
                    for ln, (size, spoken) in zip(pool, fixed, strict=True)]
        top = max(keys)
        if not top[0]:
            break
        tied = [i for i, key in enumerate(keys) if key == top]
        at = tied[0] if len(tied) == 1 else max(
            tied, key=lambda i: (detail[pool[i].number], -pool[i].number))
        best = pool.pop(at)
        del fixed[at], keys[at]
        if picker.add(best):
            covered |= best.covered
            chosen.append(best)
            keys = []
    return chosen


def _details_near(lines: Sequence[_Line], anchors: Iterable[_Line], reach: int,
                  detail: _Details) -> list[_Line]:
    """Detail lines within ``reach`` of an anchor, nearest first, following before preceding.

    The search stops at a cut marker or session header: what lies beyond is not nearby.
    """
    found: dict[int, tuple[int, bool]] = {}
    for anchor in anchors:
        for direction in (1, -1):
            for step in range(1, reach + 1):
                index = anchor.number + direction * step
                if not 0 <= index < len(lines) or not lines[index].pickable:
                    break
                if detail[index]:
                    found[index] = min(found.get(index, (step, direction < 0)),
                                       (step, direction < 0))
    return [lines[i] for i in sorted(found, key=lambda i: (*found[i], i))]


def _fill(picker: _Picker, matching: Sequence[_Line], detail: _Details) -> None:
    """The other matching lines while room is left: those covering more units first, then
    those carrying a detail, then in transcript order (details asked group by group, and
    not once the picker holds ``max_lines``: it refuses every line then)."""
    groups: dict[int, list[_Line]] = {}
    for line in matching:
        groups.setdefault(len(line.covered), []).append(line)
    for size in sorted(groups, reverse=True):
        for line in sorted(groups[size], key=lambda ln: (not detail[ln.number], ln.number)):
            if len(picker.picked) >= picker.max_lines:
                return
            picker.add(line)


def _opening(lines: Sequence[_Line]) -> _Line | None:
    """The session's first user line; None when a cut came before it (the load stage
    left the opening out, and the first user line kept is just one from the middle)."""
    for line in lines:
        if not line.pickable and line.body.startswith(_CUT):
            return None
        if line.pickable and line.prefix == "[USER]: ":
            return line
    return None


def _fit(text: str, max_chars: int) -> str:
    return text if len(text) <= max_chars else text[:max(max_chars - 1, 0)] + GAP


def extractive_summary(transcript_text: str, parsed: ParsedQuery, *,
                       max_chars: int = MAX_CHARS, max_lines: int = MAX_LINES,
                       width: int = LINE_WIDTH) -> Summary:
    """Summarise a transcript by picking its lines that answer ``parsed``.

    At most ``max_lines`` lines are picked (``…`` separators not counted) and the text
    never exceeds ``max_chars``; each line is cut to ``width`` around its match.
    """
    units = parsed.units
    lines = _lines(transcript_text, units, parsed.spellings)
    width = max(min(width, max_chars), 1)
    spelled = spelled_units(parsed)
    picker = _Picker(lines, spelled, width, max_chars, max(max_lines, 1))
    matching = [ln for ln in lines if ln.covered]
    opening = _opening(lines)
    if not matching:
        head = NO_MATCH if units else ""
        shown = _show(opening, spelled, width) if opening is not None else ""
        text = "\n".join(part for part in (head, shown) if part)
        note = "no line of the session matches the query" if units else "empty query"
        return Summary(text=_fit(text, max_chars), kind="extractive", note=note)
    detail = _Details(lines)
    chosen = _cover(picker, matching, detail)
    for line in _details_near(lines, chosen, NEAR, detail):
        picker.add(line)
    if opening is not None:
        picker.add(opening)
    for line in _details_near(lines, chosen, REACH, detail):
        picker.add(line)
    _fill(picker, matching, detail)
    return Summary(text=_fit(picker.render(picker.picked), max_chars), kind="extractive")
