"""The command line's model flags, read over the environment into chat settings.

A model is configured when ``--model`` or ``HARKBACK_MODEL`` names one; then the
summarizer is ``llm`` unless another is asked for (:mod:`harkback.pipeline.wiring`).
With no model configured the extractive summarizer runs and nothing touches the network.

>>> parse_rate("30"), parse_rate("2/1"), parse_rate("100/3600")
((30.0, 60.0), (2.0, 1.0), (100.0, 3600.0))
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from harkback.stages.defaults import DEADLINE_S
from harkback.stages.shown_number import shown_given
from harkback.stages.shown_url import shown_url

if TYPE_CHECKING:
    from harkback.adapters.models.chat_settings import ChatSettings


def parse_rate(text: str) -> tuple[float, float]:
    """``N`` requests per minute, or ``N/SECONDS``: returns ``(requests, period)``."""
    count, _, period = text.partition("/")
    try:
        rate, seconds = float(count), float(period) if period else 60.0
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"rate must be N (per minute) or N/SECONDS, got {shown_given(text)}") from None
    if not (rate > 0 and seconds > 0):
        raise argparse.ArgumentTypeError(
            f"rate and period must be positive, got {shown_given(text)}")
    return rate, seconds


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {shown_given(text)}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {shown_given(text)}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _base_url(text: str) -> str:
    from harkback.adapters.models.base_url import base_url_problem  # only when given

    problem = base_url_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(f"{shown_url(text)!r} {problem}")
    return text


def add_model_limits(group: argparse._ActionsContainer) -> None:
    """The flags bounding the model's calls: ``search``'s, and ``mcp``'s for all its calls."""
    group.add_argument("--max-concurrency", type=_positive_int, default=None, metavar="N",
                       help="model calls in flight at once (default 5)")
    group.add_argument("--rate", type=parse_rate, default=None, metavar="N[/SECONDS]",
                       help="at most N requests per minute, or per SECONDS (default 60)")
    group.add_argument("--strict-rate", action="store_true",
                       help="no bursts: space requests evenly so no window exceeds --rate")


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``search`` flags for the model summarizer (the API key comes from the env only)."""
    group = parser.add_argument_group(
        "model summaries", "any OpenAI-compatible endpoint; HARKBACK_MODEL, OPENAI_BASE_URL "
        "and OPENAI_API_KEY are read from the environment, else model, base_url and "
        "api_key from the config file")
    group.add_argument("--model", default=None,
                       help="model name (default: $HARKBACK_MODEL, else model in the config "
                            "file); naming one turns on "
                            "--summarizer llm unless another summarizer is asked for")
    group.add_argument("--base-url", type=_base_url, default=None,
                       help="endpoint, e.g. http://127.0.0.1:8080/v1 (default: "
                            "$OPENAI_BASE_URL, else base_url in the config file, else "
                            "OpenAI)")
    add_model_limits(group)
    group.add_argument("--timeout", type=_positive_float, default=None, metavar="SECONDS",
                       help="timeout of one model call (default 30)")
    group.add_argument("--deadline", type=_positive_float, default=DEADLINE_S,
                       metavar="SECONDS",
                       help=f"time for all model calls of one recall (default "
                            f"{DEADLINE_S:g}); sessions not done by then get extractive "
                            f"summaries; --rerank has half of it (30 at most)")


def model_settings(args: argparse.Namespace, environ: Mapping[str, str]
                   ) -> ChatSettings | None:
    """Settings from the flags of :func:`add_model_arguments` over the environment."""
    # Imported here: building the parser (``--help``) need not load the settings' record.
    from harkback.adapters.models.chat_settings import ChatSettings

    return ChatSettings.from_env(environ, model=args.model, base_url=args.base_url,
                                 timeout=args.timeout, **model_limits(args))


def model_limits(args: argparse.Namespace) -> dict[str, Any]:
    """The overrides :func:`add_model_limits`'s flags give ``ChatSettings`` (None: not given).

    >>> model_limits(argparse.Namespace(max_concurrency=2, rate=(6.0, 1.0), strict_rate=False))
    {'max_concurrency': 2, 'rate': 6.0, 'rate_period': 1.0, 'strict_rate': None}
    """
    rate, period = args.rate if args.rate else (None, None)
    return {"max_concurrency": args.max_concurrency, "rate": rate, "rate_period": period,
            "strict_rate": args.strict_rate or None}
