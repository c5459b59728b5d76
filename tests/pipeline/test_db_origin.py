"""A ``db`` value that names no usable store, taken from ``$HARKBACK_DB`` or the config
file: the error says where it was written, not only what is wrong with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pipeline.test_import_cli import harkback


@pytest.fixture(params=["a folder", "mysql://db.example/h"])
def bad(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A folder (no file can be there), or a URL of no store harkback opens."""
    return str(tmp_path) if request.param == "a folder" else str(request.param)


@pytest.mark.parametrize("command", [("search", "docker"), ("stats",), ("sync", "--json")])
def test_a_bad_db_value_says_where_it_was_written(tmp_path: Path, bad: str,
                                                  command: tuple[str, ...]) -> None:
    """The line named the value and what was wrong, never where it came from: users then
    looked for it on a command line that had none."""
    config = tmp_path / "config" / "harkback" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'limit = 3\ndb = "{bad}"\n', encoding="utf-8")
    given = {"CODEX_HOME": str(tmp_path / "codex")}  # sync: a source, not the user's
    (tmp_path / "codex" / "sessions").mkdir(parents=True)
    from_file = harkback(*command, env={**given, "XDG_CONFIG_HOME": str(config.parents[1])})
    from_env = harkback(*command, env={**given, "HARKBACK_DB": bad})
    from_flag = harkback(*command, "--db", bad, env=given)
    assert from_file.returncode == from_env.returncode == from_flag.returncode == 1
    assert f"(the db value of config file {config} line 2)\n" in from_file.stderr, (
        from_file.stderr)
    assert from_env.stderr.endswith(" (the db value of $HARKBACK_DB)\n"), from_env.stderr
    assert "db value" not in from_flag.stderr and bad in from_flag.stderr, from_flag.stderr
