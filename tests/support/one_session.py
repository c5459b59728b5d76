"""A store holding one session, made by ``harkback ingest`` as a user makes one: what the
tests of roles, schemas and timeouts start from (session ``k``, one user turn).

>>> import json, tempfile
>>> json.loads(session_file(Path(tempfile.mkdtemp())).read_text())["id"]
'k'
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SESSION_ID = "k"
TEXT = "the okapi relay"


def session_file(folder: Path, text: str = TEXT) -> Path:
    """``folder/s.jsonl``: session :data:`SESSION_ID` holding one user turn, ``text``."""
    source = folder / "s.jsonl"
    source.write_text(json.dumps({"id": SESSION_ID, "started_at": 1772547300, "messages": [
        {"role": "user", "content": text}]}) + "\n")
    return source


def ingest_one(db: str, folder: Path, *flags: str, text: str = TEXT) -> Path:
    """Store :func:`session_file` (written in ``folder``) at ``db`` with ``harkback ingest``
    and ``flags`` (``--keep-secrets``), which must succeed; the file's path."""
    source = session_file(folder, text)
    done = subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", "ingest",
                           str(source), *flags, "--db", db],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return source
