"""What the commands say when ``--db :memory:`` names the in-memory store: a store made
for the one command and gone when it ends.

A command that writes (``ingest``, ``import``, ``sync``) refuses it, since everything it
stored would be lost unseen; one that reads answers as usual and says why it found
nothing; one that looks after a store says there is nothing to do.

>>> refusal(":memory:", "ingest")[:44], refusal("h.db", "ingest")
('ingest into --db :memory: would keep nothing', None)
"""

from __future__ import annotations

from harkback.pipeline.config import store_kind

IN_MEMORY = "is an in-memory store, empty and gone when the command ends"
"""How a note names the in-memory store, after the value given."""


def in_memory(target: str) -> str | None:
    """The note on ``target`` when it is the in-memory store (None for any other).

    >>> in_memory(":memory:"), in_memory("h.db")
    (':memory: is an in-memory store, empty and gone when the command ends', None)
    """
    return f"{target} {IN_MEMORY}" if store_kind(target) == "memory" else None


def in_memory_note(target: str, work: str) -> str | None:
    """What a command that looks after a store says when ``target`` is the in-memory
    store (None for any other): there is nothing to ``work``.

    >>> in_memory_note(":memory:", "migrate")[:30], in_memory_note("h.db", "migrate")
    ('nothing to migrate: :memory: i', None)
    """
    note = in_memory(target)
    return None if note is None else f"nothing to {work}: {note}"


def refusal(target: str, command: str) -> str | None:
    """Why ``command``, which stores sessions, refuses ``target`` (None: it does not):
    whatever it stored in the in-memory store would be gone when it ends, unseen."""
    if store_kind(target) != "memory":
        return None
    return (f"{command} into --db {target} would keep nothing: {target} {IN_MEMORY}; "
            "name a database file or a postgresql:// URL")
