"""Programs a test runs that a Python install does not bring (zsh): a machine without one
skips those tests, saying how to install it, except under CI (``CI`` set, as CI services
set it), where every test must run, and a missing program fails the test instead.

>>> require_program("sh", "apt-get install dash") is None  # on PATH: the test goes on
True
"""

from __future__ import annotations

import os
import shutil

import pytest


def in_ci() -> bool:
    """Whether the tests run under CI: ``CI`` set to anything but "", "0", "false", "no"."""
    return os.environ.get("CI", "").strip().lower() not in {"", "0", "false", "no"}


def require_program(name: str, install: str) -> None:
    """Go on when ``name`` is on ``PATH``; else fail under CI (:func:`in_ci`), or skip
    elsewhere, with ``install`` (how to get it) in the reason."""
    if shutil.which(name) is not None:
        return
    reason = f"{name} is not on PATH; install it ({install}) to run this test"
    if in_ci():
        pytest.fail(f"{reason} (CI runs every test)")
    pytest.skip(reason)
