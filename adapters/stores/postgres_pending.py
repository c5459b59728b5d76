"""The message index's pending list, merged on a second connection while a large ingest
writes.

The ``messages_tokens`` GIN index takes new rows into its pending list (``fastupdate``),
and merging that list into the index is about half of the server's work in an ingest.
The backend running the ``COPY`` merges it itself whenever the list passes
``gin_pending_list_limit``, unless another backend is merging it at that moment (then it
skips the merge and goes on writing). So while a batch of at least :data:`BULK_MESSAGES`
messages is written, a second connection of the store calls ``gin_clean_pending_list``
over and over (:func:`merge_until`): the merge runs in a second server process beside the
``COPY`` (and this process's tokenising), and the writer only appends. It goes on past
the write's commit, beside the next batch's planning and writing, until the list is empty
and no large write is under way (or the store is closing); closing the store waits for
it. Nothing a reader sees changes: the pending list is part of the index, searched as the
merged entries are (a search meanwhile reads a longer list, as it does after any write).

Merging needs the index's owner (as ``VACUUM`` does); for another role the first call is
refused, and the store's writers merge as they always did.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import psycopg

BULK_MESSAGES = 1000
"""A batch bringing at least this many messages is written with the merge beside it
(fewer add too little to the pending list to be worth a second connection)."""

IDLE_S = 0.02
"""How long the merging connection waits before looking again at an empty list."""

MERGE = "SELECT gin_clean_pending_list('messages_tokens'::regclass)"
"""Merge the pending list (as it stood when the call began); gives the pages it emptied."""

Connection = psycopg.Connection[Any]


def merge_until(connection: Connection, idle: Callable[[], bool]) -> int | None:
    """Merge the message index's pending list until it is empty and ``idle()`` says no
    large write is under way; return how many pending pages were merged, or None when the
    role may not merge (it does not own the index).

    ``idle`` decides under the caller's lock, so a write starting meanwhile finds this
    merge running or ended, never ending. Each call commits on its own, so what was merged
    stays merged whatever a write does.
    """
    connection.commit()
    connection.autocommit = True
    merged = 0
    try:
        while True:
            try:
                found = int(connection.execute(MERGE).fetchone()[0])  # type: ignore[index]
            except psycopg.errors.InsufficientPrivilege:
                return None
            merged += found
            if not found:
                if idle():
                    return merged
                time.sleep(IDLE_S)
    finally:
        connection.autocommit = False
