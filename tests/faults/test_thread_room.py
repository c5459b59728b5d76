"""A thread started with too little address space left under ``ulimit -v``: the stack fit,
the thread's first allocations did not, and ``Thread.start`` waited for it forever (``harkback
search`` hung under a 52 MiB cap, ~1 run in 150). A start without room for the stack and
:data:`~harkback.adapters.thread_room.MARGIN` is now refused, as CPython refuses one whose
stack does not fit. Each case runs in a child process, whose cap it sets from what that
process has mapped at that moment."""

from __future__ import annotations

import resource
import subprocess
import sys
import textwrap

import pytest

from harkback.adapters.thread_room import MARGIN

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="only Linux says how much a process has mapped")

_CHILD = textwrap.dedent("""
    import resource, sys, threading
    from harkback.adapters.thread_room import one_thread_pool
    spare = int(sys.argv[1])
    stack = resource.getrlimit(resource.RLIMIT_STACK)[0]
    with open("/proc/self/status") as status:
        mapped = next(int(line.split()[1]) * 1024 for line in status
                      if line.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (mapped + stack + spare,) * 2)
    try:
        with one_thread_pool("harkback-test") as pool:
            print(pool.submit(threading.current_thread).result().name)
    except RuntimeError as error:
        print(error)
""")


def _started(spare: int) -> str:
    """What the child printed with room for a stack (``ulimit -s``) and ``spare`` bytes:
    its worker thread's name, or why none started."""
    done = subprocess.run([sys.executable, "-c", _CHILD, str(spare)],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and not done.stderr, done.stderr
    return done.stdout.strip()


def test_a_thread_without_room_past_its_stack_is_refused() -> None:
    """Room for the stack and half the margin: the start that could hang is not tried."""
    assert _started(MARGIN // 2) == "can't start new thread"


def test_a_thread_with_room_starts_and_works() -> None:
    """Room for the stack, the margin and a little more: the pool's thread runs."""
    assert _started(MARGIN + 2 ** 20).startswith("harkback-test")


def test_the_check_leaves_the_stack_size_a_program_set() -> None:
    """``threading.stack_size()`` asked with no size sets it back to the default: the check
    (under a cap, where it runs) must not ask it so, or a host program's own threads get
    another stack."""
    done = subprocess.run([sys.executable, "-c", "import resource, threading\n"
                           "from harkback.adapters.thread_room import ensure_room_for_a_thread\n"
                           "resource.setrlimit(resource.RLIMIT_AS, (2 ** 36,) * 2)\n"
                           "threading.stack_size(2 ** 20)\nensure_room_for_a_thread()\n"
                           "print(threading.stack_size(2 ** 20))"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout.split() == [str(2 ** 20)], done.stderr


_LIBRARY_CHILD = textwrap.dedent("""
    import asyncio, resource, sys, threading
    import anyio.to_thread
    from harkback.pipeline.command_loop import run_command
    spare, way = int(sys.argv[1]), sys.argv[2]
    stack = resource.getrlimit(resource.RLIMIT_STACK)[0]

    async def command():
        anyio.to_thread.current_default_thread_limiter()  # loads anyio's backend, 2 MiB
        with open("/proc/self/status") as status:
            mapped = next(int(line.split()[1]) * 1024 for line in status
                          if line.startswith("VmSize:"))
        resource.setrlimit(resource.RLIMIT_AS, (mapped + stack + spare,) * 2)
        try:
            if way == "asyncio":
                print(await asyncio.to_thread(lambda: threading.current_thread().name))
            else:
                print(await anyio.to_thread.run_sync(lambda: threading.current_thread().name))
        except RuntimeError as error:
            print(error)
        return 0

    try:
        run_command(command)
    except RuntimeError:
        pass  # asyncio's own thread joining its default executor at the end: refused too
""")


@pytest.mark.parametrize("way", ["asyncio", "anyio"])
def test_a_command_starting_a_librarys_thread_at_the_limit_is_refused_not_left_waiting(
        way: str) -> None:
    """A thread started by a library under a command (asyncio's default executor, for
    ``to_thread`` and the model client's DNS; anyio's workers, for the MCP server's stdout)
    with a few KiB left past its stack: the thread died as it started, and the command
    waited for good (asyncio's with 28 to 49 KiB to spare, anyio's with 16 KiB). The
    command refuses it now."""
    for spare in range(0, 65 * 1024, 4 * 1024):
        done = subprocess.run([sys.executable, "-c", _LIBRARY_CHILD, str(spare), way],
                              capture_output=True, text=True, timeout=30, check=False)
        assert done.stdout.splitlines()[:1] == ["can't start new thread"], (spare, done)


_WATCHDOG_CHILD = textwrap.dedent("""
    import resource, threading, typing
    from harkback.adapters.stores.postgres_watchdog import Watchdog, Watched
    watchdog = Watchdog(lambda within: True, patience=60.0)
    connection = typing.cast(Watched, object())
    with open("/proc/self/status") as status:
        mapped = next(int(line.split()[1]) * 1024 for line in status
                      if line.startswith("VmSize:"))
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    resource.setrlimit(resource.RLIMIT_AS, (mapped + 2 ** 20, hard))  # no stack fits
    try:
        with watchdog.watching(connection, None):
            print("watched")
    except RuntimeError as error:
        print(error)
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
    with watchdog.watching(connection, None):
        print("watched", "harkback-pg-watchdog" in [t.name for t in threading.enumerate()])
    watchdog.close()
    print("closed")
""")


def test_a_postgres_watchdog_refused_its_thread_starts_it_later_and_closes() -> None:
    """The watchdog's thread refused for want of room (``ulimit -v``): the watchdog kept the
    unstarted thread, so no later statement was watched, and closing the store raised
    ("cannot join thread before it is started") over the line naming the limit."""
    done = subprocess.run([sys.executable, "-c", _WATCHDOG_CHILD],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.stdout.splitlines() == ["can't start new thread", "watched True", "closed"], (
        done.stdout, done.stderr)


_ARENA_CHILD = textwrap.dedent("""
    import asyncio, resource
    from harkback.pipeline.command_loop import run_command

    def mapped():
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) * 1024 for line in status
                        if line.startswith("VmSize:"))

    resource.setrlimit(resource.RLIMIT_AS, (mapped() + 2 ** 30,) * 2)

    async def command():
        before = mapped()
        await asyncio.to_thread(lambda: [bytes(1000) for _ in range(100)])
        print((mapped() - before) // 2 ** 20)
        return 0

    run_command(command)
""")


def test_a_thread_a_command_starts_under_a_cap_takes_its_stack_not_an_arena() -> None:
    """A thread started under ``ulimit -v`` with 128 MiB free took 64 MiB more of the cap
    than its stack, for a malloc arena of its own (glibc's): 72 MiB a thread, most never
    used. Under a cap, a command's threads share the main arena."""
    done = subprocess.run([sys.executable, "-c", _ARENA_CHILD],
                          capture_output=True, text=True, timeout=60, check=False)
    stack = resource.getrlimit(resource.RLIMIT_STACK)[0]
    grew = int(done.stdout) * 2 ** 20 if done.stdout.strip() else None
    assert grew is not None and grew < stack + MARGIN, (done.stdout, done.stderr)
