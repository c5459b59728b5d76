"""A ``--db`` value as output may show it: a server URL with its password masked.

A PostgreSQL store is named by a URL that may hold a password
(``postgresql://me:secret@host/db``, or ``?password=secret``). The commands that name
their store (``config``, ``stats``, ``optimize``, ``migrate``, ``redact``) print it to
terminals, logs and agents' transcripts, so they print it through :func:`shown_db`.
Light on purpose (the standard library only): ``config`` runs without the wiring.

>>> shown_db("postgresql://me:secret@db.example:5432/harkback")
'postgresql://me:********@db.example:5432/harkback'
>>> shown_db("postgresql:///harkback?host=/tmp/pg&password=secret")
'postgresql:///harkback?host=/tmp/pg&password=********'
>>> shown_db("/home/me/harkback.db"), shown_db(":memory:")
('/home/me/harkback.db', ':memory:')
"""

from __future__ import annotations

MASK = "********"
"""What a password is shown as (as ``harkback config`` shows the API key)."""


def shown_db(target: str) -> str:
    """``target`` with the password of a URL (in its user part or its query) masked;
    anything else as it is."""
    scheme, found, rest = target.partition("://")
    if not found:
        return target
    rest, hashed, fragment = rest.partition("#")
    place, asked, query = rest.partition("?")
    authority, slash, path = place.partition("/")
    userinfo, at, hosts = authority.rpartition("@")
    if at and ":" in userinfo:
        authority = f"{userinfo.partition(':')[0]}:{MASK}@{hosts}"
    if asked:
        query = "&".join(f"password={MASK}" if part.partition("=")[0] == "password" else part
                         for part in query.split("&"))
    return f"{scheme}://{authority}{slash}{path}{asked}{query}{hashed}{fragment}"
