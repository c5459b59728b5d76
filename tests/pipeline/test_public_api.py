"""The public API: the names of ``harkback.pipeline.__all__``, loaded lazily."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import harkback.pipeline as api
from tests.support.new_stores import store_locations

PUBLIC = {
    "BadRecord", "BrowseResult", "ChatModel", "ChatSettings", "Conversation", "DEFAULT_RANKER",
    "DEFAULT_SUMMARIZER", "Deps", "Embedder", "Harkback", "Loaded", "Matched", "Message",
    "MessageHit", "ModelFailed", "ModelRerank", "Observer", "Pipeline", "QueryRejected",
    "RANKERS", "Recall", "RecallError", "RecallResult", "RecallSettings", "RecentEntry",
    "RecordingObserver", "Resolved", "Response", "STORES", "SUMMARIZERS", "SearchRequest",
    "Session", "SessionStore", "Stage", "StageEvent", "Step", "StoreUnavailable", "SummarizedSet",
    "SummaryCache", "VectorStore", "__version__", "open_store", "recall", "run_sync",
    "store_kind", "with_model",
    "NotFound", "SessionPage", "NoStore",
    "LocalEmbedder", "SESSION_SEARCH_TOOL", "handle_session_search", "handle_session_search_sync",
}


def test_public_names_are_pinned() -> None:
    """Adding or removing a public name is a decision: this list changes with it."""
    assert set(api.__all__) == PUBLIC


postgres_url = store_locations("postgres")
"""The URL of a new, empty database on the run's server."""


def test_no_store_is_public_as_the_failure_of_an_empty_database(postgres_url: str) -> None:
    """A PostgreSQL database holding no store, opened read-only, fails with ``NoStore``,
    which a library caller could not import to tell it from a store out of reach: only
    its base, ``StoreUnavailable``, was public."""
    from harkback.pipeline import NoStore, StoreUnavailable, open_store

    failure = open_store(postgres_url, readonly=True).failure()
    assert isinstance(failure, NoStore) and isinstance(failure, StoreUnavailable)
    assert "holds no harkback store" in failure.message()


def test_a_missing_sqlite_file_opened_read_only_is_no_store(tmp_path: Path) -> None:
    """sync35: a SQLite file that is not there, opened read-only (what ``search --db
    /no/such.db`` opens), failed with a plain ``StoreUnavailable``, which a caller takes
    for a store broken or out of reach: it is ``NoStore``, as an empty PostgreSQL
    database is, naming how to make one; and no file is made."""
    from harkback.pipeline import NoStore, open_store

    path = tmp_path / "no" / "such.db"
    failure = open_store(str(path), readonly=True).failure()
    assert isinstance(failure, NoStore), failure
    assert "harkback sync --db" in failure.message()
    assert not path.parent.exists()


def test_every_public_name_resolves() -> None:
    """Each name of ``__all__`` loads from its home module, and ``dir`` lists them."""
    for name in api.__all__:
        assert getattr(api, name) is not None, name
    assert set(dir(api)) >= PUBLIC


def test_unknown_name_is_an_attribute_error() -> None:
    """A name outside the API fails as attribute access does anywhere else."""
    try:
        getattr(api, "NoSuchThing")  # noqa: B009
    except AttributeError as error:
        assert "NoSuchThing" in str(error)
    else:
        raise AssertionError("expected AttributeError")


def test_version_comes_from_the_package_metadata() -> None:
    """``__version__`` is the installed distribution's version."""
    assert api.__version__ == version("harkback")


def test_importing_the_api_loads_no_heavy_module() -> None:
    """``import harkback.pipeline`` loads no model client or array library until asked."""
    script = ("import sys, harkback.pipeline\n"
              "print(sorted(m for m in ('openai', 'numpy', 'httpx', 'sqlite3') "
              "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"

