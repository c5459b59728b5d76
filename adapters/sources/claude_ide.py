"""What Claude Code's editor extensions put before a request the user typed.

The VS Code and JetBrains extensions send the file open in the editor, or the lines
selected there, ahead of the request: ``<ide_opened_file>The user opened the file
/home/me/code/app/cache.py in the IDE. This may or may not be related to the current
task.</ide_opened_file>`` (``<ide_selection>...</ide_selection>``), then what was typed.
Stored as written, ``recent`` previewed such a session by that notice and a summary quoted
it first. :func:`request_first` puts the request first and keeps the notices after it,
where a search for the file's name still finds them.

>>> print(request_first("<ide_opened_file>The user opened the file /w/a.py in the IDE."
...                     "</ide_opened_file>\\nwhy is the header wrapping"))
why is the header wrapping
<BLANKLINE>
<ide_opened_file>The user opened the file /w/a.py in the IDE.</ide_opened_file>
>>> request_first("<ide_opened_file>only a notice</ide_opened_file>")
'<ide_opened_file>only a notice</ide_opened_file>'
"""

from __future__ import annotations

NOTICE_TAGS = ("ide_opened_file", "ide_selection")


def request_first(text: str) -> str:
    """``text`` with the editor's notices before the request moved after it (``text``
    itself when none comes first, or nothing follows them)."""
    notices: list[str] = []
    at = 0
    while True:
        start = at
        while start < len(text) and text[start].isspace():
            start += 1
        tag = next((t for t in NOTICE_TAGS if text.startswith(f"<{t}>", start)), None)
        if tag is None:
            break
        # Read with str.find, once over the text: no pattern to backtrack over a hostile line.
        stop = text.find(f"</{tag}>", start)
        if stop < 0:
            break
        at = stop + len(tag) + 3
        notices.append(text[start:at])
    request = text[at:].strip()
    if not notices or not request:
        return text
    return request + "\n\n" + "\n".join(notices)
