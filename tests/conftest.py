"""Fixtures shared by the whole test suite."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Sequence

import pytest

from harkback.stages.records import Conversation, Message, Role, Session

# Days ("yesterday", a date) are local ones: the suite runs in UTC wherever it is run, so
# its expected days hold on any machine; tests of other zones set TZ for the command.
os.environ["TZ"] = "UTC"
time.tzset()

# Tests send Ctrl-C (SIGINT) to the commands they start, to see how those end. A suite
# started as a shell's background job (`make test &` in a script) inherits SIGINT ignored,
# and so would every command it starts (an ignored signal stays ignored across exec): none
# would see the test's Ctrl-C. A caught SIGINT is reset to the default in a child instead.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# The throwaway PostgreSQL server (postgres_server, postgres_database fixtures).
pytest_plugins = ["tests.support.postgres_server"]


def conversation(session_id: str, *turns: tuple[Role, str], started_at: float | None = None,
                 source: str = "cli", parent: str | None = None, title: str = "",
                 timestamps: Sequence[float | None] = (), project: str = "") -> Conversation:
    """A conversation whose turns get positions 0, 1, ... and the given timestamps."""
    times = list(timestamps) + [None] * (len(turns) - len(timestamps))
    messages = tuple(Message(session_id=session_id, position=i, role=role, content=content,
                             timestamp=times[i])
                     for i, (role, content) in enumerate(turns))
    session = Session(id=session_id, source=source, title=title, started_at=started_at,
                      parent_session_id=parent, project=project)
    return Conversation(session, messages)


@pytest.fixture
def make_conversation() -> Callable[..., Conversation]:
    """Builds a conversation: ``make_conversation("s1", ("user", "hi"), started_at=1.0)``."""
    return conversation


@pytest.fixture(autouse=True)
def no_user_config(tmp_path_factory: pytest.TempPathFactory,
                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test, and every command it starts, reads no config file of the machine's user:
    the config folder is an empty one of the test's own."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config-home")))
    monkeypatch.delenv("HARKBACK_CONFIG", raising=False)
