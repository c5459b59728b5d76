"""The chat model over any OpenAI-compatible Chat Completions endpoint.

:class:`OpenAIChatModel` implements :class:`~harkback.stages.ports.ChatModel` with
``openai.AsyncOpenAI``. The SDK's own retries are off; harkback's policy is here:
up to ``max_attempts`` attempts, retrying 408/409/429/5xx answers, timeouts,
connection errors, unreadable bodies and empty or reasoning-only answers, waiting
what ``Retry-After`` asks (capped) or an exponential backoff. Each attempt has a
timeout, holds one of ``max_concurrency`` slots and one unit of the rate limit.

The client, the ``aiolimiter`` limiter and the semaphore belong to the event loop
that made them: they are made on first use in each running loop and released by
:meth:`OpenAIChatModel.aclose` in that loop, so one model object can serve an agent's
loop and synchronous callers that run their own loops without sharing anything
between loops. The pieces (:class:`PerLoop`, :func:`fetch_json`, :func:`with_retries`)
serve the embeddings adapter too.

>>> settings = ChatSettings.from_env({"HARKBACK_MODEL": "gpt-4o-mini", "OPENAI_API_KEY": "k"})
>>> settings.model, settings.base_url, settings.max_attempts
('gpt-4o-mini', None, 3)
>>> ChatSettings.from_env({}) is None
True
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import threading
import time
import urllib.parse
from collections.abc import Awaitable, Callable, Mapping
from email.utils import parsedate_to_datetime
from functools import partial
from typing import Any, Generic, Literal, TypeVar

import attrs
import httpx2
import openai
from aiolimiter import AsyncLimiter
from returns.future import FutureResult
from returns.result import Failure, Result, Success

from harkback.stages.chat import ChatReply, ChatRequest
from harkback.stages.errors import ModelFailed
from harkback.stages.records import TokenUsage

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
"""HTTP statuses worth another attempt (any other 5xx is retried too)."""

NO_KEY = "no-key"
"""Sent when no API key is configured: local servers ignore it, others answer 401."""

TokenField = Literal["max_tokens", "max_completion_tokens"]

T = TypeVar("T")


def _positive(_inst: object, attribute: attrs.Attribute[float], value: float) -> None:
    if not value > 0:
        raise ValueError(f"{attribute.name} must be positive, got {value!r}")


@attrs.frozen(kw_only=True)
class ChatSettings:
    """Where the model is and how to treat it.

    ``rate`` requests per ``rate_period`` seconds: with ``strict_rate`` no burst is
    allowed and requests are spaced ``rate_period / rate`` apart, so no window of
    ``rate_period`` seconds ever holds more than ``rate`` requests; without it the
    ``aiolimiter`` leaky bucket lets up to ``rate`` go at once after a quiet spell.
    """

    model: str = attrs.field(validator=attrs.validators.min_len(1))
    base_url: str | None = None
    api_key: str | None = attrs.field(default=None, repr=False)
    timeout: float = attrs.field(default=30.0, validator=_positive)
    max_attempts: int = attrs.field(default=3, validator=attrs.validators.ge(1))
    backoff: float = attrs.field(default=1.0, validator=attrs.validators.ge(0))
    max_retry_after: float = attrs.field(default=20.0, validator=attrs.validators.ge(0))
    max_concurrency: int = attrs.field(default=4, validator=attrs.validators.ge(1))
    rate: float = attrs.field(default=60.0, validator=_positive)
    rate_period: float = attrs.field(default=60.0, validator=_positive)
    strict_rate: bool = False
    token_field: TokenField = "max_tokens"

    @classmethod
    def from_env(cls, environ: Mapping[str, str], **overrides: Any) -> ChatSettings | None:
        """Settings from ``HARKBACK_MODEL``, ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``.

        ``overrides`` (flags, config) win over the environment; None values are
        ignored. Returns None when no model is named anywhere: no model is configured.
        """
        given = {k: v for k, v in overrides.items() if v is not None}
        model = given.pop("model", None) or environ.get("HARKBACK_MODEL", "").strip()
        if not model:
            return None
        base_url = given.pop("base_url", None) or environ.get("OPENAI_BASE_URL") or None
        api_key = given.pop("api_key", None) or environ.get("OPENAI_API_KEY") or None
        return cls(model=model, base_url=base_url, api_key=api_key, **given)

    def limiter(self) -> AsyncLimiter:
        """A new rate limiter for these settings (make it inside the loop that uses it).

        >>> ChatSettings(model="m", rate=30, rate_period=60, strict_rate=True).limiter().max_rate
        1
        """
        if self.strict_rate:
            # aiolimiter's documented way to forbid bursts: one entry per interval.
            return AsyncLimiter(1, self.rate_period / self.rate)
        return AsyncLimiter(self.rate, self.rate_period)


def retry_after(headers: Mapping[str, str], *, now: float | None = None) -> float | None:
    """Seconds the server asks to wait: ``retry-after-ms``, ``Retry-After`` seconds or date.

    >>> retry_after({"retry-after": "2"}), retry_after({"retry-after-ms": "1500"})
    (2.0, 1.5)
    >>> retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, now=1445412480.0)
    10.0
    >>> retry_after({"retry-after": "soon"}) is None
    True
    """
    lowered = {k.lower(): v for k, v in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis is not None:
        try:
            return max(float(millis) / 1000.0, 0.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError):
        return None
    return max(when - (time.time() if now is None else now), 0.0)


_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL | re.IGNORECASE)


@attrs.frozen
class Attempt:
    """Why one attempt gave no usable reply, and whether another may help."""

    reason: str
    retry: bool
    wait: float | None = None


def reply_from_json(data: object) -> ChatReply | Attempt:
    """Read a Chat Completions response body; an empty or reasoning-only answer is a miss.

    >>> body = {"model": "m", "choices": [{"message": {"content": "Hi <think>x</think>"},
    ...         "finish_reason": "stop"}], "usage": {"prompt_tokens": 5, "completion_tokens": 2}}
    >>> reply_from_json(body)
    ChatReply(text='Hi', usage=TokenUsage(prompt=5, completion=2), model='m', finish_reason='stop')
    >>> reply_from_json({"choices": [{"message": {"content": "", "reasoning_content": "hm"}}]})
    Attempt(reason='the model answered with reasoning only, no content', retry=True, wait=None)
    """
    if not isinstance(data, dict):
        return Attempt("the answer is not a JSON object", retry=True)
    choices = data.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(message, dict):
        return Attempt("the answer holds no message", retry=True)
    content = message.get("content")
    raw = content if isinstance(content, str) else ""
    text = _THINK.sub("", raw).strip()
    usage = data.get("usage")
    counts = usage if isinstance(usage, dict) else {}
    tokens = TokenUsage(prompt=_count(counts.get("prompt_tokens")),
                        completion=_count(counts.get("completion_tokens")))
    if not text:
        thought = raw.strip() or message.get("reasoning_content") or message.get("reasoning")
        what = "reasoning only, no content" if thought else "an empty answer"
        return Attempt(f"the model answered with {what}", retry=True)
    reason = first.get("finish_reason") if isinstance(first, dict) else None
    model = data.get("model")
    return ChatReply(text=text, usage=tokens, model=model if isinstance(model, str) else "",
                     finish_reason=reason if isinstance(reason, str) else "")


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


@attrs.frozen(eq=False)
class _Bound:
    """What one event loop uses: its own client, limiter and concurrency slots."""

    client: openai.AsyncOpenAI
    limiter: AsyncLimiter
    slots: asyncio.Semaphore


class PerLoop(Generic[T]):
    """One ``T`` per running event loop: made on first use in that loop, released in it.

    ``asyncio`` clients, limiters and semaphores belong to the loop that made them, so an
    object shared between loops keeps one of each per loop. A loop that ended without
    :meth:`release` cannot close its ``T`` any more; it is let go on the next use.

    >>> held = PerLoop(object, close=lambda _made: asyncio.sleep(0))
    >>> async def use() -> tuple[bool, int, int]:
    ...     same = held.get() is held.get()
    ...     count = held.count
    ...     await held.release()
    ...     return same, count, held.count
    >>> asyncio.run(use())
    (True, 1, 0)
    """

    def __init__(self, make: Callable[[], T], *, close: Callable[[T], Awaitable[None]]) -> None:
        """Make a loop's ``T`` with ``make`` (called in that loop), close it with ``close``."""
        self._make = make
        self._close = close
        self._made: dict[asyncio.AbstractEventLoop, T] = {}
        self._lock = threading.Lock()

    @property
    def count(self) -> int:
        """How many running (not closed) event loops hold one."""
        with self._lock:
            return sum(1 for loop in self._made if not loop.is_closed())

    def get(self) -> T:
        """The running loop's ``T``, made now if it has none yet."""
        loop = asyncio.get_running_loop()
        with self._lock:
            # A loop that ended without release cannot close its T any more; letting go
            # of it is all that is left (and lets the loop be collected).
            for closed in [other for other in self._made if other.is_closed()]:
                del self._made[closed]
            if loop not in self._made:
                self._made[loop] = self._make()
            return self._made[loop]

    async def release(self) -> None:
        """Close the running loop's ``T`` (if it made one)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if loop not in self._made:
                return
            made = self._made.pop(loop)
        await self._close(made)


def base_url_problem(base_url: str) -> str | None:
    """What is wrong with an endpoint URL, in words, or None when the SDK can use it.

    The HTTP library raises its own error type for such URLs only when the client is
    made; checking first turns them into a clear message (and no retries).

    >>> base_url_problem("http://127.0.0.1:8080/v1") is None
    True
    >>> base_url_problem("127.0.0.1:8080/v1")
    'must start with http:// or https://'
    >>> base_url_problem("http://[::1")
    'is not a URL (Invalid IPv6 URL)'
    >>> base_url_problem("http://host:port/v1")
    "is not a URL (Port could not be cast to integer value as 'port')"
    """
    if not re.match(r"https?://", base_url, re.IGNORECASE):
        return "must start with http:// or https://"
    try:
        parts = urllib.parse.urlsplit(base_url)
        parts.port  # noqa: B018 -- reading it checks the port
    except ValueError as error:  # an unclosed IPv6 bracket, a port that is not a number
        return f"is not a URL ({error})"
    if not parts.hostname:
        return "names no host"
    return None


def unusable_base_url(base_url: str | None, model: str) -> ModelFailed | None:
    """The failure of every call to ``model`` at ``base_url`` when the SDK cannot use it
    (:func:`base_url_problem`), else None; no base URL means the OpenAI API.

    >>> unusable_base_url("http://[::1", "m").reason
    "base URL 'http://[::1' is not a URL (Invalid IPv6 URL) (model m)"
    >>> unusable_base_url(None, "m") is None
    True
    """
    problem = base_url and base_url_problem(base_url)
    return ModelFailed(f"base URL {base_url!r} {problem} (model {model})") if problem else None


def new_client(base_url: str | None, api_key: str | None, timeout: float) -> openai.AsyncOpenAI:
    """An SDK client with the SDK's own retries off: :func:`with_retries` decides instead."""
    return openai.AsyncOpenAI(base_url=base_url, api_key=api_key or NO_KEY, max_retries=0,
                              timeout=timeout)


async def fetch_json(send: Callable[[], Awaitable[bytes]], *, timeout: float,
                     where: str) -> object | Attempt:
    """Run one request (``send`` returns the raw body) within ``timeout``; read its JSON.

    What goes wrong is an :class:`Attempt` saying whether to try again: timeouts,
    HTTP errors (retried as :data:`RETRYABLE_STATUS` says, waiting what ``Retry-After``
    asks), no connection to ``where``, a body that is not JSON.
    """
    try:
        async with asyncio.timeout(timeout):
            body = await send()
    except (TimeoutError, openai.APITimeoutError, httpx2.TimeoutException):
        return Attempt(f"no answer within {timeout:g} s", retry=True)
    except openai.APIStatusError as error:
        return _status_problem(error)
    except openai.APIConnectionError as error:
        cause = error.__cause__ or error
        return Attempt(f"cannot reach {where}: {cause}", retry=True)
    except openai.APIError as error:
        return Attempt(f"unreadable answer from {where}: {error.message}", retry=True)
    except httpx2.HTTPError as error:
        return Attempt(f"HTTP error talking to {where}: {error}", retry=True)
    try:
        data: object = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        return Attempt(f"the answer is not valid JSON ({error})", retry=True)
    return data


async def with_retries(attempt: Callable[[], Awaitable[T | Attempt]], *, model: str,
                       max_attempts: int, backoff: float,
                       max_retry_after: float) -> Result[T, ModelFailed]:
    """Run ``attempt`` until it gives a ``T``, it says retrying cannot help, or
    ``max_attempts`` are spent; between attempts wait what the server asked (at most
    ``max_retry_after`` seconds) or an exponential backoff from ``backoff`` seconds.

    >>> answers = iter([Attempt("HTTP 503", retry=True), "ok"])
    >>> async def flaky() -> object:
    ...     return next(answers)
    >>> asyncio.run(with_retries(flaky, model="m", max_attempts=3, backoff=0,
    ...                          max_retry_after=1))
    <Success: ok>
    """
    failed: list[Attempt] = []
    for number in range(1, max_attempts + 1):
        outcome = await attempt()
        if not isinstance(outcome, Attempt):
            return Success(outcome)
        failed.append(outcome)
        if not outcome.retry or number == max_attempts:
            break
        wait = (min(outcome.wait, max_retry_after) if outcome.wait is not None
                else backoff * 2 ** (number - 1) * random.uniform(1.0, 1.25))
        await asyncio.sleep(wait)
    return Failure(ModelFailed(_describe(failed, model)))


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
        """Name the model and the endpoint (never the key)."""
        return f"OpenAIChatModel({self.settings.model!r}, base_url={self.settings.base_url!r})"

    @property
    def name(self) -> str:
        """The model's name as sent to the endpoint."""
        return self.settings.model

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
            raw = await bound.client.chat.completions.with_raw_response.create(
                **arguments, timeout=s.timeout)
            body: bytes = raw.content
            return body

        async with bound.slots:
            await bound.limiter.acquire()
            data = await fetch_json(send, timeout=s.timeout, where=self._where())
        if isinstance(data, Attempt):
            return data
        return reply_from_json(data)

    def _where(self) -> str:
        return self.settings.base_url or "the OpenAI API"


def _describe(failed: list[Attempt], model: str) -> str:
    """One line for a failed call: the last problem, and earlier different ones.

    >>> _describe([Attempt("HTTP 503", True), Attempt("HTTP 503", True)], "m")
    'HTTP 503 (model m, 2 attempts)'
    >>> _describe([Attempt("HTTP 429", True), Attempt("no answer within 5 s", True)], "m")
    'no answer within 5 s (model m, 2 attempts; before that: HTTP 429)'
    """
    last = failed[-1].reason
    earlier = [r for r in dict.fromkeys(a.reason for a in failed[:-1]) if r != last]
    count = f"{len(failed)} attempt{'s' if len(failed) > 1 else ''}"
    before = f"; before that: {'; '.join(earlier)}" if earlier else ""
    return f"{last} (model {model}, {count}{before})"


def _status_problem(error: openai.APIStatusError) -> Attempt:
    status = error.status_code
    detail = _error_detail(error)
    retry = status in RETRYABLE_STATUS or status >= 500
    hint = ""
    if status in (401, 403):
        hint = " (check OPENAI_API_KEY)"
    elif status == 404:
        hint = " (check the model name and OPENAI_BASE_URL)"
    wait = retry_after(dict(error.response.headers)) if retry else None
    return Attempt(f"HTTP {status}{': ' + detail if detail else ''}{hint}", retry=retry,
                   wait=wait)


def _error_detail(error: openai.APIStatusError) -> str:
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        if isinstance(message, str):
            return message[:200]
    return ""
