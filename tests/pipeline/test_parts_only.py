"""A listing filtered to sessions that are all sub-agents or continuations, on each store:
recent mode lists roots only, so its empty answer says so and names their roots."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from harkback.pipeline.facade import Harkback
from harkback.stages.parts_only import PARTS_READ
from tests.adapters.stores.vector_contract import Store
from tests.conftest import conversation
from tests.support.calls_counted import CallsCounted
from tests.support.new_stores import KINDS, Kind, fresh_store

SESSIONS = (
    conversation("root", ("user", "deploy the api"), started_at=1.0),
    conversation("cont", ("user", "deploy, continued"), parent="root", started_at=2.0,
                 source="cli"),
    conversation("sub", ("user", "check the db"), parent="cont", started_at=3.0,
                 source="subagent", project="/w/shop"),
)
OTHER = (conversation("other", ("user", "tune the cache"), started_at=4.0),
         conversation("osub", ("user", "read the logs"), parent="other", started_at=5.0,
                      source="subagent"))
"""Another lineage with a sub-agent from source 'subagent': what the caller's note names."""


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


@pytest.mark.parametrize("kind", KINDS)
async def test_the_callers_own_lineage_is_neither_counted_nor_named(
        kind: Kind, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """With ``--current-session`` a sub-agent of the caller's own lineage, the note named the
    caller's own root and counted its sub-agent: both are left out, as every listing leaves
    them out; a caller whose lineage holds all of them gets no note."""
    for store in fresh_store(kind, request, tmp_path):
        await store.ingest((*SESSIONS, *OTHER)).awaitable()
        hb = Harkback(store=store)
        for caller in ("root", "cont", "sub"):
            listed = (await hb.recent(sources=("subagent",), current_session_id=caller)
                      ).to_payload()
            assert listed["notes"] == [
                "the 1 session from source 'subagent' is a sub-agent or continuation (recent "
                "lists root sessions only); the session it belongs to: 'other' (harkback show "
                "ID shows one)"], caller
        alone = (await hb.recent(projects=("shop",), current_session_id="sub")).to_payload()
        assert alone["results"] == []
        assert "notes" not in alone


@pytest.mark.parametrize("kind", KINDS)
async def test_a_caller_not_stored_leaves_out_the_lineage_of_its_stored_sub_agents(
        kind: Kind, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """A live caller's sub-agent is stored before the caller (a root of its own, which the
    listing leaves out): the sub-agents under it are the caller's too, not counted."""
    live = (conversation("helper", ("user", "plan"), parent="live", started_at=6.0),
            conversation("helper-sub", ("user", "grep"), parent="helper", started_at=7.0,
                         source="subagent"))
    for store in fresh_store(kind, request, tmp_path):
        await store.ingest((*SESSIONS, *live)).awaitable()
        hb = Harkback(store=store)
        everyone = (await hb.recent(sources=("subagent",))).to_payload()
        assert everyone["notes"][0].startswith("the 2 sessions from source 'subagent'")
        listed = (await hb.recent(sources=("subagent",), current_session_id="live")
                  ).to_payload()
        assert listed["notes"] == [
            "the 1 session from source 'subagent' is a sub-agent or continuation (recent "
            "lists root sessions only); the session it belongs to: 'root' (harkback show "
            "ID shows one)"]


async def _listed_beside_own(store: Store, mine: int) -> tuple[dict[str, Any], Counter[str]]:
    """``recent --source subagent --current-session cont`` on ``store`` holding ``mine``
    sub-agents of the caller's own, all newer than the others: the payload, and the calls
    made of the store."""
    own = tuple(conversation(f"mine-{n:03}", ("user", "probe"), parent="cont",
                             started_at=100.0 + n, source="subagent") for n in range(mine))
    await store.ingest((*SESSIONS, *own, *OTHER)).awaitable()
    counted = CallsCounted(store)
    listed = (await Harkback(store=counted).recent(
        sources=("subagent",), current_session_id="cont")).to_payload()
    return listed, counted.calls


@pytest.mark.parametrize("kind", KINDS)
async def test_the_callers_many_sub_agents_do_not_crowd_out_the_others(
        kind: Kind, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """More of the caller's own sub-agents than the note reads, all newer than the others':
    the others are still counted and named, not the note left out for want of them."""
    for store in fresh_store(kind, request, tmp_path):
        listed, _calls = await _listed_beside_own(store, PARTS_READ + 1)
        assert listed["notes"] == [
            "the 1 session from source 'subagent' is a sub-agent or continuation (recent "
            "lists root sessions only); the session it belongs to: 'other' (harkback show "
            "ID shows one)"]


@pytest.mark.parametrize("kind", KINDS)
async def test_hundreds_of_the_callers_sub_agents_cost_a_few_reads(
        kind: Kind, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """The caller's own sub-agents were left out :data:`PARTS_READ` at a time, one more
    store read each (and one nested step: 20,000 of them ended in a RecursionError): each
    read now asks for twice as many as the last, so 300 of them take a few reads."""
    for store in fresh_store(kind, request, tmp_path):
        listed, calls = await _listed_beside_own(store, 300)
        assert listed["notes"][0].startswith("the 1 session from source 'subagent'")
        doublings = math.ceil(math.log2(300 / PARTS_READ))
        # One read is the listing itself; the note's: one a doubling, and the last.
        assert calls["recent"] - 1 <= doublings + 2
