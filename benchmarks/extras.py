"""One line, not a traceback, when a benchmark needs an optional package that is missing.

A module that needs an extra imports it like this, so running it without the extra says
what to install (``make install`` brings every extra)::

    try:
        import psycopg
    except ImportError as missing:
        raise needs_extra("postgres", missing) from None

>>> print(needs_extra("mcp", ModuleNotFoundError("No module named 'mcp'")))
this benchmark needs the mcp extra (No module named 'mcp'): pip install -e '.[mcp]'
"""

from __future__ import annotations


def needs_extra(extra: str, missing: ImportError) -> SystemExit:
    """The exit that names the missing package and the extra that brings it."""
    return SystemExit(f"this benchmark needs the {extra} extra ({missing}): "
                      f"pip install -e '.[{extra}]'")
