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


@pytest.mark.parametrize(("extra", "line"), [
    (["--dry-run"], "harkback: interrupted\n"),
    ([], "harkback: interrupted; the sessions rewritten before it keep their placeholders, "
         "but the old text may linger in the file until the same command run again finishes "
         "the job\n"),
])
def test_an_interrupted_redact_says_the_secrets_may_linger_until_run_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        extra: list[str], line: str) -> None:
    """A redact stopped on the way said only "interrupted": its rewritten sessions are kept,
    but the old texts stay in the index's old segments and freed pages until a run ends
    with its merge, and nothing said to run it again."""
    monkeypatch.setitem(commands.COMMANDS, "redact", _stopped)
    status = cli.main(["redact", *extra, "--db", str(tmp_path / "h.db")])
    assert (status, capsys.readouterr().err) == (130, line)
