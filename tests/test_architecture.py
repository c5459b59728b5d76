"""The dependency direction holds: the domain imports no I/O library."""

from __future__ import annotations

import subprocess
import sys

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
