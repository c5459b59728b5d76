"""Processes seen through Linux's ``/proc``: a process's children, whether one still runs.

>>> import os
>>> os.getpid() in children(os.getppid())
True
"""

from __future__ import annotations

import contextlib
from pathlib import Path


def _stat_fields(pid: int | str) -> list[str]:
    # The fields after the command's closing ")": state, then the parent's id, ...
    return (Path("/proc") / str(pid) / "stat").read_text().rpartition(")")[2].split()


def children(pid: int) -> list[int]:
    """The ids of ``pid``'s child processes."""
    found = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError, ValueError, IndexError):
            if entry.name.isdigit() and int(_stat_fields(entry.name)[1]) == pid:
                found.append(int(entry.name))
    return found


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie, dead but not yet reaped, is not)."""
    try:
        return _stat_fields(pid)[0] != "Z"
    except OSError:
        return False
