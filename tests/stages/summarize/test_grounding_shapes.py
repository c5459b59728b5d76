"""Grounding of what recaps of agent sessions state as exact beyond Unix paths and quoted
commands: Windows paths, ``@`` names, commands, flags and numbers written in prose."""

from __future__ import annotations

import time

import pytest

from harkback.stages.summarize.grounding import recap_problem, unquoted

WINDOWS = ("[USER]: the build script fails on my laptop\n\n[ASSISTANT]: Run "
           "`C:\\Users\\me\\proj\\run.ps1` then `.\\scripts\\build.bat`; the backup goes to "
           "\\\\nas01\\share\\backups.\n\n[TOOL:powershell]: {\"path\": "
           "\"C:\\\\Users\\\\me\\\\proj\\\\out\\\\app.exe\"}")


@pytest.mark.parametrize(("invented", "held"), [
    ("C:\\Users\\me\\proj\\deploy.ps1", "C:\\Users\\me\\proj\\run.ps1"),
    ("`C:\\Users\\me\\proj`", "`C:\\Users\\me\\proj\\run.ps1`"),
    ("D:\\proj\\run.ps1", "c:\\users\\me\\proj\\run.ps1"),
    (".\\scripts\\deploy.bat", ".\\scripts\\build.bat"),
    ("\\\\nas01\\share\\old", "\\\\nas01\\share\\backups"),
    ("C:\\Users\\me\\proj\\out\\app.dll", "C:\\Users\\me\\proj\\out\\app.exe")])
def test_a_windows_path_the_session_never_named_is_not_held(invented: str, held: str) -> None:
    """A Windows path (drive, ``.\\``, UNC) is checked as a Unix one is: one the session never
    named, or the start of one it did, is reported; the one it named passes, as does a
    path a tool printed in JSON with doubled backslashes."""
    assert unquoted(f"The user ran {invented} after the fix.", WINDOWS) != ()
    assert unquoted(f"The user ran {held} after the fix.", WINDOWS) == ()


@pytest.mark.parametrize("quoted", [
    "`C:/Users/me/proj/run.ps1`", "C:/Users/me/proj/run.ps1", "`./scripts/build.bat`",
    "`C:\\\\Users\\\\me\\\\proj\\\\run.ps1`", "`//nas01/share/backups`"])
def test_a_windows_path_written_with_other_slashes_is_held(quoted: str) -> None:
    """The session's path with forward slashes (or JSON's doubled backslashes) is the same
    path: quoting it so is grounded, where it was refused."""
    assert unquoted(f"Fixed by {quoted}.", WINDOWS) == ()


NPM = ("[USER]: the tests need an older lodash\n\n[ASSISTANT]: `npm install lodash@4.17.20` "
       "then `ssh deploy@prod.example.com`; types from @types/node@20.11.0.")


@pytest.mark.parametrize(("invented", "held"), [
    ("pinned lodash@4.17.21", "pinned lodash@4.17.20"),
    ("logged in as deploy@staging.example.com", "logged in as deploy@prod.example.com"),
    ("mailed ops@example.com", "added @types/node@20.11.0"),
    ("added @types/react", "added @types/node"),
    ("upgraded to lodash@5", "kept lodash@4 (4.17.20) and @types/node@^20")])
def test_an_at_name_in_prose_is_checked(invented: str, held: str) -> None:
    """``name@version``, ``user@host``, an email and an npm scope written in prose are
    exact: an invented version or host is reported, the session's own pass."""
    assert unquoted(f"The user {invented}.", NPM) != ()
    assert unquoted(f"The user {held}.", NPM) == ()


def test_a_package_named_without_its_version_is_held_and_a_user_without_host_is_not() -> None:
    """`lodash` is the package the session installed as lodash@4.17.20 (it was refused);
    `deploy` is not the session's deploy@prod.example.com, a user on another host."""
    assert unquoted("Installed `lodash` and `npm install lodash`.", NPM) == ()
    assert unquoted("Logged in with `ssh deploy`.", NPM) == ("ssh deploy",)


DOCKER = ("[USER]: the api container will not start\n\n[ASSISTANT]: $ docker compose up "
          "--build\nError: port 3000 already in use (exit code 1)\n$ git commit -m \"fix dns\""
          "\n$ git push origin fix-dns --force-with-lease\n$ pytest -x tests/api\n"
          "node v20.11.1 listening on 0.0.0.0:3000\nnpm ERR! code EACCES")


NOT_COMMANDS = ("The user ran the tests and ran into a port clash; the api ran out of memory. "
                "Running low on disk, the user ran docker commands to prune images and ran "
                "source code checks; pytest -x ran docker code paths.")


@pytest.mark.parametrize(("invented", "held"), [
    ("The user ran docker compose up -d.", "The user ran docker compose up --build again."),
    ("I ran git push origin main.", "I ran git push origin fix-dns --force-with-lease."),
    ("运行了 docker compose down -v 来清理。", "运行了 docker compose up --build 来重建。"),
    ("Running pytest -x tests/web showed it.", "Running pytest -x tests/api showed it."),
    ("Then executed sudo docker compose up.", "Then executed docker compose up, which failed."),
    ("The user ran npm ci and the tests.", "The user ran pytest -x fixed it."),
    ("Then ran git commit -m “fix cors” twice.", "Then ran git commit -m “fix dns” twice."),
    ("I ran git push origin staging.", "I ran git push origin fix-dns, which pushed it."),
    ("The user ran git push origin nightly.", "The user ran pytest -x showed it."),
    ("The user ran docker compose up seed.", "The user ran docker compose up again."),
    ("The user ran **docker compose down -v**.", "The user ran **docker compose up --build**."),
    ("運行了 docker compose down -v 來清理。", "执行了：docker compose up --build。"),
    ("I ran pytest -x tests/api && docker compose down -v.",
     "I ran pytest -x tests/api && git push origin fix-dns --force-with-lease.")])
def test_a_command_written_in_prose_is_checked(invented: str, held: str) -> None:
    """A command the recap says was run, in plain words, is held as a quoted one: an
    argument the session never used is reported; the sentence going on after the
    command ("again", "which failed", 来重建, "fixed it") is not taken for part of it, nor
    are its quotation marks (“fix dns” for the session's "fix dns") or markdown's bold;
    a target in -ing ("staging") is an argument, 運行/执行了： are "ran" too; and
    running that names no program ("ran the tests", "ran into", "ran out of", "ran source
    code checks") or a program's kind of thing ("ran docker commands") is prose."""
    assert unquoted(invented, DOCKER) != ()
    assert unquoted(f"{held} {NOT_COMMANDS}", DOCKER) == ()


@pytest.mark.parametrize(("invented", "held"), [
    ("retried the push with --force", "retried the push with --force-with-lease"),
    ("upgraded node to 20.11.2", "node 20.11.1 was running on 05.12.2026"),
    ("moved the api to port 8080", "the api wanted port 3000"),
    ("the build exited with code 137", "the build exited with code 1 before"),
    ("the container answered HTTP 502", "the container was on localhost:3000"),
    ("npm failed with ENOENT", "npm failed with EACCES"),
    ("node listened on 0.0.0.0:8080", "node listened on 0.0.0.0:3000"),
    ("the api answered with status 502", "the api wanted port 3000, status: 12 of 15 up")])
def test_a_flag_version_port_code_or_errno_in_prose_is_checked(invented: str, held: str) -> None:
    """Shapes a model makes up in a recap of an agent session (a flag the session never
    passed, a version, a port, also after an address, an exit or HTTP status, an errno
    name) are reported; the session's own pass."""
    assert unquoted(f"In short, {invented}.", DOCKER) != ()
    assert unquoted(f"In short, {held}.", DOCKER) == ()


def test_a_recap_naming_an_invented_version_is_no_summary() -> None:
    """The whole recap is refused, its note naming what the transcript lacks."""
    problem = recap_problem("The user pinned lodash@4.17.21 and it passed.", NPM)
    assert problem is not None and "lodash" not in problem and "4.17.21" in problem


@pytest.mark.parametrize("recap", ["运行了测试然后" * 30_000, "ran:" * 50_000])
def test_a_long_recap_is_read_in_linear_time(recap: str) -> None:
    """A command is read a few words at a time: Chinese prose has no spaces, and each
    运行 once read the rest of the recap as one word (a 200 KB recap took seconds)."""
    started = time.perf_counter()
    unquoted(recap, "[USER]: hi")
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize("recap", [
    "The api runs node 20.11 in the container.",
    "The user ran pytest -x tests/api -- it failed at first.",
    "The user ran pytest -x tests/api && docker compose up --build.",
    "2026.12.05 에 docker compose up --build 를 실행함.",
    "Am 05.12.26 lief docker compose up --build.",
    "1. ran pytest -x tests/api\n2. ran docker compose up --build",
    "The user ran pytest -x tests/api showing one failure, then ran it via make.",
    "The user ran docker compose up --build 3 times."])
def test_a_true_recap_in_ordinary_wording_is_held(recap: str) -> None:
    """A program named with its version is no command; an ASCII dash, ``&&`` or a line's
    end (a numbered list) ends the command the prose names; a date written with dots
    (Korean's 2026.12.05, German's 05.12.26) is no version; a plain word after a command
    the session ran whole ("showing", "3 times") or a word such as "via" is the sentence
    going on. Each of these was refused."""
    assert unquoted(recap, DOCKER) == ()


def test_a_command_the_session_ran_by_its_path_ends_where_it_ended() -> None:
    """``.venv/bin/pytest -x`` is the command ``pytest -x``, run whole: the plain words
    after it in the recap are the sentence going on."""
    assert unquoted("The user ran pytest -x showing 3 failures.", "$ .venv/bin/pytest -x\n") == ()


PYTEST = ("[TOOL:terminal]: ImportError while importing test module 'tests/test_app.py'\n"
          "E   RuntimeError: Event loop is closed\n\n[ASSISTANT]: The error is gone.")


@pytest.mark.parametrize(("invented", "held"), [
    ("the import failed with ModuleNotFoundError", "the import failed with an ImportError"),
    ("the loop raised a RuntimeError and a TimeoutError", "the loop raised a RuntimeError"),
    ("Java threw a NullPointerException", "the error was gone after the fix")])
def test_an_exception_named_in_prose_is_checked(invented: str, held: str) -> None:
    """An exception's name (``ModuleNotFoundError``) is as exact as an errno name, and as
    easy to make up for a session that raised another: it passed unchecked. The session's
    own, and the word "error", pass."""
    assert unquoted(f"In short, {invented}.", PYTEST) != ()
    assert unquoted(f"In short, {held}. Error handling was fine.", PYTEST) == ()
