"""Small stores of sessions for recall tests: several sessions about the same topic.

Each session's first message carries a marker (``marker-3``) so a scripted chat
server can tell which session a prompt is about.
"""

from __future__ import annotations

from harkback.adapters.stores.memory import MemoryStore
from harkback.stages.records import Conversation, Message, Session

QUERY = "docker bridge network"


def docker_session(index: int) -> Conversation:
    """Session ``s<index>``: a Docker bridge network problem and the command that fixed it."""
    sid = f"s{index}"
    return Conversation(
        Session(id=sid, source="cli", title=f"Docker networking {index}",
                started_at=1_772_000_000.0 + 3600 * index),
        (Message(session_id=sid, position=0, role="user",
                 content=f"marker-{index}: containers cannot reach each other on the "
                         "docker bridge network"),
         Message(session_id=sid, position=1, role="assistant",
                 content="The default bridge has no DNS. Run `docker network create "
                         "app-net` and start both containers with --network app-net."),
         Message(session_id=sid, position=2, role="user",
                 content="That worked, the api container reaches db now.")))


async def docker_store(count: int) -> MemoryStore:
    """A memory store holding ``count`` Docker sessions (``s0`` .. ``s<count-1>``)."""
    store = MemoryStore()
    await store.ingest([docker_session(i) for i in range(count)])
    return store
