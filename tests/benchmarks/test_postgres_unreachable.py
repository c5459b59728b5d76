"""The PostgreSQL benchmarks end with one line when they cannot have a server or a store."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks import agreement_postgres, scale_postgres, search_after_ingest, soak
from tests.support import postgres_server

DEAD = "postgresql://harkback@/postgres?host=/nonexistent-socket-folder"
"""A server that is not there: its socket's folder does not exist."""

RUNS: dict[str, tuple[Callable[[Path], object], str]] = {
    "scale_postgres --url": (lambda _: scale_postgres.main(["--sizes", "1k", "--url", DEAD]),
                             "cannot reach the PostgreSQL server at "),
    "scale_postgres --database": (lambda _: scale_postgres.main(["--database", DEAD]),
                                  f"{DEAD}: session store unavailable: "),
    "search_after_ingest --url": (lambda _: search_after_ingest.main(["--size", "1k", "--url",
                                                                      DEAD]),
                                  "cannot reach the PostgreSQL server at "),
    "search_after_ingest --database": (lambda _: search_after_ingest.main(["--database", DEAD]),
                                       f"{DEAD}: session store unavailable: "),
    "agreement_postgres --url": (lambda folder: agreement_postgres.main(
        ["--data", str(folder / "empty.json"), "--url", DEAD]),
        "cannot reach the PostgreSQL server at "),
    "soak --db": (lambda _: soak.main(["--db", DEAD, "--seconds", "1"]),
                  f"{DEAD}: session store unavailable: "),
}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_an_unreachable_server_is_one_line(tmp_path: Path, name: str) -> None:
    """Each names the URL and why (no traceback), before measuring anything."""
    (tmp_path / "empty.json").write_text("[]")
    run, start = RUNS[name]
    with pytest.raises(SystemExit) as exited:
        run(tmp_path)
    message = str(exited.value.code)
    assert message.startswith(start) and "/nonexistent-socket-folder" in message
    assert "\n" not in message


def test_a_machine_without_postgresql_is_told_how_to_get_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With no server binaries found (this machine has some, so their search is made to
    find none), a throwaway server is refused in one line that says what to install or to
    pass --url."""
    monkeypatch.setattr(postgres_server, "server_binaries", lambda: None)
    with pytest.raises(SystemExit) as exited, scale_postgres.server(None):
        pass
    message = str(exited.value.code)
    assert "apt-get install postgresql" in message and message.endswith("or pass --url")
    assert "\n" not in message
