"""The next step for a PostgreSQL connection that was refused or found no server: what the
one line about it adds after libpq's reason, so a new user of a team's server knows what
to change (the reason alone, "password authentication failed for user "me"", named no
place a password is given; "Connection refused", nothing to do).

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

from harkback.adapters.stores.postgres_reach import identifier

_STEPS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (re.compile(r"password authentication failed for user"),
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


def next_step(text: str) -> str:
    """What to do about the connection error ``text`` (libpq's message), in parentheses
    after it; '' when none of the known reasons is it (one in another language too). Only
    its first line, the reason shown, is read: for a URL naming several hosts the lines
    after give each host's, and a step for another host's reason (CREATE DATABASE after
    "Connection refused") sent the user the wrong way.

    >>> next_step('port 1 failed: Connection refused\\nMultiple connection attempts failed. '
    ...           'All failures were:\\n- ... FATAL:  database "h" does not exist')[:25]
    ' (no server listens there'
    """
    for pattern, step in _STEPS:
        found = pattern.search(text.partition("\n")[0])
        if found:
            return f" ({step(found)})"
    return ""
