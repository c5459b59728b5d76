"""The store agreement benchmark runs on a tiny LongMemEval-shaped file and the test server."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from benchmarks.agreement_postgres import main
from tests.benchmarks.test_retrieval import _question
from tests.support.postgres_server import PostgresServer, benchmark_databases


def test_both_stores_agree_on_a_tiny_file(tmp_path: Path, postgres_server: PostgresServer,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Every question is asked of both stores, and the row says how many agreed."""
    path = tmp_path / "tiny.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        json.dump([
            _question("q1", "Which playlist did I create on Spotify?", ["ev_spotify"],
                      {"ev_spotify": "I created a playlist on Spotify called Summer Vibes."}),
            _question("q2", "How many bikes do I own?", ["ev_a", "ev_b"],
                      {"ev_a": "I bought a new road bike.", "ev_b": "My bike needs a chain."}),
        ], handle)
    before = benchmark_databases(postgres_server.url())
    assert main(["--data", str(path), "--url", postgres_server.url()]) == 0
    out = capsys.readouterr().out
    assert "| 2 | 2 (100.0%) | 2 (100.0%) | ≥ 99%: ok |" in out
    assert benchmark_databases(postgres_server.url()) == before  # it kept none of its own
