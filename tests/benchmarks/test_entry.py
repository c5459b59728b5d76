"""Every ``python -m benchmarks.X`` ends through :func:`benchmarks.entry.run_main`, so a
Ctrl-C is one line and status 130 (tests/benchmarks/test_soak.py interrupts a real one)."""

from __future__ import annotations

import ast
from pathlib import Path

import benchmarks


def _main_block(tree: ast.Module) -> ast.If | None:
    for node in tree.body:
        if (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
                and isinstance(node.test.left, ast.Name) and node.test.left.id == "__name__"):
            return node
    return None


def test_every_runnable_benchmark_ends_through_run_main() -> None:
    """Each module with a ``__main__`` block calls ``run_main(main)`` there and nothing
    else (``sys.exit(main())`` printed Python's traceback for a Ctrl-C)."""
    folder = Path(benchmarks.__file__).parent
    runnable = {}
    for path in sorted(folder.glob("*.py")):
        block = _main_block(ast.parse(path.read_text(encoding="utf-8")))
        if block is not None:
            runnable[path.stem] = [ast.unparse(statement) for statement in block.body]
    assert len(runnable) >= 20  # the glob found them (20 today)
    assert {name: body for name, body in runnable.items() if body != ["run_main(main)"]} == {}
