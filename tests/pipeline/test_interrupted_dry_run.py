"""Ctrl-C during ``harkback sync --dry-run``: a dry run stores nothing, so its line claims
nothing kept, while the sync that writes says what it kept (``KEPT_WHEN_STOPPED``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harkback.pipeline import cli, commands


async def _stopped(_args: object) -> int:
    raise KeyboardInterrupt


@pytest.mark.parametrize(("extra", "line"), [
    (["--dry-run"], "harkback: interrupted\n"),
    ([], "harkback: interrupted; the sessions stored before it are kept, each whole: the "
         "same command run again goes on from there, storing none twice\n"),
])
def test_an_interrupted_dry_run_says_nothing_was_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        extra: list[str], line: str) -> None:
    # The sync itself is stopped where it starts: what is tested is the line the CLI says.
    monkeypatch.setitem(commands.COMMANDS, "sync", _stopped)
    status = cli.main(["sync", *extra, "--db", str(tmp_path / "h.db")])
    assert (status, capsys.readouterr().err) == (130, line)
