"""Running a command on an event loop, or saying in one line that the process has no file
descriptors left to make one.

An event loop takes three descriptors (its selector and a socket pair that wakes it), and
the store's own thread makes a loop of its own. In a process at its limit (``ulimit -n 7``)
making either raised ``OSError: [Errno 24]``: an internal error, exit status 70, after which
Python printed a traceback for the loop it had half made and dropped (its ``__del__`` finds
no ``_ssock``: a CPython flaw, not ours). The command now fails as a store that cannot be
opened for the same reason does, naming the limit and the fix.

>>> async def seven() -> int:
...     return 7
>>> run_command(seven)
7
"""

from __future__ import annotations

import asyncio
import errno
import gc
import resource
import sys
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any

from harkback.pipeline.command_basics import CliError

_OUT_OF_DESCRIPTORS = (errno.EMFILE, errno.ENFILE)


def run_command(command: Callable[[], Coroutine[Any, Any, int]]) -> int:
    """What ``command()`` returns, run on a new event loop (made before the coroutine is,
    which never then goes unawaited); :class:`CliError` when a loop cannot be made for
    want of file descriptors (an open that names a file says so itself: left to raise)."""
    with _half_made_loops_unsaid():
        try:
            with asyncio.Runner() as runner:
                return runner.run(command())
        except OSError as error:
            if error.errno not in _OUT_OF_DESCRIPTORS or error.filename is not None:
                raise
            reason = error.strerror
        # The error held the half-made loop (its frames): dropped here, where it is unsaid.
        gc.collect()
    limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    raise CliError(f"too many files are open ({reason}; this process may have {limit}); "
                   "close some, or raise the limit (ulimit -n)")


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
