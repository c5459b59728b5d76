"""Grounding of a recap that writes what the session named in another, equal form: a
path with ``./`` or ``~``, a path the transcript wrapped at a line's end, an address the
session gave bare, a git remote, a path the question named: none is invented, and a
refused recap costs the user the model's summary (the extractive one is shown instead)."""

from __future__ import annotations

import pytest

from harkback.stages.summarize.grounding import recap_problem, unquoted

SESSION = ("[USER]: the db stack at /home/u/srv/db/docker-compose.yml fails, see src/app.py\n\n"
           "[TOOL:terminal]: Traceback (most recent call last):\n  File \"src/app.py\", line 3\n"
           "KeyError: 'x'\nWrote 212 lines to api/lumen/billing/\ninvoices.py\n\n"
           "[ASSISTANT]: Redis listens on localhost:6379; the remote is "
           "git@github.com:org/repo.git; docs at example.com/docs; files in C:\\Users\\me\\proj")


@pytest.mark.parametrize("recap", [
    "The user fixed ./src/app.py.",
    "The stack at ~/srv/db/docker-compose.yml was restarted.",
    "The run script lives in ~/proj.",
    "Wrote api/lumen/billing/invoices.py.",
    "Pointed the app at redis://localhost:6379.",
    "Cloned ssh://git@github.com/org/repo.git, also https://github.com/org/repo.git.",
    "Linked https://example.com/docs.",
    "Opened file:///home/u/srv/db/docker-compose.yml."])
def test_an_item_the_session_named_in_another_form_is_held(recap: str) -> None:
    """``./src/app.py`` is the session's ``src/app.py``, ``~/srv/...`` its
    ``/home/u/srv/...``, a path wrapped after a slash the same path, ``redis://`` before
    the address the session gave, a git remote in URL form: each was refused."""
    assert unquoted(recap, SESSION) == ()


@pytest.mark.parametrize("recap", [
    "The user fixed ./src/main.py.", "The stack at ~/srv/web/docker-compose.yml.",
    "Wrote api/lumen/billing/refunds.py.", "Pointed the app at redis://localhost:6380.",
    "Connected to postgresql://admin@localhost:6379/prod.",
    "Cloned ssh://git@github.com/org/other.git.", "Linked https://example.com/docs/v2."])
def test_an_invented_item_in_such_a_form_is_still_refused(recap: str) -> None:
    """The other forms hold only what the session named: another file, folder, port,
    user, repository or page is still reported."""
    assert unquoted(recap, SESSION) != ()


def test_a_path_named_in_the_question_is_no_invention() -> None:
    """The model was shown the question too: a recap saying the session never reached
    the file the question names quotes the question, and was refused as invented."""
    told = "Question: why does lumen/billing/refunds.py round refunds down?"
    recap = ("The session split api/lumen/billing.py; lumen/billing/refunds.py, which the "
             "question names, was not changed. SOURCES: 1")
    transcript = "[USER]: split api/lumen/billing.py"
    assert recap_problem(recap, transcript, told) is None
    assert recap_problem(recap.replace("refunds", "credits"), transcript, told) is not None


NGINX = ("[TOOL:terminal]: $ cat /etc/nginx/nginx.conf\ninclude /etc/nginx/modules-enabled/*.conf;"
         "\ninclude /etc/nginx/conf.d/*.conf;\n$ rm -rf /var/cache/app/*\n$ cat /etc/hosts")


@pytest.mark.parametrize(("held", "invented"), [
    ("nginx.conf includes /etc/nginx/conf.d/*.conf.",
     "nginx.conf includes /etc/nginx/sites-enabled/*.conf."),
    ("The user cleared /var/cache/app/* first.", "The user cleared /var/cache/* first."),
    ("The user edited **/etc/hosts**.", "The user edited **/etc/hostname**.")])
def test_a_path_with_a_glob_copied_from_the_session_is_held(held: str, invented: str) -> None:
    """``/etc/nginx/conf.d/*.conf`` copied from the demo corpus's nginx session was read up
    to the ``*`` and refused (the session's path goes on there); a path in bold markdown
    is the path, its stars no glob."""
    assert unquoted(held, NGINX) == ()
    assert unquoted(invented, NGINX) != ()


STACK = ("[USER]: the TypeScript build ignores tsconfig.json; React warns, next.js 14\n\n"
         "[ASSISTANT]: Moved the paths into src/app.py and lumen/")


@pytest.mark.parametrize(("held", "invented"), [
    ("The TypeScript/tsconfig.json setup was fixed.", "The TypeScript/tsconfig.base.json too."),
    ("A react/next.js app.", "A react/remix.js app."),
    ("The React/tsconfig.json pair.", "Both lumen/app.py and src/app.py changed.")])
def test_two_names_the_session_holds_joined_by_a_slash_in_prose_are_held(
        held: str, invented: str) -> None:
    """"TypeScript/tsconfig.json" in prose pairs two names the session holds, as
    "Express/Node.js" does: both read as a relative path the session never named, and
    were refused. A pair with a name the session does not hold is still reported, and
    so is a file put in a folder of the session's (lumen/) where it never was."""
    assert unquoted(held, STACK) == ()
    assert unquoted(invented, STACK) != ()


BILLING = ("[USER]: api/lumen/billing.py in ~/code/lumen is 1,400 lines. Split it.\n\n"
           "[TOOL:write_file]: Wrote 212 lines to api/lumen/billing/invoices.py")


@pytest.mark.parametrize(("held", "invented"), [
    ("Split ~/code/lumen/api/lumen/billing.py.", "Split ~/code/lumen/api/lumen/refunds.py."),
    ("Wrote ~/code/lumen/api/lumen/billing/invoices.py.",
     "Wrote ~/code/other/api/lumen/billing.py."),
    ("Split `~/code/lumen/api/lumen/billing.py`.",
     "Ran `rm -rf ~/code/lumen/api/lumen/billing.py`.")])
def test_a_folder_and_a_path_in_it_the_session_named_apart_are_held_joined(
        held: str, invented: str) -> None:
    """The demo corpus's billing session names api/lumen/billing.py "in ~/code/lumen": a
    recap joining them (~/code/lumen/api/lumen/billing.py) names the same file, and was
    refused. Another file or folder is still reported, and a command is held only whole."""
    assert unquoted(held, BILLING) == ()
    assert unquoted(invented, BILLING) != ()
