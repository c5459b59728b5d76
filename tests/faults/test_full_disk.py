"""A full disk: one clear error line, and every session committed before it stays.

The disk is a small tmpfs mounted for the test (the suite runs as root); where mounting is
not allowed, SQLite's ``max_page_count`` (set through a test hook) stands in, and a second
test always uses that hook.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harkback.adapters.stores.sqlite_connection import MAX_PAGES_ENV

DISK = "4m"
PAGES = 400
"""With 4 KiB pages, a 1.6 MB store: the hook's stand-in for the small disk."""


def random_sessions(path: Path, prefix: str, count: int, words_per_message: int = 300) -> None:
    """``count`` sessions of six messages of random words (ids ``prefix0``...) to ingest."""
    rng = random.Random(prefix)
    words = [f"w{n}" for n in range(3000)]
    with path.open("w", encoding="utf-8") as handle:
        for index in range(count):
            handle.write(json.dumps({"id": f"{prefix}{index}", "messages": [
                {"role": "user", "content": " ".join(rng.choices(words, k=words_per_message))}
                for _ in range(6)]}) + "\n")


def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", *args],
                          capture_output=True, text=True, check=False, timeout=300,
                          env={**os.environ, **env})


@pytest.fixture(params=["tmpfs", "max_page_count"])
def small_disk(request: pytest.FixtureRequest, tmp_path: Path
               ) -> Iterator[tuple[Path, dict[str, str]]]:
    """A folder on a small disk, and the environment that makes it small."""
    folder = tmp_path / "disk"
    folder.mkdir()
    if request.param == "tmpfs":
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DISK}", "tmpfs",
                                  str(folder)], capture_output=True, check=False)
        if mounted.returncode == 0:
            try:
                yield folder, {}
            finally:
                subprocess.run(["umount", str(folder)], check=True)
            return
    yield folder, {MAX_PAGES_ENV: str(PAGES)}


@pytest.mark.parametrize("command", ["ingest", "import"])
def test_a_full_disk_is_one_line_and_loses_no_committed_session(
        small_disk: tuple[Path, dict[str, str]], tmp_path: Path, command: str) -> None:
    """A store that fills its disk mid-ingest: status 1, one line naming the full disk;
    the sessions of the earlier ingest, and every batch reported, are still there."""
    folder, env = small_disk
    db = folder / "h.db"
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    random_sessions(first, "a", 20)
    random_sessions(second, "b", 600)  # far more than the disk holds
    assert _run("ingest", str(first), "--db", str(db), env=env).returncode == 0
    args = (["ingest", str(second)] if command == "ingest"
            else ["import", "jsonl", str(second)])
    done = _run(*args, "--db", str(db), "--no-progress", env=env)
    assert done.returncode == 1, done.stdout
    [line] = done.stderr.splitlines()
    assert line.startswith("harkback: ") and "the disk is full" in line
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as raw:
        assert raw.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        ids = {row[0] for row in raw.execute("SELECT id FROM sessions")}
    raw.close()
    assert {f"a{i}" for i in range(20)} <= ids
    if command == "ingest":  # the line says what was committed before the disk filled
        reported = re.search(r"ingested (\d+) session", line)
        assert reported is not None
        assert len(ids) - 20 == int(reported.group(1))


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A folder on a 1 MiB tmpfs of its own (mounting needs root, as CI and this suite's
    machines run; elsewhere the test cannot make the fault and says so)."""
    folder = tmp_path / "disk"
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)],
                             capture_output=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], check=True)


@pytest.mark.parametrize("command", ["ingest", "migrate", "optimize"])
def test_a_disk_already_full_is_named_as_full(tmpfs: Path, tmp_path: Path,
                                              command: str) -> None:
    """A disk with no byte left when a writable command opens the store (SQLite cannot even
    size its -shm file): one line saying the disk is full, not a bare 'disk I/O error';
    the store keeps its bytes and no side file is left."""
    source = tmp_path / "s.jsonl"
    random_sessions(source, "a", 5)
    db = tmpfs / "h.db"
    assert _run("ingest", str(source), "--db", str(db), env={}).returncode == 0
    made = [p.name for p in tmpfs.iterdir()]  # the store, and its sync lock's file
    filler = os.open(tmpfs / "filler", os.O_WRONLY | os.O_CREAT)
    with contextlib.suppress(OSError):  # every block the disk has left
        while os.write(filler, bytes(4096)):
            pass
    os.close(filler)
    before = db.read_bytes()
    args = [command, str(source)] if command == "ingest" else [command]
    done = _run(*args, "--db", str(db), env={})
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert "the disk is full" in line and str(db) in line, line
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmpfs.iterdir()) == sorted([*made, "filler"])


def test_a_summary_not_cached_for_a_full_disk_is_said(tmp_path: Path) -> None:
    """A model summary that cannot be cached (the disk is full) still answers the search,
    as before, but the failure was silent: the next search paid the model again unsaid.
    The result's note now says the summary was not cached, and why."""
    from tests.support.chat_server import ChatServer

    source, db = tmp_path / "in.jsonl", tmp_path / "h.db"
    source.write_text(json.dumps({"id": "s1", "messages": [
        {"role": "user", "content": "the docker bridge lost its dns"},
        {"role": "assistant", "content": "recreate the network"}]}) + "\n", encoding="utf-8")
    assert _run("ingest", str(source), "--db", str(db), env={}).returncode == 0
    with contextlib.closing(sqlite3.connect(db)) as raw:
        (pages,) = raw.execute("PRAGMA page_count").fetchone()
    with ChatServer() as server:
        env = {"HARKBACK_MODEL": "m", "OPENAI_BASE_URL": server.url, MAX_PAGES_ENV: str(pages)}
        done = [_run("search", "docker bridge", "--db", str(db), "--json", env=env)
                for _ in range(2)]
        calls = len(server.received)
    for search in done:
        assert search.returncode == 0, search.stderr
        (result,) = json.loads(search.stdout)["results"]
        assert result["summary_kind"] == "llm"
        assert result["summary_note"].startswith("summary not cached: the disk is full")
    assert calls == 2  # nothing was kept: each search asked the model


def test_a_rerank_choice_not_cached_for_a_full_disk_is_said(tmp_path: Path) -> None:
    """As a summary: a rerank answer the store cannot cache (the disk is full) still
    orders the search, but the search's notes say it was not cached and why (it was
    silent: the next search paid the model again unsaid)."""
    from tests.support.chat_server import ChatServer, Reply

    source, db = tmp_path / "in.jsonl", tmp_path / "h.db"
    source.write_text("".join(json.dumps({"id": f"s{n}", "messages": [
        {"role": "user", "content": f"the docker bridge lost its dns, try {n}"},
        {"role": "assistant", "content": "recreate the network"}]}) + "\n"
        for n in range(3)), encoding="utf-8")
    assert _run("ingest", str(source), "--db", str(db), env={}).returncode == 0
    with contextlib.closing(sqlite3.connect(db)) as raw:
        (pages,) = raw.execute("PRAGMA page_count").fetchone()
    with ChatServer(lambda _: Reply(content="RELEVANT: S2")) as server:
        env = {"HARKBACK_MODEL": "m", "OPENAI_BASE_URL": server.url, MAX_PAGES_ENV: str(pages)}
        done = [_run("search", "docker bridge", "--db", str(db), "--json", "--rerank",
                     "--summarizer", "extractive", env=env) for _ in range(2)]
        calls = len(server.received)
    for search in done:
        assert search.returncode == 0, search.stderr
        payload = json.loads(search.stdout)
        assert payload["rerank"]["model_order"] and len(payload["results"]) == 1
        (note,) = payload["notes"]
        assert note.startswith("rerank choice not cached: the disk is full"), note
    assert calls == 2  # nothing was kept: each search asked the model
