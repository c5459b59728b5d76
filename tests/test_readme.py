"""The README's Python example runs as written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example_runs(tmp_path: Path) -> None:
    """The API example in the README runs in a fresh interpreter and prints payloads."""
    text = README.read_text(encoding="utf-8")
    start = text.index("```python\n") + len("```python\n")
    example = text[start:text.index("```", start)]
    done = subprocess.run([sys.executable, "-c", example], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "'success': True" in done.stdout
    assert (tmp_path / "history.db").exists()
