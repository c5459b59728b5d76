"""Claude Code transcript files no agent writes on purpose, through ``harkback import
claude-code`` as a user runs it: the file's other sessions land, the odd line is named,
memory stays bounded and nothing ends as an internal error."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

from tests.pipeline.test_summary_titles import PROJECT, _conversation

COMMAND = [sys.executable, "-m", "harkback.pipeline.cli"]
SESSION = "4d4d4d4d-0000-4000-8000-000000000004"
LIMIT = 640 << 20
"""The import's address space: well below the size of the endless line below (an import of
it takes about 300 MB, reading the line in 64 Mi character pieces)."""


def _folder(tmp_path: Path, odd: bytes | None = None) -> Path:
    """A Claude Code projects folder of one readable session, and ``odd.jsonl`` holding
    ``odd`` when given."""
    folder = tmp_path / "projects"
    (folder / PROJECT).mkdir(parents=True)
    lines = _conversation(SESSION, "k")
    (folder / PROJECT / f"{SESSION}.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    if odd is not None:
        (folder / PROJECT / "odd.jsonl").write_bytes(odd)
    return folder


def _sessions(db: Path) -> list[str]:
    done = subprocess.run([*COMMAND, "recent", "--db", str(db), "--json"],
                          capture_output=True, text=True, timeout=120, check=True)
    return [row["session_id"] for row in json.loads(done.stdout)["results"]]


def test_a_summary_line_nested_deeper_than_python_reads_is_named(tmp_path: Path) -> None:
    """A line naming a ``leafUuid`` whose value nests 100,000 lists: the summary scan
    raised ``RecursionError``, and the whole import ended "internal error", status 70,
    storing nothing."""
    nested = b'{"type": "summary", "leafUuid": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n"
    folder = _folder(tmp_path, nested)
    db = tmp_path / "h.db"
    done = subprocess.run([*COMMAND, "import", "claude-code", str(folder), "--db", str(db)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert "internal error" not in done.stderr and done.returncode == 3, done.stderr
    assert "odd.jsonl:1: unreadable line" in done.stderr
    assert _sessions(db) == [SESSION]


def test_a_transcript_of_one_endless_line_is_read_in_bounded_memory(tmp_path: Path) -> None:
    """1 GiB with no newline (a crash's allocated, never written blocks: NUL bytes) under
    a 640 MiB address space: the summary scan read the line whole (a 2 GB one took 4 GB).
    The other session lands; the endless line is counted as still being written."""
    folder = _folder(tmp_path)
    with (folder / PROJECT / "odd.jsonl").open("wb") as endless:
        endless.truncate(1 << 30)  # sparse: no disk, read back as NUL bytes
    db = tmp_path / "h.db"
    done = subprocess.run(
        [*COMMAND, "import", "claude-code", str(folder), "--db", str(db), "--json"],
        capture_output=True, text=True, timeout=300, check=False,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT)))
    assert done.returncode == 0, done.stderr
    (report,) = json.loads(done.stdout)["sources"]
    assert report["sessions"]["added"] == 1, report
    assert os.path.getsize(folder / PROJECT / "odd.jsonl") == 1 << 30
    assert _sessions(db) == [SESSION]
