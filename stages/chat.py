"""What is asked of a chat model and what comes back, and the model's port itself
(:class:`ChatModel`, also named by :mod:`~harkback.stages.ports`): these records are all
that crosses it, so stages never see an SDK type.

>>> request = ChatRequest(messages=(("system", "Be brief."), ("user", "Hi")), max_tokens=64)
>>> request.temperature, len(request.messages)
(0.1, 2)
>>> ChatReply(text="Hello.", usage=TokenUsage(prompt=9, completion=2)).usage.completion
2
"""

from __future__ import annotations

import math
from typing import Literal, Protocol

import attrs
from returns.future import FutureResult

from harkback.stages.errors import ModelFailed
from harkback.stages.records import TokenUsage

ChatRole = Literal["system", "user", "assistant"]
CHAT_ROLES: tuple[ChatRole, ...] = ("system", "user", "assistant")


def _valid_messages(_inst: object, _attr: object,
                    messages: tuple[tuple[ChatRole, str], ...]) -> None:
    if not messages:
        raise ValueError("a chat request needs at least one message")
    for role, _content in messages:
        if role not in CHAT_ROLES:
            raise ValueError(f"chat role must be one of {CHAT_ROLES}, got {role!r}")


def _valid_temperature(_inst: object, _attr: object, value: float) -> None:
    if not math.isfinite(value) or not 0.0 <= value <= 2.0:
        raise ValueError(f"temperature must be between 0 and 2, got {value!r}")


@attrs.frozen(kw_only=True)
class ChatRequest:
    """One chat completion to make: ``(role, content)`` messages and sampling bounds."""

    messages: tuple[tuple[ChatRole, str], ...] = attrs.field(validator=_valid_messages)
    max_tokens: int = attrs.field(validator=attrs.validators.ge(1))
    temperature: float = attrs.field(default=0.1, validator=_valid_temperature)


@attrs.frozen(kw_only=True)
class ChatReply:
    """A model's answer: its text (reasoning removed), the tokens it cost, who answered.

    ``finish_reason`` is ``"length"`` when the answer was cut at ``max_tokens``.
    """

    text: str
    usage: TokenUsage = attrs.field(factory=TokenUsage)
    model: str = ""
    finish_reason: str = ""


class ChatModel(Protocol):
    """A chat-completions model (any OpenAI-compatible endpoint, or a test double).

    ``complete`` returns failures (HTTP errors, timeouts, unusable answers, after the
    adapter's own retries) as :class:`ModelFailed` values. Resources such as HTTP
    clients belong to the event loop that created them; ``aclose`` releases the ones
    of the running loop. A model may also name its ``endpoint`` (a string: where it
    answers, without credentials), which the summary cache key then holds too.
    """

    @property
    def name(self) -> str:
        """The model's name, as sent to the endpoint (part of the summary cache key)."""
        ...

    def complete(self, request: ChatRequest) -> FutureResult[ChatReply, ModelFailed]:
        """Ask the model once (retries included) and return its reply."""
        ...

    async def aclose(self) -> None:
        """Release what this model holds in the running event loop."""
        ...
