"""The tests' throwaway PostgreSQL server does not outlive a test run that is killed."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.support.processes import running

ROOT = Path(__file__).resolve().parents[3]

PROBE = '''
import os, time
from pathlib import Path

def test_holds_the_server(postgres_server):
    Path(os.environ["PROBE_FOLDER"]).write_text(
        f"{postgres_server.folder}\\n{postgres_server.process.pid}")
    time.sleep(300)
'''


def _servers_of(folder: Path) -> list[int]:
    """The processes whose command line names ``folder`` (the server's data and socket)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if str(folder) in line and running(int(entry.name)):
                found.append(int(entry.name))
    return found


def test_a_sigterm_to_pytest_stops_the_server(tmp_path: Path) -> None:
    """SIGTERM to a pytest run holding the session's server: the server stops and its
    folder goes (it ran on, a child of init, with its folder under /tmp)."""
    (tmp_path / "test_probe.py").write_text(PROBE, encoding="utf-8")
    said = tmp_path / "server"
    run = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p",
         "tests.support.postgres_server", "--rootdir", str(tmp_path),
         str(tmp_path / "test_probe.py")],
        cwd=ROOT, env={**os.environ, "PROBE_FOLDER": str(said)},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while not said.exists() and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert said.exists(), run.communicate(timeout=30)[0]
        folder_text, postmaster = said.read_text().split("\n")
        folder = Path(folder_text)
        assert running(int(postmaster))  # the server is there to outlive the run
        run.send_signal(signal.SIGTERM)
        run.communicate(timeout=60)
        deadline = time.monotonic() + 30
        while _servers_of(folder) and time.monotonic() < deadline:
            time.sleep(0.1)
        left = _servers_of(folder)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    for pid in left:  # so that a failure here leaves no server behind either
        os.kill(pid, signal.SIGKILL)
    if left:
        shutil.rmtree(folder, ignore_errors=True)
    assert left == []
    assert not folder.exists()
