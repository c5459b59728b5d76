"""The chat model's rate limits (``--rate``, ``--strict-rate``) against a real local server."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from harkback.adapters.models.chat_settings import ChatSettings
from harkback.adapters.models.openai_chat import OpenAIChatModel
from harkback.stages.chat import ChatRequest
from tests.support.chat_server import ChatServer

REQUEST = ChatRequest(messages=(("system", "Recap."), ("user", "hi")), max_tokens=50)


def _model(server: ChatServer, **settings: Any) -> OpenAIChatModel:
    return OpenAIChatModel(ChatSettings(model="test-model", base_url=server.url, backoff=0.05,
                                        timeout=5.0, **settings))


async def test_strict_rate_never_puts_more_than_rate_requests_in_a_window() -> None:
    """Strict windows: 4 per second spaces the requests 0.25 s apart, so by 0.25 * k s
    after the asking at most k + 1 have reached the server, never a burst of 4.

    Measured from the asking, not between the server's own arrival times: the limiter
    releases the k-th request no sooner than 0.25 * k s after it, and a busy machine only
    delays an arrival, while the gaps between arrivals shrink when the first request is
    slowed (a new connection) and the next ones are not (a 0.9 s window held 5 once).
    """
    with ChatServer() as server:
        model = _model(server, rate=4, rate_period=1.0, strict_rate=True, max_concurrency=10)
        asked = time.monotonic() - server.started
        await asyncio.gather(*(model.complete(REQUEST).awaitable() for _ in range(9)))
        await model.aclose()
        times = sorted(server.times())
    assert len(times) == 9
    # The k-th arrival follows k releases, each 0.25 s after the last (10 ms for clocks).
    early = [k for k, t in enumerate(times) if t - asked < 0.25 * k - 0.01]
    assert early == []


async def test_bursty_rate_lets_a_burst_through_then_holds_the_rate() -> None:
    """Leaky bucket: 4 per second lets 4 go at once, the rest follow at the rate."""
    with ChatServer() as server:
        model = _model(server, rate=4, rate_period=1.0, max_concurrency=10)
        asked = time.monotonic() - server.started
        await asyncio.gather(*(model.complete(REQUEST).awaitable() for _ in range(8)))
        await model.aclose()
        times = sorted(server.times())
    # Both bounds hold however busy the machine is: the limiter cannot release the last of
    # the four held requests before 1 s after the asking (a slow machine only delays it),
    # and the burst is measured against the held part rather than a fixed time, since the
    # four held requests are spaced by the limiter (0.25 s each), the first four only by
    # the server's own work.
    assert times[-1] - asked >= 0.95
    assert times[3] - times[0] < (times[-1] - times[3]) / 2


class _CoarseClockLoop(asyncio.SelectorEventLoop):
    """An event loop whose clock ticks every 15.6 ms, as Windows' monotonic clock does."""

    def time(self) -> float:
        return super().time() // 0.0156 * 0.0156


@pytest.mark.parametrize("rate", [{"rate": float("inf")},
                                  {"rate": float("inf"), "strict_rate": True},
                                  {"rate": 1e300, "rate_period": 1e-10}])
def test_an_unlimited_rate_lets_requests_asked_at_one_tick_go(rate: dict[str, Any]) -> None:
    """``--rate inf`` (or a rate whose requests per second overflow) limits nothing. The
    limiter's bucket drained at an infinite rate: two requests asked within one tick of
    the clock (0 s apart) made its level 0 * inf, NaN, and no request went again."""
    async def ask() -> int:
        limiter = ChatSettings(model="m", **rate).limiter()
        for _ in range(5):
            await asyncio.wait_for(limiter.acquire(), timeout=2)
        return 5

    with asyncio.Runner(loop_factory=_CoarseClockLoop) as runner:
        assert runner.run(ask()) == 5
