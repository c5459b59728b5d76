"""A benchmark run without the optional package it needs says which extra to install."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

NEEDS = {"mcp_roundtrip": ("mcp", "mcp"), "scale_postgres": ("psycopg", "postgres"),
         "search_after_ingest": ("psycopg", "postgres"), "reads_postgres": ("psycopg", "postgres"),
         "agreement_postgres": ("psycopg", "postgres"), "vector_cache": ("numpy", "hybrid"),
         "show_long": ("psycopg", "postgres")}


def _run_without(package: str, module: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m benchmarks.MODULE ARGS`` in a process where ``package`` cannot be
    imported, as in a clone installed without that extra."""
    code = (f"import runpy, sys; sys.modules[{package!r}] = None; "
            f"sys.argv = ['{module}', *{list(args)!r}]; "
            f"runpy.run_module('benchmarks.{module}', run_name='__main__')")
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)


@pytest.mark.parametrize("module", sorted(NEEDS))
def test_a_missing_extra_is_one_line(module: str) -> None:
    """Exit 1 and one line naming the extra, not an import traceback."""
    package, extra = NEEDS[module]
    done = _run_without(package, module, "--help")
    assert done.returncode == 1
    assert done.stderr.startswith(f"this benchmark needs the {extra} extra (")
    assert done.stderr.strip().endswith(f"pip install -e '.[{extra}]'")
    assert done.stderr.count("\n") == 1


def test_the_lexical_retrieval_benchmark_needs_no_numpy(tmp_path: Path) -> None:
    """Only ``--vector-cache`` (and the hybrid ranker's embedder) needs numpy: the
    retrieval benchmark's lexical rankers run without it."""
    done = _run_without("numpy", "retrieval", "--data", str(tmp_path / "none.json"))
    assert done.returncode == 1
    assert done.stderr.startswith("cannot read the LongMemEval file ")
