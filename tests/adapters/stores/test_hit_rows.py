"""A search's hits made from the store's rows (``sql.rows.hit_from_row``): the records
``MessageHit(...)`` makes, made without its ``__init__`` while it checks nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest

from harkback.adapters.stores.sql.rows import hit_settable
from harkback.adapters.stores.sqlite import SqliteStore
from harkback.stages.records import Conversation, Message, MessageHit, Session, ToolCall
from tests.adapters.stores.store_contract import match, ok


async def test_hits_are_made_without_init_and_equal_what_init_makes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A search of a real file makes its hits (300 a heavy search) without
    ``MessageHit.__init__``, its keyword call most of each one's ~2 us. Every hit equals, and
    hashes as, the one ``MessageHit(...)`` makes of its fields, holds their types, and
    stays frozen."""
    db = tmp_path / "harkback.db"
    call = ToolCall(id="c1", name="bash", arguments="docker network ls")
    with SqliteStore.open(db).unwrap() as writer:
        await ok(writer.ingest([Conversation(Session(id="s1", source="cli", started_at=1.0), (
            Message(session_id="s1", position=0, role="user", content="docker bridge down",
                    timestamp=1_770_000_000.5),
            Message(session_id="s1", position=1, role="assistant", tool_calls=(call,)),
            Message(session_id="s1", position=2, role="tool", content="docker: ok",
                    tool_name="bash", tool_call_id="c1")))]))
    made: list[dict[str, Any]] = []
    init = MessageHit.__init__

    def watched(self: MessageHit, **fields: Any) -> None:
        made.append(fields)
        init(self, **fields)

    monkeypatch.setattr(MessageHit, "__init__", watched)
    with SqliteStore.open(db, readonly=True).unwrap() as reader:
        hits = await ok(reader.search(match("docker")))
    monkeypatch.undo()
    assert made == []
    assert sorted((h.position, h.role, h.timestamp) for h in hits) == [
        (0, "user", 1_770_000_000.5), (1, "assistant", 1.0), (2, "tool", 1.0)]
    for hit in hits:
        fresh = MessageHit(**attrs.asdict(hit, recurse=False))
        assert hit == fresh and hash(hit) == hash(fresh)
        assert [type(v) for v in attrs.astuple(hit)] == [type(v) for v in attrs.astuple(fresh)]
        assert hit.score > 0 and hit.source == "cli" and "docker" in hit.content
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            hit.content = "changed"  # type: ignore[misc]


def _no_nul(_inst: object, attribute: attrs.Attribute[str], value: str) -> None:
    if "\x00" in value:
        raise ValueError(f"{attribute.name} holds a NUL")


def test_a_field_a_check_or_a_hook_added_to_hits_turns_the_shortcut_off() -> None:
    """Setting slots skips whatever ``MessageHit.__init__`` would add: a copy of it keeps
    the shortcut; one whose content gains a check or a converter, one with one more field,
    a cached hash or a post-init hook does not."""
    def copy(content: Any = None, *, frozen_hash: bool = False,
             body: dict[str, Any] | None = None, **more: Any) -> type[MessageHit]:
        fields = {a.name: attrs.field(default=a.default) for a in attrs.fields(MessageHit)}
        if content is not None:
            fields["content"] = content
        made: type[MessageHit] = attrs.make_class(
            "Variant", {**fields, **more}, slots=True, frozen=True, kw_only=True,
            cache_hash=frozen_hash, bases=(object,) if body is None else (type("Hooks", (), body),))
        return made

    def post_init(_self: object) -> None:
        return None

    assert [hit_settable(variant) for variant in (
        copy(), copy(attrs.field(default="", validator=_no_nul)),
        copy(attrs.field(default="", converter=str)), copy(extra=attrs.field(default="")),
        copy(frozen_hash=True), copy(body={"__attrs_post_init__": post_init}))] == [
        True, False, False, False, False, False]
