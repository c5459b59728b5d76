"""Give stored messages their dense vectors: the work behind ``harkback embed``.

Messages without a vector of the embedder's model are read in batches, embedded and
kept, until none is left. A failing embedder or store stops the run with what was done
so far kept: the next run goes on from there, and ranking never waits for it (sessions
without vectors are still found by words).

>>> EmbedSummary(model="all-MiniLM-L6-v2", embedded=64).describe()
'embedded 64 message(s) with all-MiniLM-L6-v2'
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

import attrs
from returns.future import FutureResult
from returns.result import Failure

from harkback.pipeline.progress import Progress
from harkback.stages.defaults import EMBED_BATCH, EMBED_ROLES
from harkback.stages.embedding import passage_text
from harkback.stages.errors import ModelFailed, StoreUnavailable
from harkback.stages.ports import Embedder, MessageKey, Vector, VectorStore
from harkback.stages.records import Message, Role
from harkback.stages.stage import as_result

BATCH = EMBED_BATCH
"""Messages per embedder call and per write."""

CHANGED_BATCHES = 3
"""Batches in a row wholly changed by an ingest while embedded before a run gives up."""


@attrs.frozen(kw_only=True)
class EmbedSummary:
    """What an embedding run did; ``error`` says why it stopped early, if it did."""

    model: str
    embedded: int = 0
    error: ModelFailed | StoreUnavailable | None = None

    @property
    def ok(self) -> bool:
        """True when every eligible message now has a vector."""
        return self.error is None

    def describe(self, *, after_import: bool = False) -> str:
        """One line for people; ``after_import``: the embedding that followed an import
        or sync, which run again reads nothing (its marks are kept), so embeds nothing:
        ``harkback embed`` goes on.

        >>> EmbedSummary(model="m", error=ModelFailed("down")).describe(after_import=True)[-50:]
        'once that is fixed, harkback embed makes the rest)'
        """
        text = f"embedded {self.embedded} message(s) with {self.model}"
        if self.error is not None:
            then = "harkback embed makes the rest" if after_import else "run it again to go on"
            text += (f"; stopped: {self.error.message()} (the vectors made are kept: "
                     f"{self.go_on_when()}, {then})")
        return text

    def kept_when_stopped(self) -> str:
        """What a run stopped now (Ctrl-C, SIGTERM) keeps, and that running it again goes on.

        >>> EmbedSummary(model="m", embedded=128).kept_when_stopped()[:60]
        'the vectors made before it are kept (128 message(s) embedded'
        """
        return (f"the vectors made before it are kept ({self.embedded} message(s) embedded "
                f"with {self.model}; the batch then at the embedder, up to {BATCH} messages, "
                "is embedded again): the same command run again goes on from there")

    def go_on_when(self) -> str:
        """When running ``embed`` again helps: a transient stop (another writer rewriting
        the text, a server restarting) passes by itself; anything else wants a fix first.

        >>> EmbedSummary(model="m", error=StoreUnavailable("busy", transient=True)
        ...              ).go_on_when()
        'once it has passed'
        """
        transient = isinstance(self.error, StoreUnavailable) and self.error.transient
        return "once it has passed" if transient else "once that is fixed"


SCOPE_SESSIONS = 2_000
"""Sessions named to the store at a time when a run embeds a list of them."""


async def embed_missing(vectors: VectorStore, embedder: Embedder, *,
                        roles: tuple[Role, ...] = EMBED_ROLES, batch: int = BATCH,
                        progress: bool | None = None,
                        counted: Callable[[int], None] | None = None,
                        sessions: Collection[str] | None = None) -> EmbedSummary:
    """Embed every message of ``roles`` (of ``sessions`` only, when given: what a sync
    stored) that has no vector of ``embedder.name`` yet; ``counted`` hears how many have
    gained one after each batch (what a run stopped by Ctrl-C says it kept)."""
    model = embedder.name
    # Counting what is left up front costs a scan of every message's text, so the bar
    # counts what is done: a total grown batch by batch showed a share that meant nothing
    # (67 % with 128 of 1,571 messages embedded, 96 % at any 1,536).
    bar = Progress(total=None, label=f"embed with {model}", enabled=progress,
                   unit="message(s) embedded")
    # The store reads the whole list at every batch: 30,000 sessions ingested with an
    # embedder passed all 30,000 ids for each of ~940 batches (21.7 s where 6.7 s had done,
    # growing with the square of the sessions), so they are named a slice at a time.
    named = None if sessions is None else sorted(sessions)
    scopes = [None] if named is None else [
        named[at:at + SCOPE_SESSIONS] for at in range(0, len(named), SCOPE_SESSIONS)]
    summary = EmbedSummary(model=model)
    try:
        for scope in scopes:
            summary = await _embed_scope(vectors, embedder, roles, batch, scope,
                                         summary.embedded, bar, counted)
            if not summary.ok:
                break
    finally:
        bar.finish()
    return summary


async def _embed_scope(vectors: VectorStore, embedder: Embedder, roles: tuple[Role, ...],
                       batch: int, scope: Sequence[str] | None, done: int, bar: Progress,
                       counted: Callable[[int], None] | None) -> EmbedSummary:
    """:func:`embed_missing` over the messages of ``scope`` (every session: None), with
    ``done`` messages embedded before."""
    model = embedder.name
    changed = 0  # batches in a row of which nothing could be kept
    unkept: set[tuple[str, int]] = set()  # the last batch, when it gained no vector
    while True:
        pending = as_result(await vectors.unembedded(
            model, roles, batch, sessions=scope).awaitable())
        if isinstance(pending, Failure):
            return EmbedSummary(model=model, embedded=done, error=pending.failure())
        # A batch that gained no vector and is listed again: an ingest changed its
        # text meanwhile (one another embed run kept is not listed again). Its new text
        # is embedded next; stop only when that keeps happening, don't spin.
        changed = changed + 1 if unkept & _places(pending.unwrap()) else 0
        if changed >= CHANGED_BATCHES:
            # Said as it is: the store works, another writer is busy rewriting.
            return EmbedSummary(model=model, embedded=done, error=StoreUnavailable(
                "the text of the messages to embed kept changing while it was at the "
                f"embedder ({CHANGED_BATCHES} batches in a row: an ingest or sync is "
                "rewriting them)", transient=True))
        if not pending.unwrap():
            return EmbedSummary(model=model, embedded=done)
        kept = as_result(await _embed_batch(vectors, embedder, pending.unwrap()).awaitable())
        if isinstance(kept, Failure):
            return EmbedSummary(model=model, embedded=done, error=kept.failure())
        # Counted as the store counts it, the messages that gained a vector: two runs
        # at once each counted what the other kept too.
        unkept = set() if kept.unwrap() else _places(pending.unwrap())
        done += kept.unwrap()
        bar.advance(kept.unwrap())
        if counted is not None:
            counted(done)


def _places(messages: Sequence[Message]) -> set[tuple[str, int]]:
    return {(m.session_id, m.position) for m in messages}


def _embed_batch(vectors: VectorStore, embedder: Embedder, messages: Sequence[Message]
                 ) -> FutureResult[int, ModelFailed | StoreUnavailable]:
    texted = [(m, text) for m in messages if (text := passage_text(m)) is not None]
    # The content goes with the key: an ingest may change a message while it is embedded.
    keys = [MessageKey(session_id=m.session_id, position=m.position, content=m.content)
            for m, _ in texted]

    def keep(found: tuple[Vector, ...]) -> FutureResult[int, ModelFailed | StoreUnavailable]:
        if len(found) != len(keys):
            return FutureResult.from_failure(ModelFailed(
                f"the embedder returned {len(found)} vectors for {len(keys)} texts"))
        return vectors.keep_vectors(embedder.name, list(zip(keys, found, strict=True))).alt(
            _either)

    return embedder.embed([t for _, t in texted], "passage").alt(_either).bind(keep)


def _either(error: ModelFailed | StoreUnavailable) -> ModelFailed | StoreUnavailable:
    return error

