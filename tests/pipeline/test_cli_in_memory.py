"""``--db :memory:`` on the commands that store or read sessions, run as a user would.

The in-memory store is made for one command and gone when it ends: a command that stores
sessions in it must refuse (it reported them stored, then lost them), and one that reads
it must say why it found nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harkback.stages.ingest_format import conversation_to_json
from tests.conftest import conversation
from tests.pipeline.sync_home import ENV_HOMES, make_home

IN_MEMORY = ":memory: is an in-memory store, empty and gone when the command ends"


def harkback(*args: str, home: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``harkback ARGS`` in a fresh interpreter (with ``home`` as its home folder)."""
    env = {k: v for k, v in os.environ.items() if k not in ENV_HOMES}
    if home is not None:
        env["HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", *args],
                          capture_output=True, text=True, timeout=120, check=False, env=env)


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    source = tmp_path / "sessions.jsonl"
    chat = conversation("c1", ("user", "docker bridge"), ("assistant", "use a network"))
    source.write_text(json.dumps(conversation_to_json(chat)) + "\n", encoding="utf-8")
    return source


@pytest.mark.parametrize("command", [("ingest",), ("import", "jsonl"), ("sync",)])
def test_storing_into_the_in_memory_store_is_refused(command: tuple[str, ...],
                                                     sessions: Path, tmp_path: Path) -> None:
    """One line naming why, a usage error, and under --json the failure payload."""
    home = make_home(tmp_path / "home")
    given = () if command == ("sync",) else (str(sessions),)
    done = harkback(*command, *given, "--db", ":memory:", home=home)
    assert (done.returncode, done.stdout) == (2, "")
    word = command[0]
    assert done.stderr == (f"harkback: {word} into --db :memory: would keep nothing: "
                           f"{IN_MEMORY}; name a database file or a postgresql:// URL\n")
    shown = harkback(*command, *given, "--db", ":memory:", "--json", home=home)
    assert shown.returncode == 2
    assert json.loads(shown.stdout)["success"] is False


def test_a_dry_run_sync_may_compare_with_the_in_memory_store(tmp_path: Path) -> None:
    """--dry-run writes nothing anywhere: against the empty store all is new."""
    home = make_home(tmp_path / "home")
    done = harkback("sync", "--dry-run", "--db", ":memory:", "--json", home=home)
    assert done.returncode in (0, 3), done.stderr
    assert json.loads(done.stdout)["success"] is True


@pytest.mark.parametrize("command", [("search", "docker"), ("recent",),
                                     ("search", "what did I do yesterday")])
def test_reading_the_in_memory_store_says_why_nothing_is_found(
        command: tuple[str, ...]) -> None:
    """The usual empty answer, and a note (in --json too) that the store is always empty,
    said once (a listing printed it twice)."""
    done = harkback(*command, "--db", ":memory:")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines().count(f"note: {IN_MEMORY}") == 1, done.stdout
    shown = harkback(*command, "--db", ":memory:", "--json")
    payload = json.loads(shown.stdout)
    assert (payload["count"], payload["notes"]) == (0, [IN_MEMORY])


def test_show_on_the_in_memory_store_says_why_the_session_is_missing() -> None:
    done = harkback("show", "c1", "--db", ":memory:")
    assert done.returncode == 1
    assert done.stderr == f"harkback: not found: no session with id 'c1' ({IN_MEMORY})\n"
