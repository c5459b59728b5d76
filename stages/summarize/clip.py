"""Shorten one transcript line to a width around its match, cutting between words.

A cut inside a token shows a different token: ``/home/user/project`` cut after ``/ho``
reads as the path ``me/user/project``, ``--log-level`` cut to ``--log-le`` as another
flag. So a cut edge that falls inside a token moves back to the space before it (or on
to the space after it, at the start), when one is near; ``…`` marks every cut. An
error message cut from its start keeps the kind it names (``ValueError: …``).

>>> clip_line("rsync -av --delete /srv/www/html/ backup:/srv/www", 40, 0)
'rsync -av --delete /srv/www/html/ …'
>>> clip_line("x" * 40 + " we ran make test and it failed again", 24, 47)
'… we ran make test and …'
>>> clip_line("ValueError: " + "x" * 60 + " invalid literal for int()", 60, 73)
'ValueError: …xxxxxxxxxxxxxxxxxxxxx invalid literal for int()'
"""

from __future__ import annotations

import re

GAP = "…"

SNAP_SHARE = 3
"""A cut edge moves at most ``width // SNAP_SHARE`` characters to reach a space."""
KEEP_AFTER_FOCUS = 16
"""Characters after the match's start that an end edge never moves into (fewer in a
narrow width: at most a third of it)."""


def clip_line(body: str, width: int, focus: int) -> str:
    """``body`` cut to at most ``width`` characters, keeping ``focus`` in view.

    A body that fits is returned whole. The kept window holds ``focus`` a third of the
    way in (or starts at the top, or ends at the end, when the focus is near either).
    """
    if len(body) <= width:
        return body
    head = _ERROR_HEAD.match(body)
    if head is not None and focus >= width * 2 // 3 and head.end() < width // 4:
        # An error cut from its start loses what it was ('…invalid literal for int()'
        # without 'ValueError:'): its kind stays, then the window on the match.
        size = head.end()
        return body[:size] + clip_line(body[size:], width - size, focus - size)
    reach = width // SNAP_SHARE
    kept = focus + min(KEEP_AFTER_FOCUS, reach)
    if focus < width * 2 // 3:
        end = _word_end(body, width - 1, max(width - 1 - reach, kept))
        return body[:end] + GAP
    start = focus - width // 3
    if start + width - 1 >= len(body):
        start = len(body) - width + 1
        return GAP + body[_word_start(body, start, min(start + reach, focus), start):]
    # A window that would open inside a token opens at the next space before the match,
    # else at the space before that token (the window moves back, its end with it).
    start = _word_start(body, start, min(start + reach, focus), max(start - reach, 0))
    end = start + width - 2
    return GAP + body[start:_word_end(body, end, max(end - reach, kept))] + GAP


_ERROR_HEAD = re.compile(r"(?:[A-Za-z_][\w.]*(?:Error|Exception)|FATAL|ERROR|Error|error|fatal"
                         r"|panic)(?:\[\w+\])?: ")
"""How an error message names its kind: ``ValueError: ``, ``FATAL: ``, ``error[E0308]: ``."""


def _inside_token(body: str, at: int) -> bool:
    """Does a cut at ``at`` fall between two characters of one token?"""
    return 0 < at < len(body) and not body[at - 1].isspace() and not body[at].isspace()


def _word_end(body: str, end: int, floor: int) -> int:
    """``end``, or just past the last space before it (not below ``floor``)."""
    if not _inside_token(body, end):
        return end
    space = body.rfind(" ", max(floor, 1), end)
    return space + 1 if space > 0 else end


def _word_start(body: str, start: int, ceiling: int, floor: int) -> int:
    """``start``, or the first space after it (not beyond ``ceiling``), or else the
    last space before it (not below ``floor``)."""
    if not _inside_token(body, start):
        return start
    space = body.find(" ", start, max(ceiling, start))
    if space < 0:
        space = body.rfind(" ", floor, start)
    return space if space >= 0 else start
