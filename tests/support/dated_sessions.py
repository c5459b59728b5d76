"""Sessions dated relative to a clock, for seed-style tests with a small corpus of their own.

>>> [c.session.started_at for c in dated({"s": (2.0, [("user", "hi")])}, 3 * DAY)]
[86400.0]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from harkback.stages.records import Conversation, Message, Session

DAY = 86_400.0

Turns = Sequence[tuple[str, str]]


def dated(sessions: Mapping[str, tuple[float, Turns]], now: float,
          moved: Mapping[str, float] | None = None) -> list[Conversation]:
    """Each session of ``sessions`` (id: days before ``now``, its turns as role and text)
    as a conversation starting then, its messages a minute apart; ``moved`` gives some of
    them another number of days."""
    out = []
    for sid, (days_ago, turns) in sessions.items():
        start = now - (moved or {}).get(sid, days_ago) * DAY
        out.append(Conversation(
            Session(id=sid, source="cli", started_at=start),
            tuple(Message(session_id=sid, position=i, role=role,  # type: ignore[arg-type]
                          content=text, timestamp=start + 60 * i)
                  for i, (role, text) in enumerate(turns))))
    return out
