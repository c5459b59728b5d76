"""A command run on a store holding a huge message, under an address-space limit: the
tests of bounded memory ingest their file, delete it, then run one command this way.

>>> LIMIT // (1 << 20)
400
"""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

LIMIT = 400 << 20
"""The command's address space: enough for harkback reading a message's start, far from
what reading a 42 MB message whole took (500-800 MB, ending in MemoryError, status 70)."""

COMMAND = [sys.executable, "-m", "harkback.pipeline.cli"]


def _bounded() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def ingest_then_run(source: Path, db: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Ingest ``source`` into ``db`` (unbounded; the file is then deleted, so only the store
    holds the text), then run ``harkback ARGS --db DB --json`` under :data:`LIMIT`."""
    made = subprocess.run([*COMMAND, "ingest", str(source), "--db", db],
                          capture_output=True, text=True, timeout=300, check=False)
    assert made.returncode == 0, made.stderr
    source.unlink()
    return subprocess.run([*COMMAND, *args, "--db", db, "--json"], capture_output=True,
                          text=True, timeout=300, check=False, preexec_fn=_bounded)
