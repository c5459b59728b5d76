"""Where things live by default.

>>> default_db_path({"HARKBACK_DB": "/tmp/x.db"}).as_posix()
'/tmp/x.db'
>>> default_db({"HARKBACK_DB": "postgresql:///harkback?host=/run/pg"})
'postgresql:///harkback?host=/run/pg'
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

MISWRITTEN_URL = re.compile(r"postgres(?:ql)?:(?!//)", re.IGNORECASE)
"""A PostgreSQL URL with a slash missing (``postgresql:/team``, ``postgresql:team``): no
file's path, and refused as such, wherever it is written (``--db``, ``$HARKBACK_DB``, the
config file, whose relative paths are read from its folder)."""
CONNINFO = re.compile(r"\s*(?:host|hostaddr|port|dbname|user|password|service|sslmode)\s*=")
"""A libpq key=value string (``host=/run/pg dbname=team``), which harkback does not read:
no file's path either (it made a folder ``host=``), refused as :data:`MISWRITTEN_URL` is."""

MEMORY = ":memory:"
POSTGRES_SCHEMES = ("postgresql://", "postgres://")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+://")
"""A URL's start (a scheme of two letters or more: ``C://`` is a Windows drive's path)."""


def store_kind(target: str | bytes | os.PathLike[str]) -> str:
    """Which kind of store a ``--db`` value names: ``sqlite``, ``memory`` or ``postgresql``;
    ``url`` for a URL of another kind, which names no store harkback opens."""
    text = os.fsdecode(target)  # a bytes path too, as open_store takes it
    if text == MEMORY:
        return "memory"
    if text.startswith(POSTGRES_SCHEMES):
        return "postgresql"
    # mysql://..., postgresql+psycopg://... (an SQLAlchemy URL), file:///...: taken for a
    # path, each made folders named "mysql:" and a SQLite file where the user meant a server;
    # so did postgresql:/team, a slash short (./postgresql:team still names such a file).
    return ("url" if _URL.match(text) or MISWRITTEN_URL.match(text) or CONNINFO.match(text)
            else "sqlite")


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


def home_folder(environ: Mapping[str, str] | None = None) -> Path:
    """The user's home as platformdirs finds it for the store: ``$HOME`` when absolute,
    else the password file's (a relative or empty ``$HOME`` read the config file and the
    agents' histories below the folder the command ran in, or below ``/``, beside a store
    in the real home), else ``~`` as written (no home at all, as in some containers).

    >>> home_folder({"HOME": "/home/me"}).as_posix()
    '/home/me'
    """
    env = os.environ if environ is None else environ
    if os.name == "nt":
        return Path(os.path.expanduser("~"))
    if os.path.isabs(env.get("HOME", "")):
        return Path(env["HOME"])
    try:
        import pwd

        return Path(pwd.getpwuid(os.getuid()).pw_dir)
    except (ImportError, KeyError):
        return Path("~")


HOME_VARIABLES = {"hermes": "HERMES_HOME", "claude-code": "CLAUDE_CONFIG_DIR",
                  "codex": "CODEX_HOME"}
BELOW_HOME = {"claude-code": "projects", "codex": "sessions"}
"""The variable naming each kind's home folder, and the folder below it its sessions are in."""


def default_location(kind: str, environ: Mapping[str, str] | None = None) -> Path:
    """Where ``kind``'s transcripts live by default.

    >>> default_location("codex", {"CODEX_HOME": "/x/.codex"}).as_posix()
    '/x/.codex/sessions'
    >>> default_location("hermes", {"HERMES_HOME": "/h"}).as_posix(), default_location(
    ...     "claude-code", {"HOME": "/home/me"}).as_posix()  # that environment's ~
    ('/h', '/home/me/.claude/projects')
    >>> default_location("codex", {"CODEX_HOME": " ", "HOME": "/home/me"}).as_posix()
    '/home/me/.codex/sessions'
    """
    env = os.environ if environ is None else environ
    if kind not in HOME_VARIABLES:
        raise ValueError(f"no default location for {kind!r}")
    given = env.get(HOME_VARIABLES[kind], "")
    # Blank (HERMES_HOME=' ') is unset, as empty is: it named the folder " " where one stood.
    home = given if given.strip() else f"~/.{kind.partition('-')[0]}"
    if home == "~" or home.startswith("~/"):
        # The given environment's ~, not this process's; the store's and the config file's
        # home when $HOME is relative or empty (sync looked for histories below "/" then).
        home = os.fspath(home_folder(env) / home[2:])
    return Path(os.path.expanduser(home)) / BELOW_HOME.get(kind, "")
