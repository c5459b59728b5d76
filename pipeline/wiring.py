"""The one place where settings become ready parts: a store, a pipeline, a model, a facade.

The store is chosen by the ``--db`` value (:func:`store_kind`): a path is a SQLite file,
``:memory:`` the in-memory store, a ``postgresql://`` URL a PostgreSQL server; a URL of any
other kind is refused (no store). Rankers
and summarizers are chosen by name from the registries that live beside their stages
(:data:`~harkback.stages.match.rankers.RANKERS`,
:data:`~harkback.stages.summarize.summarizers.SUMMARIZERS`). Commands parse, call this
module, and print; nothing past here names a concrete store.

>>> store_kind(":memory:"), store_kind("postgresql://me@db/harkback"), store_kind("x.db")
('memory', 'postgresql', 'sqlite')
>>> store_kind("mysql://me@db/harkback"), store_kind("POSTGRESQL://db/h"), store_kind("C://h.db")
('url', 'url', 'sqlite')
>>> store_kind("postgresql:/team"), store_kind("./postgresql:/team")
('url', 'sqlite')
>>> pipeline_for(RecallSettings(ranker="bm25")).map(lambda p: type(p.match).__name__)
<Success: Bm25Match>
>>> pipeline_for(RecallSettings(summarizer="llm")).failure().reason.split(":")[0]
'no model configured for --summarizer llm'
>>> pipeline_for(RecallSettings(rerank=True)).failure().reason.split(":")[0]
'no model configured for --rerank'
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
from returns.result import Failure, Result, Success

from harkback.adapters.models.chat_settings import ChatSettings
from harkback.adapters.stores.closing import ClosingStore
from harkback.adapters.stores.migration import Migrated
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.adapters.stores.sqlite_adopt import odd_kind, remove_store
from harkback.adapters.stores.sqlite_checkpoints import left_in_log
from harkback.adapters.stores.sqlite_errors import read_only_place
from harkback.pipeline.compose import Pipeline
from harkback.pipeline.config import CONNINFO, MISWRITTEN_URL, default_db
from harkback.pipeline.config import MEMORY as MEMORY
from harkback.pipeline.config import POSTGRES_SCHEMES as POSTGRES_SCHEMES
from harkback.pipeline.config import store_kind as store_kind
from harkback.pipeline.facade import Harkback
from harkback.pipeline.postgres_loading import not_loaded
from harkback.pipeline.recall_settings import RecallSettings as RecallSettings
from harkback.stages.defaults import DEADLINE_S, DEFAULT_RANKER
from harkback.stages.errors import QueryRejected, StoreUnavailable
from harkback.stages.match.rankers import RANKERS
from harkback.stages.ports import Embedder, SessionStore
from harkback.stages.rerank.model import ModelRerank
from harkback.stages.shown_url import shown_url
from harkback.stages.summarize.model import LlmSummarize
from harkback.stages.summarize.summarizers import (
    MODEL_SUMMARIZER,
    SUMMARIZERS,
)

if TYPE_CHECKING:
    from harkback.adapters.models.openai_chat import OpenAIChatModel

StoreOpener = Callable[[str, bool], Result[ClosingStore, StoreUnavailable]]
"""Opens a store from a ``--db`` value, read-only when the flag says so."""


def _open_sqlite(target: str, readonly: bool) -> Result[ClosingStore, StoreUnavailable]:
    return SqliteStore.open(target, readonly=readonly).map(_as_store)


def _open_memory(_target: str, readonly: bool) -> Result[ClosingStore, StoreUnavailable]:
    from harkback.adapters.stores.memory import MemoryStore  # tests and demos only
    from harkback.adapters.stores.memory_readonly import ReadOnlyMemoryStore
    return Success(ReadOnlyMemoryStore() if readonly else MemoryStore())


def _open_postgres(target: str, readonly: bool, create: bool = True
                   ) -> Result[ClosingStore, StoreUnavailable]:
    # Imported here: psycopg is an optional extra, and a SQLite user must not load it.
    try:
        from harkback.adapters.stores.postgres import PostgresStore
    except ImportError as error:
        return Failure(StoreUnavailable(not_loaded(error)))
    return PostgresStore.open(target, readonly=readonly, create=create).map(_as_store)


def _as_store(store: ClosingStore) -> ClosingStore:
    return store


def _no_store(target: str, _readonly: bool = False) -> Result[Any, StoreUnavailable]:
    scheme = MISWRITTEN_URL.match(target)
    if scheme:  # only its start is shown: libpq cannot say where a password is in the rest
        shown = target[:scheme.end() + target[scheme.end():].startswith("/")] + "..."
        return Failure(StoreUnavailable(
            f"{shown} is no PostgreSQL URL: write two slashes after the colon "
            "(postgresql://HOST/DATABASE, postgresql:///DATABASE for the local socket), or "
            "start it with ./ for a database file of that name"))
    key = CONNINFO.match(target)
    if key:  # only its first key is shown: the rest may hold password=...
        return Failure(StoreUnavailable(
            f"{key.group().strip()}... is a key=value connection string, which harkback does "
            "not read: write it as a URL, postgresql://USER@HOST:PORT/DATABASE (a socket's "
            "folder as ?host=/run/postgresql), or start it with ./ for a database file of "
            "that name"))
    return Failure(StoreUnavailable(
        f"{shown_url(target)} is a URL of no store harkback opens: give a database file's "
        "path or a postgresql:// URL (postgres:// also, in lower case)"))


STORES: Mapping[str, StoreOpener] = {
    "sqlite": _open_sqlite,
    "memory": _open_memory,
    "postgresql": _open_postgres,
    "url": _no_store,
}
"""Store openers by kind (:func:`store_kind`)."""


def folder_named(target: str) -> str | None:
    """Why a ``--db`` path that names a folder, or anything else that is no regular file
    (a FIFO, ``/dev/null``), cannot be a store (None: it does not).

    >>> folder_named(".")
    '. is a folder, not a database file: name a file in it, such as harkback.db'
    """
    if not target:  # open_store(""): the current folder, read as a path (the CLI refuses it first)
        return "--db is empty: name a database file, such as harkback.db"
    if store_kind(target) != "sqlite":
        return None
    odd = odd_kind(Path(os.path.expanduser(target)))  # a FIFO, a device: never opened
    if odd is not None:
        return odd
    if not Path(os.path.expanduser(target)).is_dir():
        return None
    return (f"{target} is a folder, not a database file: name a file in it, such as "
            f"{Path(target) / 'harkback.db'}")


def open_store(target: str | bytes | os.PathLike[str] | None = None, *, readonly: bool = False,
               create: bool = False, once: bool = False, existing: bool = False
               ) -> Result[ClosingStore, StoreUnavailable]:
    """Open the store a ``--db`` value names (default: ``$HARKBACK_DB`` or the data dir).

    A SQLite file is created when missing unless ``readonly``, and so is the schema of an
    empty PostgreSQL database; read-only never creates or changes anything. An existing
    empty file becomes a store only when named like a database (.db, .sqlite, .sqlite3)
    or with ``create``. ``once`` says the process reads the store for one command and
    ends: a read-only SQLite file is then memory-mapped (``SqliteStore.open``'s ``mapped``).
    ``existing``: an upkeep command's open (optimize, redact, embed), which needs a store: a
    PostgreSQL database holding none fails with ``NoStore`` (``redact`` on a URL that
    missed the store's schema made an empty store in ``public`` and found "no secrets").

    >>> open_store(":memory:").map(lambda s: type(s).__name__)
    <Success: MemoryStore>
    """
    # fsdecode: a bytes path (b"h.db") too, which failed in store_kind's str patterns.
    text = os.fsdecode(target) if target is not None else default_db()
    folder = folder_named(text)
    if folder is not None:
        return Failure(StoreUnavailable(folder))
    if create and not readonly and store_kind(text) == "sqlite":
        return SqliteStore.open(text, create=True).map(_as_store)
    if once and readonly and store_kind(text) == "sqlite":
        return SqliteStore.open(text, readonly=True, mapped=True).map(_as_store)
    if existing and store_kind(text) == "postgresql":
        return _open_postgres(text, readonly, create=False)
    return STORES[store_kind(text)](text, readonly)


def new_file(target: str) -> Path | None:
    """The SQLite file a writable open of ``target`` would create (None: it exists, or
    ``target`` is no file): a command that fails storing nothing hands it to
    :func:`discard_new`, so a failed import leaves no store that was not there.

    >>> new_file(":memory:") is None, new_file("/no/such/folder/h.db")
    (True, PosixPath('/no/such/folder/h.db'))
    """
    if store_kind(target) != "sqlite":
        return None
    path = Path(os.path.expanduser(target))  # ~nobody stays as written, as in a shell
    return None if os.path.lexists(path) else path  # a symlink, even dangling, is not ours


def discard_new(path: Path) -> bool:
    """Remove the store file :func:`new_file` named and this process created, once closed
    and holding no session (unless another process has it open meanwhile); whether it did."""
    return remove_store(path)


def _migrate_sqlite(target: str, stop: Callable[[], bool] | None = None
                    ) -> Result[Migrated, StoreUnavailable]:
    def found(store: SqliteStore) -> Migrated:
        store.close()
        return store.schema

    def checked(store: SqliteStore) -> Migrated:
        schema = found(store)
        left = left_in_log(Path(target))  # the close's checkpoint fails silently
        return schema if left is None else attrs.evolve(schema, unfinished=(
            f"the store is whole at schema version {schema.after}, but its checkpoint did "
            f"not finish ({left.reason}): its last commits stay in {target}-wal, which the "
            "next command that writes the store copies into the file"))
    path = Path(target)
    if path.is_file() and not (os.access(path, os.W_OK) and read_only_place(path) is None):
        # A file this user may not write: nothing to do needs no write access (as on
        # PostgreSQL); only a file behind this harkback's schema asks for it, below.
        read = SqliteStore.open(target, readonly=True).map(found)
        if read.map(lambda schema: not schema.behind).value_or(False):
            return read
    return SqliteStore.open(target, stop=stop).map(checked)  # a writable open migrates


def _migrate_memory(_target: str) -> Result[Migrated, StoreUnavailable]:
    return Failure(StoreUnavailable("the in-memory store keeps no schema: nothing to migrate"))


def _migrate_postgres(target: str) -> Result[Migrated, StoreUnavailable]:
    try:
        from harkback.adapters.stores.postgres import PostgresStore
    except ImportError as error:
        return Failure(StoreUnavailable(not_loaded(error)))

    def found(store: PostgresStore) -> Migrated:
        store.close()
        return store.schema
    return PostgresStore.open(target).map(found)  # a writable open migrates


MIGRATORS: Mapping[str, Callable[[str], Result[Migrated, StoreUnavailable]]] = {
    "sqlite": _migrate_sqlite,
    "memory": _migrate_memory,
    "postgresql": _migrate_postgres,
    "url": _no_store,
}
"""Schema migrations by store kind: each brings the store to this harkback's version."""


def migrate_store(target: str, stop: Callable[[], bool] | None = None
                  ) -> Result[Migrated, StoreUnavailable]:
    """Apply the pending schema migrations of the store ``target`` names (``harkback
    migrate``); running it again finds nothing to do. ``stop``: a SQLite store's migration
    waiting for the write lock gives up once it says so (Ctrl-C; SQLite's own wait cannot
    be cut short)."""
    kind = store_kind(target)
    return _migrate_sqlite(target, stop) if kind == "sqlite" else MIGRATORS[kind](target)


def pipeline_for(settings: RecallSettings) -> Result[Pipeline, QueryRejected]:
    """The pipeline with the ranker and summarizer ``settings`` name."""
    has_embedder = bool((settings.embedder or "").strip())
    ranker = settings.ranker or ("hybrid" if has_embedder else DEFAULT_RANKER)
    if ranker not in RANKERS:
        return Failure(QueryRejected(f"unknown ranker {ranker!r}; one of {sorted(RANKERS)}"))
    name = settings.summarizer_name
    if name not in SUMMARIZERS:
        return Failure(QueryRejected(
            f"unknown summarizer {name!r}; one of {sorted(SUMMARIZERS)}"))
    if name == MODEL_SUMMARIZER and settings.chat is None:
        return Failure(QueryRejected(
            "no model configured for --summarizer llm: pass --model NAME or set "
            "HARKBACK_MODEL (and OPENAI_BASE_URL for a local server)"))
    if settings.rerank and settings.chat is None:
        return Failure(QueryRejected(
            "no model configured for --rerank: pass --model NAME or set "
            "HARKBACK_MODEL (and OPENAI_BASE_URL for a local server)"))
    rerank_s, summaries_s = settings.deadlines
    summarize = (LlmSummarize(deadline_s=summaries_s) if name == MODEL_SUMMARIZER
                 else SUMMARIZERS[name])
    pipeline = Pipeline(match=RANKERS[ranker], summarize=summarize)
    return Success(attrs.evolve(pipeline, rerank=ModelRerank(deadline_s=rerank_s))
                   if settings.rerank else pipeline)


def embedder_for(spec: str | None, environ: Mapping[str, str] | None = None
                 ) -> Result[Embedder | None, QueryRejected]:
    """The embedder a spec names (None for none); a spec that cannot work is rejected.

    ``environ`` gives ``$OPENAI_BASE_URL`` and the API keys (default: the process's)."""
    if not (spec or "").strip():
        return Success(None)
    assert spec is not None
    # Imported here: a recall without an embedder need not load the embedder adapters.
    from harkback.adapters.models.embedder_spec import embedder_from_spec
    made = embedder_from_spec(spec, environ=environ)
    if isinstance(made, Failure):
        # A spec that cannot work is a usage error, not a model that failed.
        return Failure(QueryRejected(made.failure().reason))
    return Success(made.unwrap())


def with_model(harkback: Harkback, settings: ChatSettings, *,
               deadline_s: float = DEADLINE_S) -> Harkback:
    """``harkback`` summarising with the model of ``settings``, caching where the store can."""
    if not isinstance(harkback, Harkback) or not isinstance(settings, ChatSettings):
        # Each failed deep in the model's adapter ('str' object has no attribute 'model').
        raise TypeError(f"with_model takes a Harkback and ChatSettings, got "
                        f"{type(harkback).__name__} and {type(settings).__name__}: "
                        "with_model(Harkback(store=store), ChatSettings(model='qwen2.5'))")
    cache = harkback.store.summary_cache() or harkback.cache
    return attrs.evolve(
        harkback, model=chat_model(settings), cache=cache,
        pipeline=attrs.evolve(harkback.pipeline, summarize=LlmSummarize(deadline_s=deadline_s)))


def open_for_recall(settings: RecallSettings, *, once: bool = False
                    ) -> Result[ClosingStore, StoreUnavailable]:
    """The store of ``settings``, writable only when model summaries will be cached in it.

    It is opened read-only first, so a search never creates, migrates or adopts anything:
    a store of an older schema is read as it is (``harkback migrate`` brings it forward)
    and a missing one is an error. A store that cannot be opened writable (a read-only
    file) stays read-only: the recall still runs, and its summaries are not kept.
    ``once``: see :func:`open_store`.
    """
    target = settings.db if settings.db is not None else default_db()
    reading = open_store(target, readonly=True, once=once)
    if not settings.writes_summaries or isinstance(reading, Failure):
        return reading
    if _older(reading.unwrap()):
        return reading
    reading.unwrap().close()
    writable = open_store(target)
    return (writable if isinstance(writable, Success)
            else open_store(target, readonly=True, once=once))


def _older(store: SessionStore) -> bool:
    # Read-only, an older SQLite file is read through views as it is; a writable open would
    # migrate it, which is for `harkback migrate` or an import, never for a search. Behind
    # its own kind's latest: SQLite's and PostgreSQL's versions are numbered apart.
    schema = getattr(store, "schema", None)
    return isinstance(schema, Migrated) and schema.behind


def recall(settings: RecallSettings, store: SessionStore
           ) -> Result[Harkback, QueryRejected]:
    """A facade over ``store`` wired as ``settings`` say (model, embedder, stages)."""
    return pipeline_for(settings).bind(
        lambda pipeline: embedder_for(settings.embedder, settings.environ).map(
            lambda embedder: _facade(settings, store, pipeline, embedder)))


def _facade(settings: RecallSettings, store: SessionStore, pipeline: Pipeline,
            embedder: Embedder | None) -> Harkback:
    harkback = Harkback(store=store, pipeline=pipeline, embedder=embedder,
                        vectors=store.vector_store() if embedder is not None else None)
    if settings.chat is not None and settings.summarizer_name == MODEL_SUMMARIZER:
        harkback = with_model(harkback, settings.chat, deadline_s=settings.deadlines[1])
    elif settings.chat is not None and settings.rerank:
        # A model for the rerank only: the summarizer stays the one asked for.
        harkback = attrs.evolve(harkback, model=chat_model(settings.chat),
                                cache=store.summary_cache() or harkback.cache)
    return harkback


def chat_model(settings: ChatSettings) -> OpenAIChatModel:
    """The chat model of ``settings`` (connected at its first call)."""
    # Imported here: the ``openai`` SDK takes about a second to load, and a recall
    # without a model (or ``--help``) must not pay for it.
    from harkback.adapters.models.openai_chat import OpenAIChatModel
    return OpenAIChatModel(settings)
