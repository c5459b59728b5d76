"""``harkback optimize``: merges the index of an existing database, and only that."""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from pathlib import Path

from harkback.adapters.stores.sqlite_merge import segment_count
from harkback.stages.ingest_format import conversation_to_json
from tests.adapters.stores.test_merge_index import index_pages
from tests.pipeline.test_cli_llm import harkback
from tests.support.corpus import QUERY, docker_session


def test_optimize_merges_and_searches_find_the_same(tmp_path: Path) -> None:
    """Three ingests leave three segments; optimize merges them; the answer is unchanged."""
    db = tmp_path / "h.db"
    for i in range(3):
        source = tmp_path / f"s{i}.jsonl"
        source.write_text(json.dumps(conversation_to_json(docker_session(i))) + "\n")
        assert harkback("ingest", str(source), "--db", str(db)).returncode == 0

    def search() -> list[str]:
        done = harkback("search", QUERY, "--db", str(db), "--json", "--summarizer", "none")
        assert done.returncode == 0, done.stderr
        return [r["session_id"] for r in json.loads(done.stdout)["results"]]

    before, pages = search(), index_pages(db)
    done = harkback("optimize", "--db", str(db))
    assert done.returncode == 0, done.stderr
    assert f"merged the full-text index of {db}" in done.stdout
    assert index_pages(db) < pages
    assert search() == before

    as_json = harkback("optimize", "--db", str(db), "--json")
    assert json.loads(as_json.stdout)["success"] is True


def test_optimize_of_a_missing_database_creates_nothing(tmp_path: Path) -> None:
    """No file: a clear error, exit 1, and no database made."""
    path = tmp_path / "nowhere" / "h.db"
    done = harkback("optimize", "--db", str(path))
    assert done.returncode == 1
    assert f"no harkback database at {path}; import sessions into it first" in done.stderr
    assert "Traceback" not in done.stderr
    assert not path.parent.exists()



def _damaged_in_the_middle(tmp_path: Path) -> Path:
    """A store of 400 sessions with one page of stored messages overwritten, as a disk or
    a copy cut short would leave it: the pages optimize's merge writes are whole."""
    source = tmp_path / "many.jsonl"
    source.write_text("".join(json.dumps({"id": f"s{i}", "messages": [
        {"role": "user", "content": f"docker network number {i} " + "lorem ipsum " * 40},
        {"role": "assistant", "content": "answer " * 40}]}) + "\n" for i in range(400)))
    db = tmp_path / "h.db"
    assert harkback("ingest", str(source), "--db", str(db)).returncode == 0
    data = bytearray(db.read_bytes())
    size = int.from_bytes(data[16:18], "big")
    page = data.index(b"docker network number 200 ") // size
    data[page * size:(page + 1) * size] = b"\x55" * size
    db.write_bytes(bytes(data))
    return db


def test_optimize_of_a_damaged_store_says_so_and_merges_nothing(tmp_path: Path) -> None:
    """``search`` called the file corrupt while ``optimize`` said it merged its index, exit
    0. SQLite's quick_check runs first: one line, exit 1, the file left as it was."""
    db = _damaged_in_the_middle(tmp_path)
    found = harkback("search", "docker", "--db", str(db), "--summarizer", "none")
    assert (found.returncode, "the database file is corrupt" in found.stderr) == (1, True)
    before = db.read_bytes()
    done = harkback("optimize", "--db", str(db))
    assert done.returncode == 1, done.stdout
    assert done.stderr.splitlines()[-1].startswith(
        f"harkback: session store unavailable: the database file is corrupt: {db} (")
    assert "merged" not in done.stdout
    assert db.read_bytes() == before


def _segments(db: Path, index: str) -> int:
    with contextlib.closing(sqlite3.connect(db)) as connection:
        block = connection.execute(f"SELECT block FROM {index}_data WHERE id = 10").fetchone()
    return segment_count(block[0])


def test_a_second_optimize_writes_nothing_and_says_so(tmp_path: Path) -> None:
    """One large ingest (its batches' commits) leaves both full-text indexes in several
    segments: optimize merges both; run again, it writes nothing and says so (it merged
    only the messages', and said "merged" each time)."""
    db, source = tmp_path / "h.db", tmp_path / "many.jsonl"
    source.write_text("".join(json.dumps({
        "id": f"s{i}", "title": f"plan {i} walrus",
        "messages": [{"role": "user", "content": f"docker {i}"}]}) + "\n" for i in range(1500)))
    assert harkback("ingest", str(source), "--db", str(db)).returncode == 0
    segments = _segments(db, "messages_fts"), _segments(db, "session_titles_fts")
    assert min(segments) > 1, segments
    first = harkback("optimize", "--db", str(db))
    assert first.returncode == 0, first.stderr
    assert first.stdout.endswith(f" s (the messages' from {segments[0]} segments, the "
                                 f"titles' from {segments[1]} segments)\n"), first.stdout
    assert (_segments(db, "messages_fts"), _segments(db, "session_titles_fts")) == (1, 1)
    before = db.read_bytes()
    again = harkback("optimize", "--db", str(db))
    assert again.returncode == 0, again.stderr
    assert again.stdout == (f"the full-text indexes of {db} are merged already (one segment "
                            f"each): nothing was written\n")
    # Its line as it starts promised no merge (it said "merging the full-text index").
    assert "merging the full-text index" not in again.stderr, again.stderr
    assert json.loads(harkback("optimize", "--db", str(db), "--json").stdout)["merged"] == []
    assert db.read_bytes() == before


def test_optimize_help_names_both_indexes_and_that_one_piece_is_left_alone() -> None:
    """``optimize --help`` as it works: each index (it said "the full-text index", one),
    and only one in several pieces is rewritten."""
    done = harkback("--help")
    assert done.returncode == 0, done.stderr
    said = re.search(r"\n +optimize +(.+\n(?: {8,}.+\n)*)", done.stdout)
    assert said is not None, done.stdout
    line = " ".join(said.group(1).split())
    assert "each full-text index" in line and "several pieces" in line, line
