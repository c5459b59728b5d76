"""``harkback demo``: build a store from the shipped sample corpus and ask it questions."""

from __future__ import annotations

import importlib.resources
import sys
import tempfile
from pathlib import Path

from returns.result import Failure

from harkback.pipeline.facade import Harkback
from harkback.pipeline.importing import ingest_file
from harkback.pipeline.output import format_payload
from harkback.pipeline.wiring import open_store

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


async def run_demo(db: Path | None = None) -> int:
    """Ingest the corpus into ``db`` (a temporary file by default) and print recalls."""
    with tempfile.TemporaryDirectory(prefix="harkback-demo-") as scratch:
        path = db or Path(scratch) / "demo.db"
        opened = open_store(path)
        if isinstance(opened, Failure):
            print(f"harkback: {opened.failure().message()}", file=sys.stderr)
            return 1
        store = opened.unwrap()
        try:
            summary = await ingest_file(corpus_path(), store, progress=False)
            print(f"demo store: {path}\n{summary.line()}\n")
            harkback = Harkback(store=store)
            for question in DEMO_QUESTIONS:
                response = await harkback.search(question, limit=2)
                print("=" * 100)
                print(f"Q: {question}\n")
                print(format_payload(response.to_payload()) if response.ok
                      else response.to_payload()["error"])
                print()
        finally:
            store.close()
    return 0
