"""A path that starts with ``~user`` for a user this machine does not have (a config file
copied from another machine, a typo): Python's ``Path.expanduser()`` raises RuntimeError
there, which ended every command as an internal error (exit 70). As a shell does, the path
is kept as written, and the command says what it finds there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

INTERNAL = 70
ELSEWHERE = "~no-such-user-harkback"


def harkback(tmp_path: Path, *args: str, env: dict[str, str] | None = None
             ) -> subprocess.CompletedProcess[str]:
    """``harkback ARGS`` run in ``tmp_path`` with ``env`` added to a clean environment."""
    base = {k: v for k, v in os.environ.items()
            if not k.startswith("HARKBACK_") and k != "HERMES_HOME"}
    return subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", *args],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120,
                          env={**base, **(env or {})}, check=False)


@pytest.mark.parametrize("command", [
    ("stats", "--db", f"{ELSEWHERE}/h.db"),
    ("search", "docker", "--db", f"{ELSEWHERE}/h.db"),
    ("show", "s1", "--db", f"{ELSEWHERE}/h.db"),
])
def test_a_db_under_an_unknown_users_home_is_one_line(tmp_path: Path,
                                                      command: tuple[str, ...]) -> None:
    """``--db ~nobody-here/h.db``: one line naming the path, exit 1."""
    done = harkback(tmp_path, *command)
    assert done.returncode == 1, done.stderr
    assert f"{ELSEWHERE}/h.db" in done.stderr and "internal error" not in done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr


def test_demo_builds_its_store_at_the_path_as_written(tmp_path: Path) -> None:
    """``demo --db ~nobody-here/h.db`` makes that folder where it runs, as ``mkdir -p``
    in a shell would."""
    done = harkback(tmp_path, "demo", "--db", f"{ELSEWHERE}/h.db")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / ELSEWHERE / "h.db").is_file()


@pytest.mark.parametrize("env", [
    {"HARKBACK_DB": f"{ELSEWHERE}/h.db"},
    {"HARKBACK_CONFIG": "{tmp}/config.toml"},
])
def test_a_db_setting_under_an_unknown_users_home_is_one_line(
        tmp_path: Path, env: dict[str, str]) -> None:
    """The same path from the environment or the config file."""
    (tmp_path / "config.toml").write_text(f'db = "{ELSEWHERE}/h.db"\n')
    done = harkback(tmp_path, "stats", env={k: v.format(tmp=tmp_path) for k, v in env.items()})
    assert done.returncode == 1, done.stderr
    assert f"{ELSEWHERE}/h.db" in done.stderr and "internal error" not in done.stderr


def test_an_agent_home_under_an_unknown_users_home_is_no_history(tmp_path: Path) -> None:
    """``HERMES_HOME=~nobody-here``: that source is not found, as any missing folder."""
    done = harkback(tmp_path, "sync", "--db", str(tmp_path / "h.db"), "--dry-run",
                    env={"HERMES_HOME": ELSEWHERE, "HOME": str(tmp_path)})
    assert done.returncode == 1, done.stderr
    assert ELSEWHERE in done.stderr and "internal error" not in done.stderr


# The child's password file lacks its user id, as in a container run as an arbitrary user:
# a patched ``pwd.getpwuid`` says so without needing another user (one that could not
# read a checkout under a private folder, as a CI clone may be).
_NO_PASSWD_ENTRY = (
    "import pwd, runpy, sys\n"
    "def lacking(uid): raise KeyError(f'getpwuid(): uid not found: {uid}')\n"
    "pwd.getpwuid = lacking\n"
    "sys.argv = ['harkback', *sys.argv[1:]]\n"
    "runpy.run_module('harkback.pipeline.cli', run_name='__main__')\n")


def without_a_home(*args: str, env: dict[str, str] | None = None
                   ) -> subprocess.CompletedProcess[str]:
    """``harkback ARGS`` with no ``$HOME`` (nor XDG folders) and no password file entry."""
    base = {k: v for k, v in os.environ.items()
            if k not in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME")
            and not k.startswith("HARKBACK_")}
    return subprocess.run([sys.executable, "-c", _NO_PASSWD_ENTRY, *args], capture_output=True,
                          text=True, cwd="/", env={**base, **(env or {})}, timeout=120,
                          check=False)


def test_a_user_without_a_home_runs_commands() -> None:
    """No ``$HOME`` and a user id the password file lacks: ``config`` reports the settings;
    every command ended as an internal error before reading a flag."""
    done = without_a_home("config", "--json", env={"HARKBACK_DB": "/h.db"})
    assert done.returncode == 0, done.stderr
    assert '"/h.db"' in done.stdout


def test_no_home_and_no_db_is_one_line() -> None:
    """With no home there is no data folder to hold the default store: one line asking for
    ``--db`` (a usage error), not an internal error from the folder's lookup."""
    done = without_a_home("stats")
    assert done.returncode == 2, done.stderr
    assert "--db" in done.stderr and "internal error" not in done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr
