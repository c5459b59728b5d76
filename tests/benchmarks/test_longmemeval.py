"""Each harness that reads a LongMemEval file says in one line why it cannot read one."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks import agreement_postgres, budget, longmemeval, rerank, retrieval, vector_cache
from tests.support.embedding import ConceptEmbedder

HARNESSES: dict[str, Callable[[Path], Callable[[], object]]] = {
    "budget": lambda f: lambda: budget.main(["--data", str(f)]),
    "retrieval": lambda f: lambda: retrieval.main(["--data", str(f), "--questions", "1"]),
    "rerank": lambda f: lambda: rerank.main(["--data", str(f), "--base-url",
                                             "http://127.0.0.1:9"]),
    "agreement_postgres": lambda f: lambda: agreement_postgres.main(
        ["--data", str(f), "--url", "postgresql://nobody@/none?host=/nonexistent"]),
    "export": lambda f: lambda: longmemeval.main(["export", "--data", str(f), "--out",
                                                  str(f.parent / "out")]),
}

BAD_FILES: dict[str, tuple[Callable[[Path], object], str]] = {
    "missing.json": (lambda p: None, "No such file or directory"),
    "plain.json.gz": (lambda p: p.write_text("[]"), "Not a gzipped file"),
    "prose.json": (lambda p: p.write_text("# Benchmarks\n"), "not a JSON file"),
    "object.json": (lambda p: p.write_text('{"question_id": "q1"}'), "not LongMemEval's shape"),
    "cut.json.gz": (lambda p: p.write_bytes(gzip.compress(b'[{"question_id": "q1"}]')[:-9]),
                    "not a JSON file"),
}


@pytest.mark.parametrize("harness", sorted(HARNESSES))
@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_an_unreadable_data_file_is_one_line(tmp_path: Path, harness: str, name: str) -> None:
    """A missing, non-gzip, non-JSON or wrongly shaped file exits with one line naming it
    and why, before any store or server is made."""
    path = tmp_path / name
    write, reason = BAD_FILES[name]
    write(path)
    with pytest.raises(SystemExit) as exited:
        HARNESSES[harness](path)()
    message = str(exited.value.code)
    assert message.startswith(f"cannot read the LongMemEval file {path}: ")
    assert reason in message and "\n" not in message
    assert sorted(p.name for p in tmp_path.iterdir()) == ([name] if path.exists() else [])


def test_the_vector_cache_reads_the_file_before_making_its_folder(tmp_path: Path) -> None:
    """Filling a cache from a missing file is the same one line, and makes no cache folder."""
    with pytest.raises(SystemExit) as exited:
        vector_cache.fill(tmp_path / "missing.json", tmp_path / "cache", ConceptEmbedder())
    assert str(exited.value.code).startswith("cannot read the LongMemEval file ")
    assert list(tmp_path.iterdir()) == []
