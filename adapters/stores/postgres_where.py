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
    # Quoted: a user's @ or / as is (Azure's me@server) made a URL naming another host.
    user = parse.quote(str(parts.get("user", "")), safe="") + (
        f":{parse.quote(str(secret), safe='')}" if secret else "")
    host = str(parts.get("host", ""))
    database = parse.quote(str(parts.get("dbname", "")), safe="")
    # The options may name the schema (search_path): without them, a message's `harkback
    # migrate --db ...` reaches another store, or a database of other tables.
    options = (f"options={parse.quote(str(parts['options']), safe='-,')}"
               if parts.get("options") else "")
    if any(one.startswith("/") for one in host.split(",")):
        # The port names the socket's file: a message's `harkback migrate --db ...` needs it.
        socket_port = f"&port={parts['port']}" if "port" in parts else ""
        return shown_url(f"postgresql://{user + '@' if user else ''}/{database}?host={host}"
                         f"{socket_port}{'&' + options if options else ''}")
    return shown_url(f"postgresql://{user + '@' if user else ''}"
                     f"{_hosts(host, str(parts.get('port', '')))}/{database}"
                     f"{'?' + options if options else ''}")


def _hosts(host: str, port: str) -> str:
    """The hosts and ports as a URL writes them, each host with its own port (libpq reads
    ``a,b:1,2`` as the hosts ``a``, ``b``, ``2``), an IPv6 address bracketed.

    >>> _hosts("a,b", "1,2"), _hosts("a,::1", "5433"), _hosts("db", "")
    ('a:1,b:2', 'a:5433,[::1]:5433', 'db')
    """
    hosts, ports = host.split(","), port.split(",")
    if len(ports) == 1:
        ports *= len(hosts)  # one port for every host, as libpq reads it
    if len(ports) != len(hosts):
        return f"{host}:{port}"  # libpq refuses it before trying a server
    return ",".join((f"[{one}]" if ":" in one else one) + (f":{at}" if at else "")
                    for one, at in zip(hosts, ports, strict=True))


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
