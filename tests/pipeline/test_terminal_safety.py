"""Output that cannot attack the terminal: stored escape sequences are shown, not obeyed;
JSON keeps them escaped; a reader that goes away ends the command quietly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harkback.stages.ingest_format import conversation_to_json
from tests.conftest import conversation

EVIL_ID = "evil\x1b]0;pwned\x07"
CLEAR = "\x1b[2J"
SESSION = conversation(
    EVIL_ID, ("user", f"docker {CLEAR}\x1b[31mred\x00nul\x9b1m\x08\u202eevil\r"),
    ("assistant", "docker bridge fixed\n" * 5_000),
    started_at=1_770_000_000.0, title=f"title{CLEAR}\x9b")
RAW = ("\x1b", "\x00", "\x07", "\x08", "\x9b", "\r", "\u202e")
"""Characters that must never reach a terminal raw."""


def harkback(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``harkback ARGS`` in a fresh interpreter."""
    return subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", *args],
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding one session full of escape sequences, imported from a file whose
    name holds one too."""
    folder = tmp_path_factory.mktemp("terminal")
    source = folder / f"sessions{CLEAR}.jsonl"
    source.write_text(json.dumps(conversation_to_json(SESSION)) + "\n", encoding="utf-8")
    path = folder / "h.db"
    done = harkback("import", "jsonl", str(source), "--db", str(path))
    assert done.returncode == 0, done.stderr
    # The import report names the file, its escape shown.
    assert not any(c in done.stdout for c in RAW) and "sessions␛[2J.jsonl" in done.stdout
    return path


@pytest.mark.parametrize("command", [("search", "docker"), ("recent",), ("show", EVIL_ID),
                                     ("sources",)])
def test_human_output_shows_control_characters(db: Path, command: tuple[str, ...]) -> None:
    """search, recent, show and sources print ␛ and friends, never the characters."""
    done = harkback(*command, "--db", str(db), *(("--limit", "1") if command[0] == "show"
                                                  else ()))
    assert done.returncode == 0, done.stderr
    assert not any(c in done.stdout for c in RAW), repr(done.stdout[:500])
    assert "␛[2J" in done.stdout


def test_show_spells_out_each_kind(db: Path) -> None:
    """C0 as control pictures, C1 and bidi overrides as escapes."""
    done = harkback("show", EVIL_ID, "--db", str(db), "--limit", "1")
    assert "evil␛]0;pwned␇" in done.stdout
    assert "␛[31mred␀nul\\x9b1m␈\\u202eevil" in done.stdout


def test_an_error_line_shows_control_characters(db: Path) -> None:
    """A file name typed with escapes comes back visible in the one-line error."""
    done = harkback("ingest", f"nothing{CLEAR}.jsonl", "--db", str(db))
    assert done.returncode == 1
    assert "nothing␛[2J.jsonl" in done.stderr and "\x1b" not in done.stderr


def test_json_keeps_them_escaped(db: Path) -> None:
    """The JSON payload carries the text exactly, as JSON escapes."""
    done = harkback("show", EVIL_ID, "--db", str(db), "--limit", "1", "--json")
    assert not any(c in done.stdout for c in RAW)
    payload = json.loads(done.stdout)
    assert payload["session"]["session_id"] == EVIL_ID
    assert payload["messages"][0]["content"] == SESSION.messages[0].content


def test_a_reader_that_goes_away_ends_the_command_quietly(db: Path) -> None:
    """Reading one line of a long page and closing the pipe: status 141, nothing said."""
    reader = subprocess.Popen(
        [sys.executable, "-m", "harkback.pipeline.cli", "show", EVIL_ID, "--db", str(db),
         "--limit", "200"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert reader.stdout is not None and reader.stderr is not None
    assert reader.stdout.readline().startswith(b"session evil")
    reader.stdout.close()
    error = reader.stderr.read()
    assert reader.wait(timeout=120) == 141
    assert error == b""


def test_an_error_naming_a_file_with_a_newline_is_one_line(db: Path) -> None:
    """A file name holding a newline printed a second line of its own in the one-line
    error, one that could read ``harkback: ...`` as if harkback had said it."""
    done = harkback("ingest", "bad\nharkback: ingested 9 session(s)", "--db", str(db))
    assert (done.returncode, done.stderr) == (
        1, "harkback: no such file: bad␊harkback: ingested 9 session(s)\n")
