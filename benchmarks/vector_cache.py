"""Passage vectors kept on disk between benchmark runs, so a model embeds each text once.

Embedding the pooled LongMemEval user turns (about 53,000) with all-MiniLM-L6-v2 takes
over half an hour on a 2-core CPU; the retrieval benchmark builds stores many times (one
per question, then the pool), so it embeds through :class:`CachedEmbedder`: passages
found in the cache folder are served from it, the others go to the real embedder and
are added. Queries always go to the real embedder. The cache is a folder of ``.npz``
files, each with ``keys`` (SHA-256 of the exact passage text) and ``vecs`` (float32).
It belongs to one model: name the folder after it.

Fill it ahead of time (optional; misses are embedded on the way)::

    .venv/bin/python -m benchmarks.vector_cache --data FILE --cache DIR --embedder minilm
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import sys
from collections.abc import Sequence
from pathlib import Path

import attrs
from returns.future import FutureResult
from returns.result import Failure
from returns.unsafe import unsafe_perform_io

from benchmarks.entry import run_main
from benchmarks.extras import needs_extra
from harkback.stages.defaults import EMBED_ROLES
from harkback.stages.embedding import passage_text
from harkback.stages.errors import ModelFailed
from harkback.stages.ports import Embedder, EmbedKind, Vector

try:
    import numpy as np
except ImportError as missing:
    raise needs_extra("hybrid", missing) from None


def text_key(text: str) -> str:
    """The cache key of a passage: SHA-256 of its UTF-8 text.

    >>> text_key("hi")[:12]
    '8f434346648f'
    """
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def load_cache(folder: Path) -> dict[str, Vector]:
    """Every vector in ``folder``'s ``.npz`` files, by key."""
    found: dict[str, Vector] = {}
    for file in sorted(folder.glob("*.npz")):
        with np.load(file) as data:
            for key, vec in zip(data["keys"], data["vecs"], strict=True):
                found[str(key)] = tuple(float(x) for x in vec)
    return found


@attrs.define
class CachedEmbedder:
    """An :class:`Embedder` serving passages from a disk cache, the rest from ``inner``."""

    inner: Embedder
    folder: Path
    vectors: dict[str, Vector] = attrs.field(factory=dict)
    added: int = 0

    @classmethod
    def load(cls, inner: Embedder, folder: Path) -> CachedEmbedder:
        """The cache in ``folder`` (created if missing) in front of ``inner``."""
        folder.mkdir(parents=True, exist_ok=True)
        return cls(inner=inner, folder=folder, vectors=load_cache(folder))

    @property
    def name(self) -> str:
        """The inner model's name."""
        return self.inner.name

    def embed(self, texts: Sequence[str], kind: EmbedKind
              ) -> FutureResult[tuple[Vector, ...], ModelFailed]:
        """Cached vectors for known passages; the inner model for the rest."""
        if kind == "query":
            return self.inner.embed(texts, kind)
        keys = [text_key(t) for t in texts]
        missing = [i for i, k in enumerate(keys) if k not in self.vectors]

        def merge(found: tuple[Vector, ...]) -> tuple[Vector, ...]:
            fresh = {keys[i]: v for i, v in zip(missing, found, strict=True)}
            if fresh:
                self._save(fresh)
            return tuple(self.vectors[k] for k in keys)

        if not missing:
            return FutureResult.from_value(merge(()))
        return self.inner.embed([texts[i] for i in missing], kind).map(merge)

    def _save(self, fresh: dict[str, Vector]) -> None:
        self.vectors.update(fresh)
        self.added += len(fresh)
        name = self.folder / f"added-{len(list(self.folder.glob('*.npz'))):06d}.npz"
        np.savez(name, keys=np.array(list(fresh)),
                 vecs=np.array(list(fresh.values()), dtype=np.float32))

    async def aclose(self) -> None:
        """Close the inner model."""
        await self.inner.aclose()


def fill(data_path: Path, folder: Path, embedder: Embedder, *, batch: int = 256) -> int:
    """Embed every pooled passage of a LongMemEval file not yet in ``folder``."""
    from benchmarks.longmemeval import Dataset

    texts = list(dict.fromkeys(
        text for c in Dataset.read(data_path).pooled() for m in c.messages
        if m.role in EMBED_ROLES and (text := passage_text(m)) is not None))
    cached = CachedEmbedder.load(embedder, folder)  # made only once the data is read
    todo = [t for t in texts if text_key(t) not in cached.vectors]
    todo.sort(key=len)  # similar lengths batch with less padding
    for start in range(0, len(todo), batch):
        outcome = asyncio.run(cached.embed(todo[start:start + batch], "passage").awaitable())
        unsafe_perform_io(outcome.unwrap())  # a failing model is a broken run
        print(f"{min(start + batch, len(todo))}/{len(todo)}", file=sys.stderr, flush=True)
    return len(todo)


def main(argv: Sequence[str] | None = None) -> int:
    """Fill a cache folder ahead of a benchmark run."""
    from harkback.adapters.models.embedder_spec import embedder_from_spec

    parser = argparse.ArgumentParser(prog="python -m benchmarks.vector_cache")
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--cache", type=Path, required=True)
    parser.add_argument("--embedder", default="minilm")
    args = parser.parse_args(argv)
    embedder = embedder_from_spec(args.embedder)
    if isinstance(embedder, Failure):
        raise SystemExit(embedder.failure().message())
    done = fill(args.data, args.cache, embedder.unwrap())
    print(f"embedded {done} passage(s) into {args.cache}")
    return 0


if __name__ == "__main__":
    run_main(main)
