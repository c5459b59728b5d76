"""What a message says of a PostgreSQL store's URL: the server it names (:func:`where`),
its password masked as every line naming a store masks it (``********``, by
:func:`~harkback.stages.shown_url.shown_url`), and libpq's complaints about the URL without
the password they quote.

>>> where("postgresql://me:secret@db.example:5433/harkback")
'postgresql://me:********@db.example:5433/harkback'
>>> where("postgresql://db.example/harkback?password=secret&user=me")
'postgresql://me:********@db.example/harkback'
>>> where("postgresql:///harkback?host=/tmp/pg&port=5433")
'postgresql:///harkback?host=/tmp/pg&port=5433'
>>> where("postgresql://me@[::1]/team?options=-c%20search_path%3Dhb")
'postgresql://me@[::1]/team?options=-c%20search_path%3Dhb'
>>> where("postgresql:///harkback?password=secret&sslmod=x")  # unparsable: shown masked
'postgresql:///harkback?password=********&sslmod=x'
>>> where("postgresql://me:secret@db/h?sslmod=x")
'postgresql://me:********@db/h?sslmod=x'
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib import parse

import psycopg
from psycopg import conninfo

from harkback.stages.shown_url import MASK, shown_url

_PASSWORD = re.compile(r"(\bpassword=)[^&#]*", re.IGNORECASE)


def where(url: str) -> str:
    """The server ``url`` names, with its options (for messages), its password masked; the
    text as given, masked, when unparsable."""
    try:
        parts = conninfo.conninfo_to_dict(url)
    except psycopg.Error:
        return shown_url(url)  # both the user part and the query may hold a password
    if misread(parts):
        return shown_url(url)
    # The password goes in (quoted) for shown_url to mask: one rule for every line naming
    # the store (errors left it out, while stats, check and config showed ********).
    secret = parts.get("password")
    user = str(parts.get("user", "")) + (f":{parse.quote(str(secret), safe='')}"
                                         if secret else "")
    host = str(parts.get("host", ""))
    port = f":{parts['port']}" if "port" in parts else ""
    database = str(parts.get("dbname", ""))
    # The options may name the schema (search_path): without them, a message's `harkback
    # migrate --db ...` reaches another store, or a database of other tables.
    options = (f"options={parse.quote(str(parts['options']), safe='-,')}"
               if parts.get("options") else "")
    if host.startswith("/"):
        # The port names the socket's file: a message's `harkback migrate --db ...` needs it.
        socket_port = f"&port={parts['port']}" if "port" in parts else ""
        return shown_url(f"postgresql://{user + '@' if user else ''}/{database}?host={host}"
                         f"{socket_port}{'&' + options if options else ''}")
    if ":" in host and "," not in host:
        host = f"[{host}]"  # an IPv6 address, bracketed as a URL writes it
    return shown_url(f"postgresql://{user + '@' if user else ''}{host}{port}/{database}"
                     f"{'?' + options if options else ''}")


def misread(parts: Mapping[str, Any]) -> bool:
    """Whether libpq read a piece of the URL's user part as its host, port or database: a
    password's ``/`` or ``@`` written as is (``me:pa/ss@db/h`` reads as host ``me``, port
    ``pa``, database ``ss@db/h``), which a message would print."""
    return any("@" in str(parts.get(key) or "") for key in ("host", "hostaddr", "port",
                                                            "dbname"))


def unquoted(detail: str, url: str) -> str:
    """libpq's complaint about ``url`` without the password it may quote ("unexpected
    spaces found in "pa ss"").

    >>> unquoted('spaces found in "pa ss"', "postgresql://me:pa ss@h/db")
    'spaces found in "********"'
    """
    rest = url.partition("://")[2]
    # The user part ends at the first @ before any / as libpq reads it ("me:pa ss@db/h?
    # user=me@srv"), or at the last @ where its password holds one: either may be quoted.
    first = re.match(r"[^@/]*(?=@)", rest)
    users = (rest.rpartition("@")[0], first.group(0) if first else "")
    secrets = [*(user.partition(":")[2] for user in users),
               *(m.group(0).partition("=")[2] for m in _PASSWORD.finditer(rest))]
    for secret in sorted(filter(None, secrets), key=len, reverse=True):
        detail = detail.replace(secret, MASK)
    return detail
