"""Running a command on an event loop, and the line a process at one of its limits gives
instead of an internal error.

An event loop takes three file descriptors (its selector and a socket pair that wakes it), and
the store's own thread makes a loop of its own. In a process at its limit (``ulimit -n 7``)
making either raised ``OSError: [Errno 24]``: an internal error, exit status 70, after which
Python printed a traceback for the loop it had half made and dropped (its ``__del__`` finds
no ``_ssock``: a CPython flaw, not ours). Under ``ulimit -v`` a ``MemoryError`` or a thread
that cannot start were internal errors too. Each is now a line naming the limit and the fix
(:func:`short_of`), as a store that cannot be opened for want of descriptors says. A thread
started at that limit, whoever starts it, is refused first where it could wait for good
(:func:`~harkback.adapters.thread_room.guard_thread_starts`).

>>> async def seven() -> int:
...     return 7
>>> run_command(seven)
7
"""

from __future__ import annotations

import errno
import gc
import importlib.machinery
import resource
import sys
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any

_OUT_OF_DESCRIPTORS = (errno.EMFILE, errno.ENFILE)
_MODULE_FILES = (*importlib.machinery.all_suffixes(), ".pyc")
"""The endings of the files an import opens."""


def run_command(command: Callable[[], Coroutine[Any, Any, int]]) -> int:
    """What ``command()`` returns, run on a new event loop (made before the coroutine is,
    which never then goes unawaited), every thread it starts checked for room first;
    :class:`CliError` when a loop cannot be made for want of file descriptors (an open that
    names a file says so itself: left to raise)."""
    import asyncio  # here: the CLI imports this module before any command, light

    from harkback.adapters.thread_room import guard_thread_starts, one_malloc_arena_under_a_cap
    from harkback.pipeline.command_basics import CliError

    one_malloc_arena_under_a_cap()  # before any thread: 64 MiB of the cap each, or slow
    guard_thread_starts()  # a thread started at the limit of ulimit -v waited for good
    with _half_made_loops_unsaid():
        try:
            with asyncio.Runner() as runner:
                return runner.run(command())
        except OSError as error:
            line = short_of(error)
            if line is None:
                raise
        # The error held the half-made loop (its frames): dropped here, where it is unsaid.
        gc.collect()
    raise CliError(line)


def short_of(error: BaseException) -> str | None:
    """The line for ``error`` when the process ran short of what its limits allow (file
    descriptors, memory, a thread), or None.

    >>> short_of(RuntimeError("can't start new thread"))[:47]
    "cannot start a thread (can't start new thread):"
    >>> short_of(ValueError("x")) is None
    True
    >>> short_of(OSError(errno.EMFILE, "Too many open files", "/v/anyio/_streams.py"))[:24]
    'too many files are open '
    >>> short_of(OSError(errno.EMFILE, "Too many open files", "h.db")) is None
    True
    """
    mapped = isinstance(error, ImportError) and "failed to map segment" in str(error)
    if isinstance(error, MemoryError) or mapped:  # mapped: a C library past ulimit -v
        limit = resource.getrlimit(resource.RLIMIT_AS)[0]
        held = ("the machine's memory is used up" if limit == resource.RLIM_INFINITY
                else f"this process may use {limit // 2 ** 20} MiB")
        return f"out of memory ({held}); free some, or raise the limit (ulimit -v)"
    if isinstance(error, RuntimeError) and str(error) == "can't start new thread":
        return (f"cannot start a thread ({error}): the process is at its limit of memory "
                "(ulimit -v) or of processes (ulimit -u); raise it")
    # An open of the user's file says so itself, naming it; a module Python imports late
    # (``mcp`` brings anyio's) is no file of theirs: the limit is the news.
    if (isinstance(error, OSError) and error.errno in _OUT_OF_DESCRIPTORS
            and (error.filename is None or str(error.filename).endswith(_MODULE_FILES))):
        limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        return (f"too many files are open ({error.strerror}; this process may have {limit}); "
                "close some, or raise the limit (ulimit -n)")
    return None


@contextmanager
def _half_made_loops_unsaid() -> Iterator[None]:
    """Within: the traceback Python prints when it drops a loop whose constructor failed
    is not printed (the failure itself is said once, as a line); anything else unraisable
    is printed as before."""
    before = sys.unraisablehook

    def hook(unraisable: Any) -> None:
        half_made = (unraisable.exc_type is AttributeError
                     and getattr(unraisable.object, "__qualname__", "") == "BaseEventLoop.__del__")
        if not half_made:
            before(unraisable)

    sys.unraisablehook = hook
    try:
        yield
    finally:
        sys.unraisablehook = before
