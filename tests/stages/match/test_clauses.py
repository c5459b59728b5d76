"""Query decomposition: questions cut at their connectives, each event ranked on its own."""

from __future__ import annotations

from collections import Counter

import pytest
from returns.unsafe import unsafe_perform_io

from harkback.stages import project_note
from harkback.stages.flow import Matched
from harkback.stages.match import clauses, lexical
from harkback.stages.match.clauses import (
    CLAUSE_WEIGHT,
    MAX_CLAUSES,
    clause_units,
    fuse,
    split_clauses,
)
from harkback.stages.match.lexical import LexicalMatch
from harkback.stages.match.score import RankUnit
from harkback.stages.ports import Deps, SessionStore
from harkback.stages.project_note import unlabelled
from harkback.stages.query import Term, topic_tokens
from harkback.stages.request import SearchRequest
from harkback.stages.resolve import LineageResolve
from tests.conftest import conversation
from tests.support.new_stores import new_stores


@pytest.mark.parametrize(("question", "clauses"), [
    ("How many days passed between the day I adopted my kitten and the day I bought the "
     "new couch?", ("How many days passed", "the day I adopted my kitten",
                    "the day I bought the new couch?")),
    ("Which did I start first, 'War and Peace' or 'Emma'?",
     ("Which did I start first", "'War and Peace'", "'Emma'?")),
    ("How many days before I moved out did I sell the piano?",
     ("How many days", "I moved out", "sell the piano?")),
    ("What did I do about the flaky login test?", ("What did I do about the flaky login test?",)),
    ("上次 nginx 超时是怎么处理的？", ("上次 nginx 超时是怎么处理的？",)),
])
def test_questions_are_cut_at_their_connectives(question: str, clauses: tuple[str, ...]) -> None:
    """Events joined by between/and, or, before ... did I come apart; names in quotes,
    a question without connectives and a Chinese question stay whole."""
    assert split_clauses(question) == clauses


def test_a_clause_without_its_own_words_is_not_ranked_alone() -> None:
    """Clauses holding the same weighed words, or none, leave nothing to decompose."""
    units = [RankUnit(Term("piano"), ("piano",), 2.0), RankUnit(Term("sell"), ("sell",), 0.0)]
    assert clause_units(("sell the piano", "the piano", "I sell"), units) == ()


def test_a_long_list_of_clauses_is_read_only_until_it_is_too_long(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A list of hundreds of events stays one bag of words, found so after its first few
    clauses: the rest are not tokenized again (a 10,000-word question of them cost a
    third more CPU)."""
    read: list[str] = []

    def counted(text: str) -> tuple[str, ...]:
        read.append(text)
        return topic_tokens(text)

    units = [RankUnit(Term(f"note{i}"), (f"note{i}",), 1.0) for i in range(600)]
    monkeypatch.setattr(clauses, "topic_tokens", counted)
    assert clause_units(tuple(f"the note{i}" for i in range(600)), units) == ()
    assert len(read) == MAX_CLAUSES + 1


def test_fusion_keeps_the_whole_question_s_best_first() -> None:
    """A clause lifts its own best session, never above the whole question's best."""
    whole = (("both", 9.0), ("a", 5.0), ("b", 4.0), ("c", 3.0), ("d", 2.0), ("e", 1.0))
    fused = [sid for sid, _ in fuse(whole, [(("e", 1.0), ("both", 0.5))], CLAUSE_WEIGHT)]
    assert fused[0] == "both" and fused.index("e") < 5


empty_store = new_stores("memory", "sqlite")
"""An empty store of each kind."""


@pytest.fixture
async def store(empty_store: SessionStore) -> SessionStore:
    """A store where one event's sessions crowd the other's out of a bag-of-words ranking."""
    chosen = empty_store
    said = [
        ("adopted", "Today I adopted my kitten Mochi from the shelter"),
        ("litter", "The day passed with Mochi my kitten in the litter box, every day"),
        ("vet", "My kitten Mochi had her first vet day, the day passed so fast"),
        ("toys", "Which toys should I get for my kitten Mochi? She plays all day, every day"),
        ("food", "Mochi the kitten refuses wet food some days, what do I do"),
        ("sleep", "My kitten Mochi sleeps all day, is that normal for a kitten"),
        ("couch", "I bought a new couch for the living room"),
        ("stain", "How do I get a coffee stain out of a fabric couch"),
        ("move", "Movers scratched our couch and a table when we moved"),
        ("sofa", "Is a leather couch or a fabric couch better with pets"),
        ("shoes", "I bought new running shoes"),
        *((f"seeds{i}", f"notes on bed {i}, I bought new seeds") for i in range(30)),
    ]
    conversations = [conversation(sid, ("user", text)) for sid, text in said]
    unsafe_perform_io((await chosen.ingest(conversations).awaitable()).unwrap())
    return chosen


async def _matched(store: SessionStore, match: LexicalMatch, question: str) -> Matched:
    outcome = await match(SearchRequest(query=question, limit=10))(Deps(store=store)).awaitable()
    return unsafe_perform_io(outcome.unwrap())


async def _top(store: SessionStore, match: LexicalMatch, question: str, n: int) -> list[str]:
    outcome = await match(SearchRequest(query=question, limit=10)).bind(LineageResolve())(
        Deps(store=store)).awaitable()
    return [c.root.id for c in unsafe_perform_io(outcome.unwrap()).candidates][:n]


QUESTION = ("How many days passed between the day I adopted my kitten Mochi and the day I "
            "bought the new couch?")


async def test_each_event_gets_a_session_in_the_top_five(store: SessionStore) -> None:
    """Ranked as one bag of words, the kitten's look-alikes push the couch out of the top
    five; by default each clause is ranked on its own too, and both events' sessions are
    in it."""
    assert "couch" not in await _top(store, LexicalMatch(clause_weight=0.0), QUESTION, 5)
    assert {"adopted", "couch"} <= set(await _top(store, LexicalMatch(), QUESTION, 5))


async def test_the_fused_places_keep_the_whole_question_s_scores(store: SessionStore) -> None:
    """The clauses change who holds the first places, not what the places score: the
    session scores stay on the whole question's scale, best first, as the hybrid ranker
    reads them."""
    def scores(matched: Matched) -> list[float]:
        return [score for _, score in matched.session_scores]

    plain = await _matched(store, LexicalMatch(clause_weight=0.0), QUESTION)
    fused = await _matched(store, LexicalMatch(), QUESTION)
    assert [sid for sid, _ in fused.session_scores] != [sid for sid, _ in plain.session_scores]
    assert scores(fused) == scores(plain)


def test_a_session_below_the_first_ten_keeps_its_place() -> None:
    """A clause reorders the sessions the whole question found first; one it alone ranks
    first from far below (another person's look-alike of one event) stays where it was."""
    whole = tuple((f"s{i}", 20.0 - i) for i in range(15))
    fused = [sid for sid, _ in fuse(whole, [(("s12", 1.0), ("s9", 0.5))])]
    assert fused.index("s12") == 12 and fused.index("s9") < 9


async def test_a_question_about_one_thing_ranks_as_before(store: SessionStore) -> None:
    """Without connectives there is nothing to fuse: the ranking is the plain one."""
    question = "Why does my kitten Mochi sleep all day?"
    assert (await _top(store, LexicalMatch(), question, 10)
            == await _top(store, LexicalMatch(clause_weight=0.0), question, 10))


async def test_a_question_about_one_thing_is_not_read_again(
        store: SessionStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """One clause has nothing to fuse with: the step is skipped before the clause is
    tokenized again (on a 10,000-word question without connectives that cost 1-3 ms)."""
    looked: list[object] = []

    def spied(*given: object) -> tuple[frozenset[int], ...]:
        looked.append(given)
        return ()

    monkeypatch.setattr(lexical, "clause_units", spied)
    question = " ".join(["Why does my kitten Mochi sleep all day"] * 1000)
    assert await _top(store, LexicalMatch(), question, 10)
    assert not looked


async def test_a_huge_question_full_of_connectives_still_ranks(store: SessionStore) -> None:
    """10,000 words in clauses joined by "and", "or" and commas: too many clauses to rank
    one by one, so it ranks as one bag of words, without an error."""
    question = ", or ".join(f"the kitten and note{i}" for i in range(2001))
    assert len(question.split()) >= 10_000
    top = await _top(store, LexicalMatch(), question, 10)
    assert top and top == await _top(store, LexicalMatch(clause_weight=0.0), question, 10)


async def test_a_clause_ranks_a_session_in_english_as_the_whole_question_does(
        empty_store: SessionStore) -> None:
    """The clause "超时" of a Chinese question holds the English session saying "timeout"
    (the word's name) at the weight the whole question gives it. Left out of the clause's
    ranking, or weighed there at the name's own lower weight, the Chinese session took the
    clause's first place and the English one fell below it."""
    said = [("en-timeout", "Request timeout: the timeout was fixed"),
            ("zh-db", "数据库连接池满了，我们调大了连接池"),
            ("zh-timeout", "接口超时了，重启服务就好了，后来又看了日志，发现"),
            ("zh-other", "今天部署了前端页面"),
            ("en-other", "The deploy went fine today")]
    unsafe_perform_io((await empty_store.ingest(
        [conversation(sid, ("user", text)) for sid, text in said]).awaitable()).unwrap())
    question = "超时, 数据库连接是怎么处理的?"

    def order(matched: Matched) -> list[str]:
        return [sid for sid, _ in matched.session_scores if sid in ("en-timeout", "zh-timeout")]

    whole = order(await _matched(empty_store, LexicalMatch(clause_weight=0.0), question))
    assert whole == ["en-timeout", "zh-timeout"]
    assert order(await _matched(empty_store, LexicalMatch(), question)) == whole


async def test_a_project_line_is_read_without_its_labels_once(
        empty_store: SessionStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """The project line under a user message is read without its labels once, for the
    whole question and its clauses alike (each clause read it again: twice the work for
    every candidate of a question about several things), and the clauses read it so."""
    note = "\n\n[project: /home/me/api, git branch: main]"
    said = [("deploy", f"deploy the api to staging{note}"),
            ("release", f"cut the release branch of the api{note}"),
            ("label", "fix the flaky test\n\n[project: /home/me/site, git branch: main]"),
            ("couch", "I bought a new couch")]
    unsafe_perform_io((await empty_store.ingest(
        [conversation(sid, ("user", text)) for sid, text in said]).awaitable()).unwrap())
    read: list[str] = []

    def spied(text: str) -> str:
        read.append(text)
        return unlabelled(text)

    monkeypatch.setattr(project_note, "unlabelled", spied)
    question = "When did we deploy the api to staging or cut the release branch?"
    top = await _top(empty_store, LexicalMatch(), question, 10)

    assert top[:2] in (["deploy", "release"], ["release", "deploy"]) and "label" not in top
    assert read and all(times == 1 for times in Counter(read).values())
