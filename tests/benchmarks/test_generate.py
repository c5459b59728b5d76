"""The synthetic transcript generator: deterministic, streamed, and shaped like agent histories."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from benchmarks.generate import (
    ENGLISH,
    PHRASE,
    RARE_WORD,
    generate,
    parse_size,
    to_json_line,
)
from harkback.stages.records import Conversation
from harkback.stages.text.tokens import index_tokens, is_cjk

SIZE = 4000


@pytest.fixture(scope="module")
def corpus() -> list[Conversation]:
    """The first 4000 messages of seed 7."""
    return list(generate(SIZE, seed=7))


def _messages(corpus: list[Conversation]) -> list[str]:
    return [m.text_for_search() for c in corpus for m in c.messages]


def test_the_same_seed_gives_the_same_stream(corpus: list[Conversation]) -> None:
    """Two runs with one seed produce identical sessions and messages."""
    again = [to_json_line(c) for c in generate(SIZE, seed=7)]
    assert again == [to_json_line(c) for c in corpus]


def test_another_seed_gives_another_stream(corpus: list[Conversation]) -> None:
    """A different seed changes the content."""
    other = [to_json_line(c) for c in generate(SIZE, seed=8)]
    assert other != [to_json_line(c) for c in corpus]


@pytest.mark.parametrize("size", [1, 17, 999, 2500])
def test_exactly_the_asked_number_of_messages(size: int) -> None:
    """The stream holds exactly as many messages as asked."""
    assert sum(len(c.messages) for c in generate(size, seed=3)) == size


def test_a_smaller_corpus_is_a_prefix_of_a_larger_one(corpus: list[Conversation]) -> None:
    """Sizes share their beginning: only the last session of the smaller one is cut."""
    small = list(generate(1000, seed=7))
    assert [to_json_line(c) for c in small[:-1]] == [to_json_line(c) for c in
                                                       corpus[:len(small) - 1]]
    last = small[-1]
    assert corpus[len(small) - 1].messages[:len(last.messages)] == last.messages


def test_the_stream_is_lazy() -> None:
    """Asking for a billion messages yields the first session at once."""
    first = next(generate(10**9, seed=1))
    assert first.messages


def test_root_ids_take_the_prefix() -> None:
    """Root session ids start with the given prefix, so two streams can share a store."""
    roots = [c.session.id for c in generate(300, seed=1, prefix="n") if c.session.is_root]
    assert roots and all(r.startswith("n") for r in roots)


def test_positions_and_times_are_in_order(corpus: list[Conversation]) -> None:
    """Positions run from 0 and timestamps never go back within a session."""
    for c in corpus:
        assert [m.position for m in c.messages] == list(range(len(c.messages)))
        times = [m.timestamp for m in c.messages]
        assert times == sorted(times)  # type: ignore[type-var]


def test_children_follow_their_parents(corpus: list[Conversation]) -> None:
    """Sub-agent and continuation sessions come after the session they belong to."""
    seen: set[str] = set()
    children = 0
    for c in corpus:
        parent = c.session.parent_session_id
        if parent is not None:
            children += 1
            assert parent in seen
        seen.add(c.session.id)
    assert children >= 5


def test_compressed_sessions_are_continued(corpus: list[Conversation]) -> None:
    """A session ended by compression has a child that starts after it ended."""
    by_id = {c.session.id: c.session for c in corpus}
    continued = [c.session for c in corpus if c.session.parent_session_id
                 and by_id[c.session.parent_session_id].end_reason == "compression"
                 and c.messages and c.messages[0].role == "system"]
    assert continued
    for child in continued:
        parent = by_id[child.parent_session_id or ""]
        assert child.started_at is not None and parent.ended_at is not None
        assert child.started_at >= parent.ended_at


def test_tool_outputs_answer_tool_calls(corpus: list[Conversation]) -> None:
    """Every tool message answers a call made just before it, and outputs run long."""
    lengths = []
    for c in corpus:
        for previous, message in itertools.pairwise(c.messages):
            if message.role == "tool":
                assert message.tool_call_id in {call.id for call in previous.tool_calls}
                lengths.append(len(message.content))
    assert len(lengths) > SIZE // 5
    assert max(lengths) > 3000


def test_every_kind_of_source_appears(corpus: list[Conversation]) -> None:
    """Interactive, scheduled and hidden tool sessions are all in the stream."""
    sources = Counter(c.session.source for c in corpus)
    assert {"cli", "cron", "tool"} <= set(sources)
    assert sources["cron"] > sources["tool"]


def test_a_share_of_the_text_is_chinese(corpus: list[Conversation]) -> None:
    """Some messages, but far from all, hold Chinese text."""
    share = sum(is_cjk(t) for t in _messages(corpus)) / SIZE
    assert 0.02 < share < 0.3


def test_word_frequencies_are_zipf_like(corpus: list[Conversation]) -> None:
    """A few words are very common and most words are rare."""
    counts = Counter(t for text in _messages(corpus) for t in index_tokens(text))
    total = sum(counts.values())
    top = sum(n for _, n in counts.most_common(20))
    assert top / total > 0.2
    assert sum(1 for n in counts.values() if n <= 3) / len(counts) > 0.5


def test_query_words_are_where_the_benchmark_expects(corpus: list[Conversation]) -> None:
    """The rare word is in the vocabulary's tail and the log phrase occurs."""
    assert ENGLISH.rank_of(RARE_WORD) > 20_000
    assert any(" ".join(PHRASE) in text for text in _messages(corpus))


@pytest.mark.parametrize(("text", "size"), [("10k", 10_000), ("1m", 1_000_000),
                                            ("2.5k", 2_500), ("123", 123)])
def test_sizes_read_with_suffixes(text: str, size: int) -> None:
    """Sizes may be written with k and m."""
    assert parse_size(text) == size
