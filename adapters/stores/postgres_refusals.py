"""A PostgreSQL connection that was refused or found no server: whether the server said
no (:func:`refused`), each host's failure where the URL names several (:func:`attempts`),
and the next step, what the one line about it adds after libpq's reason, so a new user of
a team's server knows what to change (the reason alone, "password authentication failed
for user "me"", named no place a password is given; "Connection refused", nothing to do).

>>> next_step('connection to server at "db" (10.0.0.5), port 5432 failed: FATAL:  password '
...           'authentication failed for user "me"')[:45]
' (check the user and password the URL gives, '
>>> next_step('connection to server at "db" (10.0.0.5), port 5432 failed: FATAL:  database '
...           '"team db" does not exist')[:52]
' (have it created, CREATE DATABASE "team db" by a ro'
>>> next_step("canceling statement due to statement timeout")
''
"""

from __future__ import annotations

import re
from collections.abc import Callable

import psycopg
from psycopg import conninfo

from harkback.adapters.stores.postgres_reach import identifier
from harkback.stages.shown_url import MASK

_REFUSED = re.compile(r"failed: (?:FATAL: |fe_sendauth: )")
"""A new connection that the server refused: libpq's ``failed: FATAL:`` (the server's own
reason) or ``failed: fe_sendauth:`` (it asked for a password that was not given)."""
_NOT_UP = re.compile(r"the database system is (?:shutting down|starting up|in recovery mode"
                     r"|not (?:yet )?accepting connections)")
"""A server that says no only because it is stopping or starting (SQLSTATE 57P03): it
cannot be reached for now, as a stopped one cannot; nothing is wrong with the login."""
_CROWDED = re.compile(r"too many clients|remaining connection slots are reserved"
                      r"|too many connections for (?:role|database)")
"""A server that says no only because others hold the connections (53300: its limit, a role's
or database's CONNECTION LIMIT): it lets this one in once some leave, as for the first sync."""


def refused(text: str) -> bool:
    """Whether libpq's message ``text`` (of one host) says the server answered and said no
    (a wrong password or role, no such database), not that it is stopping or starting.

    >>> refused('... failed: FATAL:  role "me" does not exist'), refused(
    ...     '... failed: FATAL:  the database system is starting up')
    (True, False)
    """
    return bool(_REFUSED.search(text)) and not _NOT_UP.search(text)


def crowded(text: str) -> bool:
    """Whether a refusal says only that others hold every connection (it passes)."""
    return bool(_CROWDED.search(text))


_REFUSED_PASSWORD = re.compile(r"password authentication failed for user")

_STEPS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (_REFUSED_PASSWORD,
     lambda _: "check the user and password the URL gives, a password's @ and / "
               "percent-encoded as %40 and %2F, or those in $PGPASSWORD or ~/.pgpass"),
    (re.compile(r"fe_sendauth: no password supplied"),
     lambda _: "the server asks for a password: give it in the URL, as "
               "postgresql://USER:PASSWORD@HOST/DATABASE, in $PGPASSWORD or in ~/.pgpass"),
    # The server quotes a name as given, its own quotes not doubled: the name is all that
    # stands between the first quote and the last (of the line: "." stops at its end).
    (re.compile(r'database "(.*)" does not exist'),
     lambda found: f"have it created, CREATE DATABASE {identifier(found[1])} by a "
                   "role that may, or name another database in the URL"),
    (re.compile(r'role ".*" does not exist'),
     lambda _: "name a role the server has in the URL, as postgresql://ROLE@HOST/DATABASE, "
               "or have its administrator create it"),
    (re.compile(r"no pg_hba\.conf entry"),
     lambda _: "the server's pg_hba.conf admits no such connection: have its administrator "
               "add one, or connect as it admits (another role, host or sslmode)"),
    (re.compile(r"Connection refused|on socket \"[^\"]*\" failed: No such file or directory"),
     lambda _: "no server listens there: start it, or correct the host and port in the "
               "URL; a socket's host is the folder holding it"),
)


_MASKED = ("the URL's password is ********, as harkback's lines show every password, not "
           "the password itself: put the real one in its place, or leave it out of the URL "
           "and keep it in $PGPASSWORD or ~/.pgpass")
"""The step for a password refused where the URL gives the mask: a command a message
suggested, pasted as shown (the password the URL gives wins over $PGPASSWORD)."""


def next_step(text: str, url: str = "") -> str:
    """What to do about the connection error ``text`` (libpq's message) of ``url``, in
    parentheses after it; '' when none of the known reasons is it (one in another language
    too). Only its first line, the reason shown, is read: for a URL naming several hosts
    the lines after give each host's, and a step for another host's reason (CREATE
    DATABASE after "Connection refused") sent the user the wrong way.

    >>> next_step('port 1 failed: Connection refused\\nMultiple connection attempts failed. '
    ...           'All failures were:\\n- ... FATAL:  database "h" does not exist')[:25]
    ' (no server listens there'
    >>> next_step('FATAL:  password authentication failed for user "me"',
    ...           "postgresql://me:********@db/h")[:42]
    " (the URL's password is ********, as harkb"
    """
    if _REFUSED_PASSWORD.search(text.partition("\n")[0]) and _gives_mask(url):
        return f" ({_MASKED})"
    for pattern, step in _STEPS:
        found = pattern.search(text.partition("\n")[0])
        if found:
            return f" ({step(found)})"
    return ""


def _gives_mask(url: str) -> bool:
    """Whether ``url`` gives ``********`` as its password (in its user part or query)."""
    try:
        return conninfo.conninfo_to_dict(url).get("password") == MASK
    except psycopg.Error:
        return False


_SEVERAL = "\nMultiple connection attempts failed. All failures were:\n"
"""What psycopg puts between the last host's reason and each host's, for a URL naming
several hosts (``host=a,b``) none of which took the connection."""
_HOST = re.compile(r"^- host: (.*?), port: (.*?), hostaddr: (.*?): ", re.MULTILINE)
_ATTEMPT = re.compile(r"^(?:connection (?:failed|is bad): )*(?:connection to server "
                      r"(?:on socket \"[^\"]*\"|at \"[^\"]*\"(?: \([^)]*\))?, port \d+) failed: )?")
"""What libpq puts before a host's reason, the host named already: its address in
parentheses only when the host is a name (``at "127.0.0.1", port 1`` has none)."""


def attempts(text: str) -> list[tuple[str, str, str]]:
    """Each host's failure in psycopg's message ``text`` for a URL naming several, as
    (the host as a URL writes it, its first line as libpq wrote it, the reason alone on
    one line); [] for one host.

    >>> found = attempts('x\\nMultiple connection attempts failed. All failures were:\\n'
    ...          "- host: 'db1', port: '5433', hostaddr: None: connection failed: connection "
    ...          'to server at "db1" (10.0.0.5), port 5433 failed: FATAL:  role "me" does '
    ...          "not exist\\n- host: '/run/pg', port: None, hostaddr: None: connection is bad:"
    ...          ' connection to server on socket "/run/pg/.s.PGSQL.5432" failed: No such '
    ...          'file or directory\\n\\tIs the server running locally?')
    >>> [(host, reason) for host, _, reason in found]
    [('db1:5433', 'FATAL: role "me" does not exist'), ('/run/pg', 'No such file or directory')]
    """
    _, several, failures = text.partition(_SEVERAL)
    if not several:
        return []
    found = list(_HOST.finditer(failures))
    hosts = []
    for at, following in zip(found, [*found[1:], None], strict=True):
        host, port, _address = (_literal(value) for value in at.groups())
        first = failures[at.end():following.start() if following else None].split("\n")[0]
        hosts.append((f"{host}:{port}" if port else host, first,
                      " ".join(_ATTEMPT.sub("", first).split())))
    return hosts


def _literal(value: str) -> str:
    """A value as psycopg's message writes it (``'db1'``, ``None``), as text ('' for None)."""
    return "" if value == "None" else value.strip("'")
