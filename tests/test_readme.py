"""The README's Python examples run as written."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harkback.pipeline.cli import build_parser
from harkback.pipeline.cli_edges import UsageError
from harkback.stages.defaults import DEFAULT_LIMIT, MAX_LIMIT

README = Path(__file__).resolve().parents[1] / "README.md"
STAGES = {"match", "resolve", "load", "summarize", "assemble"}


def python_blocks() -> list[str]:
    """Every ```python block of the README (```py blocks are fragments, not run)."""
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)


def test_readme_library_example_runs(tmp_path: Path) -> None:
    """The library example runs in a fresh interpreter: a payload, then each stage's time."""
    blocks = python_blocks()
    assert blocks, "the README lost its library example"
    done = subprocess.run([sys.executable, "-c", blocks[0]], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    payload, timings = done.stdout.strip().splitlines()[-2:]
    assert "'success': True" in payload
    assert set(ast.literal_eval(timings)) == STAGES
    assert (tmp_path / "history.db").exists()


def test_readme_examples_use_only_the_public_api() -> None:
    """Every harkback import in the README's Python examples comes from harkback.pipeline."""
    text = README.read_text(encoding="utf-8")
    code = "\n".join(re.findall(r"```py(?:thon)?\n(.*?)```", text, re.DOTALL))
    imports = re.findall(r"^from (harkback[\w.]*) import", code, re.MULTILINE)
    assert imports
    assert set(imports) == {"harkback.pipeline"}



def test_readme_gives_the_limits_the_command_line_enforces() -> None:
    """The README names each command's ``--limit`` range and default as the command line
    enforces them (recent's maximum was only in ``--help``)."""
    text = " ".join(README.read_text(encoding="utf-8").split())
    stated = re.search(r"`search` returns up to `--limit N` sessions \(1 to (\d+); (\d+) unless"
                       r" `\$HARKBACK_LIMIT`"
                       r".*?`recent` lists up to `--limit N` \(1 to (\d+); (\d+) by default\)",
                       text)
    assert stated, "the README does not state the --limit ranges"
    search_max, search_default, recent_max, recent_default = map(int, stated.groups())
    assert (search_max, search_default) == (MAX_LIMIT, DEFAULT_LIMIT)
    parser = build_parser()
    recent = parser.parse_args(["recent"])
    assert recent.limit == recent_default
    assert parser.parse_args(["recent", "--limit", str(recent_max)]).limit == recent_max
    with pytest.raises(UsageError):
        parser.parse_args(["recent", "--limit", str(recent_max + 1)])


def test_readme_sends_a_library_user_to_no_internal_module() -> None:
    """What the README tells a library user to import comes from ``harkback.pipeline``, the
    only public module (it sent the agent tool's users to ``harkback.pipeline.tool`` and
    ``LocalEmbedder``'s to ``harkback.adapters.models.local_embedder``, both internal), and
    each name it gives there loads."""
    import harkback.pipeline as api

    text = README.read_text(encoding="utf-8")
    assert re.findall(r"harkback\.(?:pipeline|stages|adapters)\.(?!__all__)\w+", text) == []
    for name in ("SESSION_SEARCH_TOOL", "handle_session_search", "LocalEmbedder"):
        assert name in text and name in api.__all__ and getattr(api, name) is not None


def test_quick_start_names_the_command_the_makefile_installs() -> None:
    """The quick start says where ``make demo`` put the ``harkback`` command the rest of the
    README runs (it did not say; a new user had no ``harkback`` on ``PATH``)."""
    root = README.parent
    quick = README.read_text(encoding="utf-8").split("## Quick start", 1)[1].split("\n## ", 1)[0]
    venv = re.search(r"^VENV := (\S+)$", (root / "Makefile").read_text(), re.MULTILINE)
    assert venv is not None
    assert f"`{venv.group(1)}/bin/harkback`" in quick
    assert re.search(r'^harkback = "harkback\.pipeline\.cli:main"$',
                     (root / "pyproject.toml").read_text(), re.MULTILINE)


def json_blocks() -> list[str]:
    """Every ```json block of the README."""
    return re.findall(r"```json\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)


def test_search_payload_example_has_the_keys_a_search_gives(tmp_path: Path) -> None:
    """The README's ``search --json`` example names the keys a real search prints: the
    README's own ingest example ingested, then searched (the example lacked ``started_at``,
    ``matched_sessions`` and ``transcript_chars`` long after the payload gained them)."""
    example = next(json.loads(b) for b in json_blocks() if '"mode": "search"' in b)
    session = next(b for b in json_blocks() if b.lstrip().startswith('{"id"'))
    lines = tmp_path / "sessions.jsonl"
    lines.write_text(json.dumps(json.loads(session)) + "\n", encoding="utf-8")
    db = str(tmp_path / "h.db")

    def harkback(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", *args, "--db", db],
                              capture_output=True, text=True, timeout=60, check=False)

    assert harkback("ingest", str(lines)).returncode == 0
    done = harkback("search", "docker network", "--json")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert payload["results"], payload
    assert set(example) == set(payload)
    assert set(example["results"][0]) == set(payload["results"][0])
    assert set(example["timings"]) == set(payload["timings"])


def test_readme_gives_the_defaults_of_pages_and_model_calls() -> None:
    """The page sizes and model-call bounds the README states are the code's: ``show``'s
    page, ``read_session``'s, the recall's deadline on the command line and in the MCP
    server, and the model client's concurrency and rate."""
    from harkback.adapters.models.chat_settings import ChatSettings
    from harkback.pipeline.mcp_specs import TOOLS
    from harkback.pipeline.mcp_tools import MODEL_DEADLINE_S
    from harkback.stages.defaults import MAX_PAGE_LIMIT, PAGE_LIMIT
    page = TOOLS["read_session"].input_schema["properties"]["limit"]

    text = " ".join(README.read_text(encoding="utf-8").split())

    def number(pattern: str) -> float:
        found = re.search(pattern, text)
        assert found, f"the README no longer says {pattern!r}"
        return float(found.group(1))

    chat = ChatSettings(model="m")
    parser = build_parser()
    assert number(r"a page at a time \((\d+) messages unless `--limit N`") == PAGE_LIMIT
    assert parser.parse_args(["show", "s"]).limit == PAGE_LIMIT
    assert number(r"unless `--limit N`, at most (\d+)\)") == MAX_PAGE_LIMIT
    assert number(r"`limit` \(page size, default (\d+)\)") == page["default"]
    assert page["maximum"] == MAX_PAGE_LIMIT
    assert number(r"`--deadline SECONDS` for all model calls of the recall \((\d+);") == (
        parser.parse_args(["search", "x"]).deadline)
    assert number(r"model calls have (\d+) s in all") == MODEL_DEADLINE_S
    assert number(r"concurrency \((\d+) requests at once\)") == chat.max_concurrency
    assert number(r"and rate \((\d+) a minute\)") == chat.rate * 60 / chat.rate_period


def test_readme_counts_the_redaction_corpus() -> None:
    """The README's counts of secret shapes caught and look-alikes kept are the corpus's
    (it said 58 shapes after three more were added)."""
    from tests.stages.redact.corpus import CAUGHT, SURVIVES

    text = " ".join(README.read_text(encoding="utf-8").split())
    stated = re.search(r"tested on (\d+) secret shapes that must be caught and (\d+) "
                       r"look-alikes that must survive", text)
    assert stated, "the README no longer counts the redaction corpus"
    assert tuple(map(int, stated.groups())) == (len(CAUGHT), len(SURVIVES))
