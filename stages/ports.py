"""Ports: what the stages need from the outside world, as Protocols.

Adapters implement these; stages receive them through :class:`Deps`. Every port
method returns a ``returns`` container, so an I/O failure is a value, never an
exception that escapes into a stage."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, Literal, Protocol

import attrs
from returns.future import FutureResult

from harkback.stages import records
from harkback.stages.chat import ChatModel as ChatModel
from harkback.stages.errors import ModelFailed, StoreUnavailable
from harkback.stages.imports import ImportLedger
from harkback.stages.message_window import MessageWindow, WindowQuery
from harkback.stages.observe import Observer, null_observer
from harkback.stages.query import Node
from harkback.stages.removal import SessionRemover
from harkback.stages.rewrite import TextRewriter
from harkback.stages.stats import StoreStats
from harkback.stages.summary_port import SummaryCache as SummaryCache
from harkback.stages.summary_port import SummaryKey as SummaryKey

DEFAULT_MAX_SCORED = 2000
"""How many messages a term may match before it counts as common (see MatchQuery)."""


def _positive_or_none(_inst: object, attribute: attrs.Attribute[Any],
                      value: int | None) -> None:
    if value is not None and value < 1:
        raise ValueError(f"{attribute.name} must be at least 1 or None, got {value}")


@attrs.frozen(kw_only=True)
class MatchQuery:
    """What the match stage asks a store for: messages matching ``expression``, best first.

    ``limit`` bounds the rows returned; ``hidden_sources`` are sessions never returned, nor
    ``exclude_sessions`` (ids); ``sources`` and ``projects``, when given, are the only ones
    whose sessions are returned (:func:`~harkback.stages.scope.in_scope`). ``excluded``
    (``NOT``) leaves out every session holding a message of ``roles`` that matches it, anywhere.
    ``max_scored`` bounds the work: a term or phrase found in more messages than that is
    *common*; common ones select no rows by themselves and add nothing to the score (BM25
    gives them little weight anyway), so scoring never walks a huge posting list. Rows
    found through the other (selective) parts come first, best BM25 first; when fewer than
    ``limit`` of them match, the newest other rows matching the expression fill up with
    score 0. With no common part, or ``max_scored=None``, the search is exact.
    ``known_counts`` may carry what this store's :meth:`~SessionStore.term_stats` said of
    some terms (of a prefix under its text and ``*``: ``dock*``), so that a store telling
    common terms apart need not count them again (a hint: the same answer without)."""

    expression: Node
    roles: tuple[records.Role, ...]
    limit: int = 50
    since: float | None = None
    until: float | None = None
    hidden_sources: tuple[str, ...] = ()
    max_scored: int | None = attrs.field(default=DEFAULT_MAX_SCORED, validator=_positive_or_none)
    sources: tuple[str, ...] = ()
    projects: tuple[str, ...] = ()
    excluded: Node | None = None
    known_counts: tuple[tuple[str, int], ...] = ()
    exclude_sessions: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class RecentQuery:
    """What recent mode asks a store for: root sessions, newest first (``parts``: the
    sessions that are no root instead, sub-agents and continuations).

    ``since``/``until`` bound the session's start; a session with no start time is left
    out when either is given; ``undated`` asks for those alone (what bounds cannot place).
    ``sources`` and ``projects`` as in :class:`MatchQuery`."""

    limit: int
    exclude_roots: tuple[str, ...] = ()
    hidden_sources: tuple[str, ...] = ()
    since: float | None = None
    until: float | None = None
    sources: tuple[str, ...] = ()
    projects: tuple[str, ...] = ()
    undated: bool = False
    parts: bool = False

    def admits(self, started_at: float | None) -> bool:
        """Does a session started at ``started_at`` fall within the time bounds?

        >>> RecentQuery(limit=1, since=10.0).admits(5.0), RecentQuery(limit=1).admits(None)
        (False, True)
        """
        if self.undated:
            return started_at is None
        if self.since is None and self.until is None:
            return True
        if started_at is None:
            return False
        return ((self.since is None or started_at >= self.since)
                and (self.until is None or started_at <= self.until))


@attrs.frozen(kw_only=True)
class IngestReport:
    """What an ingest did: sessions added and updated, messages written; ``replaced``
    names the updated sessions (stored already when the batch was written)."""

    added: int = 0
    updated: int = 0
    messages: int = 0
    replaced: frozenset[str] = frozenset()

    def __add__(self, other: IngestReport) -> IngestReport:
        return IngestReport(added=self.added + other.added, updated=self.updated + other.updated,
                            messages=self.messages + other.messages,
                            replaced=self.replaced | other.replaced)


@attrs.frozen(kw_only=True)
class TermStats:
    """Index statistics for ranking: messages indexed, their mean length, term frequencies.

    ``counts`` pairs each asked term found in the index with the number of messages that
    contain it (terms never indexed are left out); ``prefix_counts`` each asked prefix with
    the messages a prefix search matches (a token starting with it: 前 in 前端). A store may
    estimate counts of very common terms (the SQLite store counts exactly up to a cap,
    then extrapolates).

    >>> TermStats(documents=10, average_length=4.0, counts=(("bike", 3),)).count("bike")
    3
    """

    documents: int = attrs.field(default=0, validator=attrs.validators.ge(0))
    average_length: float = 0.0
    counts: tuple[tuple[str, int], ...] = ()
    prefix_counts: tuple[tuple[str, int], ...] = ()

    def count(self, term: str) -> int:
        """How many messages contain ``term`` (0 when it is not indexed)."""
        return dict(self.counts).get(term, 0)


class SessionStore(Protocol):
    """A place where sessions and their messages are kept and searched.

    Contract (tests/adapters/stores/store_contract.py runs it against every backend):
    ``search`` returns hits best first with higher ``score`` meaning better, honours
    roles, time bounds (message timestamp, else the session's start), hidden sources,
    the sources and projects asked for and the sessions ``excluded`` leaves out
    (filter_contract.py);
    ``sessions``/``children`` return what exists and silently omit unknown ids, and
    ``session_links`` the same sessions' links (links_contract.py); ``messages``
    returns messages ordered by session start, then position, and ``message_window`` a
    window of them (window_contract.py); ``ingest`` of the same session id replaces it
    (idempotent).
    """

    def search(self, query: MatchQuery
               ) -> FutureResult[tuple[records.MessageHit, ...], StoreUnavailable]:
        """Messages matching the query, best first."""
        ...

    def search_titles(self, query: MatchQuery
                      ) -> FutureResult[tuple[records.TitleHit, ...], StoreUnavailable]:
        """Sessions whose title, source or project's name matches the query, best first.

        Tokenised as messages are (CJK bigrams too); ``since``/``until`` bound the session's start
        (an undated session falls outside any bound), hidden sources are left out, at most ``limit``
        come back; roles and ``exclude_sessions`` do not apply. A term or phrase found in more than
        ``max_scored`` titles selects none (there is no fill with newest ones, unlike
        :meth:`search`). A store that cannot search titles (a file opened read-only from before
        titles were indexed) finds none.
        """
        ...

    def sessions(self, ids: Sequence[str]
                 ) -> FutureResult[tuple[records.Session, ...], StoreUnavailable]:
        """The sessions with these ids (unknown ids are left out)."""
        ...

    def session_links(self, ids: Sequence[str]
                      ) -> FutureResult[tuple[records.SessionLink, ...], StoreUnavailable]:
        """What the walk to a lineage's root reads of the sessions with these ids (their
        parent, source and start), in the order asked, unknown ids left out: :meth:`sessions`
        without the rest, for the few hundred candidates a search walks
        (:func:`~harkback.stages.lineage.load_links`). A store written before this call
        was named, without it, is read through :meth:`sessions`."""
        ...

    def ids_alike(self, session_id: str, limit: int
                  ) -> FutureResult[tuple[str, ...], StoreUnavailable]:
        """Up to ``limit`` stored session ids starting with ``session_id``, the case of
        ASCII letters aside, in code point order (:mod:`~harkback.stages.id_hints`). A
        store written before this call was named, without it, gives no hint."""
        ...

    def children(self, ids: Sequence[str]
                 ) -> FutureResult[tuple[records.Session, ...], StoreUnavailable]:
        """Sessions whose parent is one of ``ids``."""
        ...

    def messages(self, session_ids: Sequence[str], longest: int | None = None
                 ) -> FutureResult[tuple[records.Message, ...], StoreUnavailable]:
        """All messages of these sessions, in session start order then position; with
        ``longest``, a content longer than that many characters is read only that far
        (:func:`~harkback.stages.long_text.loaded_start`: its start, then a note)."""
        ...

    def message_window(self, query: WindowQuery
                       ) -> FutureResult[MessageWindow, StoreUnavailable]:
        """A window of one session's messages and their count (``harkback show``), read
        through the (session, position) index: never the rest of the session."""
        ...

    def recent(self, query: RecentQuery
               ) -> FutureResult[tuple[records.SessionOverview, ...], StoreUnavailable]:
        """Root sessions (no parent, or a parent not stored), newest first; ``parts``: the rest."""
        ...

    def ingest(self, conversations: Sequence[records.Conversation]
               ) -> FutureResult[IngestReport, StoreUnavailable]:
        """Store conversations; a session id already stored is replaced."""
        ...

    def term_stats(self, terms: Sequence[str], prefixes: Sequence[str] = ()
                   ) -> FutureResult[TermStats, StoreUnavailable]:
        """Index statistics for ``terms`` (exact index tokens) and ``prefixes`` (counted
        as a prefix search matches), every role, no filter.

        Cheap whatever the store's size: rankers call it once per query.
        """
        ...

    def source_names(self) -> FutureResult[tuple[str, ...], StoreUnavailable]:
        """The sources this store holds sessions of, sorted: read from the sessions alone,
        never the messages, so cheap whatever the store's size (what a search filtered by
        a source it does not hold names, :mod:`~harkback.stages.unheld_sources`). A store
        written before this call was named, without it, gives no such note."""
        ...

    def close(self) -> None:
        """Release what the store holds (a connection, a pool); closing twice is harmless."""
        ...

    # Capabilities beyond sessions: each store says what it can do, so nothing downstream
    # needs to know which store it holds.

    def vector_store(self) -> VectorStore | None:
        """This store as a keeper of message vectors (for the hybrid ranker), or None."""
        ...

    def summary_cache(self) -> SummaryCache | None:
        """Where model summaries of this store's sessions are kept, or None."""
        ...

    def import_ledger(self) -> ImportLedger | None:
        """Where imports into this store are remembered (so re-runs read only what
        changed), or None."""
        ...

    def session_remover(self) -> SessionRemover | None:
        """This store as a remover of whole sessions (``harkback sync``), or None."""
        ...

    def text_rewriter(self) -> TextRewriter | None:
        """This store's texts rewritten in place (``harkback redact``), or None."""
        ...

    def optimize(self) -> FutureResult[tuple[str, ...] | None, StoreUnavailable]:
        """Make searches faster after large writes: SQLite merges its full-text indexes
        (what it merged, in words: none if merged already); others return None."""
        ...

    def stats(self) -> FutureResult[StoreStats, StoreUnavailable] | None:
        """How much this store holds (``harkback stats``), or None when it cannot count."""
        ...


Vector = tuple[float, ...]
"""A dense embedding, unit length (cosine similarity is the dot product)."""


@attrs.frozen(kw_only=True)
class MessageKey:
    """A stored message as its vector is keyed, with what was embedded (``content``)."""

    session_id: str
    position: int
    content: str | None = None


EmbedKind = Literal["query", "passage"]
"""What a text is to the embedder: a question, or stored text to be found (some models,
such as E5, prefix the two differently)."""


@attrs.frozen(kw_only=True)
class NearestQuery:
    """What the dense ranker asks a vector store for: the messages nearest ``vector``.

    Only vectors made by ``model`` are compared. Filters as in :class:`MatchQuery`; hits
    come best first with ``score`` = cosine similarity.
    """

    vector: Vector
    model: str
    roles: tuple[records.Role, ...]
    limit: int = attrs.field(default=100, validator=attrs.validators.ge(1))
    since: float | None = None
    until: float | None = None
    hidden_sources: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    projects: tuple[str, ...] = ()


class Embedder(Protocol):
    """A text embedding model (an OpenAI-compatible ``/v1/embeddings`` endpoint, or a
    model run in-process). Failures after the adapter's own retries are
    :class:`ModelFailed` values; ``embed`` returns one unit-length vector per text, in order.
    """

    @property
    def name(self) -> str:
        """The model's name; vectors are stored and compared per name."""
        ...

    def embed(self, texts: Sequence[str], kind: EmbedKind
              ) -> FutureResult[tuple[Vector, ...], ModelFailed]:
        """Embed ``texts`` (one vector each, same order)."""
        ...

    async def aclose(self) -> None:
        """Release what this embedder holds in the running event loop."""
        ...


class VectorStore(Protocol):
    """Dense vectors of stored messages, kept per embedding model.

    Contract: a session replaced by ingest loses its vectors; ``unembedded`` lists the
    messages of ``roles`` with non-empty content and no vector of ``model``, in stored
    order; ``nearest`` compares only vectors of the query's model.
    """

    def unembedded(self, model: str, roles: tuple[records.Role, ...], limit: int, *,
                   sessions: Sequence[str] | None = None
                   ) -> FutureResult[tuple[records.Message, ...], StoreUnavailable]:
        """Up to ``limit`` messages still without a vector of ``model`` (of ``sessions``
        only, when given: what a sync stored, not the whole history)."""
        ...

    def keep_vectors(self, model: str, vectors: Sequence[tuple[MessageKey, Vector]]
                     ) -> FutureResult[int, StoreUnavailable]:
        """Store vectors (replacing older ones of the same model); how many messages gained one.

        A key whose message is gone, or no longer holds the key's ``content``, is skipped.
        """
        ...

    def nearest(self, query: NearestQuery
                ) -> FutureResult[tuple[records.MessageHit, ...], StoreUnavailable]:
        """Messages whose vectors are nearest the query's, best first."""
        ...

    def vector_count(self, model: str) -> FutureResult[int, StoreUnavailable]:
        """How many messages have a vector of ``model``."""
        ...

    def holds_vectors(self, model: str) -> FutureResult[bool, StoreUnavailable]:
        """Whether any message has a vector of ``model``: what a search asks, at once
        where a count reads every vector (PostgreSQL)."""
        ...

    def drop_vectors(self, model: str) -> FutureResult[int, StoreUnavailable]:
        """Remove every vector of ``model`` (how many), so vectors of other dimensions
        may be kept under its name (``harkback embed --replace``)."""
        ...


@attrs.frozen(kw_only=True)
class Deps:
    """Everything a stage may use from outside: passed in, never global."""

    store: SessionStore
    observer: Observer = null_observer
    clock: Callable[[], float] = time.time
    """"Now" as the request sees it: a moment it is asked as of (``as_of``) stops it there."""
    # Looked up when called: a test clock put in time.time is read, as the facade's clock.
    wall_clock: Callable[[], float] = lambda: time.time()
    """The time the request is really made at, ``as_of`` or not: what a session's own date
    is checked against (dated after it, it was recorded by a clock set wrong)."""
    model: ChatModel | None = None
    cache: SummaryCache | None = None
    embedder: Embedder | None = None
    vectors: VectorStore | None = None
