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


OPENAI_API = "https://api.openai.com/v1"
"""Where the ``openai`` SDK sends requests when no base URL is given."""

_DEFAULT_PORTS = {"http": 80, "https": 443}


def endpoint_identity(base_url: str | None) -> str:
    """``base_url`` written one way for every spelling of the same endpoint, without its
    credentials: the endpoint's part of the summary cache key.

    Scheme and host in lower case, no user or password, no default port, no trailing
    slash; the values of secret query parameters masked (:func:`shown_url`). No base URL
    is the OpenAI API.

    >>> endpoint_identity("HTTP://me:pw@LocalHost:80/v1/")
    'http://localhost/v1'
    >>> endpoint_identity(None), endpoint_identity("https://h/v1?api-version=2&api_key=k")
    ('https://api.openai.com/v1', 'https://h/v1?api-version=2&api_key=********')
    """
    given = (base_url or "").strip() or OPENAI_API
    if base_url_problem(given) is not None:
        return shown_url(given)  # every call to it fails: nothing is cached under it
    parts = urllib.parse.urlsplit(given)
    scheme = parts.scheme.lower()
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    port = "" if parts.port in (None, _DEFAULT_PORTS[scheme]) else f":{parts.port}"
    query = f"?{parts.query}" if parts.query else ""
    return shown_url(f"{scheme}://{host}{port}{parts.path.rstrip('/')}{query}")
