"""A connection the PostgreSQL server ended under a statement, told apart from a server
that could not be reached: the server was reached, the statement's transaction is whole
or not there (a cut COMMIT leaves which unknown), and running the command again is the step
(an ingest run again stores the rest, one copy of each session). Said as "cannot reach"
with no step, it left the user to guess whether anything was half-written.

>>> cut_short(psycopg.errors.AdminShutdown("terminating connection due to administrator "
...                                         "command"))
True
>>> cut_short(psycopg.OperationalError("consuming input failed: server closed the "
...                                    "connection unexpectedly"))
True
>>> cut_short(psycopg.OperationalError('connection failed: connection to server on socket '
...                                    '"/s" failed: server closed the connection unexpectedly'))
False
"""

from __future__ import annotations

import re

import psycopg

_STATES = frozenset({"57P01", "57P02", "57P05", "25P03"})
"""The SQLSTATEs of a connection the server ended: terminated by an administrator
(``pg_terminate_backend``) or a fast shutdown, a crash or an immediate shutdown, an idle
session's or idle transaction's timeout."""

_LOST = re.compile(r"server closed the connection unexpectedly|the connection is lost"
                   r"|could not receive data from server|SSL SYSCALL error: EOF detected")
"""libpq's and psycopg's words for a connection gone under a statement with no word from
the server (``pg_ctl stop -m immediate``, a killed backend, a connection reset)."""

CUT_SHORT = ("the server stopped or restarted, or an administrator ended the connection; "
             "a transaction is kept whole or not at all, so nothing is half-written, though "
             "the one cut may have committed: run the command again once the server is up")
"""What the line about such a connection adds after the server's reason. Not "rolled
back": a COMMIT cut (one waiting for a synchronous standby, its backend terminated; one
sent as the server stops) may have committed, and the client cannot tell."""


def cut_short(error: BaseException) -> bool:
    """Whether ``error`` says a connection that was open went away under a statement (not
    a new connection that failed: libpq's ``connection to server ... failed``)."""
    if not isinstance(error, psycopg.OperationalError):
        return False
    text = str(error)
    if text.startswith(("connection failed", "connection to server")):
        return False
    return error.sqlstate in _STATES or (error.sqlstate is None and bool(_LOST.search(text)))
