"""ARCHITECTURE.md stays true: the folders it names exist, and every code folder is named."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "ARCHITECTURE.md"
CODE = ("stages", "adapters", "pipeline")


def named_paths() -> set[str]:
    """Every `folder/` or `folder/module.py` path the page names."""
    text = DOC.read_text(encoding="utf-8")
    paths = set(re.findall(r"`((?:stages|adapters|pipeline|tests|benchmarks)/[\w/.]*)`", text))
    tree = text[text.index("## Folders"):]
    stack: list[str] = []
    for line in tree.splitlines():
        found = re.match(r"^( *)([\w/]+)/ ", line)
        if found:
            depth = len(found.group(1)) // 2
            stack = [*stack[:depth], found.group(2)]
            paths.add("/".join(stack) + "/")
    return paths


def test_every_path_the_page_names_exists() -> None:
    """A folder or module the page names is there."""
    missing = sorted(p for p in named_paths() if not (ROOT / p.rstrip("/")).exists())
    assert not missing, missing


def test_every_code_folder_is_on_the_map() -> None:
    """Each package folder under stages/, adapters/ and pipeline/ is in the folder map."""
    folders = {f"{path.parent.relative_to(ROOT).as_posix()}/"
               for top in CODE for path in (ROOT / top).rglob("__init__.py")}
    assert folders
    assert not folders - named_paths(), sorted(folders - named_paths())
