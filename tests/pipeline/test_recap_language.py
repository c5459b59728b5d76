"""The model is asked to recap in the question's language, the transcript's commands,
paths and errors verbatim: a Chinese question over an English session gets a Chinese
recap."""

from __future__ import annotations

from typing import Any

import attrs

from harkback.adapters.models.chat_settings import ChatSettings
from harkback.adapters.models.openai_chat import OpenAIChatModel
from harkback.pipeline.compose import Pipeline
from harkback.pipeline.facade import Harkback
from harkback.stages.summarize.model import LlmSummarize
from tests.support.chat_server import ChatServer, Reply
from tests.support.corpus import docker_store

CHINESE = "上次 docker bridge network 的问题是怎么解决的"
RECAP = ("用户的容器在 docker bridge 网络上互相连不上；运行了 `docker network create app-net`。"
         "\nSOURCES: 2")


async def _search(query: str, server: ChatServer) -> dict[str, Any]:
    store = await docker_store(1)
    model = OpenAIChatModel(
        ChatSettings(model="m", base_url=server.url, backoff=0.05, max_attempts=1))
    hb = Harkback(store=store, pipeline=attrs.evolve(Pipeline(), summarize=LlmSummarize()),
                  model=model)
    try:
        payload: dict[str, Any] = (await hb.search(query, limit=1)).to_payload()
    finally:
        await hb.aclose()
    assert payload["success"], payload
    return payload


async def test_the_prompt_asks_for_the_questions_language_and_verbatim_commands() -> None:
    """The request sent over HTTP asks for the recap in the question's language, with
    commands, paths and errors copied untranslated; the Chinese recap is shown."""
    with ChatServer(lambda _r: Reply(content=RECAP)) as server:
        payload = await _search(CHINESE, server)
        (received,) = server.received
    prompt = received.prompt
    assert "in the language of the question" in prompt
    assert "never translated" in prompt
    assert CHINESE in prompt and "docker network create app-net" in prompt
    (result,) = payload["results"]
    assert result["summary_kind"] == "llm"
    assert result["summary"].startswith("用户的容器")

