"""What an ingest, import or sync embeds, and what it leaves to ``harkback embed``.

Each embeds the sessions it stored (an ingest or import: it read, those found stored
unchanged too), never the whole history: the first sync after an
embedder was configured embedded every stored message first (hours with a local model on
a large store), without saying so, and an ingest of one session into a large store whose
vectors were never made still does. Each says instead, once it is done, that the sessions
stored before have no vectors yet and ``harkback embed`` makes them.

>>> left_to_embed(True, EmbedSummary(model="m"), 40, by="a sync")[:60]
'40 session(s) synced before have no vectors of m: harkback e'
>>> left_to_embed(True, EmbedSummary(model="m"), 1, by="an ingest")[:40]
'1 session(s) stored before have no vecto'
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Collection

from returns.result import Success

from harkback.pipeline.embed import EmbedSummary
from harkback.pipeline.termination import stopped_with
from harkback.stages.ports import Embedder, SessionStore
from harkback.stages.stage import as_result


async def first_vectors(store: SessionStore, embedder: Embedder | None) -> bool:
    """Whether ``store`` holds no vector of ``embedder``'s model yet (asked before a sync:
    one row, not a count), so the sessions stored before have none."""
    vectors = store.vector_store() if embedder is not None else None
    if vectors is None or embedder is None:
        return False
    held = as_result(await vectors.holds_vectors(embedder.name).awaitable())
    # A store that cannot say (its vector tables damaged): the embedding will say why.
    return isinstance(held, Success) and not held.unwrap()


async def held_besides(store: SessionStore, read: Collection[str]) -> int:
    """How many sessions ``store`` holds besides the ``read`` ones (0 when it cannot
    count): those an ingest or import of a few sessions leaves without vectors when the
    model had none before (:func:`first_vectors`). A count of the whole store (``stats``),
    so asked only then, once per model."""
    counting = store.stats()
    if counting is None:
        return 0
    counted = as_result(await counting.awaitable())
    return counted.map(lambda stats: max(stats.sessions - len(read), 0)).value_or(0)


def left_to_embed(fresh: bool, embedded: EmbedSummary, before: int, *, by: str
                  ) -> str | None:
    """The note naming ``harkback embed`` for the ``before`` sessions a run ``by`` (``"a
    sync"``, ``"an ingest"``, ``"an import"``) did not store (a sync) or read (an ingest or
    import, which embed the sessions they found unchanged too), when the model had no vector
    before it (``fresh``: :func:`first_vectors`); None otherwise (the model's vectors were
    made before: what the runs stored since was embedded)."""
    if not fresh or not before:
        return None
    sync = by == "a sync"
    return (f"{before} session(s) {'synced' if sync else 'stored'} before have no vectors of "
            f"{embedded.model}: harkback embed makes them ({by} embeds only what it "
            f"{'stores' if sync else 'reads'})")


def kept_while_embedding(args: argparse.Namespace, model: str) -> Callable[[int], None]:
    """What a command stopped (Ctrl-C) while it embeds what it stored says it kept, told
    how many messages have a vector so far (``embed_after``'s ``counted``). Not "the same
    command run again goes on": a sync run again stores and embeds nothing (an ingest or
    import embeds what it reads again, not what other runs stored)."""
    def so_far(done: int) -> None:
        stopped_with(args, f"the sessions are stored, each whole; the vectors made before "
                     f"it are kept ({done} message(s) embedded with {model}): harkback "
                     "embed makes the rest")

    so_far(0)
    return so_far
