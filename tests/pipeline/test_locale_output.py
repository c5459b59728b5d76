"""Output under a locale whose encoding is not UTF-8 (``LC_ALL=en_US.ISO-8859-1``, a
Windows code page): text the encoding lacks never ends a command with an internal error.

``PYTHONIOENCODING`` gives the interpreter's standard output the encoding such a locale
gives it, on any machine (no locale of that encoding needs to be installed).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harkback.stages.ingest_format import conversation_to_json
from tests.conftest import conversation

TITLE = "docker pull 超时，配置镜像加速 café"
SESSION = conversation("zh-1", ("user", "docker pull 一直失败 café"), ("assistant", "配置镜像加速"),
                       started_at=1_770_000_000.0, title=TITLE)


def harkback(*args: str, encoding: str | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run ``harkback ARGS`` with standard output in ``encoding`` (the locale's when None)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONIOENCODING"}
    if encoding:
        env["PYTHONIOENCODING"] = encoding
    return subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", *args],
                          capture_output=True, timeout=120, check=False, env=env)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding one session with a Chinese title."""
    folder = tmp_path_factory.mktemp("locale")
    source = folder / "s.jsonl"
    source.write_text(json.dumps(conversation_to_json(SESSION)) + "\n", encoding="utf-8")
    path = folder / "h.db"
    done = harkback("ingest", str(source), "--db", str(path))
    assert done.returncode == 0, done.stderr
    return path


@pytest.mark.parametrize("encoding", ["latin-1", "ascii", "cp1252"])
@pytest.mark.parametrize("command", [("recent",), ("search", "docker"), ("show", "zh-1")])
def test_human_output_escapes_what_the_encoding_lacks(db: Path, encoding: str,
                                                      command: tuple[str, ...]) -> None:
    """recent, search and show print the title, its Chinese as ``\\uXXXX``, exit 0."""
    done = harkback(*command, "--db", str(db), encoding=encoding)
    assert done.returncode == 0, done.stderr
    out = done.stdout.decode(encoding)
    assert "docker pull \\u8d85\\u65f6" in out
    assert "internal error" not in done.stderr.decode("utf-8", "replace")


@pytest.mark.parametrize("encoding", ["latin-1", "ascii"])
@pytest.mark.parametrize("command", [("recent",), ("search", "docker"), ("show", "zh-1")])
def test_json_is_ascii_and_holds_the_same_text(db: Path, encoding: str,
                                               command: tuple[str, ...]) -> None:
    """--json is pure ASCII (every reader decodes it alike) and parses to the text stored."""
    done = harkback(*command, "--db", str(db), "--json", encoding=encoding)
    assert done.returncode == 0, done.stderr
    assert done.stdout.isascii()
    payload = json.loads(done.stdout)
    title = payload["session"]["title"] if command[0] == "show" else payload["results"][0][
        "title"]
    assert title == TITLE


def test_a_json_usage_error_echoing_chinese_is_ascii_too(db: Path) -> None:
    """A usage error's payload, printed before the command runs, takes the same way."""
    done = harkback("search", "-镜像", "--db", str(db), "--json", encoding="latin-1")
    assert done.returncode == 2
    assert done.stdout.isascii()
    assert "-镜像" in json.loads(done.stdout)["error"]
