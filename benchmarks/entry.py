"""How every ``python -m benchmarks.X`` ends: with its ``main()``'s status, or, for a
Ctrl-C, one line on stderr and status 130 (as a shell reports SIGINT) instead of Python's
KeyboardInterrupt traceback. The benchmark's own ``finally`` blocks (stopping servers,
removing temporary stores) have run by then.

>>> run_main(lambda: 3)
Traceback (most recent call last):
SystemExit: 3
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import NoReturn

INTERRUPTED = 130
"""The status of a command ended by Ctrl-C (128 + SIGINT)."""


def run_main(main: Callable[[], int | None]) -> NoReturn:
    """Exit with ``main()``'s status; a Ctrl-C is ``NAME: interrupted (Ctrl-C)`` and 130."""
    try:
        status = main()
    except KeyboardInterrupt:
        spec = getattr(sys.modules.get("__main__"), "__spec__", None)
        name = spec.name if spec is not None else "benchmark"
        print(f"{name}: interrupted (Ctrl-C)", file=sys.stderr)
        raise SystemExit(INTERRUPTED) from None
    raise SystemExit(status)
