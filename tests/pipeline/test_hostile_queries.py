"""Queries that cannot hurt: every query gives a payload (or a usage error, as JSON with
``--json``), never an internal error or a store failure, on a real SQLite store."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline import Harkback
from harkback.pipeline.terminal import json_text
from tests.conftest import conversation

TURNS = {
    "docker": ("containers cannot resolve postgres on the docker bridge",
               "run docker network create backend; NOT NULL was fine"),
    "cors": ("CORS error from nginx on uploads, 上次怎么解决的",
             "add_header needs always; \x1b[2J cleared it"),
}
SESSIONS = tuple(conversation(name, ("user", asked), ("assistant", answered),
                              started_at=1_770_000_000.0 + 1_000 * i, title=name.upper())
                 for i, (name, (asked, answered)) in enumerate(TURNS.items()))


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A small real SQLite store."""
    path = tmp_path_factory.mktemp("hostile") / "h.db"
    with SqliteStore.open(path).unwrap() as store:
        asyncio.run(store.ingest(SESSIONS).awaitable()).unwrap()
    yield path


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``harkback ARGS`` in a fresh interpreter."""
    return subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", *args],
                          capture_output=True, text=True, timeout=120, check=False)


HOSTILE = {
    "not x1000": "NOT x " * 1000 + "x",
    "not docker x100": "docker " + "NOT docker " * 100,
    "or x8000": "docker OR " * 8000 + "docker",
    "100k characters": "docker bridge " * 7_000 + '"unclosed ' + "a" * 2_000,
    "brackets and stars": "((docker)) AND (* OR ** NOT) \"\" NEAR(a b) ^c col:d -e",
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_queries_give_a_json_payload(db: Path, name: str) -> None:
    """The queries of issue 20 (once exit 70, "store unavailable", or 12 s) answer."""
    done = cli("search", HOSTILE[name], "--db", str(db), "--json", "--summarizer", "none")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["success"] is True


def test_a_query_after_double_dash_may_begin_with_a_dash(db: Path) -> None:
    """``search -- -term`` searches for the term."""
    done = cli("search", "--db", str(db), "--json", "--", "-docker")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert payload["query"] == "-docker"
    assert [r["session_id"] for r in payload["results"]] == ["docker"]


def test_a_query_beginning_with_a_dash_gets_a_hint_as_json(db: Path) -> None:
    """Read as an option it is a usage error, whose payload says what to do."""
    done = cli("search", "-docker", "--db", str(db), "--json")
    assert done.returncode == 2
    payload = json.loads(done.stdout)
    assert payload["success"] is False
    assert "harkback search -- -docker" in payload["error"]
    assert "goes after '--'" in done.stderr


def test_a_query_that_looks_like_a_long_option_gets_the_hint_too(db: Path) -> None:
    """``--no-cache`` (a flag the README says is searched) is no option of ``search``: the
    usage error says to put it after ``--``, as for ``-docker`` (it said only that the
    query was missing); an unambiguous start of a real option (``--js``) gets none."""
    done = cli("search", "--db", str(db), "--json", "--no-cache")
    assert done.returncode == 2
    assert "harkback search -- --no-cache" in json.loads(done.stdout)["error"]
    assert "goes after '--'" not in cli("search", "--db", str(db), "--js").stderr


def test_a_question_of_several_words_without_quotes_gets_a_hint(db: Path) -> None:
    """``harkback search docker network bridge`` says to quote the question, quoted as a
    shell needs it, in the JSON payload too."""
    done = cli("search", "docker", "--db", str(db), "network", "it's", "--json")
    assert done.returncode == 2
    hint = "a question of several words goes in quotes: harkback search 'docker network it'"
    assert hint in json.loads(done.stdout)["error"] and hint in done.stderr
    quoted = cli("search", "docker network it's", "--db", str(db), "--json")
    assert quoted.returncode == 0, quoted.stderr
    assert json.loads(quoted.stdout)["query"] == "docker network it's"


def test_usage_errors_are_json_with_json(db: Path) -> None:
    """A bad flag value under --json still prints one JSON payload."""
    done = cli("search", "docker", "--db", str(db), "--limit", "99", "--json")
    assert done.returncode == 2
    assert "--limit" in json.loads(done.stdout)["error"]
    plain = cli("search", "docker", "--db", str(db), "--limit", "99")
    assert plain.returncode == 2 and plain.stdout == ""


_OPERATORS = st.sampled_from(["OR", "AND", "NOT", "NEAR", '"', "(", ")", "*", "-", "^",
                              ":", "+", "docker", "bridge", "x", "上次", "\x00", "\x1b[2J",
                              "\u202e", "\ud800", " ", "\n"])
_ANY_CHARACTER = st.characters(codec=None, categories=None)
_SOUP = st.lists(st.one_of(_OPERATORS, st.text(_ANY_CHARACTER, max_size=12)), max_size=40
                 ).map(" ".join)


@st.composite
def queries(draw: st.DrawFn) -> str:
    """Operator soups, quotes, brackets and characters of every Unicode category, some
    repeated up to 100,000 characters."""
    soup = draw(_SOUP)
    if not soup or not draw(st.booleans()):
        return soup
    times = draw(st.integers(1, 100_000 // len(soup)))
    return (soup * times)[:100_000]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query=queries())
def test_any_query_gives_a_payload(db: Path, query: str) -> None:
    """Through the facade on a real store: a successful payload that prints as JSON."""
    async def ask() -> dict[str, object]:
        with SqliteStore.open(db, readonly=True).unwrap() as store:
            return (await Harkback(store=store).search(query)).to_payload()
    payload = asyncio.run(ask())
    assert payload["success"] is True, payload
    json.loads(json_text(payload).encode("utf-8"))


def test_a_search_without_summaries_says_no_summary(db: Path) -> None:
    """``--summarizer none`` headed each result "(none summary)"."""
    done = cli("search", "docker", "--db", str(db), "--summarizer", "none")
    assert done.returncode == 0, done.stderr
    assert "[1] DOCKER (no summary)" in done.stdout.splitlines()
