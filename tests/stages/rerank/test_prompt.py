"""Tests of the rerank stage's pure parts: what the model is shown, how its answer is read."""

from __future__ import annotations

import attrs
from hypothesis import given
from hypothesis import strategies as st

from harkback.stages.query import parse_query
from harkback.stages.records import Candidate, MessageHit, Session
from harkback.stages.rerank import prompt
from harkback.stages.rerank.model import Judged, describe_fallback, merge


def _hit(content: str, score: float, sid: str = "secret-id-123") -> MessageHit:
    return MessageHit(session_id=sid, position=0, role="user", content=content, score=score)


def _candidate(sid: str, *hits: MessageHit) -> Candidate:
    return Candidate(root=Session(id=sid, title=f"title of {sid}"), hits=hits)


def test_the_best_scored_passages_are_shown_first_and_the_weak_ones_left_out() -> None:
    """Passages come by score, not by position; repeats and blank hits are skipped."""
    candidate = _candidate("a", _hit("weak nginx mention", 0.1), _hit("", 9.0),
                           _hit("strong nginx timeout fix", 3.0),
                           _hit("strong nginx timeout fix", 2.9), _hit("middle nginx", 1.0))
    shown = prompt.best_passages(candidate, parse_query("nginx timeout"), passages=2, chars=200)
    assert shown == ("strong nginx timeout fix", "middle nginx")


def test_a_long_passage_is_cut_around_the_matching_words() -> None:
    """The words that matched survive the cut even deep inside a long message."""
    text = "filler words " * 100 + "the proxy_read_timeout was raised " + "tail " * 100
    (shown,) = prompt.best_passages(_candidate("a", _hit(text, 1.0)),
                                    parse_query("proxy_read_timeout"), passages=1, chars=120)
    assert "proxy_read_timeout" in shown
    assert len(shown) <= 120


def test_a_long_passage_is_cut_around_another_spelling_the_ranker_searched() -> None:
    """'bikes' found "bike" deep in a long message: the passage shown holds it."""
    text = "filler words " * 100 + "the bike was serviced " + "tail " * 100
    parsed = attrs.evolve(parse_query("bikes"), spellings=(("bike",),))
    (shown,) = prompt.best_passages(_candidate("a", _hit(text, 1.0)), parsed, passages=1,
                                    chars=120)
    assert "bike was serviced" in shown


def test_the_prompt_shows_local_labels_never_session_ids() -> None:
    """The model sees S1, S2 and the titles; the store's ids stay out of the sent."""
    candidates = [Candidate(root=Session(id=f"secret-id-{i}", title=f"proxy {i}"),
                            hits=(_hit(text, 1.0, f"secret-id-{i}"),))
                  for i, text in enumerate(("nginx", "nginx again"))]
    blocks = [prompt.session_block(label, c, prompt.best_passages(
                  c, parse_query("nginx"), passages=2, chars=100))
              for label, c in zip(prompt.labels_for(2), candidates, strict=True)]
    request = prompt.build_request("nginx", blocks, max_tokens=40, temperature=0.0)
    sent = "\n".join(content for _role, content in request.messages)
    assert "[S1] title: proxy 0\n- nginx\n" in sent
    assert "[S2] title: proxy 1\n- nginx again\n" in sent
    assert "secret-id" not in sent
    opening = sent.index("<<<SESSIONS ")
    closing = sent.index("\nSESSIONS ", opening)
    assert opening < sent.index("- nginx again") < closing
    assert request.max_tokens == 40


def test_the_answer_keeps_shown_labels_in_the_models_order_each_once() -> None:
    """Unknown labels are ignored, repeats counted once, the last RELEVANT line wins."""
    labels = prompt.labels_for(4)
    assert prompt.read_ranking("RELEVANT: S3, S1", labels=labels) == ("S3", "S1")
    assert prompt.read_ranking("**Relevant:** s4, S12, S4, S2", labels=labels) == ("S4", "S2")
    assert prompt.read_ranking("RELEVANT: S1\nwait\nRELEVANT: S2", labels=labels) == ("S2",)
    assert prompt.read_ranking("S2 then S1", labels=labels) == ("S2", "S1")


def test_unusable_answers_are_none_and_an_explicit_none_is_empty() -> None:
    """Garbage and only-unknown labels give None (keep the lexical order); 'none' drops all."""
    labels = prompt.labels_for(3)
    assert prompt.read_ranking("", labels=labels) is None
    assert prompt.read_ranking("The sessions are about Docker.", labels=labels) is None
    assert prompt.read_ranking("RELEVANT: S7, S0", labels=labels) is None
    assert prompt.read_ranking("RELEVANT: none", labels=labels) == ()
    assert prompt.read_ranking("RELEVANT: None.", labels=labels) == ()


@given(st.text(max_size=200), st.integers(min_value=1, max_value=12))
def test_a_ranking_only_ever_holds_shown_labels_once(answer: str, count: int) -> None:
    """Whatever the model says, the ranking is a subset of the shown labels, no repeats."""
    labels = prompt.labels_for(count)
    ranking = prompt.read_ranking(answer, labels=labels)
    if ranking is not None:
        assert set(ranking) <= set(labels)
        assert len(ranking) == len(set(ranking))


def test_batches_keep_their_relative_lexical_order_and_a_failed_batch_keeps_its_own() -> None:
    """Within a batch the model's order, between batches the lexical one; then the limit."""
    a, b, c, d, e = (_candidate(x) for x in "abcde")
    merged = merge([[a, b, c], [d, e]], [Judged(order=(2, 0)), Judged(order=None)], limit=3)
    assert [x.root.id for x in merged] == ["c", "a", "d"]


def test_the_note_names_the_reasons_once() -> None:
    """Two batches failing the same way give one reason."""
    note = describe_fallback([Judged(order=None, why="HTTP 500")] * 2 + [Judged(order=())])
    assert note == "rerank: lexical order kept for 2 of 3 batches (HTTP 500)"


def test_the_cache_key_has_its_own_prompt_version_and_follows_the_input() -> None:
    """A different prompt is a different key, and no key is a summary's key."""
    one = prompt.build_request("nginx", ["[S1] title: a"], max_tokens=40, temperature=0.0)
    two = prompt.build_request("nginx", ["[S1] title: b"], max_tokens=40, temperature=0.0)
    first, second = (prompt.ranking_key("r", "Nginx  timeout", r, "m") for r in (one, two))
    assert first.prompt_version.startswith("rerank")
    assert first.content != second.content
    assert first.query == "nginx timeout"
