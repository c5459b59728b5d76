"""A listing filtered to sessions that are all sub-agents or continuations, on each store:
recent mode lists roots only, so its empty answer says so and names their roots."""

from __future__ import annotations

from pathlib import Path

import pytest

from harkback.pipeline.facade import Harkback
from tests.conftest import conversation
from tests.support.new_stores import KINDS, Kind, fresh_store

SESSIONS = (
    conversation("root", ("user", "deploy the api"), started_at=1.0),
    conversation("cont", ("user", "deploy, continued"), parent="root", started_at=2.0,
                 source="cli"),
    conversation("sub", ("user", "check the db"), parent="cont", started_at=3.0,
                 source="subagent", project="/w/shop"),
)


@pytest.mark.parametrize("kind", KINDS)
async def test_a_filter_holding_only_sub_agents_names_the_sessions_they_belong_to(
        kind: Kind, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """``recent --source subagent`` listed nothing and said nothing: it now says its
    sessions are sub-agents or continuations and names their root (a sub-agent of a
    continuation belongs to the continuation's root); a filter with a root says nothing."""
    for store in fresh_store(kind, request, tmp_path):
        await store.ingest(SESSIONS).awaitable()
        hb = Harkback(store=store)
        listed = (await hb.recent(sources=("subagent",))).to_payload()
        assert listed["results"] == []
        assert listed["notes"] == [
            "the 1 session from source 'subagent' is a sub-agent or continuation (recent "
            "lists root sessions only); the session it belongs to: 'root' (harkback show "
            "ID shows one)"]
        project = (await hb.recent(projects=("shop",))).to_payload()
        assert project["notes"][0].startswith("the 1 session of project 'shop' is a sub-agent")
        rooted = (await hb.recent(sources=("cli",))).to_payload()
        assert [r["session_id"] for r in rooted["results"]] == ["root"]
        assert "notes" not in rooted
