"""Hermes state.db files of several schema eras, imported and searched through the pipeline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harkback.adapters.sources.hermes import HermesImporter
from harkback.adapters.stores.import_ledger import SqliteImportLedger
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.facade import Harkback
from harkback.pipeline.importing import ImportOutcome, run_import
from tests.adapters.stores.store_contract import ok
from tests.support.hermes_db import HermesFile, multimodal

ROOT, CONT, DELEGATE = "20260303_100000_aa11bb", "20260303_110000_cc22dd", "20260303_103000_ee33ff"
OLD, RESET, BRANCH = "20260303_120000_1a2b3c", "20260303_130000_4d5e6f", "20260303_140000_7a8b9c"
LANE, LANE_CHILD = "20260303_150000_0f0f0f", "20260303_160000_1e1e1e"


def build(path: Path, era: str) -> HermesFile:
    """A Hermes file of ``era`` holding every lineage kind and visibility case."""
    db = HermesFile(path, era)
    db.session(ROOT, title="Docker bridge", end_reason="compression")
    db.message(ROOT, "user", "containers cannot reach each other on the docker bridge")
    db.message(ROOT, "assistant", None, tool_calls=json.dumps([
        {"id": "c1", "type": "function",
         "function": {"name": "terminal", "arguments": '{"cmd": "docker network ls"}'}}]))
    db.message(ROOT, "tool", "bridge   bridge   local", tool_name="terminal", tool_call_id="c1")
    db.message(ROOT, "user", multimodal(
        {"type": "text", "text": "here is a screenshot of the zebrafish error"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}))
    db.message(ROOT, "assistant", "The default bridge has no DNS; use a user-defined network.")
    db.session(DELEGATE, source="subagent", parent=ROOT, model_config={"_delegate_from": ROOT})
    db.message(DELEGATE, "user", "check the iptables masquerade rules")
    db.message(DELEGATE, "assistant", "iptables masquerade rules are fine")
    db.session(CONT, parent=ROOT, title="Docker bridge #2")
    db.message(CONT, "user", "[CONTEXT COMPACTION — REFERENCE ONLY] earlier we talked about "
                             "the quetzal daemon")
    db.message(CONT, "user", "now fix the overlay network too")
    db.message(CONT, "assistant", "Created it with docker network create --driver overlay mesh")
    db.session(OLD, end_reason="new_session", title="Release planning")
    db.message(OLD, "user", "plan the albatross release")
    db.session(RESET, parent=OLD, model_config={"_reset_from": OLD})
    db.message(RESET, "user", "fresh start: plan the pelican release")
    db.session(BRANCH, parent=ROOT, model_config={"_branched_from": ROOT}, title="Try podman")
    db.message(BRANCH, "user", "branch: try podman instead of docker")
    if db.has("sessions", "session_key"):
        db.session(LANE, source="telegram", session_key="telegram:42:7")
        db.message(LANE, "user", "remind me about the heron feeder")
        db.session(LANE_CHILD, source="telegram", parent=LANE, session_key="telegram:42:7")
        db.message(LANE_CHILD, "user", "what about the ibis feeder")
    if db.has("messages", "active"):
        db.message(ROOT, "user", "rewound: use the kangaroo driver", active=0, compacted=0)
    if era == "v18":
        db.message(ROOT, "user", "null active counts as live: lemur", active=None)
    if db.has("messages", "compacted"):
        db.message(ROOT, "assistant", "archived: the narwhal setting fixed it", active=0,
                   compacted=1)
        db.message(ROOT, "user", "steer the model toward the wombat", display_kind="hidden")
        db.message(CONT, "assistant", "handoff of the okapi work", _compressed_summary=1)
    return db


def hermes_file(tmp_path: Path, era: str) -> Path:
    """A closed Hermes database of ``era`` with the standard scenario."""
    path = tmp_path / "hermes" / "state.db"
    path.parent.mkdir()
    build(path, era).close()
    return path


async def import_hermes(source: Path, db: Path, *, full: bool = False) -> ImportOutcome:
    """Import ``source`` into the harkback store at ``db``."""
    with SqliteStore.open(db).unwrap() as store:
        return await run_import(HermesImporter(source.resolve()), store,
                                SqliteImportLedger(store), full=full, progress=False)


async def search(db: Path, query: str, **options: Any) -> dict[str, Any]:
    """The search payload for ``query`` over the store at ``db``."""
    with SqliteStore.open(db, readonly=True).unwrap() as store:
        payload: dict[str, Any] = (await Harkback(store=store).search(
            query, **options)).to_payload()
    return payload


def roots(payload: dict[str, Any]) -> list[str]:
    """The session ids a search payload recalls."""
    assert payload["success"], payload
    return [r["session_id"] for r in payload["results"]]


@pytest.fixture(params=["v9", "v18", "v30"])
def era(request: pytest.FixtureRequest) -> str:
    """Each schema era in turn."""
    return str(request.param)


async def test_every_era_imports_and_finds_plain_text(tmp_path: Path, era: str) -> None:
    """A message of any era is found by its words and attributed to its session."""
    db = tmp_path / "h.db"
    outcome = await import_hermes(hermes_file(tmp_path, era), db)
    assert outcome.ok, outcome.error
    assert roots(await search(db, "docker bridge DNS"))[:1] == [ROOT]


async def test_multimodal_text_parts_are_searchable(tmp_path: Path, era: str) -> None:
    """The text part of ``\\x00json:`` content is indexed; the image part is not."""
    db = tmp_path / "h.db"
    await import_hermes(hermes_file(tmp_path, era), db)
    assert roots(await search(db, "zebrafish")) == [ROOT]
    assert roots(await search(db, "base64")) == []


async def test_compaction_summaries_never_match(tmp_path: Path, era: str) -> None:
    """Text that only a compaction summary holds does not come back."""
    db = tmp_path / "h.db"
    outcome = await import_hermes(hermes_file(tmp_path, era), db)
    assert roots(await search(db, "quetzal")) == []
    assert dict(outcome.left_out)["compaction summary"] >= 1


async def test_continuation_and_delegate_resolve_to_their_root(tmp_path: Path, era: str) -> None:
    """Hits in a compression continuation or a delegated sub-agent recall the root."""
    db = tmp_path / "h.db"
    await import_hermes(hermes_file(tmp_path, era), db)
    overlay = await search(db, "overlay network")
    assert roots(overlay) == [ROOT]
    assert CONT in overlay["results"][0]["lineage"]
    assert roots(await search(db, "iptables masquerade")) == [ROOT]


async def test_reset_child_and_branch_are_their_own_conversations(tmp_path: Path,
                                                                   era: str) -> None:
    """A /new reset child and a /branch child are recalled as themselves."""
    db = tmp_path / "h.db"
    await import_hermes(hermes_file(tmp_path, era), db)
    assert roots(await search(db, "pelican")) == [RESET]
    assert roots(await search(db, "albatross")) == [OLD]
    assert roots(await search(db, "podman")) == [BRANCH]


async def test_current_reset_child_does_not_hide_the_conversation_before_it(
        tmp_path: Path, era: str) -> None:
    """Searching from the reset child still recalls the conversation left behind by /new."""
    db = tmp_path / "h.db"
    await import_hermes(hermes_file(tmp_path, era), db)
    assert roots(await search(db, "albatross", current_session_id=RESET)) == [OLD]


async def test_recent_lists_roots_resets_and_branches_only(tmp_path: Path, era: str) -> None:
    """Recent mode lists lineage roots: continuations and delegates stay under their root."""
    db = tmp_path / "h.db"
    await import_hermes(hermes_file(tmp_path, era), db)
    listed = set(roots(await search(db, "", limit=10)))
    assert {ROOT, OLD, RESET, BRANCH} <= listed
    assert not listed & {CONT, DELEGATE}


async def test_gateway_lane_child_without_markers_is_a_reset(tmp_path: Path) -> None:
    """A pre-marker child in the same chat lane (session_key) starts a conversation."""
    db = tmp_path / "h.db"
    await import_hermes(hermes_file(tmp_path, "v18"), db)
    assert roots(await search(db, "ibis")) == [LANE_CHILD]


async def test_rewound_rows_are_hidden_and_null_active_is_live(tmp_path: Path) -> None:
    """``active=0`` without compaction hides a row; ``active`` NULL counts as live."""
    db = tmp_path / "h.db"
    outcome = await import_hermes(hermes_file(tmp_path, "v18"), db)
    assert roots(await search(db, "kangaroo")) == []
    assert roots(await search(db, "lemur")) == [ROOT]
    assert dict(outcome.left_out)["rewound message"] == 1


async def test_archived_rows_stay_searchable_hidden_rows_do_not(tmp_path: Path) -> None:
    """Compaction-archived rows are found; hidden, rewound and flagged summary rows are not."""
    db = tmp_path / "h.db"
    await import_hermes(hermes_file(tmp_path, "v30"), db)
    assert roots(await search(db, "narwhal")) == [ROOT]
    for word in ("kangaroo", "wombat", "okapi"):
        assert roots(await search(db, word)) == [], word


async def test_message_positions_are_hermes_message_ids(tmp_path: Path) -> None:
    """A hit names the Hermes message it came from."""
    source = tmp_path / "hermes" / "state.db"
    source.parent.mkdir()
    hermes = build(source, "v30")
    wanted = hermes.message(ROOT, "user", "the capybara container restarts")
    hermes.close()
    db = tmp_path / "h.db"
    await import_hermes(source, db)
    with SqliteStore.open(db, readonly=True).unwrap() as store:
        messages = await ok(store.messages([ROOT]))
    positions = {m.position for m in messages if "capybara" in m.content}
    assert positions == {wanted}


async def test_second_import_reads_nothing_when_nothing_changed(tmp_path: Path) -> None:
    """Importing an unchanged file again adds and updates nothing."""
    source = hermes_file(tmp_path, "v30")
    db = tmp_path / "h.db"
    first = await import_hermes(source, db)
    again = await import_hermes(source, db)
    assert first.delta.sessions_added == 8 and first.delta.messages_added > 10
    counts = again.delta
    assert (counts.sessions_added, counts.sessions_updated, counts.messages_added) == (0, 0, 0)
    assert again.delta.sessions_unchanged == 8


async def test_new_messages_re_read_only_their_session(tmp_path: Path) -> None:
    """Rows newer than the last import update their own session and nothing else."""
    source = hermes_file(tmp_path, "v30")
    db = tmp_path / "h.db"
    await import_hermes(source, db)
    writer = HermesFile.reopen(source, "v30")
    writer.message(CONT, "user", "and the toucan ingress?")
    writer.close()
    again = await import_hermes(source, db)
    assert (again.delta.sessions_updated, again.delta.sessions_unchanged) == (1, 7)
    counts = again.delta
    assert (counts.messages_added, counts.messages_updated, counts.messages_removed) == (1, 0, 0)
    assert roots(await search(db, "toucan ingress")) == [ROOT]


async def test_changed_session_rows_are_re_read(tmp_path: Path) -> None:
    """A renamed session, and a rewind noted on its row, reach the store."""
    source = hermes_file(tmp_path, "v30")
    db = tmp_path / "h.db"
    await import_hermes(source, db)
    writer = HermesFile.reopen(source, "v30")
    writer.update("sessions", BRANCH, title="Podman after all")
    row = writer.connection.execute(
        "SELECT id FROM messages WHERE content LIKE '%overlay%' AND role = 'user'").fetchone()
    writer.update("messages", row[0], active=0)
    writer.update("sessions", CONT, rewind_count=1)
    writer.close()
    again = await import_hermes(source, db)
    assert (again.delta.sessions_updated, again.delta.messages_removed) == (2, 1)
    assert roots(await search(db, "podman"))[0] == BRANCH
    assert (await search(db, "podman"))["results"][0]["title"] == "Podman after all"
    overlay = await search(db, "overlay")
    assert all("now fix the overlay" not in r["summary"] for r in overlay["results"])


async def test_full_import_reads_everything_again_but_changes_nothing(tmp_path: Path) -> None:
    """``full`` re-reads every session; the store still finds nothing to update."""
    source = hermes_file(tmp_path, "v30")
    db = tmp_path / "h.db"
    await import_hermes(source, db)
    again = await import_hermes(source, db, full=True)
    counts = again.delta
    assert (counts.sessions_added, counts.sessions_updated, counts.sessions_unchanged) == (0, 0, 8)


async def test_stale_hermes_fts_does_not_matter(tmp_path: Path) -> None:
    """Rows Hermes' own index never saw are found: harkback indexes the text itself."""
    source = tmp_path / "hermes" / "state.db"
    source.parent.mkdir()
    hermes = build(source, "v9")
    hermes.connection.execute("DROP TRIGGER messages_fts_insert")
    hermes.message(ROOT, "assistant", "the flamingo flag was missing")
    hermes.close()
    db = tmp_path / "h.db"
    await import_hermes(source, db)
    assert roots(await search(db, "flamingo")) == [ROOT]


async def test_tool_sessions_are_hidden_unless_asked_for(tmp_path: Path) -> None:
    """A ``tool`` child (a third-party integration) is not found by default; unhidden,
    its hit traces to the root it hangs under."""
    path = tmp_path / "hermes" / "state.db"
    path.parent.mkdir()
    hermes = HermesFile(path, "v30")
    hermes.session(ROOT, title="Docker bridge")
    hermes.message(ROOT, "user", "containers cannot reach each other")
    hermes.session(CONT, source="tool", parent=ROOT)
    hermes.message(CONT, "user", "integration asks about the marmoset endpoint")
    hermes.close()
    db = tmp_path / "h.db"
    await import_hermes(path, db)
    assert roots(await search(db, "marmoset")) == []
    assert roots(await search(db, "marmoset", hidden_sources=())) == [ROOT]


async def test_a_long_continuation_chain_is_walked_once(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether a session is left out (archived or hidden, itself or through its lineage) is
    decided once per session: each session of a 2,000-deep chain was checked again by every
    session below it (two million checks; 10,000 continuations took a minute at every
    sync). The chain under an archived root is left out whole; a chain beside it is kept."""
    from harkback.adapters.sources import hermes
    checks = 0
    real = hermes.flag_reason

    def counted(row: dict[str, object], *, archived: bool) -> str | None:
        nonlocal checks
        checks += 1
        return real(row, archived=archived)

    monkeypatch.setattr(hermes, "flag_reason", counted)
    path = tmp_path / "state.db"
    db = HermesFile(path, "v30")
    for lane, archived in (("kept", 0), ("gone", 1)):
        for n in range(1_000):
            db.session(f"{lane}{n}", parent=f"{lane}{n - 1}" if n else None,
                       end_reason="compression", archived=archived if n == 0 else 0)
        db.message(f"{lane}999", "user", f"the {lane} lane's last request about the quokka")
    db.close()
    outcome = await import_hermes(path, tmp_path / "h.db")
    assert checks <= 2 * 2_000
    assert roots(await search(tmp_path / "h.db", "quokka")) == ["kept0"]
    assert dict(outcome.left_out)["archived session"] == 1_000
