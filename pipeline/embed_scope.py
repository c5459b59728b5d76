"""What a sync embeds, and what it leaves to ``harkback embed``.

A sync embeds the sessions it stored, never the whole history: the first sync after an
embedder was configured embedded every stored message first (hours with a local model on
a large store), without saying so. It says instead, once the sync is done, that the
sessions synced before have no vectors yet and ``harkback embed`` makes them.

>>> from harkback.pipeline.sync import SourceReport
>>> left_to_embed(True, EmbedSummary(model="m"),
...               [SourceReport(kind="codex", location="/x", status="synced", unchanged=40)])[:60]
'40 session(s) synced before have no vectors of m: harkback e'
"""

from __future__ import annotations

from collections.abc import Sequence

from returns.result import Success

from harkback.pipeline.embed import EmbedSummary
from harkback.pipeline.sync import SourceReport
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


def left_to_embed(fresh: bool, embedded: EmbedSummary, reports: Sequence[SourceReport]
                  ) -> str | None:
    """The note naming ``harkback embed`` for the sessions a sync found unchanged when
    the model had no vector before it (``fresh``: :func:`first_vectors`); None otherwise
    (the model's vectors were made before: what the syncs stored since was embedded)."""
    before = sum(r.unchanged for r in reports)
    if not fresh or not before:
        return None
    return (f"{before} session(s) synced before have no vectors of {embedded.model}: "
            "harkback embed makes them (a sync embeds only what it stores)")
