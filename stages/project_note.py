"""The line an importer adds under a session's first request naming its project folder and
git branch, and that line without its labels, as the ranker counts it.

The folder and branch are searchable (a default search covers messages), but the labels
"project", "git" and "branch" are no words of the conversation: counted, every Claude Code
and Codex session matched "which branch did we use for the release?".

>>> note = project_note("/home/me/code/api", "main")
>>> note
'[project: /home/me/code/api, git branch: main]'
>>> unlabelled(f"fix the CORS error\\n\\n{note}")
'fix the CORS error\\n\\n[/home/me/code/api, main]'
"""

from __future__ import annotations

import re

_OPENS = "\n\n[project: "
# Read to the text's end (fullmatch): a folder or a branch may hold "]" ("site [old]").
_NOTE = re.compile(r"\[project: ([^\n]*?)(?:, git branch: ([^\n]*))?\]")


def project_note(cwd: str, branch: str = "") -> str:
    """The line that makes a session's project folder (and git branch) searchable.

    >>> project_note("/home/me/code/youer-server")
    '[project: /home/me/code/youer-server]'
    """
    extra = f", git branch: {branch}" if branch else ""
    return f"[project: {cwd}{extra}]"


def counted(content: str, role: str) -> str:
    """What the ranker counts of a message: a user message (where importers put the
    line) :func:`unlabelled`; any other as it is, whatever it ends with (a reply
    explaining the line holds its words).

    >>> counted("[project: x]", "user"), counted("[project: x]", "assistant")
    ('[x]', '[project: x]')
    """
    return unlabelled(content) if role == "user" else content


def unlabelled(text: str) -> str:
    """``text`` with the :func:`project_note` that ends it (after a blank line, or alone:
    where importers put it) written without its labels; any other text as it is.

    >>> unlabelled("[project: x]"), unlabelled("the project: x\\n\\n[project: x] and more")
    ('[x]', 'the project: x\\n\\n[project: x] and more')
    >>> unlabelled("fix\\n\\n[project: /a/site [old], git branch: fix]x]")
    'fix\\n\\n[/a/site [old], fix]x]'
    """
    found = _found(text)
    if found is None:
        return text
    start, note = found
    named = ", ".join(part for part in note.groups() if part)
    return f"{text[:start]}[{named}]"


def without_note(text: str) -> str:
    """``text`` without the :func:`project_note` that ends it (and the blank line before
    it); any other text as it is: what a message says, whichever copy added the line.

    >>> without_note("hi\\n\\n[project: /w]"), without_note("[project: /x]"), without_note("hi")
    ('hi', '', 'hi')
    """
    found = _found(text)
    return text if found is None else text[:max(found[0] - 2, 0)]


def _found(text: str) -> tuple[int, re.Match[str]] | None:
    # Where the note that ends ``text`` starts, and the note; None when none does.
    if not text.endswith("]"):  # most messages: nothing else is looked at
        return None
    at = text.rfind(_OPENS)
    start = at + 2 if at >= 0 else 0
    note = _NOTE.fullmatch(text, start)
    return None if note is None else (start, note)
