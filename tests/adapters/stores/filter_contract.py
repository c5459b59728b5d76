"""The store contract's filters: only some sources or projects, and sessions a ``NOT``
excludes.

Every backend's test class subclasses :class:`FilterContract` beside
:class:`~tests.adapters.stores.store_contract.StoreContract`.
"""

from __future__ import annotations

from typing import Any

from harkback.stages.ports import MatchQuery, RecentQuery, SessionStore
from harkback.stages.query import Term, parse_query
from tests.adapters.stores.store_contract import Make, match, ok


def _excluding(text: str, excluded: str, **fields: Any) -> MatchQuery:
    found = parse_query(excluded).expression
    assert found is not None
    return match(text, excluded=found, **fields)


class FilterContract:
    """What every SessionStore promises of ``sources``, ``projects`` and ``excluded``."""

    async def _projects(self, store: SessionStore, make: Make) -> None:
        await ok(store.ingest([
            make("api", ("user", "lint errors again"), project="/home/me/src/api",
                 started_at=3.0),
            make("web", ("user", "lint errors in css"), project="/home/me/src/web/",
                 started_at=2.0, title="lint setup"),
            make("old", ("user", "lint errors of old"), project="/home/me/src/old-api",
                 started_at=1.0, title="lint history"),
            make("none", ("user", "lint errors anywhere"), title="lint notes"),
        ]))

    async def test_projects_match_by_path_or_folder_name(
            self, store: SessionStore, make_conversation: Make) -> None:
        """A project is asked for by its path or its last folder's name, never a part of it;
        search, recent and the title search agree."""
        await self._projects(store, make_conversation)
        hits = await ok(store.search(match("lint", projects=("api", "/home/me/src/web"))))
        assert sorted(h.session_id for h in hits) == ["api", "web"]
        listed = await ok(store.recent(RecentQuery(limit=5, projects=("web",))))
        assert [o.session.id for o in listed] == ["web"]
        titles = await ok(store.search_titles(match("lint", projects=("old-api",))))
        assert [t.session_id for t in titles] == ["old"]

    async def test_a_session_is_found_by_its_project_name(
            self, store: SessionStore, make_conversation: Make) -> None:
        """The title search finds a session by its project folder's last name (the name
        --project asks for), never by a folder above it, and says the folder; a session
        stored again under another folder is found by the new name only."""
        await ok(store.ingest([
            make_conversation("apns", ("user", "push tokens fail"), title="APNs errors",
                              project="/home/me/code/mobile-app/"),
            make_conversation("web", ("user", "the app is slow"), title="slow pages",
                              project="/home/me/code/web"),
            make_conversation("moved", ("user", "notes"), project="/home/me/code/walrus"),
        ]))
        hits = await ok(store.search_titles(match("mobile-app")))
        assert [(h.session_id, h.project) for h in hits] == [
            ("apns", "/home/me/code/mobile-app/")]
        assert await ok(store.search_titles(match("code"))) == ()
        await ok(store.ingest([make_conversation("moved", ("user", "notes"),
                                                 project="/home/me/code/heron")]))
        assert [h.session_id for h in await ok(store.search_titles(match("heron")))] == [
            "moved"]
        assert await ok(store.search_titles(match("walrus"))) == ()

    async def test_a_windows_folder_is_found_by_its_last_name_a_home_folder_by_none(
            self, store: SessionStore, make_conversation: Make) -> None:
        """A Windows project folder is named by its last folder, not by the folders above
        it ("users" and the user's name found every session there); a home folder names no
        project (the user's name, "user" or "max", found every session started there)."""
        await ok(store.ingest([
            make_conversation("win", ("user", "plan a trip"), title="Trip",
                              project="C:\\Users\\max\\notes"),
            make_conversation("posix", ("user", "list the users"), title="Accounts"),
            make_conversation("home", ("user", "plan a trip"), project="/home/user"),
            make_conversation("mac", ("user", "plan a trip"), project="/Users/max/"),
        ]))
        assert [h.session_id for h in await ok(store.search_titles(match("notes")))] == [
            "win"]
        assert await ok(store.search_titles(match("users"))) == ()
        assert await ok(store.search_titles(match("max"))) == ()
        assert await ok(store.search_titles(match("user"))) == ()

    async def test_sources_and_projects_together(
            self, store: SessionStore, make_conversation: Make) -> None:
        """Both filters apply at once: a session must pass each."""
        await ok(store.ingest([
            make_conversation("a", ("user", "tern"), source="codex", project="/p/x"),
            make_conversation("b", ("user", "tern"), source="hermes", project="/p/x"),
            make_conversation("c", ("user", "tern"), source="codex", project="/p/y"),
        ]))
        hits = await ok(store.search(match("tern", sources=("codex",), projects=("x",))))
        assert [h.session_id for h in hits] == ["a"]

    async def test_search_keeps_only_the_sources_asked_for(
            self, store: SessionStore, make_conversation: Make) -> None:
        """With ``sources`` given, hits come from sessions of those sources only."""
        await ok(store.ingest([
            make_conversation("c", ("user", "gravel bike fitting"), source="codex"),
            make_conversation("h", ("user", "gravel bike tyres"), source="hermes"),
            make_conversation("k", ("user", "gravel bike chain"), source="claude-code"),
        ]))
        hits = await ok(store.search(match("gravel", sources=("codex", "claude-code"))))
        assert sorted(h.session_id for h in hits) == ["c", "k"]
        assert len(await ok(store.search(match("gravel")))) == 3

    async def test_recent_keeps_only_the_sources_asked_for(
            self, store: SessionStore, make_conversation: Make) -> None:
        """``recent`` with ``sources`` lists sessions of those sources only, newest first."""
        await ok(store.ingest([
            make_conversation("c1", ("user", "a"), source="codex", started_at=1.0),
            make_conversation("h", ("user", "b"), source="hermes", started_at=2.0),
            make_conversation("c2", ("user", "c"), source="codex", started_at=3.0),
        ]))
        listed = await ok(store.recent(RecentQuery(limit=5, sources=("codex",))))
        assert [o.session.id for o in listed] == ["c2", "c1"]

    async def test_recent_lists_only_the_undated_roots_when_asked(
            self, store: SessionStore, make_conversation: Make) -> None:
        """``undated`` lists the roots with no start time alone (those a bounded listing
        leaves out), with the other filters still applied."""
        await ok(store.ingest([
            make_conversation("dated", ("user", "a"), source="codex", started_at=5.0),
            make_conversation("u1", ("user", "b"), source="codex"),
            make_conversation("u2", ("user", "c"), source="hermes"),
        ]))
        listed = await ok(store.recent(RecentQuery(limit=5, undated=True)))
        assert sorted(o.session.id for o in listed) == ["u1", "u2"]
        codex = await ok(store.recent(RecentQuery(limit=5, undated=True, sources=("codex",))))
        assert [o.session.id for o in codex] == ["u1"]

    async def test_source_names_are_the_sources_held_sorted(
            self, store: SessionStore, make_conversation: Make) -> None:
        """``source_names`` gives each source of a stored session once, sorted by code point
        (not a database's collation), names kept exactly as held (``Codex`` beside
        ``codex``); a source whose sessions were all replaced or removed is gone."""
        assert await ok(store.source_names()) == ()
        await ok(store.ingest([
            make_conversation("a", ("user", "x"), source="codex"),
            make_conversation("b", ("user", "x"), source="Codex"),
            make_conversation("c", ("user", "x"), source="claude-code"),
            make_conversation("d", ("user", "x"), source="codex"),
            make_conversation("e", ("user", "x"), source="telegram"),
            make_conversation("f", ("user", "x"), source="cron")]))
        await ok(store.ingest([make_conversation("e", ("user", "y"), source="codex")]))
        remover = store.session_remover()
        assert remover is not None
        await ok(remover.remove_sessions(["f"]))
        assert await ok(store.source_names()) == ("Codex", "claude-code", "codex")

    async def test_titles_keep_only_the_sources_asked_for(
            self, store: SessionStore, make_conversation: Make) -> None:
        """The title search honours ``sources`` as the message search does."""
        await ok(store.ingest([
            make_conversation("c", ("user", "x"), title="Marmalade recipe", source="codex"),
            make_conversation("h", ("user", "y"), title="Marmalade jars", source="hermes"),
        ]))
        hits = await ok(store.search_titles(match("marmalade", sources=("hermes",))))
        assert [h.session_id for h in hits] == ["h"]

    async def test_excluded_term_drops_the_whole_session(
            self, store: SessionStore, make_conversation: Make) -> None:
        """A session holding the excluded term anywhere loses every hit, not only the
        message that holds it; other sessions keep theirs."""
        await ok(store.ingest([
            make_conversation("swarm", ("user", "docker overlay network broken"),
                              ("assistant", "rejoin the swarm manager")),
            make_conversation("plain", ("user", "docker bridge network broken")),
        ]))
        hits = await ok(store.search(_excluding("docker network", "swarm")))
        assert {h.session_id for h in hits} == {"plain"}

    async def test_excluded_term_counts_in_the_searched_roles_only(
            self, store: SessionStore, make_conversation: Make) -> None:
        """A term only a tool output holds does not exclude a search of user messages."""
        await ok(store.ingest([make_conversation(
            "s", ("user", "docker network broken"), ("tool", "swarm status dump"))]))
        hits = await ok(store.search(_excluding("docker", "swarm", roles=("user",))))
        assert [h.session_id for h in hits] == ["s"]
        assert await ok(store.search(_excluding("docker", "swarm"))) == ()

    async def test_excluded_term_ignores_the_time_bounds(
            self, store: SessionStore, make_conversation: Make) -> None:
        """A session excluded by a message written before ``since`` is still excluded."""
        await ok(store.ingest([make_conversation(
            "s", ("user", "swarm first"), ("user", "docker later"), started_at=10.0,
            timestamps=(10.0, 500.0))]))
        assert await ok(store.search(_excluding("docker", "swarm", since=100.0))) == ()
        hits = await ok(store.search(match("docker", since=100.0)))
        assert [h.session_id for h in hits] == ["s"]

    async def test_excluded_term_holds_when_common_terms_fill_up(
            self, store: SessionStore, make_conversation: Make) -> None:
        """The newest-rows fill of a bounded search leaves excluded sessions out too."""
        await ok(store.ingest([
            make_conversation(f"s{i}", ("user", f"common word {i}"),
                              *([("user", "rare swarm")] if i % 2 else []))
            for i in range(6)]))
        query = MatchQuery(expression=Term("common"), roles=("user",), limit=10,
                           max_scored=2, excluded=Term("swarm"))
        hits = await ok(store.search(query))
        assert sorted(h.session_id for h in hits) == ["s0", "s2", "s4"]
