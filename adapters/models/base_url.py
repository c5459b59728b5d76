"""Checks of an OpenAI-compatible endpoint's base URL, before any client is made.

The HTTP library under the ``openai`` SDK raises its own error type for a URL it cannot
use, and only when the client is made; checking first turns such a URL into a clear
message (and no retries). Nothing here imports the SDK, so a flag or a spec can be
checked without loading it.
"""

from __future__ import annotations

import re
import urllib.parse

from harkback.stages.errors import ModelFailed
from harkback.stages.shown_url import shown_url


def base_url_problem(base_url: str) -> str | None:
    """What is wrong with an endpoint URL, in words, or None when the SDK can use it.

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
    return (ModelFailed(f"base URL {shown_url(base_url)!r} {problem} (model {model})")
            if base_url and problem else None)
