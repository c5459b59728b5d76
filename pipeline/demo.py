"""``harkback demo``: build a store from the shipped sample corpus and ask it questions."""

from __future__ import annotations

import contextlib
import importlib.resources
import json
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from returns.result import Failure

from harkback.pipeline.facade import Harkback
from harkback.pipeline.importing import ingest_file
from harkback.pipeline.output import format_payload
from harkback.pipeline.wiring import open_store
from harkback.stages.ports import SessionStore
from harkback.stages.shown_url import shown_url
from harkback.stages.stage import as_result

DEMO_QUESTIONS: tuple[str, ...] = (
    "how did we fix the docker network problem",
    "how did we fix the CORS error on uploads",
    "where is the postgres backup script you wrote for me",
    "did we pick cursor or offset pagination for the events API",
    "端口冲突是怎么解决的",
    "上次 docker 镜像加速是怎么配置的",
)


def corpus_path() -> Path:
    """The sample corpus that ships inside the package."""
    resource = importlib.resources.files("harkback.pipeline.data") / "demo_corpus.jsonl"
    return Path(str(resource))


def corpus_ids() -> frozenset[str]:
    """The session ids of the sample corpus."""
    with corpus_path().open(encoding="utf-8") as lines:
        return frozenset(str(json.loads(line)["id"]) for line in lines if line.strip())


async def others_at(db: str) -> int:
    """:func:`others_in` of the store at ``db``, opened read-only (so nothing is migrated or
    created before the demo knows it may write there); 0 when it cannot be opened so: the
    demo's own open then says why."""
    opened = open_store(db, readonly=True)
    if isinstance(opened, Failure):
        return 0
    store = opened.unwrap()
    try:
        return await others_in(store)
    finally:
        store.close()


async def others_in(store: SessionStore) -> int:
    """How many of ``store``'s sessions are not the demo's: a store of someone's own
    sessions is no place for the sample ones (they would turn up in every later search).

    >>> import asyncio
    >>> from harkback.adapters.stores.memory import MemoryStore
    >>> asyncio.run(others_in(MemoryStore()))
    0
    """
    stats = store.stats()
    if stats is None:
        return 0
    counted = as_result(await stats)
    total = counted.unwrap().sessions if not isinstance(counted, Failure) else 0
    if total == 0:
        return 0
    found = as_result(await store.sessions(sorted(corpus_ids())))
    return total - (len(found.unwrap()) if not isinstance(found, Failure) else 0)


@contextlib.contextmanager
def _scratch_folder() -> Iterator[Path]:
    """A temporary folder for the demo's store, removed on the way out even by a process at
    its descriptor limit (``ulimit -n 7``): ``rmtree`` opens the folder to list it, failed
    there, and left the folder and its ``demo.db`` in /tmp. The store's files have known
    names, and unlinking a name takes no descriptor.

    >>> with _scratch_folder() as folder:
    ...     _ = (folder / "demo.db").write_bytes(b"")
    >>> folder.exists()
    False
    """
    folder = Path(tempfile.mkdtemp(prefix="harkback-demo-"))
    try:
        yield folder
    finally:
        try:
            shutil.rmtree(folder)
        except OSError:
            for name in ("demo.db", "demo.db-wal", "demo.db-shm", "demo.db-journal"):
                (folder / name).unlink(missing_ok=True)
            # Gone already (a /tmp cleaner took it) is what was wanted: a demo that printed
            # its recalls must not end on "No such file or directory", as it did not before.
            with contextlib.suppress(FileNotFoundError):
                folder.rmdir()  # anything else in it is not the demo's: said, not removed


async def run_demo(db: str | Path | None = None) -> int:
    """Ingest the corpus into ``db`` (a temporary file by default) and print recalls.
    A ``db`` that already holds sessions of its own is refused (exit 2), not written."""
    if db is not None:
        others = await others_at(str(db))
        if others:
            print(f"harkback: {shown_url(str(db))} already holds {others:,} session(s) that "
                  "are not the demo's, and the demo adds its sample sessions to the database "
                  "it is given; give --db a new path, or none (a temporary one)",
                  file=sys.stderr)
            return 2
    with _scratch_folder() as scratch:
        path = db or Path(scratch) / "demo.db"
        opened = open_store(path)
        if isinstance(opened, Failure):
            print(f"harkback: {opened.failure().message()}", file=sys.stderr)
            return 1
        store = opened.unwrap()
        try:
            summary = await ingest_file(corpus_path(), store, progress=False)
            print(f"demo store: {shown_url(str(path))}\n{summary.line()}\n")
            harkback = Harkback(store=store)
            for question in DEMO_QUESTIONS:
                response = await harkback.search(question, limit=2)
                print("=" * 100)
                print(f"Q: {question}\n")
                # The hints to open a result name this store: without --db, `harkback
                # show` would read the default store, which does not hold the demo's. A
                # temporary or in-memory store is gone when the demo ends: no hints then.
                kept = db is not None and str(db) != ":memory:"
                print(format_payload(response.to_payload(), db=str(path), open_hints=kept)
                      if response.ok else response.to_payload()["error"])
                print()
            if db is None:
                print("This store was temporary and is removed now; `harkback demo --db "
                      "demo.db` keeps one, to open its sessions with `harkback show`.")
        finally:
            store.close()
    return 0
