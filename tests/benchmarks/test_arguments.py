"""A typo in a size or a count of zero is a usage error, before anything is built."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks import (
    agreement_postgres,
    budget,
    cold_search,
    fuzz,
    mcp_roundtrip,
    redaction,
    rerank,
    retrieval,
    scale,
    scale_postgres,
    search_after_ingest,
    search_cpu,
    soak,
    startup,
    sync,
)
from benchmarks.scale import _label

Main = Callable[[list[str]], int]

BAD: list[tuple[str, Main, list[str], str]] = [
    ("scale --sizes", scale.main, ["--sizes", "10k,1q"], "not a message count: '1q'"),
    ("scale --repeat", scale.main, ["--repeat", "0"], "at least 1, not '0'"),
    ("scale_postgres --sizes", scale_postgres.main, ["--sizes", "ten"],
     "not a message count: 'ten'"),
    ("scale_postgres --repeat", scale_postgres.main, ["--repeat", "0"], "at least 1"),
    ("startup --size", startup.main, ["--size", "1q"], "not a message count"),
    ("fuzz --size", fuzz.main, ["--size", "0"], "not a message count: '0'"),
    ("fuzz --queries", fuzz.main, ["--queries", "0"], "at least 1"),
    ("mcp_roundtrip --calls", mcp_roundtrip.main, ["--calls", "0"], "at least 1"),
    ("mcp_roundtrip --messages", mcp_roundtrip.main, ["--messages", "-5"],
     "not a message count"),
    ("search_after_ingest --rounds", search_after_ingest.main, ["--rounds", "0"],
     "at least 1"),
    ("search_cpu --rounds", search_cpu.main, ["--db", "x.db", "--rounds", "0"], "at least 1"),
    ("cold_search --rounds", cold_search.main, ["--db", "x.db", "--rounds", "0"],
     "at least 1"),
    ("sync --sessions", sync.main, ["--sessions", "0"], "at least 1"),
    ("sync --runs", sync.main, ["--runs", "0"], "at least 1"),
    ("redaction --runs", redaction.main, ["--runs", "0"], "at least 1"),
    ("soak --size", soak.main, ["--size", "1q"], "not a message count"),
    ("budget --budgets", budget.main, ["--data", "x.json", "--budgets", "500,x"],
     "at least 1, not 'x'"),
    ("budget --limit", budget.main, ["--data", "x.json", "--limit", "0"], "at least 1"),
    ("retrieval --questions", retrieval.main, ["--questions", "0"], "at least 1"),
    ("rerank --questions", rerank.main, ["--data", "x.json", "--questions", "0"],
     "at least 1"),
    ("agreement_postgres --limit", agreement_postgres.main,
     ["--data", "x.json", "--limit", "0"], "at least 1"),
]


@pytest.mark.parametrize(("main", "argv", "said"), [case[1:] for case in BAD],
                         ids=[case[0] for case in BAD])
def test_a_bad_size_or_count_is_a_usage_error(main: Main, argv: list[str], said: str,
                                              tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """argparse's exit 2 with the reason on its last line; nothing written."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert said in capsys.readouterr().err.strip().splitlines()[-1]
    assert list(tmp_path.iterdir()) == []


def test_a_size_label_is_exact() -> None:
    """Sizes under a thousand, or not round, are labelled (and their files named) as they
    are: 500 was "0k" and 2500 "2k"."""
    assert [_label(n) for n in (500, 2_500, 10_000, 1_000_000)] == ["500", "2500", "10k", "1M"]
