"""The vectors of what each round of ``sync --watch`` stores, with an embedder configured.

A round embeds the messages of the sessions it stored that lack a vector (a session that
grew by a line: that line), after the store's sync lock is let go, so another sync gets
its turn meanwhile. A watch did not embed at all: a user with an embedder configured got
words-only ranking for every session stored while it ran. An embedder that fails is said
in one line on stderr, once until it works again (said too): the sessions stay stored,
found by words, the watch goes on, and a watch stopped while the last embedding had
failed ends with status 3, as a sync whose embedding stopped does.

>>> RoundEmbedding(embedder=None).total is None
True
"""

from __future__ import annotations

import sys
import time
from collections.abc import Collection

import attrs

from harkback.pipeline.embed import EmbedSummary, embed_missing
from harkback.pipeline.terminal import json_text, line_of
from harkback.stages.ports import Embedder, SessionStore


@attrs.define
class RoundEmbedding:
    """The watch's embedding: what its rounds embedded, and the last failure said."""

    embedder: Embedder | None
    as_json: bool = False
    total: EmbedSummary | None = None
    """All rounds' vectors; its ``error``: the last round's failure, None once one worked."""
    working: int | None = None
    """Messages embedded so far by the round embedding now (None: none is)."""

    async def after(self, store: SessionStore, stored: Collection[str]) -> bool:
        """Embed what lacks vectors in the sessions a round ``stored``; say what it made
        (stdout), and a failure (stderr) when it is new. False when it stopped: the watch
        gives those sessions to its next round."""
        vectors = store.vector_store()
        if self.embedder is None or vectors is None or not stored:
            return True
        self.working = 0

        def counted(done: int) -> None:
            self.working = done

        made = await embed_missing(vectors, self.embedder, progress=False,
                                   counted=counted, sessions=stored)
        self.working = None  # not reached when stopped (cancelled) on the way
        before = self.total.error if self.total is not None else None
        self.total = EmbedSummary(model=made.model, error=made.error, embedded=made.embedded
                                  + (self.total.embedded if self.total is not None else 0))
        stamp = time.strftime("%H:%M:%S")
        if made.embedded:
            print(json_text({"embedding": {"model": made.model, "embedded": made.embedded}})
                  if self.as_json else f"{stamp} embedded {made.embedded} message(s) with "
                  f"{made.model}", flush=True)
        if made.error is not None and (before is None or before.message() !=
                                       made.error.message()):
            print(line_of(f"harkback: {stamp} the sessions are stored; their vectors are not "
                          f"(embedding with {made.model} stopped: {made.error.message()}); "
                          "the watch goes on and tries them again at its next round, "
                          "harkback embed makes the rest"), file=sys.stderr, flush=True)
        elif made.error is None and before is not None:
            print(f"harkback: {stamp} embedding with {made.model} works again", file=sys.stderr,
                  flush=True)
        return made.error is None

    def stopped(self, pending: int = 0) -> None:
        """Say, when the watch was stopped while a round embedded, or with ``pending``
        sessions stored and not embedded yet (their round failed or was stopped first),
        that the vectors left are ``harkback embed``'s to make."""
        if self.embedder is None:
            return
        if self.working is not None:
            print(line_of(f"harkback: stopped while embedding with {self.embedder.name} "
                          f"({self.working} message(s) embedded in that round): the sessions "
                          "are stored; harkback embed makes the vectors left"),
                  file=sys.stderr, flush=True)
        elif pending:
            print(line_of(f"harkback: {pending} session(s) stored while watching have no "
                          f"vectors of {self.embedder.name} yet: harkback embed makes them"),
                  file=sys.stderr, flush=True)
