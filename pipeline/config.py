"""Where things live by default.

>>> default_db_path({"HARKBACK_DB": "/tmp/x.db"}).as_posix()
'/tmp/x.db'
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path


def default_db_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$HARKBACK_DB``, else ``harkback.db`` in the user's data directory (XDG on Linux)."""
    env = os.environ if environ is None else environ
    if env.get("HARKBACK_DB"):
        return Path(env["HARKBACK_DB"]).expanduser()
    from platformdirs import user_data_dir  # only when no path is given

    return Path(user_data_dir("harkback", appauthor=False)) / "harkback.db"
