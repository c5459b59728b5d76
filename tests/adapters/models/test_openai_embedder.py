"""The embedder over an OpenAI-compatible endpoint, against a real local HTTP server."""

from __future__ import annotations

import asyncio
import gzip
import math
from typing import Any

import pytest
from returns.io import IOFailure
from returns.unsafe import unsafe_perform_io

from harkback.adapters.models.embedder_spec import embedder_from_spec
from harkback.adapters.models.openai_embedder import OpenAIEmbedder
from tests.adapters.models.embedder_calls import DNS, dot, embed, failure_reason
from tests.support.chat_server import ChatServer, Reply, replies


def _embedder(server: ChatServer, **fields: Any) -> OpenAIEmbedder:
    options: dict[str, Any] = {"backoff": 0.05, "timeout": 5.0, **fields}
    return OpenAIEmbedder(model="test-embed", base_url=server.url, **options)


async def test_similar_texts_get_nearer_unit_vectors(server: ChatServer) -> None:
    """Two texts sharing words are nearer each other than a third; every vector is unit."""
    first, second, other = (await embed(_embedder(server), DNS)).unwrap()
    assert all(math.isclose(dot(v, v), 1.0) for v in (first, second, other))
    assert dot(first, second) > dot(first, other)
    assert dot(first, second) > dot(second, other)
    body = server.received[0].body
    assert (body["model"], body["input"], body["encoding_format"]) == (
        "test-embed", list(DNS), "float")


async def test_texts_go_in_batches_and_come_back_in_order(server: ChatServer) -> None:
    """150 texts with batch_size 64 make three requests; each vector is its own text's."""
    texts = [f"note {i} about subject{i} and thing{i * 7}" for i in range(150)]
    vectors = (await embed(_embedder(server, batch_size=64), texts)).unwrap()
    sizes = [len(r.inputs) for r in server.received]
    sent = [text for r in server.received for text in r.inputs]
    assert sizes == [64, 64, 22]
    assert sent == texts
    for i in (0, 63, 64, 127, 128, 149):
        alone = (await embed(_embedder(server), [texts[i]])).unwrap()
        assert vectors[i] == pytest.approx(alone[0])


async def test_an_answer_out_of_order_is_put_back_by_index() -> None:
    """A server listing vectors in reverse (with their indices) changes nothing."""
    with ChatServer() as plain:
        expected = (await embed(_embedder(plain), DNS)).unwrap()
    with ChatServer(lambda _r: Reply(edit_data=lambda data: data[::-1])) as reversing:
        got = (await embed(_embedder(reversing), DNS)).unwrap()
    assert got == expected


async def test_prefixes_are_put_before_each_kind_of_text(server: ChatServer) -> None:
    """E5-style prefixes: queries and passages are sent with their own."""
    embedder = _embedder(server, query_prefix="query: ", passage_prefix="passage: ")
    query = (await embed(embedder, ["dns failing"], "query")).unwrap()
    passage = (await embed(embedder, ["dns failing"], "passage")).unwrap()
    assert [r.inputs for r in server.received] == [["query: dns failing"],
                                                   ["passage: dns failing"]]
    assert query != passage


async def test_no_texts_make_no_request(server: ChatServer) -> None:
    """Nothing to embed: an empty answer, and the server hears nothing."""
    result = await embed(_embedder(server), [])
    assert (result.unwrap(), len(server.received)) == ((), 0)


async def test_a_server_error_is_retried_then_succeeds() -> None:
    """A 500 costs one more attempt, not the call."""
    with ChatServer(replies(Reply(status=500))) as server:
        result = await embed(_embedder(server), DNS)
        count = len(server.received)
    assert count == 2
    assert len(result.unwrap()) == 3


async def test_429_waits_as_retry_after_asks() -> None:
    """A 429 with Retry-After: 1 is tried again no sooner than a second later."""
    with ChatServer(replies(Reply(status=429, headers=(("Retry-After", "1"),)))) as server:
        result = await embed(_embedder(server, backoff=0.0), DNS)
        first, second = server.times()
    assert len(result.unwrap()) == 3
    assert second - first >= 0.95


async def test_garbage_is_retried_and_garbage_every_time_fails() -> None:
    """A body that is not JSON is one failed attempt; three in a row fail the call."""
    with ChatServer(replies(Reply(raw=b"<html>oops"))) as server:
        recovered = await embed(_embedder(server), DNS)
    with ChatServer(lambda _r: Reply(raw=b'{"data": [')) as server:
        broken = await embed(_embedder(server), DNS)
        count = len(server.received)
    assert len(recovered.unwrap()) == 3
    assert count == 3
    assert "not valid JSON" in failure_reason(broken)


async def test_an_answer_past_its_batch_s_size_is_left_unread() -> None:
    """An answer to three texts that inflates to 64 MiB is not read whole: the batch fails
    at once, saying why, where it was read three times over."""
    flood = gzip.compress(b" " * (64 << 20))
    with ChatServer(lambda _r: Reply(raw=flood, headers=(("Content-Encoding", "gzip"),))
                    ) as server:
        outcome = await embed(_embedder(server), DNS)
        count = len(server.received)
    assert count == 1
    assert "the answer is longer than" in failure_reason(outcome)


@pytest.mark.parametrize(("edit", "reason"), [
    (lambda data: data[:-1], "2 vector(s) for 3 text(s)"),
    (lambda data: [*data[:-1], {**data[-1], "embedding": data[-1]["embedding"][:10]}],
     "mixed dimensions (10, 64)"),
    (lambda data: [{**data[0], "embedding": [float("nan")] * 64}, *data[1:]], "not finite"),
    (lambda data: [{**item, "index": 0} for item in data], "indices are not 0 to 2"),
    (lambda data: [{**data[0], "embedding": "AAAA"}, *data[1:]], "not a non-empty list"),
    (lambda _data: {"oops": 1}, "no 'data' list"),
])
async def test_an_unusable_answer_fails_at_once(edit: Any, reason: str) -> None:
    """Wrong count, mixed dimensions, NaN, bad indices: ModelFailed, not asked again."""
    with ChatServer(lambda _r: Reply(edit_data=edit)) as server:
        result = await embed(_embedder(server), DNS)
        count = len(server.received)
    assert reason in failure_reason(result)
    assert count == 1


async def test_a_text_without_words_gives_a_zero_vector_and_fails(server: ChatServer) -> None:
    """The server's vector for "!!!" is all zeros: it cannot be made unit length."""
    result = await embed(_embedder(server), ["fine words", "!!!"])
    assert "vector 1 is all zeros" in failure_reason(result)


async def test_a_failing_later_batch_says_which() -> None:
    """The second of two batches keeps failing: the reason names the batch and status."""
    with ChatServer(lambda r: Reply(status=503 if r.index >= 1 else 200)) as server:
        result = await embed(_embedder(server, batch_size=2, max_attempts=2), DNS)
    reason = failure_reason(result)
    assert reason.startswith("batch 2 of 2: HTTP 503")
    assert "2 attempts" in reason


async def test_a_hanging_server_times_out_each_attempt() -> None:
    """No answer: each attempt ends at the timeout, the call fails saying so."""
    with ChatServer(lambda _r: Reply(hang=True)) as server:
        result = await embed(_embedder(server, timeout=0.3, max_attempts=2), DNS)
        count = len(server.received)
    assert "no answer within 0.3 s" in failure_reason(result)
    assert count == 2


def test_one_embedder_serves_two_event_loops(server: ChatServer) -> None:
    """Each asyncio.run gets its own client; the second loop is not handed a dead one."""
    embedder = _embedder(server)
    first = asyncio.run(embed(embedder, DNS[:1]))
    second = asyncio.run(embed(embedder, DNS[:1]))
    assert first.unwrap() == second.unwrap()


async def test_a_base_url_the_http_library_rejects_is_a_model_failure() -> None:
    """A bad $OPENAI_BASE_URL fails each call as a value naming it, not an exception."""
    embedder = embedder_from_spec("openai:m", environ={"OPENAI_BASE_URL": "http://[::1"})
    outcome = await embedder.unwrap().embed(["x"], "query").awaitable()
    assert isinstance(outcome, IOFailure)
    assert "base URL 'http://[::1' is not a URL" in unsafe_perform_io(outcome.failure()).message()


async def test_a_stored_text_waits_a_retry_after_a_question_does_not() -> None:
    """A Retry-After past the question's cap ends a search's embedding at once, but an
    ``embed`` run over stored texts waits it (a per-minute quota asks up to a minute):
    ended at its first such 429, a long run stopped where waiting would have gone on."""
    caps = {"backoff": 0.0, "max_retry_after": 0.2, "passage_retry_after": 2.0}
    with ChatServer(replies(Reply(status=429, headers=(("Retry-After", "1"),)))) as server:
        stored = await embed(_embedder(server, **caps), DNS, "passage")
        first, second = server.times()
    with ChatServer(replies(Reply(status=429, headers=(("Retry-After", "1"),)))) as server:
        question = await embed(_embedder(server, **caps), DNS, "query")
        asked = len(server.received)
    assert len(stored.unwrap()) == 3
    assert second - first >= 0.95
    assert asked == 1
    assert "asked to retry after 1 s" in failure_reason(question), failure_reason(question)


@pytest.mark.parametrize(("status", "told"), [
    (401, "(check HARKBACK_EMBEDDER_API_KEY)"),
    (404, "(check the model name and the base URL in the embedder spec, OPENAI_BASE_URL "
          "where it names none)")])
async def test_an_embedder_refused_names_the_settings_it_reads(status: int, told: str) -> None:
    """An embedder at ``openai:MODEL@URL`` takes its key from
    ``$HARKBACK_EMBEDDER_API_KEY`` (never ``$OPENAI_API_KEY``) and its URL from the spec:
    a 401 said "check OPENAI_API_KEY", a variable it does not read, and a 404 named
    OPENAI_BASE_URL alone."""
    with ChatServer(lambda _r: Reply(status=status)) as server:
        made = embedder_from_spec(f"openai:test-embed@{server.url}",
                                  environ={"OPENAI_API_KEY": "sk-chat-0123456789"})
        reason = failure_reason(await embed(made.unwrap(), DNS))
    assert told in reason and "OPENAI_API_KEY" not in reason


async def test_an_error_sent_with_status_200_is_quoted() -> None:
    """A server answering an error with status 200 (``{"error": {"message": ...}}``) is
    said in its own words, the key masked; it was "the answer holds no 'data' list"."""
    raw = b'{"error": {"message": "model emb is not loaded, key sk-emb-0123456789"}}'
    with ChatServer(lambda _r: Reply(raw=raw)) as server:
        reason = failure_reason(await embed(_embedder(server, api_key="sk-emb-0123456789"),
                                            DNS))
    assert reason.startswith("the server answered with an error: model emb is not loaded, "
                             "key ******** (model test-embed")


@pytest.mark.parametrize(("environ", "told"), [
    ({"OPENAI_API_KEY": "sk-chat-0123456789"}, "(check OPENAI_API_KEY)"),
    ({"OPENAI_API_KEY": "sk-chat-0123456789", "HARKBACK_EMBEDDER_API_KEY": "sk-emb-0123456789"},
     "(check HARKBACK_EMBEDDER_API_KEY)"),
    ({}, "(check HARKBACK_EMBEDDER_API_KEY or OPENAI_API_KEY)")])
async def test_a_key_refused_names_the_variable_it_came_from(environ: dict[str, str],
                                                              told: str) -> None:
    """``openai:MODEL`` (no ``@URL``) sends ``$OPENAI_API_KEY`` when
    ``$HARKBACK_EMBEDDER_API_KEY`` is unset: its 401 said to check
    HARKBACK_EMBEDDER_API_KEY, a variable the user never set, of the key OPENAI_API_KEY
    gave. It names the variable the key came from, or both when none was set."""
    with ChatServer(lambda _r: Reply(status=401)) as server:
        made = embedder_from_spec("openai:test-embed",
                                  environ={**environ, "OPENAI_BASE_URL": server.url})
        reason = failure_reason(await embed(made.unwrap(), DNS))
    assert told in reason, reason
