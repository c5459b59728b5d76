"""The embedder over any OpenAI-compatible ``/v1/embeddings`` endpoint.

:class:`OpenAIEmbedder` implements :class:`~harkback.stages.ports.Embedder`: it sends the
texts in batches with the chat model's policy (a client per event loop, the SDK's retries
off and harkback's own honouring ``Retry-After``, a timeout per request: see
:mod:`harkback.adapters.models.openai_client` and :mod:`harkback.adapters.models.retries`)
and checks every answer: one vector per text, one dimension, finite numbers, none all
zeros. Failures are :class:`~harkback.stages.errors.ModelFailed` values, never exceptions.
A search's question gets at most ``query_deadline`` seconds for all its attempts together:
the search then ranks by words, instead of waiting out three attempts of a hanging server.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from functools import partial

import attrs
import openai
from returns.future import FutureResult
from returns.result import Failure, Success

from harkback.adapters.models.base_url import unusable_base_url
from harkback.adapters.models.openai_client import (
    body_within,
    error_said,
    fetch_json,
    masked,
    new_client,
)
from harkback.adapters.models.per_loop import PerLoop
from harkback.adapters.models.retries import Attempt, with_retries
from harkback.adapters.models.vectors import Vectors, embedded, unit_vectors
from harkback.stages.errors import ModelFailed
from harkback.stages.ports import EmbedKind, Vector
from harkback.stages.shown_url import shown_url


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
        said = error_said(data.get("error")) if isinstance(data, dict) else ""
        # A server or proxy may answer an error with status 200: its words say why.
        return Attempt(f"the server answered with an error: {said}" if said
                       else "the answer holds no 'data' list", retry=False)
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


VECTOR_BYTES = 256 << 10
"""The most of an answer's body read per text of its batch (and once more for the rest):
a vector of 8,192 floats written out in JSON is about 200 KB."""

QUERY_DEADLINE_S = 10.0
"""Time for a search's question to get its vector, all attempts together."""

PASSAGE_RETRY_AFTER_S = 60.0
"""The longest ``Retry-After`` waited when embedding stored texts (``embed``, ingest): a
per-minute quota asks up to a minute, and a long run ended at its first 429 over it."""


async def _close_client(client: openai.AsyncOpenAI) -> None:
    await client.close()


@attrs.frozen(kw_only=True, eq=False)
class OpenAIEmbedder:
    """An :class:`~harkback.stages.ports.Embedder` over an OpenAI-compatible endpoint.

    Texts go ``batch_size`` to a request, one request at a time, each with ``timeout``
    seconds and up to ``max_attempts`` attempts (as
    :class:`~harkback.adapters.models.chat_settings.ChatSettings` describes; a question
    waits a ``Retry-After`` of up to ``max_retry_after`` seconds, a stored text one of up
    to ``passage_retry_after``: a longer one ends the call). ``query_prefix`` and
    ``passage_prefix`` are put before every text of that kind. Safe to share between
    event loops: each gets its own client, released by :meth:`aclose` in that loop.
    """

    model: str = attrs.field(validator=attrs.validators.min_len(1))
    base_url: str | None = attrs.field(  # shown without a password
        default=None, repr=lambda url: repr(url and shown_url(url)))
    api_key: str | None = attrs.field(default=None, repr=False)
    key_setting: str = "HARKBACK_EMBEDDER_API_KEY"  # where api_key came from: named on a 401
    batch_size: int = attrs.field(default=64, validator=attrs.validators.ge(1))
    timeout: float = attrs.field(default=30.0, validator=attrs.validators.gt(0))
    max_attempts: int = attrs.field(default=3, validator=attrs.validators.ge(1))
    backoff: float = attrs.field(default=1.0, validator=attrs.validators.ge(0))
    max_retry_after: float = attrs.field(default=20.0, validator=attrs.validators.ge(0))
    passage_retry_after: float = attrs.field(default=PASSAGE_RETRY_AFTER_S,
                                             validator=attrs.validators.ge(0))
    query_deadline: float = attrs.field(default=QUERY_DEADLINE_S,
                                        validator=attrs.validators.gt(0))
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
        return embedded(texts, kind, self._embed)

    async def aclose(self) -> None:
        """Close the client of the running loop (if it made one)."""
        await self._clients.release()

    async def _embed(self, texts: tuple[str, ...], kind: EmbedKind) -> Vectors:
        if kind != "query":
            return await self._embed_all(texts, kind)
        try:
            async with asyncio.timeout(self.query_deadline):
                return await self._embed_all(texts, kind)
        except TimeoutError:
            return Failure(ModelFailed(f"no vector for the question within "
                                       f"{self.query_deadline:g} s (model {self.model})"))

    async def _embed_all(self, texts: tuple[str, ...], kind: EmbedKind) -> Vectors:
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
                max_retry_after=self.max_retry_after if kind == "query"
                else max(self.max_retry_after, self.passage_retry_after))
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
            async with client.embeddings.with_streaming_response.create(
                    model=self.model, input=batch, encoding_format="float",
                    timeout=self.timeout) as raw:
                return await body_within(raw.iter_bytes(), VECTOR_BYTES * (len(batch) + 1))

        # Its key and URL are read as embedder_spec says, not as the chat model's are:
        # $OPENAI_API_KEY is never sent to a URL the spec names, which $OPENAI_BASE_URL
        # does not override.
        data = await fetch_json(send, timeout=self.timeout, secret=self.api_key,
                                where=shown_url(self.base_url or "the OpenAI API"),
                                key_setting=self.key_setting,
                                url_setting="the base URL in the embedder spec, "
                                            "OPENAI_BASE_URL where it names none")
        if isinstance(data, Attempt):
            return data
        vectors = vectors_from_json(data, len(batch))
        if isinstance(vectors, Attempt) and self.api_key:  # the server may repeat the key
            return attrs.evolve(vectors, reason=masked(vectors.reason, self.api_key))
        return vectors
