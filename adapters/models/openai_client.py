"""The ``openai`` SDK client every OpenAI-compatible adapter uses, and one request with it.

:func:`new_client` makes a client with the SDK's own retries off (harkback's policy is in
:mod:`harkback.adapters.models.retries`); :func:`fetch_json` runs one request within a
timeout and turns what the SDK and its HTTP library raise into an
:class:`~harkback.adapters.models.retries.Attempt` (retried or not, waiting what
``Retry-After`` asks), or reads the body's JSON.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable

import attrs
import httpx2
import openai

from harkback.adapters.models.retries import RETRYABLE_STATUS, Attempt, retry_after
from harkback.stages.records import mended
from harkback.stages.shown_url import MASK, shown_url

NO_KEY = "no-key"
"""Sent when no API key is configured: local servers ignore it, others answer 401."""


def new_client(base_url: str | None, api_key: str | None, timeout: float) -> openai.AsyncOpenAI:
    """An SDK client with the SDK's own retries off: harkback's
    :func:`~harkback.adapters.models.retries.with_retries` decides instead; an error
    answer's body is read up to :data:`ERROR_BYTES` (:func:`error_within`)."""
    return openai.AsyncOpenAI(base_url=base_url, api_key=api_key or NO_KEY, max_retries=0,
                              timeout=timeout, http_client=openai.DefaultAsyncHttpxClient(
                                  event_hooks={"response": [error_within]}))


class TooLong(Exception):
    """An answer's body ran past what :func:`body_within` takes."""

    def __init__(self, most: int, status: int | None = None) -> None:
        """Name the limit it ran past (and the HTTP status of an error answer)."""
        super().__init__(f"{f'HTTP {status}: ' if status else ''}the answer is longer than "
                         f"{most / (1 << 20):g} MiB (as decompressed), far more than the "
                         "reply asked for: left unread")


async def body_within(chunks: AsyncIterator[bytes], most: int) -> bytes:
    """The body whose decompressed ``chunks`` these are (a streamed response's
    ``iter_bytes()``), or :class:`TooLong` once it passes ``most`` bytes.

    The SDK's raw response reads a body whole: a server answering a gzip of 200 MB of
    spaces (200 KB sent) took 600 MB and 30 s a search, three times; a larger one, all
    the memory there is.
    """
    kept: list[bytes] = []
    size = 0
    async for chunk in chunks:
        size += len(chunk)
        if size > most:
            raise TooLong(most)
        kept.append(chunk)
    return b"".join(kept)


ERROR_BYTES = 1 << 20
"""The most of an error answer's body read: a server's reason is a line of JSON, a proxy's
error page kilobytes."""


async def error_within(response: httpx2.Response) -> None:
    """Read an error answer's body (HTTP 400 and above) up to :data:`ERROR_BYTES`, or raise
    :class:`TooLong` (an HTTP client's response hook: the SDK reads such a body whole before
    it raises, and a 500 inflating to 256 MiB took 520 MB and 5 s, three times over)."""
    if response.status_code < 400 or response.is_closed:
        return
    try:
        body = await body_within(response.aiter_bytes(), ERROR_BYTES)
    except TooLong:
        raise TooLong(ERROR_BYTES, response.status_code) from None
    finally:
        await response.aclose()
    # What aread() keeps: the SDK finds the body read and reads no further.
    response._content = body


async def fetch_json(send: Callable[[], Awaitable[bytes]], *, timeout: float,
                     where: str, secret: str | None = None, key_setting: str = "OPENAI_API_KEY",
                     url_setting: str = "OPENAI_BASE_URL") -> object | Attempt:
    """Run one request (``send`` returns the raw body) within ``timeout``; read its JSON.

    What goes wrong is an :class:`~harkback.adapters.models.retries.Attempt` saying
    whether to try again: timeouts, HTTP errors (retried as
    :data:`~harkback.adapters.models.retries.RETRYABLE_STATUS` says, waiting what
    ``Retry-After`` asks), no connection to ``where``, a body that is not JSON. The API
    key ``secret`` is masked wherever the server's words repeat it ("Invalid API key:
    sk-..."): the reason is printed, and an agent's output ends up in its transcripts.
    A refusal of the key (401, 403) names ``key_setting``, a 404 ``url_setting``: where
    the caller's key and URL come from.
    """
    outcome = await _fetch(send, timeout=timeout, where=where, secret=secret,
                           named=(key_setting, url_setting))
    if isinstance(outcome, Attempt) and secret and secret in outcome.reason:
        return attrs.evolve(outcome, reason=masked(outcome.reason, secret))
    return outcome


_WORDLIKE = 8
"""A key shorter than this may be letters of a word ('x', 'none', 'local' for a local
server): masked only where it stands alone. A longer one is masked wherever it stands,
as a server quoting it URL-encoded (``key%3Dsk-...``) puts letters right before it."""


def error_said(error: object) -> str:
    """An answer's ``error`` (``{"message": ...}`` or text) on one line, or "": what a
    server or proxy answering an error with status 200 said.

    >>> error_said({"message": "model not\\nloaded", "type": "x"}), error_said(None)
    ('model not loaded', '')
    """
    message = error.get("message") if isinstance(error, dict) else error
    return " ".join(mended(message).split())[:200] if isinstance(message, str) else ""


def masked(text: str, secret: str | None) -> str:
    """``text`` with ``secret`` masked: a short placeholder key ('x', 'none' for a local
    server) only where it stands alone, or it would mask the middle of words
    ('E********pecting value'); a real key everywhere.

    >>> masked("Invalid API key: sk-abc1. Expecting sk-abc12", "sk-abc1"), masked("Expect", "x")
    ('Invalid API key: ********. Expecting sk-abc12', 'Expect')
    >>> masked("GET /v1?q=1%26key%3Dsk-0123456789", "sk-0123456789")
    'GET /v1?q=1%26key%3D********'
    """
    if not secret:
        return text
    if len(secret) >= _WORDLIKE:
        return text.replace(secret, MASK)
    return re.sub(rf"(?<![A-Za-z0-9]){re.escape(secret)}(?![A-Za-z0-9])", MASK, text)


async def _fetch(send: Callable[[], Awaitable[bytes]], *, timeout: float, where: str,
                 secret: str | None, named: tuple[str, str]) -> object | Attempt:
    try:
        async with asyncio.timeout(timeout):
            body = await send()
    except (TimeoutError, openai.APITimeoutError, httpx2.TimeoutException):
        return Attempt(f"no answer within {timeout:g} s", retry=True)
    except TooLong as error:  # the same question gets the same flood: not asked again
        return Attempt(str(error), retry=False)
    except openai.APIStatusError as error:
        return _status_problem(error, secret, named)
    except openai.APIConnectionError as error:
        cause = error.__cause__ or error
        if isinstance(cause, httpx2.ReadError | httpx2.RemoteProtocolError):
            # Connected, then the server closed or reset the connection (a ReadError says
            # nothing more: the line ended in "cannot reach URL: ").
            return Attempt(f"{where} closed the connection without an answer"
                           f"{': ' + str(cause) if str(cause).strip() else ''}", retry=True)
        return Attempt(f"cannot reach {where}: {str(cause).strip() or type(cause).__name__}",
                       retry=True)
    except openai.APIError as error:
        return Attempt(f"unreadable answer from {where}: {error.message}", retry=True)
    except httpx2.HTTPError as error:
        return Attempt(f"HTTP error talking to {where}: {error}", retry=True)
    try:
        data: object = json.loads(body)
    except (ValueError, RecursionError) as error:
        # ValueError: bad JSON, bad UTF-8, or a number past Python's 4,300 digits;
        # RecursionError: arrays nested thousands deep. Both ended the whole search.
        return Attempt(f"the answer is not valid JSON ({str(error).split(';')[0]})", retry=True)
    return data


def _status_problem(error: openai.APIStatusError, secret: str | None,
                    named: tuple[str, str]) -> Attempt:
    status = error.status_code
    detail = _error_detail(error, secret)
    retry = status in RETRYABLE_STATUS or status >= 500
    hint = ""
    if status in (401, 403):
        hint = f" (check {named[0]})"
    elif status == 404:
        hint = f" (check the model name and {named[1]}{_base_url_hint(error.request.url)})"
    wait = retry_after(dict(error.response.headers)) if retry else None
    return Attempt(f"HTTP {status}{': ' + detail if detail else ''}{hint}", retry=retry,
                   wait=wait)


_ENDPOINTS = ("/chat/completions", "/embeddings")


def _base_url_hint(url: httpx2.URL) -> str:
    """What the path of a request answered 404 says the base URL lacks or has too much
    ("" when nothing): servers answer at ``/v1/chat/completions``, and a base URL of
    ``http://host:8080`` or ``.../v1/chat/completions`` is the usual slip.

    >>> _base_url_hint(httpx2.URL("http://h:8080/chat/completions"))
    '; the base URL names no /v1; try http://h:8080/v1'
    >>> _base_url_hint(httpx2.URL("http://h/v1/embeddings/embeddings"))
    '; the base URL ends before /embeddings; try http://h/v1'
    >>> _base_url_hint(httpx2.URL("https://h/openai/deployments/d/chat/completions"))
    ''
    """
    path = url.path.rstrip("/")
    base = next((path.removesuffix(end) for end in _ENDPOINTS if path.endswith(end)), path)
    doubled = next((end for end in _ENDPOINTS if base.rstrip("/").endswith(end)), None)
    if doubled:
        base = base.rstrip("/").removesuffix(doubled)
        said = f"ends before {doubled}"
    elif not base.strip("/"):  # no path at all: another path (Azure's) is the server's own
        base, said = "/v1", "names no /v1"
    else:
        return ""
    shown = shown_url(str(url.copy_with(path=base.rstrip("/") or "/", query=None)))
    return f"; the base URL {said}; try {shown}"


def _error_detail(error: openai.APIStatusError, secret: str | None) -> str:
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        if isinstance(message, str):
            # Masked before the cut, which could leave the start of the key.
            return masked(message, secret)[:200]
    return ""
