"""Room under ``ulimit -v`` for one more thread, checked before it starts.

A new thread maps its stack, then allocates a little (a frame, an object arena) before it
tells :meth:`threading.Thread.start` it has started. Where the stack just fits and those
allocations do not, the thread dies unseen and ``start`` waits for it forever: a
``harkback search`` under a 52 MiB cap hung about once in 150 runs on a busy machine. A
start with less than a stack and :data:`MARGIN` left is refused instead, with the error
CPython raises when the stack itself does not fit.

>>> ensure_room_for_a_thread()  # no cap on this process, or room under it: nothing said
>>> with one_thread_pool("harkback-demo") as pool:
...     pool.submit(sum, (1, 2)).result()
3
"""

from __future__ import annotations

import resource
from concurrent.futures import ThreadPoolExecutor

MARGIN = 4 * 2 ** 20
"""Address space a started thread needs beyond its stack: measured ~1.6 MiB (a 1 MiB arena
for its first objects, a frame stack, the guard page), doubled and rounded up."""

_UNKNOWN_STACK = 8 * 2 ** 20
"""The stack to assume when ``ulimit -s`` is unlimited (glibc then takes 2 MiB on x86-64,
other platforms more): the common soft limit, so that a guess too small is rare."""


def one_thread_pool(name: str) -> ThreadPoolExecutor:
    """A pool of one worker thread named ``name``, once there is room for it to start
    (raises as :func:`ensure_room_for_a_thread`; the thread starts at the first submit)."""
    ensure_room_for_a_thread()
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)


def ensure_room_for_a_thread() -> None:
    """Raise ``RuntimeError("can't start new thread")`` when the address space left under
    ``RLIMIT_AS`` is less than one thread's stack plus :data:`MARGIN`.

    Only Linux says how much is mapped (``/proc/self/status``); elsewhere, or with no cap,
    nothing is checked.
    """
    cap = resource.getrlimit(resource.RLIMIT_AS)[0]
    if cap == resource.RLIM_INFINITY:
        return
    mapped = _mapped_bytes()
    if mapped is not None and cap - mapped < _stack_bytes() + MARGIN:
        raise RuntimeError("can't start new thread")


def _stack_bytes() -> int:
    """A new thread's stack, as ``ulimit -s`` gives it. (What ``threading.stack_size``
    set is not read: asking it with no size sets the size back to the default.)"""
    soft = resource.getrlimit(resource.RLIMIT_STACK)[0]
    return _UNKNOWN_STACK if soft == resource.RLIM_INFINITY else soft


def _mapped_bytes() -> int | None:
    """The process's address space in use (what ``RLIMIT_AS`` counts), or None where the
    system does not say."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    return None
