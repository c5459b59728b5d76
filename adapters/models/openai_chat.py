"""The chat model over any OpenAI-compatible Chat Completions endpoint.

:class:`OpenAIChatModel` implements :class:`~harkback.stages.ports.ChatModel` with
``openai.AsyncOpenAI``. The SDK's own retries are off; harkback's policy
(:mod:`harkback.adapters.models.retries`): up to ``max_attempts`` attempts, retrying
408/409/429/5xx answers, timeouts, connection errors, unreadable bodies and empty or
reasoning-only answers, waiting what ``Retry-After`` asks (capped) or an exponential
backoff. An answer longer than the request's token limit can hold is cut to it. Each
attempt has a timeout, holds one of ``max_concurrency`` slots and one unit of the rate
limit.

The client, the ``aiolimiter`` limiter and the semaphore belong to the event loop
that made them: they are made on first use in each running loop and released by
:meth:`OpenAIChatModel.aclose` in that loop
(:class:`~harkback.adapters.models.per_loop.PerLoop`), so one model object can serve an
agent's loop and synchronous callers that run their own loops without sharing anything
between loops.

Its settings are :class:`~harkback.adapters.models.chat_settings.ChatSettings`.
"""

from __future__ import annotations

import asyncio
import re
from functools import partial
from typing import Any

import attrs
import openai
from aiolimiter import AsyncLimiter
from returns.future import FutureResult
from returns.result import Failure, Result

from harkback.adapters.models.base_url import endpoint_identity, unusable_base_url
from harkback.adapters.models.chat_settings import ChatSettings
from harkback.adapters.models.openai_client import (
    body_within,
    error_said,
    fetch_json,
    masked,
    new_client,
)
from harkback.adapters.models.per_loop import PerLoop
from harkback.adapters.models.retries import Attempt, with_retries
from harkback.stages.chat import ChatReply, ChatRequest
from harkback.stages.errors import ModelFailed
from harkback.stages.records import TokenUsage, mended
from harkback.stages.shown_url import shown_url

_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL | re.IGNORECASE)


def reply_from_json(data: object) -> ChatReply | Attempt:
    """Read a Chat Completions response body; an empty or reasoning-only answer is a miss,
    a refusal (the ``refusal`` field) or a tool call instead of text a failure not worth
    repeating.

    >>> body = {"model": "m", "choices": [{"message": {"content": "Hi <think>x</think>"},
    ...         "finish_reason": "stop"}], "usage": {"prompt_tokens": 5, "completion_tokens": 2}}
    >>> reply_from_json(body)
    ChatReply(text='Hi', usage=TokenUsage(prompt=5, completion=2), model='m', finish_reason='stop')
    >>> reply_from_json({"choices": [{"message": {"content": "", "reasoning_content": "hm"}}]})
    Attempt(reason='the model answered with reasoning only, no content', retry=True, wait=None)
    >>> reply_from_json({"choices": [{"message": {"content": None, "refusal": "No."}}]})
    Attempt(reason='the model refused: No.', retry=False, wait=None)
    """
    if not isinstance(data, dict):
        return Attempt("the answer is not a JSON object", retry=True)
    choices = data.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(message, dict):
        said = error_said(data.get("error"))
        # A server or proxy may answer an error with status 200: its words say why.
        return Attempt(f"the server answered with an error: {said}" if said
                       else "the answer holds no message", retry=True)
    content = message.get("content")
    # Half a character escaped ("\\ud83d": an emoji cut at max_tokens) parses as a lone
    # surrogate, which no store can encode: caching the summary ended the search.
    raw = mended(content) if isinstance(content, str) else ""
    text = _THINK.sub("", raw).strip()
    usage = data.get("usage")
    counts = usage if isinstance(usage, dict) else {}
    tokens = TokenUsage(prompt=_count(counts.get("prompt_tokens")),
                        completion=_count(counts.get("completion_tokens")))
    refusal = message.get("refusal")
    if not text and isinstance(refusal, str) and refusal.strip():
        # The same question gets the same refusal: asking again only costs tokens.
        said = " ".join(mended(refusal).split())
        return Attempt(f"the model refused: {said[:200]}", retry=False)
    if not text and (called := _tool_called(message.get("tool_calls"))):
        # The same prompt gets the same call: asking again only costs tokens and time.
        return Attempt(f"the model answered with a tool call ({called}), no text", retry=False)
    if not text:
        thought = raw.strip() or message.get("reasoning_content") or message.get("reasoning")
        what = "reasoning only, no content" if thought else "an empty answer"
        return Attempt(f"the model answered with {what}", retry=True)
    reason = first.get("finish_reason") if isinstance(first, dict) else None
    model = data.get("model")
    return ChatReply(text=text, usage=tokens, model=mended(model) if isinstance(model, str) else "",
                     finish_reason=reason if isinstance(reason, str) else "")


def _tool_called(calls: object) -> str:
    """The names of the tools a message calls (``tool_calls``), or "" when it calls none.

    >>> _tool_called([{"type": "function", "function": {"name": "session_search"}}])
    'session_search'
    >>> _tool_called([{"function": {}}]), _tool_called([])
    ('a tool', '')
    """
    if not isinstance(calls, list) or not calls:
        return ""
    names = [call["function"].get("name") if isinstance(call, dict)
             and isinstance(call.get("function"), dict) else None for call in calls]
    shown = [" ".join(mended(n).split())[:60] for n in names if isinstance(n, str) and n.strip()]
    return ", ".join(dict.fromkeys(shown)) or "a tool"


ANSWER_BYTES = 32 << 20
"""The most of an answer's body read: a recap of a few hundred tokens, with a reasoning
model's thinking beside it, is kilobytes; a server ignoring ``max_tokens`` may send
megabytes, which :func:`within_limit` cuts."""

CHARS_PER_TOKEN = 8
"""Characters an answer may hold per token asked for: twice what English takes, eight
times what Chinese takes; a longer answer comes from a server that ignored the limit."""


def within_limit(reply: ChatReply | Attempt, max_tokens: int) -> ChatReply | Attempt:
    """``reply`` cut to what ``max_tokens`` can hold, marked as cut at the limit: a
    server that ignores ``max_tokens`` must not hand a search (and the summary cache)
    megabytes.

    >>> cut = within_limit(ChatReply(text="abcdefghij" * 2), 1)
    >>> cut.text, cut.finish_reason
    ('abcdefgh', 'length')
    """
    limit = max_tokens * CHARS_PER_TOKEN
    if isinstance(reply, Attempt) or len(reply.text) <= limit:
        return reply
    return attrs.evolve(reply, text=reply.text[:limit].rstrip(), finish_reason="length")


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


@attrs.frozen(eq=False)
class _Bound:
    """What one event loop uses: its own client, limiter and concurrency slots."""

    client: openai.AsyncOpenAI
    limiter: AsyncLimiter
    slots: asyncio.Semaphore


async def _close_bound(bound: _Bound) -> None:
    await bound.client.close()


class OpenAIChatModel:
    """A :class:`~harkback.stages.ports.ChatModel` over the ``openai`` SDK.

    Safe to share between threads and event loops: each running loop gets its own
    client, limiter and semaphore on first use. Call :meth:`aclose` in a loop when done
    with it there (the facade does this for its synchronous entry point); what a loop
    that ended without it still holds is dropped on the next use from another loop.
    """

    def __init__(self, settings: ChatSettings) -> None:
        """Keep the settings; nothing is connected until the first call in a loop."""
        self.settings = settings
        self._bound: PerLoop[_Bound] = PerLoop(self._connect, close=_close_bound)

    def __repr__(self) -> str:
        """Name the model and the endpoint (never the key, nor a password in the URL)."""
        return f"OpenAIChatModel({self.settings.model!r}, base_url={self._where()!r})"

    @property
    def name(self) -> str:
        """The model's name as sent to the endpoint."""
        return self.settings.model

    @property
    def endpoint(self) -> str:
        """The base URL, normalised and without credentials (the OpenAI API when none)."""
        return endpoint_identity(self.settings.base_url)

    @property
    def bound_loops(self) -> int:
        """How many running (not closed) event loops hold a client of this model."""
        return self._bound.count

    def _connect(self) -> _Bound:
        s = self.settings
        return _Bound(client=new_client(s.base_url, s.api_key, s.timeout),
                      limiter=s.limiter(), slots=asyncio.Semaphore(s.max_concurrency))

    async def aclose(self) -> None:
        """Close the client of the running loop (if it made one)."""
        await self._bound.release()

    def complete(self, request: ChatRequest) -> FutureResult[ChatReply, ModelFailed]:
        """Ask the model, with harkback's retry policy; failures come back as values."""
        return FutureResult(self._complete(request))

    async def _complete(self, request: ChatRequest) -> Result[ChatReply, ModelFailed]:
        s = self.settings
        unusable = unusable_base_url(s.base_url, s.model)
        if unusable is not None:
            return Failure(unusable)
        bound = self._bound.get()
        return await with_retries(partial(self._attempt, bound, request), model=s.model,
                                  max_attempts=s.max_attempts, backoff=s.backoff,
                                  max_retry_after=s.max_retry_after)

    async def _attempt(self, bound: _Bound, request: ChatRequest) -> ChatReply | Attempt:
        s = self.settings
        arguments: dict[str, Any] = {
            "model": s.model,
            "messages": [{"role": role, "content": content}
                         for role, content in request.messages],
            "temperature": request.temperature,
            s.token_field: request.max_tokens,
        }

        async def send() -> bytes:
            async with bound.client.chat.completions.with_streaming_response.create(
                    **arguments, timeout=s.timeout) as raw:
                return await body_within(raw.iter_bytes(), ANSWER_BYTES)

        async with bound.slots:
            await bound.limiter.acquire()
            data = await fetch_json(send, timeout=s.timeout, where=self._where(),
                                    secret=s.api_key)
        if isinstance(data, Attempt):
            return data
        reply = reply_from_json(data)
        if isinstance(reply, Attempt) and s.api_key:  # the server's words may repeat the key
            reply = attrs.evolve(reply, reason=masked(reply.reason, s.api_key))
        return within_limit(reply, request.max_tokens)

    def _where(self) -> str:
        return shown_url(self.settings.base_url or "the OpenAI API")


