"""Why the PostgreSQL store did not load: psycopg (the postgres extra) missing, psycopg
installed but failing to load, or a module of harkback's own failing while psycopg loads.
Every ``ImportError`` was said to be the first ("needs the postgres extra"), sending a
user who had the extra to install it again while the real cause went unsaid.

>>> not_loaded(ModuleNotFoundError("No module named 'psycopg'", name="psycopg"))
"the PostgreSQL store needs the postgres extra: pip install 'harkback[postgres]'"
>>> not_loaded(ModuleNotFoundError("No module named 'psycopg.x'", name="psycopg.x"))[-52:]
"ck needs: pip install --upgrade 'harkback[postgres]'"
>>> not_loaded(ImportError("cannot import name 'Pipeline' from 'psycopg'", name="psycopg"))[-69:]
"older than harkback needs: pip install --upgrade 'harkback[postgres]'"
"""

from __future__ import annotations

import importlib

POSTGRES_EXTRA = "the PostgreSQL store needs the postgres extra: pip install 'harkback[postgres]'"


def not_loaded(error: ImportError) -> str:
    """The one line saying why importing the PostgreSQL store raised ``error``: psycopg is
    imported again to tell the three causes apart (it is cached once it loaded)."""
    # The package itself, not a module of it (psycopg._tpc: a damaged install, where
    # installing the extra again does nothing: pip finds it satisfied).
    if isinstance(error, ModuleNotFoundError) and error.name == "psycopg":
        return POSTGRES_EXTRA
    try:
        importlib.import_module("psycopg")
    except ModuleNotFoundError as missing:
        if missing.name == "psycopg":
            return POSTGRES_EXTRA
        return _psycopg_fails(missing)
    except ImportError as broken:  # libpq not found, a wheel for another Python, ...
        return _psycopg_fails(broken)
    if (error.name or "").partition(".")[0] == "psycopg":  # a name an older psycopg lacks
        return (f"the PostgreSQL store could not be loaded: {_first_line(error)}; the "
                "psycopg installed may be older than harkback needs: pip install --upgrade "
                "'harkback[postgres]'")
    where = f" (in {error.name})" if error.name else ""
    return (f"the PostgreSQL store could not be loaded: {_first_line(error)}{where}; psycopg "
            "loads, so the cause is in harkback's own installation: reinstall harkback")


def _psycopg_fails(error: ImportError) -> str:
    return (f"the PostgreSQL store needs psycopg, which is installed but does not load "
            f"({_first_line(error)}): pip install --force-reinstall 'harkback[postgres]' "
            "(its binary build brings libpq)")


def _first_line(error: BaseException) -> str:
    return " ".join(str(error).split("\n")[0].split()) or type(error).__name__
