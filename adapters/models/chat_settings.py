"""Where a chat model is and how to treat it: :class:`ChatSettings`, read from flags and env.

Kept apart from :mod:`harkback.adapters.models.openai_chat` so that reading the settings
(every ``harkback search``) loads neither the ``openai`` SDK nor the rate limiter: the
client is made only when a model is called.

>>> settings = ChatSettings.from_env({"HARKBACK_MODEL": "gpt-4o-mini", "OPENAI_API_KEY": "k"})
>>> settings.model, settings.base_url, settings.max_attempts
('gpt-4o-mini', None, 3)
>>> ChatSettings.from_env({}) is None
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

import attrs

from harkback.stages.shown_number import shown_value

if TYPE_CHECKING:
    from aiolimiter import AsyncLimiter

TokenField = Literal["max_tokens", "max_completion_tokens"]
"""The request field that carries the token limit."""


_EXAMPLES = {"model": "'gpt-4o-mini'", "base_url": "'http://127.0.0.1:8080/v1'",
             "api_key": "'sk-...'", "token_field": "'max_completion_tokens'"}
"""What a text setting's error shows as the form to write (a number's: its default)."""


def _refused(attribute: attrs.Attribute[Any], wanted: str, got: str) -> str:
    """The error on a setting: what it must be, what it ``got``, and a value of that form.

    >>> print(_refused(attrs.fields(ChatSettings).timeout, "a number", "'30'"))
    timeout must be a number, got '30' (write it as timeout=30.0)
    """
    example = _EXAMPLES.get(attribute.name, repr(attribute.default))
    return f"{attribute.name} must be {wanted}, got {got} (write it as {attribute.name}={example})"


def _shown(value: object) -> str:
    return shown_value(value)  # a value read from somewhere may be long


def _number(_inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """A number (a whole one where the field is an int), not text read from somewhere:
    ``timeout="30"`` failed as "'>' not supported between instances of 'str' and 'int'"."""
    whole = attribute.type in (int, "int")  # 3.0 is taken there, as attrs' ge(1) took it
    if (isinstance(value, bool) or not isinstance(value, int | float)
            or (whole and isinstance(value, float) and not value.is_integer())):
        raise TypeError(_refused(attribute, f"a {'whole ' if whole else ''}number",
                                 _shown(value)))


def _positive(_inst: object, attribute: attrs.Attribute[float], value: float) -> None:
    _number(_inst, attribute, value)
    if not value > 0:
        raise ValueError(_refused(attribute, "positive", _shown(value)))


def _at_least(least: int) -> Any:
    """A number no smaller than ``least`` (attrs' ``ge`` said "'max_attempts' must be >= 1:
    0", no form to write)."""
    def check(_inst: object, attribute: attrs.Attribute[Any], value: float) -> None:
        _number(_inst, attribute, value)
        if value < least:
            raise ValueError(_refused(attribute, f"at least {least}", _shown(value)))
    return check


def _text(_inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    """Text (or None where that is the default): ``model=None`` failed as "object of type
    'NoneType' has no len()", ``base_url=8080`` only at the first call."""
    if not isinstance(value, str) and (value is not None or attribute.default is not None):
        raise TypeError(_refused(attribute, "text", type(value).__name__))


def _named(_inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    _text(_inst, attribute, value)
    if value == "":
        raise ValueError(_refused(attribute, "the name of a model", "''"))


def _flag(_inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    # strict_rate="no" was taken, and read as true: requests spaced out unasked.
    if not isinstance(value, bool):
        raise TypeError(_refused(attribute, "True or False", _shown(value)))


def _token_field(_inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    # Any other name was taken, and sent to the server as the request's token limit field.
    if value not in ("max_tokens", "max_completion_tokens"):
        raise ValueError(_refused(attribute, "'max_tokens' or 'max_completion_tokens'",
                                  _shown(value)))


@attrs.frozen(kw_only=True)
class ChatSettings:
    """Where the model is and how to treat it.

    ``rate`` requests per ``rate_period`` seconds: with ``strict_rate`` no burst is
    allowed and requests are spaced ``rate_period / rate`` apart, so no window of
    ``rate_period`` seconds ever holds more than ``rate`` requests; without it the
    ``aiolimiter`` leaky bucket lets up to ``rate`` go at once after a quiet spell.
    """

    model: str = attrs.field(validator=_named)
    base_url: str | None = attrs.field(default=None, validator=_text)
    api_key: str | None = attrs.field(default=None, repr=False, validator=_text)
    timeout: float = attrs.field(default=30.0, validator=_positive)
    max_attempts: int = attrs.field(default=3, validator=_at_least(1))
    backoff: float = attrs.field(default=1.0, validator=_at_least(0))
    max_retry_after: float = attrs.field(default=20.0, validator=_at_least(0))
    # At least a recall's default limit (3) and the limit agents are told to use for a
    # broad topic (5): one recall is one round of calls, not two.
    max_concurrency: int = attrs.field(default=5, validator=_at_least(1))
    rate: float = attrs.field(default=60.0, validator=_positive)
    rate_period: float = attrs.field(default=60.0, validator=_positive)
    strict_rate: bool = attrs.field(default=False, validator=_flag)
    token_field: TokenField = attrs.field(default="max_tokens", validator=_token_field)

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
        >>> ChatSettings(model="m", rate=0.5, rate_period=60).limiter().time_period
        120.0
        >>> ChatSettings(model="m", rate=float("inf"), strict_rate=True).limiter().max_rate
        inf
        """
        from aiolimiter import AsyncLimiter  # imported here: only a model call needs it

        interval = self.rate_period / self.rate
        if (self.strict_rate or self.rate < 1) and interval > 0:
            # aiolimiter's documented way to forbid bursts: one entry per interval. Below
            # one request per period (``--rate 0.5``) it is the only way: a bucket that
            # holds less than one request refuses every request with a ValueError. An
            # interval of 0 s (``--rate inf``) limits nothing, and aiolimiter divides by it.
            return AsyncLimiter(1, interval)
        return AsyncLimiter(self.rate, self.rate_period)
