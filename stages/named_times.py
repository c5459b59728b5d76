"""The times a question names, as one window to list: "what did I do last week?", 上周一到
周三做了什么, "until Wednesday" (:func:`named_times`).

Every time named is read (a calendar name, a time counted back, a range), each as the words
around it bound it ("since yesterday" runs until now), and the window spans them all: "what
did I do yesterday and last week?" lists both. What is left of the question once its times
are blanked out says whether it names anything else (a topic to search for instead).
The same reading gives the windows the ranker weighs when it does
(:attr:`NamedTimes.weighed`, :func:`weighed_times`): its ranges are read once a search.

>>> DAY = 86400.0
>>> said = named_times("上周我做了什么", 100 * DAY)
>>> said.window[0] / DAY, said.rest
(88.0, '  我做了什么')
"""

from __future__ import annotations

import math

import attrs

from harkback.stages.calendar_words import (
    Span,
    bounded_by,
    calendar_terms,
    calendar_windows,
    previous_periods,
)
from harkback.stages.month_parts import part_spans, within
from harkback.stages.since_words import runs_on, since_words
from harkback.stages.time_ranges import Window, time_ranges
from harkback.stages.when import spanning, time_spans, time_terms


@attrs.frozen
class NamedTimes:
    """What :func:`named_times` read of a question."""

    window: tuple[float, float] | None
    """Every time named spanned, ending no later than now (None: none is named); a start
    of ``-inf`` when the earliest has none ("until Wednesday")."""
    words: frozenset[str]
    """The words of the times named that are not blanked out of :attr:`rest`."""
    rest: str
    """The question lower-cased, its times blanked out: what else it asks about."""
    weighed: tuple[tuple[float, float], ...] = ()
    """The windows the ranker weighs beside a topic (:func:`weighed_times`)."""

    @property
    def since(self) -> float | None:
        """The window's start, None when it has none (or no time is named)."""
        if self.window is None or not math.isfinite(self.window[0]):
            return None
        return self.window[0]


def named_times(question: str, now: float) -> NamedTimes:
    """The times ``question`` names as of ``now`` (:class:`NamedTimes`)."""
    text = lowered = question.lower()
    ranged = time_ranges(text, now)
    for (start, end), _ in ranged:  # a range's ends are read in it only
        text = _blank(text, start, end)
    # Calendar names first: "last month" of "the end of last month" is read in it only.
    named, unnamed = calendar_terms(text)
    timed, rest = time_terms(unnamed, listing=True)
    # "Last week" is listed as the calendar's week before this one, as the ranker weighs
    # it (last_periods.calendar_period; the same words, read where they start); a date or
    # month named ("in March") is listed, though the ranker does not weigh it.
    calendar, previous = calendar_windows(text, now), previous_periods(text, now)
    by_start = {at: window for (at, _), window in calendar}
    # The times run on until now (or named up to it: this week), whose since words go.
    ran_on = [span for span, (_, end) in calendar + previous if end >= now]
    parts = part_spans(text)
    # "Since yesterday" is from yesterday until now, as "since March" is.
    for (at, end), said in time_spans(text, now, listing=True):
        if not within(at, parts) and (window := bounded_by(text, (at, end), said)):
            by_start[at] = (window[0], min(window[1], now))
            ran_on += [(at, end)] if window[1] >= now else []
    by_start.update((at, window) for (at, _), window in previous)
    by_start.update((at, window) for (at, _), window in ranged)
    # A time's since word (以来, 从...起, "since") goes with it: 来我 of 上周以来我 is no topic.
    for start, end in {words for span in ran_on for words in since_words(text, span)}:
        rest = _blank(rest, start, end)
    return NamedTimes(spanning(by_start.values()), timed | named, rest,
                      _weighed(lowered, now, ranged))


def _blank(text: str, start: int, end: int) -> str:
    # ``text`` with ``start`` to ``end`` made spaces, the rest where it was.
    return text[:start] + " " * (end - start) + text[end:]


def weighed_times(question: str, now: float) -> list[tuple[float, float]]:
    """The windows of every time ``question`` names ("yesterday and last week") as the
    ranker weighs them (:func:`~harkback.stages.when.time_windows`), each run on until
    ``now`` after "since" (from, after; 以来, から, 부터 after it) as a listing runs it:
    "what changed in nginx since last week" lifts this week's sessions as much as last
    week's, not last week's alone (last Tuesday's look-alike came above yesterday's).

    A time that ends a range is weighed as the range: "from last Friday until yesterday"
    and 上周五到现在 (until now) from that Friday to their end. A time asked before is not
    weighed: "nginx before yesterday" would lift yesterday's.

    >>> DAY = 86400.0
    >>> [(a / DAY, b / DAY) for a, b in weighed_times("nginx since last week", 100 * DAY)]
    [(88.0, 100.0)]
    >>> weighed_times("nginx before yesterday", 100 * DAY)
    []
    """
    text = question.lower()
    return list(_weighed(text, now, time_ranges(text, now)))


def _weighed(text: str, now: float, ranges: list[tuple[Span, Window]]
             ) -> tuple[tuple[float, float], ...]:
    # weighed_times of lower-cased ``text``, its ranges (time_ranges) read already.
    weighed: list[tuple[float, float]] = []
    for span, (start, end) in time_spans(text, now):
        held = [window for (at, last), window in ranges if at <= span[0] and span[1] <= last]
        if not held:
            # Since a day still to come (这周五起 on a Thursday) starts after now: weighed
            # from now, not back to front, the newest sessions lifted most.
            weighed.append((min(start, now), now if runs_on(text, span) else end))
        elif math.isfinite(held[0][0]):
            # Its own window, or "from" run on until now, would lift what the range leaves
            # out (today's sessions of "from last Friday until yesterday") or leave out what
            # it holds (上周五到现在 weighed that Friday alone).
            weighed.append(held[0])
        elif held[0][1] >= start:
            weighed.append((start, end))  # "until last Friday": that day, the nearest
        # "Before last Friday" (上周五之前, 金曜日より前, 금요일 전에) leaves that Friday out:
        # lifting it would put the sessions left out first.
    return tuple(dict.fromkeys(weighed))
