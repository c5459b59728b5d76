"""Room under ``ulimit -v`` for one more thread, checked before it starts.

A new thread maps its stack, then allocates a little (a frame stack, glibc's first blocks)
before it tells :meth:`threading.Thread.start` it has started. Where the stack just fits and
those allocations do not, the thread dies unseen and ``start`` waits for it forever: a
``harkback search`` under a 52 MiB cap hung about once in 150 runs on a busy machine. A
start with less than a stack and :data:`MARGIN` left is refused instead, with the error
CPython raises when the stack itself does not fit. A pool of ours checks as it is made
(:func:`one_thread_pool`); the command line checks every thread it starts, its libraries'
too (asyncio's default executor, anyio's workers): :func:`guard_thread_starts`.

>>> ensure_room_for_a_thread()  # no cap on this process, or room under it: nothing said
>>> with one_thread_pool("harkback-demo") as pool:
...     pool.submit(sum, (1, 2)).result()
3
"""

from __future__ import annotations

import resource
import threading
from concurrent.futures import ThreadPoolExecutor

MARGIN = 4 * 2 ** 20
"""Address space a thread start needs beyond the stack. Measured (CPython 3.11, glibc 2.36,
x86-64): ``asyncio.to_thread`` under a cap of what the process mapped, a stack and 28 to 49
KiB hung; with 57 KiB it started (the start's own records, the thread's 16 KiB frame stack,
a page for each of its first mallocs: glibc maps the thread a 64 MiB arena of its own only
where 128 MiB are free, and does without otherwise). Python's allocator may add a 1 MiB
arena when its own are full; the rest is for other threads, allocating as it starts."""

_UNKNOWN_STACK = 8 * 2 ** 20
"""The stack to assume when ``ulimit -s`` is unlimited (glibc then takes 2 MiB on x86-64,
other platforms more): the common soft limit, so that a guess too small is rare."""


_M_ARENA_MAX = -8
"""glibc's ``mallopt`` parameter for the most arenas its malloc makes (``malloc.h``)."""


def one_thread_pool(name: str) -> ThreadPoolExecutor:
    """A pool of one worker thread named ``name``, once there is room for it to start
    (raises as :func:`ensure_room_for_a_thread`). Checked as it is made, for a library's
    callers: the thread starts at the first submit, which the command line checks again."""
    ensure_room_for_a_thread()
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)


def guard_thread_starts() -> None:
    """From now on, check room (:func:`ensure_room_for_a_thread`) before every thread this
    process starts, whoever starts it: :meth:`threading.Thread.start` checks first. For a
    process of ours, as the command line: it changes ``Thread`` for the whole process (a host
    program's threads are its own), and Python 3.11 has no audit event to hook instead.
    Calling it again changes nothing.
    """
    unguarded = threading.Thread.start
    if getattr(unguarded, "checks_room", False):
        return

    def start(thread: threading.Thread) -> None:
        """Start ``thread`` as Python does, once there is room for it."""
        ensure_room_for_a_thread()
        unguarded(thread)

    start.checks_room = True  # type: ignore[attr-defined]
    threading.Thread.start = start  # type: ignore[method-assign, assignment]


def one_malloc_arena_under_a_cap() -> None:
    """Under ``ulimit -v``, have the threads started from now on allocate from glibc's main
    arena (``mallopt(M_ARENA_MAX, 1)``), before the first of them starts; elsewhere, and
    under no cap, nothing changes.

    A thread's first malloc maps it a 64 MiB arena of its own where 128 MiB are free: 64
    MiB of the cap, most never used. Where they are not free, every malloc of the thread
    tries twice again and maps a page for itself alone (measured: 100k 1000-byte objects
    made in a thread, 0.03 s of CPU with no cap, 0.8 s with 20 MiB to spare): the store's
    thread, which runs every search, did so under most caps.
    """
    if resource.getrlimit(resource.RLIMIT_AS)[0] == resource.RLIM_INFINITY:
        return
    try:
        import ctypes  # here: only under a cap

        ctypes.CDLL(None).mallopt(_M_ARENA_MAX, 1)
    except (ImportError, OSError, AttributeError):  # no glibc (musl, macOS), or no ctypes
        return


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
    """A new thread's stack, as ``ulimit -s`` gives it (glibc read it as the process
    started: a limit changed since is not what it uses). What ``threading.stack_size`` set
    is not read: asking it with no size sets the size back to the default."""
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
