"""The dependency direction holds: the domain imports no I/O library."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

BLOCKED = ("openai", "aiolimiter", "sqlite3", "httpx", "httpx2", "psycopg", "platformdirs")


def test_stages_import_without_io_libraries() -> None:
    """Every harkback.stages module imports while I/O libraries are made unimportable."""
    script = f"""
import importlib, pkgutil, sys
for name in {BLOCKED!r}:
    sys.modules[name] = None  # makes `import name` raise ImportError
import harkback.stages as pkg
for info in pkgutil.walk_packages(pkg.__path__, prefix="harkback.stages."):
    importlib.import_module(info.name)
leaked = [m for m in {BLOCKED!r} if sys.modules.get(m) is not None]
assert not leaked, leaked
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_no_bare_top_level_packages_installed() -> None:
    """Only ``harkback.*`` is importable: no generic ``stages``/``pipeline`` module leaks."""
    script = """
import importlib.util, os
os.chdir('/')
print([n for n in ('stages', 'adapters', 'pipeline') if importlib.util.find_spec(n)])
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=False, cwd="/")
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = {
    # a package: what it must never import (the dependency direction of DESIGN.md)
    "stages": ("harkback.adapters", "harkback.pipeline"),
    "adapters": ("harkback.pipeline",),
    "adapters/stores": ("harkback.adapters.sources",),
    "adapters/sources": ("harkback.adapters.stores",),
}


def imported_modules(path: Path) -> set[str]:
    """Every module a source file imports (``from x import y`` counts as ``x`` and ``x.y``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


@pytest.mark.parametrize("folder", sorted(FORBIDDEN))
def test_imports_point_one_way(folder: str) -> None:
    """No module in ``folder`` imports a package it must not depend on."""
    files = sorted((ROOT / folder).rglob("*.py"))
    assert files, folder
    bad = [f"{path.relative_to(ROOT)} imports {module}"
           for path in files for module in sorted(imported_modules(path))
           if module.startswith(FORBIDDEN[folder])]
    assert not bad, bad


def test_no_code_module_is_too_long() -> None:
    """One concept per module: none of the package's modules passes 400 lines."""
    long = [f"{path.relative_to(ROOT)}: {n}" for folder in ("stages", "adapters", "pipeline")
            for path in sorted((ROOT / folder).rglob("*.py"))
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > 400]
    assert not long, long
