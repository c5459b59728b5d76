"""What a :class:`~harkback.pipeline.facade.Harkback` is built from, checked where it is
given: a slip (a path for the store, a model's name for the model) is a ``TypeError``
naming what to write instead, not an ``AttributeError`` deep in a stage at the first search.

>>> a_part(None, attrs.fields(_Example).model, "gpt-4.1")
Traceback (most recent call last):
TypeError: model must be a chat model or None, got the str 'gpt-4.1': \
with_model(hb, ChatSettings(model='gpt-4.1'))
"""

from __future__ import annotations

import os
from typing import Any

import attrs
from returns.result import Result

from harkback.pipeline.compose import Pipeline
from harkback.stages.shown_number import shown_text

STORE_CALLS = ("search", "sessions", "messages", "recent", "term_stats", "close")
"""What a search calls on its store: an object lacking one is no store."""

_PARTS: dict[str, tuple[str, tuple[str, ...], str]] = {
    # field: (what it is, the calls the facade makes on it, how to make one)
    "model": ("a chat model", ("complete", "aclose"),
              "with_model(hb, ChatSettings(model={name}))"),
    "embedder": ("an embedder", ("embed", "aclose"),
                 "recall(RecallSettings(embedder={name}), store), or LocalEmbedder"),
    "vectors": ("a vector store", ("nearest", "holds_vectors"), "store.vector_store()"),
    "cache": ("a summary cache", ("cached_summary", "keep_summary"), "store.summary_cache()"),
}


def _shown(value: object) -> str:
    """A value as an error names it: its type, and itself when it is short text."""
    if isinstance(value, type):
        return f"the class {value.__name__} (not one made of it)"
    if isinstance(value, str):
        return f"the str {shown_text(value)}"
    return type(value).__name__


def a_store(_owner: object, _field: attrs.Attribute[Any], store: object) -> None:
    """Refuse at once what is no store: a path, ``open_store``'s Result not unwrapped,
    None, a store's class, or anything without a store's calls; each failed only at the
    first search, deep in a stage ('str' object has no attribute 'term_stats').

    >>> a_store(None, attrs.fields(_Example).model, {})
    Traceback (most recent call last):
    TypeError: store must be an open store, got dict (no search): \
Harkback(store=open_store('history.db').unwrap())
    """
    if isinstance(store, Result):
        raise TypeError("store must be an open store, got open_store's Result: take the "
                        "store out with .unwrap() (a Failure says why it did not open)")
    if isinstance(store, str | os.PathLike):
        path = os.fspath(store)
        raise TypeError(f"store must be an open store, got the path {path!r}: open it "
                        f"first, Harkback(store=open_store({path!r}).unwrap())")
    missing = [call for call in STORE_CALLS if not callable(getattr(store, call, None))]
    if store is None or isinstance(store, type) or missing:
        lacks = f" (no {missing[0]})" if missing and store is not None else ""
        raise TypeError(f"store must be an open store, got {_shown(store)}{lacks}: "
                        "Harkback(store=open_store('history.db').unwrap())")


def a_pipeline(_owner: object, _field: attrs.Attribute[Any], pipeline: object) -> None:
    """Refuse what is no :class:`~harkback.pipeline.compose.Pipeline` (a ranker's name)."""
    if not isinstance(pipeline, Pipeline):
        raise TypeError(f"pipeline must be a Pipeline, got {type(pipeline).__name__}: a "
                        "ranker by name is Pipeline(match=RANKERS['bm25'])")


def a_part(_owner: object, field: attrs.Attribute[Any], part: object) -> None:
    """Refuse, for an optional part (``model``, ``embedder``, ``vectors``, ``cache``),
    what lacks the calls the facade makes on it; None is no part."""
    if part is None:
        return
    what, calls, how = _PARTS[field.name]
    if isinstance(part, type) or not all(callable(getattr(part, c, None)) for c in calls):
        name = shown_text(part) if isinstance(part, str) else "..."
        raise TypeError(f"{field.name} must be {what} or None, got {_shown(part)}: "
                        + how.format(name=name))


@attrs.frozen
class _Example:
    """A record with a field named as the facade's, for the examples above."""

    model: object = None
