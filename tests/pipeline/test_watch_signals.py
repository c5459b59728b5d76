"""``sync --watch`` gives back the signal handlers it borrowed: after the watch, SIGTERM
must still take Ctrl-C's way (:mod:`~harkback.pipeline.termination`) while the command
closes its store and prints its outcome."""

from __future__ import annotations

import asyncio
import os
import signal

from harkback.adapters.stores.memory import MemoryStore
from harkback.pipeline.termination import terminating
from harkback.pipeline.watch import watch


def test_sigterm_takes_ctrl_c_s_way_again_after_the_watch() -> None:
    """The loop's handlers, removed when the watch stopped, left SIGTERM at its default:
    a SIGTERM while the command wound up ended the process on the spot, unsaid."""
    async def watched() -> int:
        loop = asyncio.get_running_loop()
        loop.call_later(0.3, os.kill, os.getpid(), signal.SIGTERM)
        return (await watch((), MemoryStore(), check_s=0.1)).skips

    with terminating() as stop:
        assert asyncio.run(watched()) == 0
        after = signal.getsignal(signal.SIGTERM)
    assert after == stop.handle
    assert not stop.received  # the watch took that SIGTERM: it stopped, cleanly
