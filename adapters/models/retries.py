"""harkback's retry policy for calls to a model (the ``openai`` SDK's own retries are off).

One call is up to ``max_attempts`` attempts. An attempt that gives no usable answer is an
:class:`Attempt` saying why and whether another may help (:data:`RETRYABLE_STATUS`,
timeouts, connection errors, unreadable bodies, empty answers); between attempts
:func:`with_retries` waits what the server asked with ``Retry-After`` or an exponential
backoff; a longer wait asked for than harkback's cap ends the call at once. Nothing here
imports the SDK.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from email.utils import parsedate_to_datetime
from typing import TypeVar

import attrs
from returns.result import Failure, Result, Success

from harkback.stages.errors import ModelFailed

RETRYABLE_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
"""HTTP statuses worth another attempt (any other 5xx is retried too)."""

T = TypeVar("T")


@attrs.frozen
class Attempt:
    """Why one attempt gave no usable reply, and whether another may help."""

    reason: str
    retry: bool
    wait: float | None = None


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


async def with_retries(attempt: Callable[[], Awaitable[T | Attempt]], *, model: str,
                       max_attempts: int, backoff: float,
                       max_retry_after: float) -> Result[T, ModelFailed]:
    """Run ``attempt`` until it gives a ``T``, it says retrying cannot help, or
    ``max_attempts`` are spent; between attempts wait what the server asked or an
    exponential backoff from ``backoff`` seconds. A server asking for a wait longer than
    ``max_retry_after`` seconds ends the call at once (its failure says the wait).

    >>> answers = iter([Attempt("HTTP 503", retry=True), "ok"])
    >>> async def flaky() -> object:
    ...     return next(answers)
    >>> asyncio.run(with_retries(flaky, model="m", max_attempts=3, backoff=0,
    ...                          max_retry_after=1))
    <Success: ok>
    >>> answers = iter([Attempt("HTTP 429", retry=True, wait=3600.0), "ok"])
    >>> ended = asyncio.run(with_retries(flaky, model="m", max_attempts=3, backoff=0,
    ...                                  max_retry_after=20))
    >>> ended.failure().reason.split("; ")[0]
    'HTTP 429 (model m, 1 attempt'
    >>> next(answers)  # not asked again
    'ok'
    """
    failed: list[Attempt] = []
    for number in range(1, max_attempts + 1):
        outcome = await attempt()
        if not isinstance(outcome, Attempt):
            return Success(outcome)
        failed.append(outcome)
        if not outcome.retry or number == max_attempts:
            break
        if outcome.wait is not None and outcome.wait > max_retry_after:
            # Asked too soon, the server refuses again (chaos28: a search took 42 s over
            # "Retry-After: 3600"): the call ends now, saying the wait it asked for.
            break
        wait = (outcome.wait if outcome.wait is not None
                else backoff * 2 ** (number - 1) * random.uniform(1.0, 1.25))
        await asyncio.sleep(wait)
    return Failure(ModelFailed(_describe(failed, model, max_retry_after)))


def _describe(failed: list[Attempt], model: str, max_retry_after: float = 0.0) -> str:
    """One line for a failed call: the last problem, and earlier different ones; and a
    wait the server asked for that was longer than ``max_retry_after`` (cut to it, unsaid,
    it left the user retrying too soon).

    >>> _describe([Attempt("HTTP 503", True), Attempt("HTTP 503", True)], "m")
    'HTTP 503 (model m, 2 attempts)'
    >>> _describe([Attempt("HTTP 429", True), Attempt("no answer within 5 s", True)], "m")
    'no answer within 5 s (model m, 2 attempts; before that: HTTP 429)'
    >>> _describe([Attempt("HTTP 429", True, wait=3600.0)], "m", 20).split("; ")[1]
    'the server asked to retry after 3600 s, longer than the 20 s harkback waits)'
    """
    last = failed[-1].reason
    earlier = [r for r in dict.fromkeys(a.reason for a in failed[:-1]) if r != last]
    count = f"{len(failed)} attempt{'s' if len(failed) > 1 else ''}"
    before = f"; before that: {'; '.join(earlier)}" if earlier else ""
    asked = max((a.wait for a in failed if a.wait is not None), default=0.0)
    if asked > max_retry_after:
        before += (f"; the server asked to retry after {asked:.0f} s, longer than the "
                   f"{max_retry_after:g} s harkback waits")
    return f"{last} (model {model}, {count}{before})"
