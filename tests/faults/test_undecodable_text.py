"""A stored text that is not UTF-8 (a flipped bit in the file, another program's write):
reading it blocked its session for good. ``show`` failed with "Could not decode to UTF-8
column 'content'", and so did every ``ingest`` of the file that would repair it, since an
ingest reads the stored session to compare."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.pipeline.test_import_cli import harkback

TURNS = ("the nginx upstream times out after 60 s",
         "raise proxy_read_timeout to 300s in the location")
SESSION = {"id": "s1", "source": "cli", "started_at": 1_772_000_000, "messages": [
    {"role": role, "content": text} for role, text in zip(("user", "assistant"), TURNS,
                                                            strict=True)]}


def _damaged_store(tmp_path: Path) -> tuple[Path, Path]:
    source = tmp_path / "s.jsonl"
    source.write_text(json.dumps(SESSION) + "\n", encoding="utf-8")
    db = tmp_path / "h.db"
    assert harkback("ingest", str(source), "--db", str(db)).returncode == 0
    with sqlite3.connect(db) as connection:
        # The bytes of "w", 0xff, "A": no UTF-8 reader can take the middle one.
        connection.execute("UPDATE messages SET content = CAST(X'77ff41' AS TEXT) "
                           "WHERE session_id = 's1' AND position = 1")
    return source, db


def test_a_session_holding_a_text_that_is_not_utf8_is_shown(tmp_path: Path) -> None:
    _, db = _damaged_store(tmp_path)
    shown = harkback("show", "s1", "--db", str(db), "--json")
    assert shown.returncode == 0, shown.stderr
    contents = [m["content"] for m in json.loads(shown.stdout)["messages"]]
    assert contents == [TURNS[0], "w\ufffdA"]


def test_ingesting_the_session_again_repairs_it(tmp_path: Path) -> None:
    source, db = _damaged_store(tmp_path)
    again = harkback("ingest", str(source), "--db", str(db))
    assert again.returncode == 0, again.stderr
    with sqlite3.connect(db) as connection:
        (content,) = connection.execute("SELECT content FROM messages WHERE session_id = 's1' "
                                        "AND position = 1").fetchone()
    assert content == TURNS[1]
