"""Times people write as bounds: ``--since``/``--until`` values and the ``--as-of`` moment.

A caller bounds a search by ``--since``/``--until`` values (:func:`parse_time_bound`:
an ISO time, epoch seconds, a span back from now such as ``7d``, or a few words such as
``yesterday``), and may set "now" itself (``--as-of``, :func:`parse_as_of`). A library
caller may give a ``datetime`` or a ``date`` as well (:func:`given_time`).

>>> parse_time_bound("2026-03-01").unwrap()
1772323200.0
>>> parse_time_bound("7d", now=1_000_000.0).unwrap()
395200.0
"""

from __future__ import annotations

import math
import re
from datetime import UTC, date, datetime
from typing import TypeAlias

from returns.result import Failure, Result, Success

from harkback.stages.errors import QueryRejected
from harkback.stages.local_days import day_start, local_iso
from harkback.stages.record_checks import EARLIEST_EPOCH, LATEST_EPOCH
from harkback.stages.shown_number import DIGITS, shown_given, shown_value
from harkback.stages.spoken_times import held_last_moment, named_time, spoken_time

# The moments a bound may name: those a session can have, as ingest keeps them.
_YEARS = "0001-01-01 to 9999-12-31 UTC"
_FIRST_DAY_ASKED = date(1970, 1, 1)
"""The first day a question is asked as of: from 1970 the local calendar days its time
words count in are sure to be known (a bound reaches back to the year 1)."""
_RELATIVE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


ACCEPTED_TIMES = ("a date (2026-11-01), an ISO time (2026-11-01T14:00:00+02:00), epoch "
                  "seconds, a span back from now (7d, 24h), or words: now, today, yesterday, "
                  "tuesday, last week, last month, 3 days ago, 3 hours ago, or a time as a "
                  "question names it (上周, 先週, 지난주)")
"""The forms :func:`parse_time_bound` reads, as its error lists them (some: the refusal of
a value thousands of characters long stays one line under 400 characters)."""

TimeGiven: TypeAlias = str | float | datetime | date
"""A time as the library takes it (:func:`given_time`): text as :func:`parse_time_bound`
reads it, epoch seconds, a ``datetime`` (naive: local time) or a ``date`` (a local day)."""

_TYPES = "text, epoch seconds, a datetime or a date"

_YEAR = re.compile(r"[12][0-9]{3}")
"""A written number that is a year (1000-2999), not epoch seconds."""
_COMPACT_DATE = re.compile(r"([12][0-9]{3})(0[1-9]|1[0-2])(0[1-9]|[12][0-9]|3[01])")
"""A written number that is a date without its dashes (20260301), not epoch seconds."""


def _possible(moment: float) -> bool:
    """Whether ``moment`` (epoch seconds) lies in the years a session can have, 1-9999."""
    return math.isfinite(moment) and EARLIEST_EPOCH <= moment <= LATEST_EPOCH  # as records take


def _years(moment: float) -> str:
    """The years a session can have, and, for epoch milliseconds (JavaScript's Date.now(),
    as a model may copy one), what to do: as ingest says it of a time in a file.

    >>> _years(1_772_000_000_000.0)
    '(0001-01-01 to 9999-12-31 UTC; milliseconds? divide by 1000)'
    """
    if moment > 0 and _possible(moment / 1000):  # Date.now() is never negative
        return f"({_YEARS}; milliseconds? divide by 1000)"
    return f"({_YEARS})"


def parse_time_bound(text: str, *, now: float | None = None, what: str = "time bound",
                     end: bool = False) -> Result[float, QueryRejected]:
    """Parse a written time: ``2026-03-01``, ``2026-03-01T14:00:00+02:00``, epoch seconds,
    ``7d``/``24h``, or words (:func:`spoken_time`: ``yesterday``, ``last week``,
    ``3 days ago``; else any time a question names alone, :func:`named_time`: 上周, 先週,
    지난주, "the week before last").

    Relative bounds count back from ``now``. A date, and an ISO time without an offset,
    are local (``TZ``, as results show times); a date or ``today``/``yesterday`` is the
    start of that day, or with ``end`` (an upper bound, ``--until``) its end, so the day
    is in. ``what`` names the value in the error, which lists :data:`ACCEPTED_TIMES`.

    >>> DAY = 86400.0
    >>> parse_time_bound("3 days ago", now=10 * DAY).unwrap() / DAY
    7.0
    >>> round(parse_time_bound("上周", now=1773921600.0, end=True).unwrap())  # 15 March's end
    1773619200
    >>> parse_time_bound("2026-03-01", end=True).unwrap() < 1772409600.0  # TZ=UTC: 2 March
    True
    >>> parse_time_bound("someday", what="--since").failure().reason[:31]
    "cannot read --since 'someday': "
    >>> parse_time_bound("99999999999999", what="--since").failure().reason[:44]
    "--since '99999999999999' is not a moment a s"
    >>> parse_time_bound("999999999999d", what="--since").failure().reason[:59]
    "--since '999999999999d' is not a moment a session can have "
    >>> parse_time_bound("6M", what="--since").failure().reason
    "--since '6M' is ambiguous: write 6m for minutes or '6 months ago'"
    >>> parse_time_bound("2026", what="--since").failure().reason
    "--since '2026' reads as a year: write 2026-01-01 for its first day (or epoch seconds)"
    >>> parse_time_bound("20260301", what="--since").failure().reason
    "--since '20260301' reads as a date: write 2026-03-01 (or 20260301.0 for epoch seconds)"
    """
    text = text.strip()
    base = datetime.now(UTC).timestamp() if now is None else now
    rel = _RELATIVE.match(text)
    # 6M: minutes in Go and systemd, months in ISO 8601 and pandas; a count of more than
    # DIGITS digits is out of range as either, and said so (its hint echoed it twice).
    if rel and rel.group(2) == "M" and len(rel.group(1)) <= DIGITS:
        return Failure(QueryRejected(f"{what} {shown_given(text)} is ambiguous: write "
                                     f"{rel.group(1)}m for minutes or '{rel.group(1)} months "
                                     "ago'"))
    if rel:
        # "99999999999d" reaches back past the year 1 (past any float: "9" * 400 + "d"),
        # where it would quietly bound nothing: refused as a number out of range is.
        return _in_range(base - float(rel.group(1)) * _UNIT_SECONDS[rel.group(2).lower()],
                         text, what)
    if _YEAR.fullmatch(text):
        # Epoch second 2026 is ten past midnight, 1 January 1970: nobody means it.
        return Failure(QueryRejected(f"{what} {text!r} reads as a year: write {text}-01-01 "
                                     f"for its first day (or epoch seconds)"))
    compact = _COMPACT_DATE.fullmatch(text)
    if compact:
        # Epoch second 20260301 is in August 1970: it would bound nothing, or everything.
        day = "-".join(compact.groups())
        return Failure(QueryRejected(f"{what} {text!r} reads as a date: write {day} "
                                     f"(or {text}.0 for epoch seconds)"))
    try:
        epoch = float(text)
    except ValueError:
        pass
    else:
        # "nan", "1e400" and year-3-million epochs would filter every session out unseen.
        return _in_range(epoch, text, what, number=True)
    spoken = spoken_time(text, base, end=end)
    if spoken is not None:
        return _in_range(spoken, text, what)  # a guard: a count has 3 digits at most
    try:
        written: date | datetime = date.fromisoformat(text)
    except ValueError:
        try:
            written = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            said = named_time(text, base, end=end)  # as a question names it: 上周, 先週
            if said is not None:
                return _in_range(said, text, what)
            return Failure(QueryRejected(f"cannot read {what} {shown_given(text)}: use "
                                         f"{ACCEPTED_TIMES}"))
    return _in_range(_moment(written, end), text, what)  # past 9999 UTC, as a number


def _first_moment(day: date) -> float:
    """The first moment of the local ``day``, held to the first second a session can have
    (:data:`~harkback.stages.record_checks.EARLIEST_EPOCH`): east of UTC 0001-01-01 starts
    before it, and Python places no local midnight of that day (it has no day before).

    >>> _first_moment(date(1, 1, 1)) == EARLIEST_EPOCH < _first_moment(date(1, 1, 2))
    True
    """
    if day == date.min:
        return EARLIEST_EPOCH
    return max(day_start(day), EARLIEST_EPOCH)


def _timestamp(written: datetime) -> float:
    """Epoch seconds of ``written`` (naive: local time). On the calendar's first and last
    days Python places no local time (it looks a day past them for the offset): there the
    offset is that of the day next to it (no zone changes its offset between the two).

    >>> _timestamp(datetime(1, 1, 1, 8)) == EARLIEST_EPOCH + 8 * 3600  # with TZ=UTC
    True
    """
    try:
        return written.timestamp()
    except (ValueError, OverflowError):
        if written.tzinfo is not None:
            raise
        near = date(1, 1, 2) if written.year == 1 else date(9999, 12, 30)
        west = day_start(near) - datetime(near.year, near.month, near.day, tzinfo=UTC).timestamp()
        return written.replace(tzinfo=UTC).timestamp() + west


def _moment(written: date | datetime, end: bool) -> float:
    # A date names a local day (its start, or its end for an upper bound), held to the
    # moments a session can have; an ISO time without an offset is local time, as a person
    # types it. NaN (refused by _in_range) when the platform cannot place it.
    try:
        if isinstance(written, datetime):
            return _timestamp(written)
        return held_last_moment(written) if end else _first_moment(written)
    except (ValueError, OverflowError, OSError):
        return math.nan


def _in_range(moment: float, text: str, what: str, *, number: bool = False
              ) -> Result[float, QueryRejected]:
    if _possible(moment):
        return Success(moment)
    years = _years(moment) if number else f"({_YEARS})"  # a date past 9999 is no milliseconds
    return Failure(QueryRejected(f"{what} {shown_given(text)} is not a moment a session can have "
                                 f"{years}: use {ACCEPTED_TIMES}"))


def epoch_bound(value: float, *, what: str = "time bound") -> Result[float, QueryRejected]:
    """Epoch seconds given as a number (by the library or the MCP server, where the
    command line passes text), held to the moments a session can have, as
    :func:`parse_time_bound` holds a written number.

    >>> epoch_bound(86400).unwrap()
    86400.0
    >>> epoch_bound(10 ** 400, what="since").failure().reason[:44]
    'since (a number past any date) is not a mome'
    >>> epoch_bound([], what="until").failure().reason
    'until must be a time (text, epoch seconds, a datetime or a date), got list'
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        # A library caller's slip (a list, True, bytes) is refused as a value, as the
        # rest of a request is, rather than raised as float()'s TypeError.
        return Failure(QueryRejected(f"{what} must be a time ({_TYPES}), got "
                                     f"{type(value).__name__}"))
    try:
        moment = float(value)
    except OverflowError:  # an int past a float's range: 10 ** 400
        moment = math.inf
    if _possible(moment):
        return Success(moment)
    # repr() of a huge int is pages long, and past 4,300 digits raises.
    shown = (repr(value) if isinstance(value, float) or abs(value) < 10 ** 30
             else "(a number past any date)")
    return Failure(QueryRejected(f"{what} {shown} is not a moment a session can have "
                                 f"{_years(moment)}: use {ACCEPTED_TIMES}"))


def given_time(value: TimeGiven, *, now: float | None = None, what: str = "time bound",
               end: bool = False) -> Result[float, QueryRejected]:
    """A time a library caller gives: text (:func:`parse_time_bound`), epoch seconds
    (:func:`epoch_bound`), a ``datetime`` or a ``date``, read as the same time written in
    ISO form would be: a naive datetime is local time, a date a local day (its start, or
    with ``end`` its end). Anything else is refused naming the types taken.

    >>> given_time(datetime(2026, 3, 1, tzinfo=UTC)).unwrap()  # 2026-03-01T00:00:00Z
    1772323200.0
    >>> round(given_time(date(2026, 3, 1), end=True).unwrap())  # with TZ=UTC, just before
    1772409600
    >>> given_time(b"7d", what="since").failure().reason
    'since must be a time (text, epoch seconds, a datetime or a date), got bytes'
    """
    if isinstance(value, str):
        return parse_time_bound(value, now=now, what=what, end=end)
    if isinstance(value, date):  # a datetime is a date too: _moment tells them apart
        return _in_range(_moment(value, end), value.isoformat(), what)
    return epoch_bound(value, what=what)


def out_of_order(since: tuple[TimeGiven, float], until: tuple[TimeGiven, float], *,
                 names: tuple[str, str] = ("since", "until")) -> QueryRejected:
    """The refusal of a ``since`` later than the ``until`` (each as given and as read),
    naming both as ``names`` (``--since``, ``--until`` on the command line) and the moments
    they stand for: "since is later than until" said neither what a relative bound meant.

    >>> print(out_of_order(("2026-03-04", 1772582400.0), ("2026-03-01", 1772409599.9999998),
    ...                    names=("--since", "--until")).reason)  # with TZ=UTC
    --since '2026-03-04' (from 2026-03-04T00:00:00Z) is later than --until '2026-03-01' \
(up to 2026-03-02T00:00:00Z): nothing lies between them
    """
    def echo(value: TimeGiven) -> str:
        return shown_given(value) if isinstance(value, str) else (
            repr(value.isoformat()) if isinstance(value, date) else shown_value(value))
    return QueryRejected(f"{names[0]} {echo(since[0])} (from {local_iso(since[1])}) is later "
                         f"than {names[1]} {echo(until[0])} (up to {local_iso(until[1])}): "
                         f"nothing lies between them")


def parse_as_of(value: TimeGiven, *, what: str = "as_of") -> Result[float, QueryRejected]:
    """The moment a question is taken to be asked: as :func:`given_time` reads it;
    a failure names the value ``what`` (the keyword, or a command's flag, ``--as-of``), as
    the bounds' failures name ``since`` or ``--since``.

    Its time words ("two weeks ago") and relative bounds (``--since 7d``) count back from
    this moment instead of the wall clock.

    >>> parse_as_of("2026-03-01").unwrap(), parse_as_of(86400).unwrap()
    (1772323200.0, 86400.0)
    >>> parse_as_of("someday", what="--as-of").failure().reason[:28]
    "cannot read --as-of 'someday"
    >>> parse_as_of(date(1969, 12, 31)).failure().reason[:35]
    "as_of '1969-12-31' is before 1970: "
    """
    given = given_time(value, what=what)
    # 1970 begins at epoch 0 or at its local midnight, the earlier: east of UTC,
    # "1970-01-01" is a moment before epoch 0.
    earliest = min(0.0, day_start(_FIRST_DAY_ASKED))
    if isinstance(given, Success) and given.unwrap() < earliest:
        shown = value.isoformat() if isinstance(value, date) else value  # as written
        return Failure(QueryRejected(
            f"{what} {shown!r} is before 1970: a question is asked as of 1970 to 9999 "
            f"(to find older sessions, bound them with since/until instead)"))
    return given


def iso_seconds(text: str) -> float:
    """The epoch seconds of an ISO 8601 time in stored data (an ingested session's times);
    a time without an offset is UTC, as the ingest format says.

    Raises ``ValueError`` when ``text`` is not ISO 8601 (``OverflowError`` when its time
    has no epoch seconds); callers turn that into their own error value.

    >>> iso_seconds("1970-01-02"), iso_seconds("1970-01-01T02:00:00+02:00")
    (86400.0, 0.0)
    """
    parsed = datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()
