"""What ``harkback search`` shows of hostile sessions and model answers, through the real
CLI, a real SQLite store and the real Chat Completions test server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

MODEL_ENV = ("HARKBACK_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY", "HARKBACK_DB",
             "HARKBACK_EMBEDDER", "HARKBACK_EMBEDDER_API_KEY")

LOG = ("\n".join(f"row {i} ok" for i in range(3000))
       + "\nFATAL: disk quota exceeded on /var/lib/postgresql/data\n"
       + "\n".join(f"row {i} ok" for i in range(3000)))

SESSIONS = [
    {"id": "db-night", "messages": [
        {"role": "user", "content": "the database fell over overnight"},
        {"role": "tool", "tool_name": "bash", "content": LOG},
        {"role": "assistant", "content": "raised the limit, it is back"}]},
    {"id": "webhook", "messages": [
        {"role": "user", "content": "configure the stripe webhook endpoint"},
        {"role": "assistant", "content": "Added the endpoint in /srv/app/hooks.py and ran "
                                          "`make deploy`; the webhook answers 200 now."}]},
]


def harkback(*args: str, env: dict[str, str] | None = None
             ) -> subprocess.CompletedProcess[str]:
    """Run ``harkback ARGS`` with no model configured unless ``env`` configures one."""
    full_env = {k: v for k, v in os.environ.items() if k not in MODEL_ENV}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", *args],
                          capture_output=True, text=True, env=full_env, timeout=120,
                          check=False)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A SQLite store holding the sessions above."""
    source = tmp_path / "sessions.jsonl"
    source.write_text("".join(json.dumps(s) + "\n" for s in SESSIONS))
    path = tmp_path / "harkback.db"
    done = harkback("ingest", str(source), "--db", str(path))
    assert done.returncode == 0, done.stderr
    return path


def _first(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)["results"][0]
    return result


def test_the_matching_line_of_a_long_tool_output_is_shown(db: Path) -> None:
    """A tool output of thousands of lines is clipped for the transcript; the line that
    matched, in its middle, is kept and shown, not just the head and tail."""
    done = harkback("search", "FATAL quota exceeded", "--db", str(db), "--role", "tool",
                    "--json")
    first = _first(done)
    assert first["session_id"] == "db-night"
    assert "FATAL: disk quota exceeded on /var/lib/postgresql/data" in first["summary"]
