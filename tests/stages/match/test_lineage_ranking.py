"""A lineage ranks as one conversation, and a title's shortness is no evidence (lexical
ranker, in-memory store, through the resolve stage as a search runs it)."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from returns.unsafe import unsafe_perform_io

from harkback.adapters.stores.memory import MemoryStore
from harkback.pipeline.embed import embed_missing
from harkback.stages.match import clause_parts, lexical, spread
from harkback.stages.match.hybrid import HybridMatch
from harkback.stages.match.lexical import LexicalMatch
from harkback.stages.ports import Deps
from harkback.stages.records import Conversation, Session
from harkback.stages.request import SearchRequest
from harkback.stages.resolve import LineageResolve
from tests.conftest import conversation
from tests.support.embedding import ConceptEmbedder

DAY = 86_400.0
NOW = 1_780_000_000.0

FILLER = tuple(conversation(f"other-{i}", ("user", f"notes on topic {i} for the week"),
                            ("assistant", "the release checklist is done"),
                            started_at=NOW - (50 + i) * DAY) for i in range(8))
"""Sessions holding none of the questions' words, so the words weigh as rare ones do."""


async def _roots(query: str, *chats: Conversation) -> list[str]:
    store = MemoryStore()
    unsafe_perform_io((await store.ingest((*chats, *FILLER)).awaitable()).unwrap())
    step = LexicalMatch()(SearchRequest(query=query, limit=5)).bind(LineageResolve())
    outcome = await step(Deps(store=store, clock=lambda: NOW)).awaitable()
    return [c.root.id for c in unsafe_perform_io(outcome.unwrap()).candidates]


SPLIT = (
    conversation("fix", ("user", "the api cannot reach postgres since the split"),
                 ("assistant", "each project starts on its own"),
                 started_at=NOW - 30 * DAY),
    conversation("fix-cont", ("user", "go on: attach both projects to one docker network"),
                 ("assistant", "created the shared docker network and attached them"),
                 started_at=NOW - 30 * DAY + 3600, parent="fix"),
    conversation("fix-sub", ("user", "check the container answers"),
                 ("assistant", "the container answers now"),
                 started_at=NOW - 30 * DAY + 7200, parent="fix-cont"),
)
"""A fix whose words are spread over a session and its continuations."""

LOOK_ALIKE = conversation(
    "explainer", ("user", "what does docker network mode bridge mean for a container"),
    ("assistant", "bridge gives each container its own network namespace"),
    started_at=NOW - 3 * DAY)
"""A short explainer sharing the question's words, newer."""


async def test_a_session_and_its_continuations_rank_together() -> None:
    """The fix's lineage comes before the explainer, though none of its sessions alone
    holds as much of the question as the explainer does; the root comes back, once."""
    query = "docker network api container postgres"
    assert (await _roots(query, *SPLIT, LOOK_ALIKE))[:2] == ["fix", "explainer"]
    # Each part alone loses to the explainer: only together are they the better answer.
    for part in SPLIT:
        alone = attrs.evolve(part, session=attrs.evolve(part.session, parent_session_id=None))
        assert (await _roots(query, alone, LOOK_ALIKE))[0] == "explainer", part.session.id


async def test_a_lineage_held_by_an_unstored_parent_ranks_by_what_is_stored() -> None:
    """A continuation whose parent is not stored is its own root (resolve's rule)."""
    orphan = attrs.evolve(SPLIT[1], session=Session(id="fix-cont", parent_session_id="gone",
                                                    started_at=NOW - 30 * DAY))
    assert (await _roots("docker network lumen", orphan, LOOK_ALIKE))[0] == "fix-cont"


def _continued(times: int) -> list[Conversation]:
    """A session continued ``times`` - 1 times, every part saying "kafka lag"."""
    return [conversation("long" if i == 0 else f"long-{i}",
                         ("user", f"kafka consumer lag on partition {i}"),
                         ("assistant", "lag grows: the consumer commits too rarely"),
                         ("user", "kafka lag again after the restart"),
                         started_at=NOW - 20 * DAY + i * 600,
                         parent=None if i == 0 else ("long" if i == 1 else f"long-{i - 1}"))
            for i in range(times)]


OTHER_LAGS = [conversation(f"other-lag-{i}", ("user", f"kafka lag alert number {i}"),
                           started_at=NOW - (10 + i) * DAY) for i in range(6)]


@pytest.mark.parametrize("times", [25, 60])
async def test_a_lineage_of_many_sessions_leaves_room_for_the_others(times: int) -> None:
    """A session continued 25 or 60 times, every part saying the question's words, is one
    result: the other sessions about it still fill the limit. (Continued 60 times, parts
    whose lineage the ranker had not read each ranked alone, and took every hit.)"""
    store = MemoryStore()
    unsafe_perform_io((await store.ingest((*_continued(times), *OTHER_LAGS, *FILLER)
                                          ).awaitable()).unwrap())
    step = LexicalMatch()(SearchRequest(query="kafka lag", limit=7)).bind(LineageResolve())
    outcome = await step(Deps(store=store, clock=lambda: NOW)).awaitable()
    roots = [c.root.id for c in unsafe_perform_io(outcome.unwrap()).candidates]
    assert sorted(roots) == sorted(["long", *(o.session.id for o in OTHER_LAGS)])


async def test_the_hybrid_ranker_leaves_them_room_too() -> None:
    """With meaning added, each part of a session continued 40 times was near the
    question too, and its sessions took every hit: the others were not found at all."""
    store = MemoryStore()
    unsafe_perform_io((await store.ingest((*_continued(40), *OTHER_LAGS, *FILLER)
                                          ).awaitable()).unwrap())
    assert (await embed_missing(store, ConceptEmbedder(), progress=False)).ok
    step = HybridMatch()(SearchRequest(query="kafka lag", limit=7)).bind(LineageResolve())
    outcome = await step(Deps(store=store, clock=lambda: NOW, embedder=ConceptEmbedder(),
                              vectors=store)).awaitable()
    candidates = unsafe_perform_io(outcome.unwrap()).candidates
    assert sorted(c.root.id for c in candidates) == sorted(
        ["long", *(o.session.id for o in OTHER_LAGS)])
    # Its other hits still fill the room the others leave, after them.
    assert len({h.session_id for h in candidates[0].hits}) > 2 * LexicalMatch().hits_per_session


@pytest.mark.parametrize("strongest", ["job", "job-sub"])
async def test_a_cron_job_s_sub_agent_is_demoted_with_it(strongest: str) -> None:
    """A cron job's lineage is demoted as the job is, whichever of its sessions holds the
    best message (the lineage once took the source of the hit the store found first)."""
    def said(session_id: str) -> str:
        return "kafka retention policy kafka retention" if session_id == strongest else (
            "kafka retention")

    job = conversation("job", ("user", said("job")), source="cron", started_at=NOW - 5 * DAY)
    sub = conversation("job-sub", ("user", said("job-sub")), source="subagent", parent="job",
                       started_at=NOW - 5 * DAY + 60)
    real = conversation("real", ("user", "we set the kafka retention to seven days"),
                        started_at=NOW - 6 * DAY)
    assert await _roots("kafka retention", job, sub, real) == ["real", "job"]


async def test_a_lineage_continued_today_is_still_from_when_it_was_held() -> None:
    """A question naming a time lifts a lineage by its session from then, not by its
    newest one: a decision taken two weeks ago and continued today is "two weeks ago"."""
    plan_at, today_at = NOW - 14 * DAY, NOW - 0.1 * DAY
    plan = conversation("plan", ("user", "which kafka retention did we pick"),
                        ("assistant", "kafka retention: seven days"),
                        started_at=plan_at, timestamps=(plan_at, plan_at))
    today = conversation("plan-cont", ("user", "go on with the consumer"),
                         ("assistant", "kafka consumer group renamed"), parent="plan",
                         started_at=today_at, timestamps=(today_at, today_at))
    other = conversation("other", ("user", "we pick kafka retention of the audit topic: 30 days"),
                         ("assistant", "kafka retention set"),
                         started_at=plan_at, timestamps=(plan_at, plan_at))
    # Without the time, the plan's lineage is first; from then too.
    assert (await _roots("what kafka retention did we pick", plan, today, other))[0] == "plan"
    assert (await _roots("what kafka retention did we pick two weeks ago",
                         plan, today, other))[0] == "plan"


async def test_a_title_is_weighed_by_its_length_in_a_clause_as_in_the_question(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A question about two things ranks each on its own too, its titles read by the
    same length normalization (titles.TITLE_B): set to none, a clause had still counted
    a three-word title as dense as ever, and the session titled "Docker network" (about
    host mode) passed the one whose message says its Docker network keeps dropping."""
    monkeypatch.setattr(lexical, "TITLE_B", 0.0)
    monkeypatch.setattr(clause_parts, "TITLE_B", 0.0)
    both = conversation("both", ("user", "fixed the docker network and the postgres backup"),
                        ("assistant", "docker network recreated, postgres backup script rotated"),
                        started_at=NOW - 20 * DAY)
    titled = conversation("titled", ("user", "when would I use host mode instead of that"),
                          ("assistant", "host mode shares the stack of the machine"),
                          title="Docker network", started_at=NOW - 3 * DAY)
    said = conversation("said", ("user", "docker network keeps dropping"),
                        started_at=NOW - 4 * DAY)
    question = "did we fix the docker network or the postgres backup"
    assert await _roots(question, both, titled, said) == ["both", "said", "titled"]


async def test_a_clause_reads_a_lineage_s_english_part_as_english() -> None:
    """A Chinese question about two things, answered by a Chinese session whose English
    continuation fixed both: each clause reads the continuation's messages by the weights
    the whole question did (its English names as distinctive as the Chinese words), not
    by its lineage's writing, which put English look-alikes above it."""
    alike = [conversation(f"en-{i}", ("user", f"the network of office {i} and the backup "
                                              f"of disk {i} are fine")) for i in range(10)]
    root = conversation("zh-root", ("user", "今天部署的服务，网络有点慢"),
                        ("assistant", "好的，先看日志"), started_at=NOW - 10 * DAY)
    child = conversation("en-child", ("user", "network dropped: fixed the network bridge, "
                                              "backup failed: fixed the backup job"),
                         parent="zh-root", started_at=NOW - 10 * DAY + 60)
    other = conversation("zh-other", ("user", "网络断了一次，备份正常"), started_at=NOW - 5 * DAY)
    roots = await _roots("网络断了, 还有备份失败是怎么解决的", *alike, root, child, other)
    assert "zh-root" in roots and all(roots.index("zh-root") < roots.index(a.session.id)
                                      for a in alike if a.session.id in roots)


async def test_a_word_said_through_a_lineage_gathers_as_in_one_session(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The spread of a word (spread.py: repeated through one conversation, it weighs more
    than scattered over many) counts a lineage's sessions as one conversation: a word
    said once in each of five continuations had counted as five sessions, as scattered
    as a generic word."""
    seen: list[tuple[int, str]] = []
    real = spread.by_sessions

    def spy(units: Any, found: Any, documents: int) -> Any:
        seen.extend(found := list(found))
        return real(units, found, documents)

    monkeypatch.setattr(lexical, "by_sessions", spy)
    parts = [conversation("kafka-0", ("user", "the kafka consumer fell behind"),
                          started_at=NOW - 40 * DAY)]
    parts += [conversation(f"kafka-{i}", ("user", f"go on with step {i} of the kafka consumer"),
                           parent=f"kafka-{i - 1}", started_at=NOW - 40 * DAY + i * 600)
              for i in range(1, 5)]
    assert (await _roots("kafka consumer", *parts))[0] == "kafka-0"
    assert len(seen) == 10  # both words, five messages
    assert {session for _, session in seen} == {"kafka-0"}
