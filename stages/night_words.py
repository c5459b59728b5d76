"""Last night as a question names it: "what did we do last night?", 昨晚, 昨夜, 어젯밤.

Last night is the evening before and the small hours of today: 18:00 of the day before
``now``'s to 06:00 of its own, local (:func:`~harkback.stages.local_days.at_hour`),
ending no later than ``now``. "The last night of the offsite", "our last night in Lisbon"
and "the last night-shift" are no last night: their words are searched.

>>> DAY = 86400.0
>>> [(m.group(0), [w / DAY for w in window]) for m, window in night_windows("昨晚", 10.5 * DAY)]
[('昨晚', [9.75, 10.25])]
"""

from __future__ import annotations

import re

from harkback.stages.local_days import ONE_DAY, at_hour, days_before

# Last night: the evening before and the small hours of today (:func:`night_windows`).
_LAST_NIGHT = re.compile(r"\blast\s+night\b|昨晚|昨夜|昨天晚上|昨天夜里|昨晩|ゆうべ"
                         r"|어젯밤|어제\s?밤|간밤")
# "The last night of the offsite", "our last night in Lisbon", "the last night-shift" are
# no last night: a word before that picks one night out, or "of" or a hyphen after.
_PICKED = re.compile(r"(?<![a-z])(?:the|a|that|this|each|every|our|my|your|his|her|their)"
                     r"\s+$")
_PLACED = re.compile(r"\s*(?:-|of\b)")


def night_windows(text: str, now: float) -> list[tuple[re.Match[str], tuple[float, float]]]:
    """Where lower-cased ``text`` names last night, each with its window as of ``now``.

    >>> [m.group(0) for m, _ in night_windows("last night, not the last night of the trip", 0)]
    ['last night']
    """
    day = days_before(now, 0)
    window = (at_hour(day - ONE_DAY, 18), min(at_hour(day, 6), now))
    return [(match, window) for match in _LAST_NIGHT.finditer(text)
            if not match.group(0).isascii()
            or not (_PICKED.search(text[max(0, match.start() - 12):match.start()])
                    or _PLACED.match(text, match.end()))]
