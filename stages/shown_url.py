"""A URL as output may show it: its password, and query parameters that hold a secret,
masked.

URLs name what harkback talks to: a PostgreSQL store (``postgresql://me:secret@host/db``,
or ``?password=secret``), a model's endpoint (``http://me:secret@host/v1``,
``?api_key=...``), an embedder spec holding one (``openai:MODEL@http://...``). Commands
print them to terminals, logs and agents' transcripts (``config``, ``stats``, a model
failure's note, ...), so every such place prints them through :func:`shown_url`. Here, in
the domain, because adapters (whose failures name their endpoint) and the pipeline both
need it; the standard library only: ``config`` runs without the wiring.

>>> shown_url("postgresql://me:secret@db.example:5432/harkback")
'postgresql://me:********@db.example:5432/harkback'
>>> shown_url("postgresql:///harkback?host=/tmp/pg&password=secret")
'postgresql:///harkback?host=/tmp/pg&password=********'
>>> shown_url("https://me:pw@api.example/v1?api_key=k1&key=k2&model=m")
'https://me:********@api.example/v1?api_key=********&key=********&model=m'
>>> shown_url("openai:nomic@http://me:pw@127.0.0.1:11434/v1#e5")
'openai:nomic@http://me:********@127.0.0.1:11434/v1#e5'
>>> shown_url("/home/me/harkback.db"), shown_url(":memory:")
('/home/me/harkback.db', ':memory:')

A password may hold ``?``, ``#``, ``/`` and ``@`` as written (libpq reads
``me:a?b#c@host`` as the password ``a?b#c``), so the user part runs to the URL's last ``@``
unless that one is in a query after a host and database (``db/h?user=me@corp``):

>>> shown_url("postgresql://me:a?b#c@db/h"), shown_url("postgresql://me:pa/ss@db/h")
('postgresql://me:********@db/h', 'postgresql://me:********@db/h')
>>> shown_url("postgresql://db:5432/h?user=me@corp&password=pw")
'postgresql://db:5432/h?user=me@corp&password=********'
"""

from __future__ import annotations

import re

MASK = "********"
"""What a password is shown as (as ``harkback config`` shows the API key)."""

_SECRET_PARAMETER = re.compile(
    r"(?:password|passwd|pwd|secret|token|signature|sig|auth|(?:^|[_-]|api)key|^code)$",
    re.IGNORECASE)
"""Query parameter names whose value is a secret: ``password`` (and libpq's
``sslpassword``), ``access_token``, ``client_secret``, ``key``, ``api_key``, ``x-api-key``,
``sig``, ``code`` (an Azure Functions key); not ``sslkey`` (a file's path) or ``host``."""


def shown_url(target: str) -> str:
    """``target`` with the password of a URL (in its user part) and the values of
    secret-holding query parameters masked; anything else as it is."""
    scheme, found, rest = target.partition("://")
    if not found:
        return target
    userinfo, rest = _user_part(rest)
    rest, hashed, fragment = rest.partition("#")
    place, asked, query = rest.partition("?")
    if ":" in userinfo:
        userinfo = f"{userinfo.partition(':')[0]}:{MASK}"
    if asked:
        query = "&".join(_shown_parameter(part) for part in query.split("&"))
    user = f"{userinfo}@" if userinfo else ""
    return f"{scheme}://{user}{place}{asked}{query}{hashed}{fragment}"


_HOST_THEN_PATH = re.compile(r"[^:@/]*(?::\d*)?(?:/[^:@]*)?")
"""``host``, ``host:5432``, ``host:5432/db``: what stands before a query."""


def _user_part(rest: str) -> tuple[str, str]:
    """The user part of a URL after its ``://`` (empty: none) and what follows its ``@``.

    >>> _user_part("me:p@ss@db/h"), _user_part("db/h?user=me@corp")
    (('me:p@ss', 'db/h'), ('', 'db/h?user=me@corp'))
    >>> _user_part("me:pw@db/h?user=x@corp"), _user_part("me:12?x@db/h")
    (('me:pw', 'db/h?user=x@corp'), ('me:12?x', 'db/h'))
    """
    head, at, after = rest.rpartition("@")
    if not at:
        return "", rest
    before_query, asked, _ = head.partition("?")
    # libpq takes all up to an @ for the user part unless a / comes first: ``me:12?x@h``
    # is the password ``12?x``, though ``me:12`` reads as a host and port.
    if asked and "/" in before_query and _HOST_THEN_PATH.fullmatch(before_query):
        return "", rest  # the @ is a query's (?user=me@corp): masked there if secret
    user, at, host = before_query.rpartition("@")
    if asked and at and _HOST_THEN_PATH.fullmatch(host):
        return user, rest[len(user) + 1:]  # me:pw@db/h?user=x@corp
    return head, after


def _shown_parameter(part: str) -> str:
    name, equals, value = part.partition("=")
    return f"{name}={MASK}" if equals and value and _SECRET_PARAMETER.search(name) else part
