"""The README's Python examples run as written."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"
STAGES = {"match", "resolve", "load", "summarize", "assemble"}


def python_blocks() -> list[str]:
    """Every ```python block of the README (```py blocks are fragments, not run)."""
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)


def test_readme_library_example_runs(tmp_path: Path) -> None:
    """The library example runs in a fresh interpreter: a payload, then each stage's time."""
    blocks = python_blocks()
    assert blocks, "the README lost its library example"
    done = subprocess.run([sys.executable, "-c", blocks[0]], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    payload, timings = done.stdout.strip().splitlines()[-2:]
    assert "'success': True" in payload
    assert set(ast.literal_eval(timings)) == STAGES
    assert (tmp_path / "history.db").exists()


def test_readme_examples_use_only_the_public_api() -> None:
    """Every harkback import in the README's Python examples comes from harkback.pipeline."""
    text = README.read_text(encoding="utf-8")
    code = "\n".join(re.findall(r"```py(?:thon)?\n(.*?)```", text, re.DOTALL))
    imports = re.findall(r"^from (harkback[\w.]*) import", code, re.MULTILINE)
    assert imports
    assert set(imports) == {"harkback.pipeline"}

