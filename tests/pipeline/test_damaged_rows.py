"""A stored message that reads as no message (its text stored as bytes, a role outside its
list: a flipped bit, another tool's write) is the store's damage, said in one line that
names it, exit 1; ``search`` and ``show`` ended in an internal error (exit 70)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from harkback.pipeline.cli import main
from tests.conftest import conversation
from tests.pipeline.test_cli import ingested

DAMAGE = {
    "bytes": ("UPDATE messages SET content = CAST(content AS BLOB) WHERE position = 1",
              "its text is stored as bytes, not as text"),
    "role": ("UPDATE messages SET role = 'bogus' WHERE position = 1", "'role' must be in"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
@pytest.mark.parametrize("command", [["search", "pelican"], ["show", "s-pelican"],
                                     ["search", "pelican", "--json"]])
def test_a_damaged_message_is_said_in_one_line(
        damage: str, command: list[str], tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    db = ingested(tmp_path, [conversation(
        "s-pelican", ("user", "the pelican crontab broke"), ("assistant", "restore the pelican"))])
    update, said = DAMAGE[damage]
    with sqlite3.connect(db) as raw:  # the damage, written past the schema's CHECK
        raw.execute("PRAGMA ignore_check_constraints = 1")
        raw.execute(update)
    raw.close()
    assert main([*command, "--db", str(db)]) == 1
    out, err = capsys.readouterr()
    line = err.splitlines()[-1]
    assert line.startswith("harkback: session store unavailable: "), err
    assert "a stored message is damaged (session 's-pelican', position 1: " in line
    assert said in line and "internal error" not in err
    if "--json" in command:
        assert json.loads(out)["success"] is False
