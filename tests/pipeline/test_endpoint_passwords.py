"""No command prints the password of a model's endpoint URL (``http://me:pw@host/v1``) or
a key in its query: a model failure's note (human and ``--json``), ``harkback config`` and
a refused ``--base-url`` show it masked, and so is an API key a server's error repeats
(through a subprocess, a real SQLite file and a port nothing listens on, or a real server)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from harkback.stages.shown_url import MASK
from tests.conftest import conversation
from tests.pipeline.test_cli import ingested, run
from tests.support.chat_server import ChatServer, Reply

SECRET, KEY = "s3cret-pw", "sk-query-key"


@pytest.fixture
def closed_url() -> str:
    """An endpoint with a password and an API key in its URL, on a port nothing serves."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://me:{SECRET}@127.0.0.1:{port}/v1?api_key={KEY}"


def test_a_model_failure_note_masks_the_endpoint_password(tmp_path: Path,
                                                          closed_url: str) -> None:
    """The note saying why the model summary is missing names the endpoint, masked."""
    db = ingested(tmp_path, [conversation("s1", ("user", "the docker bridge drops packets"))])
    flags = ("search", "docker", "--model", "m", "--base-url", closed_url, "--timeout", "2")
    human = run(*flags, db=db)
    as_json = run(*flags, "--json", db=db)
    assert human.returncode == as_json.returncode == 0, human.stderr + as_json.stderr
    (result,) = json.loads(as_json.stdout)["results"]
    for shown in (human.stdout + human.stderr, as_json.stdout + as_json.stderr):
        assert SECRET not in shown and KEY not in shown
    assert f"cannot reach http://me:{MASK}@127.0.0.1:" in result["summary_note"]
    assert f"api_key={MASK}" in result["summary_note"]
    assert f"me:{MASK}@" in human.stdout


def test_config_masks_the_endpoint_and_the_embedder_spec(closed_url: str) -> None:
    """``$OPENAI_BASE_URL`` and an ``openai:MODEL@URL`` embedder are shown masked."""
    env = {"OPENAI_BASE_URL": closed_url, "HARKBACK_EMBEDDER": f"openai:e5@{closed_url}"}
    table = run("config", env=env)
    payload = run("config", "--json", env=env)
    assert table.returncode == payload.returncode == 0, table.stderr + payload.stderr
    assert SECRET not in table.stdout + payload.stdout
    assert KEY not in table.stdout + payload.stdout
    settings = json.loads(payload.stdout)["settings"]
    masked = closed_url.replace(SECRET, MASK).replace(KEY, MASK)
    assert settings["base_url"]["value"] == masked
    assert settings["embedder"]["value"] == f"openai:e5@{masked}"


def test_a_refused_base_url_is_named_masked() -> None:
    """A ``--base-url`` the SDK cannot use is a usage error naming it without the password."""
    done = run("search", "docker", "--model", "m", "--base-url",
               f"http://me:{SECRET}@127.0.0.1:port/v1", "--json")
    assert done.returncode == 2
    assert SECRET not in done.stdout + done.stderr
    assert f"me:{MASK}@" in json.loads(done.stdout)["error"]


def test_an_api_key_the_server_repeats_is_masked(tmp_path: Path) -> None:
    """A 401 quoting the key sent ("Invalid API key: sk-...", as proxies write it) is
    named masked, by the chat model and by the embedder; it was printed whole."""
    api_key = "sk-live-0123456789abcdefghij"
    body = json.dumps({"error": {"message": f"Invalid API key: {api_key}"}}).encode()
    db = ingested(tmp_path, [conversation("s1", ("user", "the docker bridge drops packets"))])
    with ChatServer() as server:
        assert run("embed", "--embedder", f"openai:e@{server.url}", db=db).returncode == 0
    with ChatServer(lambda _r: Reply(status=401, raw=body)) as server:
        env = {"OPENAI_API_KEY": api_key, "HARKBACK_EMBEDDER_API_KEY": api_key}
        done = run("search", "docker", "--json", "--model", "m", "--base-url", server.url,
                   "--embedder", f"openai:e@{server.url}", db=db, env=env)
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    (result,) = payload["results"]
    assert api_key not in done.stdout + done.stderr
    assert f"Invalid API key: {MASK}" in result["summary_note"]
    assert f"Invalid API key: {MASK}" in payload["notes"][0]


def test_a_short_placeholder_key_does_not_mask_the_middle_of_words(tmp_path: Path) -> None:
    """A local server's placeholder key ('x') was masked wherever the letter stood in the
    failure note: 'E********pecting value'. Only the key standing alone is masked."""
    db = ingested(tmp_path, [conversation("s1", ("user", "the docker bridge drops packets"))])
    with ChatServer(lambda _r: Reply(raw=b"not json")) as server:
        done = run("search", "docker", "--json", "--model", "m", "--base-url", server.url,
                   db=db, env={"OPENAI_API_KEY": "x"})
    assert done.returncode == 0, done.stderr
    (result,) = json.loads(done.stdout)["results"]
    assert "Expecting value" in result["summary_note"]
    assert MASK not in result["summary_note"]


def test_a_key_the_server_quotes_url_encoded_is_masked(tmp_path: Path) -> None:
    """A server quoting the request it refused, URL-encoded (``key%3Dsk-...``), puts a
    letter right before the key: masked only where it stood alone, it was printed whole."""
    api_key = "sk-live-0123456789abcdefghij"
    body = json.dumps({"error": {"message": f"refused /v1/chat?key%3D{api_key}"}}).encode()
    db = ingested(tmp_path, [conversation("s1", ("user", "the docker bridge drops packets"))])
    with ChatServer(lambda _r: Reply(status=401, raw=body)) as server:
        done = run("search", "docker", "--json", "--model", "m", "--base-url", server.url,
                   db=db, env={"OPENAI_API_KEY": api_key})
    assert done.returncode == 0, done.stderr
    (result,) = json.loads(done.stdout)["results"]
    assert api_key not in done.stdout + done.stderr
    assert f"key%3D{MASK}" in result["summary_note"]


def test_a_function_key_in_the_endpoint_is_masked() -> None:
    """Azure Functions take their key as ``?code=``: masked where the endpoint is shown and
    in what the summary cache keeps of it."""
    from harkback.stages.shown_url import shown_url

    shown = shown_url("https://f.azurewebsites.net/api/v1?code=Zk9s-secret-fn-key&zone=eu")
    assert "Zk9s-secret-fn-key" not in shown
    assert shown.endswith(f"?code={MASK}&zone=eu")
