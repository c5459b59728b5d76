"""``harkback completion bash|zsh``: the scripts are valid and complete what the parser has.

The bash script is run by bash itself: sourced, then its function called with
``COMP_WORDS`` set as bash sets it on a tab.
"""

from __future__ import annotations

import argparse
import os
import pty
import select
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harkback.pipeline.cli import build_parser
from harkback.pipeline.completion import command_tree
from tests.pipeline.test_cli import run
from tests.support.programs import require_program


@pytest.fixture(scope="module")
def bash_script(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bash script as ``harkback completion bash`` prints it."""
    done = run("completion", "bash")
    assert done.returncode == 0, done.stderr
    path = tmp_path_factory.mktemp("completion") / "harkback.bash"
    path.write_text(done.stdout, encoding="utf-8")
    return path


def complete(script: Path, *words: str, cwd: Path | None = None) -> list[str]:
    """What bash offers for the last of ``words`` (the word being typed)."""
    words_text = " ".join(shlex.quote(w) for w in ("harkback", *words))
    program = (f"source {shlex.quote(str(script))}\n"
               f"COMP_WORDS=({words_text}); COMP_CWORD={len(words)}\n"
               "_harkback\n"
               "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", program], cwd=cwd,
                          capture_output=True, text=True, timeout=30, check=False)
    assert done.returncode == 0, done.stderr
    return sorted(line for line in done.stdout.splitlines() if line)


def test_bash_script_is_valid_bash(bash_script: Path) -> None:
    """``bash -n`` reads the script without a syntax error."""
    done = subprocess.run(["bash", "-n", str(bash_script)], capture_output=True, text=True,
                          timeout=30, check=False)
    assert done.returncode == 0, done.stderr


def test_bash_registers_the_function(bash_script: Path) -> None:
    """Sourcing the script registers ``_harkback`` for ``harkback``."""
    done = subprocess.run(["bash", "--norc", "-c", f"source {bash_script}; complete -p harkback"],
                          capture_output=True, text=True, timeout=30, check=False)
    assert done.stdout.strip().endswith("-F _harkback harkback")


@pytest.mark.parametrize(("words", "expected"), [
    (("",), ["completion", "config", "demo", "embed", "import", "ingest", "mcp", "optimize",
             "recent", "search", "show", "sources"]),
    (("sh",), ["show"]),
    (("import", "c"), ["claude-code", "codex"]),
    (("import", "codex", "--f"), ["--full"]),
    (("search", "docker network", "--su"), ["--summarizer"]),
    (("search", "docker", "--summarizer", "e"), ["extractive"]),
    (("search", "docker", "--ranker", "h"), ["hybrid"]),
    (("search", "--limit", ""), []),
    (("recent", "--s"), ["--since", "--source"]),
    (("completion", ""), ["bash", "zsh"]),
])
def test_bash_completes_commands_options_and_choices(bash_script: Path, words: tuple[str, ...],
                                                     expected: list[str]) -> None:
    """Subcommands, nested kinds, options of the command typed and option choices.

    Commands are added often: the first case names those that must be offered, and every
    command the parser has must be offered too (no more, no fewer).
    """
    offered = complete(bash_script, *words)
    if words == ("",):
        assert set(expected) <= set(offered)
        assert offered == sorted(_commands())
    else:
        assert offered == expected


def _commands() -> list[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return list(sub.choices)


def test_bash_completes_paths_where_a_path_goes(bash_script: Path, tmp_path: Path) -> None:
    """``--db`` and ``ingest FILE`` complete file names."""
    (tmp_path / "history.db").write_text("", encoding="utf-8")
    (tmp_path / "sessions.jsonl").write_text("", encoding="utf-8")
    assert complete(bash_script, "recent", "--db", "hist", cwd=tmp_path) == ["history.db"]
    assert complete(bash_script, "ingest", "sess", cwd=tmp_path) == ["sessions.jsonl"]


def test_zsh_script_covers_every_command_with_balanced_quotes() -> None:
    """Each command has its function, each option its spec, every line parses as words,
    and the script registers itself with ``compdef``."""
    done = run("completion", "zsh")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert text.startswith("#compdef harkback\n")
    assert "compdef _harkback harkback" in text
    for path, command in command_tree(build_parser()).walk():
        name = "_" + "_".join(("harkback", *path)).replace("-", "_")
        assert f"\n{name}() {{\n" in text, name
        for option in command.options:
            assert option.names[-1] in text
    for line in text.splitlines():
        shlex.split(line, comments=True)  # raises on an unbalanced quote


def test_an_unknown_shell_is_a_usage_error() -> None:
    """Only bash and zsh: anything else is argparse's one line, exit 2."""
    done = run("completion", "fish")
    assert done.returncode == 2 and "invalid choice: 'fish'" in done.stderr


def typed_in_bash(script: Path, keys: str, cwd: Path) -> str:
    """What an interactive bash (on a pseudo-terminal, readline and all) shows once
    ``keys`` are typed after sourcing ``script``: a tab's listing as a person sees it,
    with readline's own fallbacks, which calling the function alone does not show."""
    return _typed(["bash", "--norc", "--noprofile", "-i"],
                  f"source {shlex.quote(str(script))}", keys, cwd)


def typed_in_zsh(script: Path, keys: str, cwd: Path) -> str:
    """As :func:`typed_in_bash`, in an interactive zsh with no start-up files and its
    completion system loaded (``compinit``), as a user's ``.zshrc`` loads it."""
    return _typed(["zsh", "-f", "-i"], "autoload -U compinit; compinit -u; "
                  f"source {shlex.quote(str(script))}", keys, cwd)


def _typed(shell_command: list[str], setup: str, keys: str, cwd: Path) -> str:
    main, sub = pty.openpty()
    shell = subprocess.Popen(shell_command, stdin=sub, stdout=sub,
                             stderr=sub, cwd=cwd, start_new_session=True,
                             env={"PATH": os.environ.get("PATH", ""), "TERM": "dumb",
                                  "PS1": "$ ", "HOME": str(cwd)})
    os.close(sub)

    def shown(until: str) -> str:
        out, deadline, quiet = "", time.monotonic() + 20, time.monotonic() + 1
        while time.monotonic() < deadline and (until not in out or time.monotonic() < quiet):
            if select.select([main], [], [], 0.1)[0]:
                try:
                    out += os.read(main, 4096).decode(errors="replace")
                except OSError:
                    break
                quiet = time.monotonic() + 1  # a second without output: all is shown
        return out

    try:
        # SOUR''CED: the echoed command line does not pass for its output.
        os.write(main, f"{setup}; echo SOUR''CED\n".encode())
        shown("SOURCED\r\n")
        os.write(main, keys.encode())
        return shown(keys.rstrip("\t"))
    finally:
        shell.kill()
        shell.wait()
        os.close(main)


def test_bash_offers_no_file_names_for_a_value_that_is_not_a_file(bash_script: Path,
                                                                  tmp_path: Path) -> None:
    """Tab after ``--limit`` or ``--since`` listed the folder's files: the function offered
    nothing, and ``complete -o default`` fell back to file names. ``--db`` still lists
    them (which also shows that a listing is seen here)."""
    (tmp_path / "notes-zz.txt").write_text("", encoding="utf-8")
    assert "notes-zz.txt" in typed_in_bash(bash_script, "harkback sync --db \t\t", tmp_path)
    for option in ("search --limit", "recent --since"):
        shown = typed_in_bash(bash_script, f"harkback {option} \t\t", tmp_path)
        assert "notes-zz.txt" not in shown, shown


@pytest.mark.parametrize(("words", "expected"), [
    (("search", "docker", "--ranker", "=", "h"), ["hybrid"]),
    (("search", "docker", "--summarizer", "="), ["extractive", "llm", "none", "raw"]),
    (("recent", "--db", "=", "hist"), ["history.db"]),
])
def test_bash_completes_a_value_written_after_an_equals_sign(bash_script: Path, tmp_path: Path,
                                                            words: tuple[str, ...],
                                                            expected: list[str]) -> None:
    """``--ranker=h``: bash splits the word at ``=`` (COMP_WORDBREAKS), so the option is two
    words back, or the word typed is ``=`` itself; neither was completed (the choices of
    ``--ranker=`` were the folder's files, through ``complete -o default``)."""
    (tmp_path / "history.db").write_text("", encoding="utf-8")
    assert complete(bash_script, *words, cwd=tmp_path) == expected


def _fixed_choices() -> list[tuple[str, str, tuple[str, ...]]]:
    """Every option and positional word with fixed choices: (command, option or "",
    choices), from the parser, so that one added later is checked too."""
    found = []
    for path, command in command_tree(build_parser()).walk():
        found += [(" ".join(path), option.names[-1], option.choices)
                  for option in command.options if option.choices]
        if command.positional_choices:
            found.append((" ".join(path), "", command.positional_choices))
    return found


@pytest.mark.parametrize("shell", ["bash", "zsh"])
@pytest.mark.parametrize("joined", [" ", "="])
def test_every_fixed_choice_completes_in_both_shells(tmp_path: Path, shell: str,
                                                     joined: str) -> None:
    """``--ranker <Tab>`` and ``--ranker=<Tab>`` list the rankers, in bash and in zsh, and
    so for every option with fixed choices (zsh's ``--ranker=<Tab>`` offered nothing: its
    spec took the value only as the next word). A machine without zsh skips its half
    (:func:`~tests.support.programs.require_program`), except under CI."""
    require_program(shell, f"apt-get install {shell}, brew install {shell}")
    done = run("completion", shell)
    assert done.returncode == 0, done.stderr
    script = tmp_path / f"harkback.{shell}"
    script.write_text(done.stdout, encoding="utf-8")
    typed_in = typed_in_bash if shell == "bash" else typed_in_zsh
    cases = _fixed_choices()
    assert {(command, option) for command, option, _ in cases} >= {
        ("search", "--ranker"), ("search", "--summarizer"), ("completion", "")}
    for command, option, choices in cases:
        if not option and joined == "=":
            continue  # a positional word has no "=" form
        typed = f"harkback {command} {option}{joined if option else ''}\t\t"
        shown = typed_in(script, typed, tmp_path).split(typed.rstrip("\t"), 1)[-1]
        assert all(choice in shown for choice in choices), (typed, shown)


@pytest.mark.parametrize(("ci", "outcome"), [(None, "2 skipped"), ("true", "2 failed")])
def test_a_machine_without_zsh_skips_its_half_except_under_ci(tmp_path: Path, ci: str | None,
                                                              outcome: str) -> None:
    """A fresh machine with only python3 and make failed the README's test command: zsh
    was not found (FileNotFoundError). Now its half is skipped saying how to install zsh;
    under CI (``CI=true``) it still fails, so CI never passes without testing zsh."""
    env = {k: v for k, v in os.environ.items() if k != "CI"} | {"PATH": str(tmp_path)}
    if ci is not None:
        env["CI"] = ci
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rsf",
         f"{__file__}::test_every_fixed_choice_completes_in_both_shells", "-k", "zsh"],
        capture_output=True, text=True, timeout=300, check=False, env=env,
        cwd=Path(__file__).parents[2])
    assert outcome in done.stdout, done.stdout + done.stderr
    assert "zsh is not on PATH; install it (apt-get install zsh" in done.stdout, done.stdout
