"""Where things live by default.

>>> default_db_path({"HARKBACK_DB": "/tmp/x.db"}).as_posix()
'/tmp/x.db'
>>> default_db({"HARKBACK_DB": "postgresql:///harkback?host=/run/pg"})
'postgresql:///harkback?host=/run/pg'
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def default_db_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$HARKBACK_DB``, else ``harkback.db`` in the user's data directory (XDG on Linux)."""
    env = os.environ if environ is None else environ
    if env.get("HARKBACK_DB"):
        return Path(os.path.expanduser(env["HARKBACK_DB"]))
    from platformdirs import user_data_dir  # only when no path is given

    return Path(user_data_dir("harkback", appauthor=False)) / "harkback.db"


def default_db(environ: Mapping[str, str] | None = None) -> str:
    """The default ``--db`` value: ``$HARKBACK_DB`` as written when it is a URL (a path
    would fold its slashes), else :func:`default_db_path`."""
    env = os.environ if environ is None else environ
    if "://" in env.get("HARKBACK_DB", ""):
        return env["HARKBACK_DB"]
    return os.fspath(default_db_path(env))
