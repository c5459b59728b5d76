"""Claude Code's slash-command echoes, read as what the user typed.

Claude Code writes a slash command the user ran as a user line whose text is tags,
``<command-name>/clear</command-name>\\n<command-message>clear</command-message>\\n
<command-args></command-args>``, and what a local command printed as another,
``<local-command-stdout>Set model to opus</local-command-stdout>`` (often empty). A session
started by ``/clear`` opens with both, so stored as they were they became its first request:
``recent`` previewed every such session as ``<command-name>/clear</command-name> <command-
message>clear ...`` and its project line sat under the tags. Only the caveat before them is
``isMeta``.

:func:`typed_command` reads an echo: a command is kept as typed (``/fix-issue 123``,
``/review``, ``/init``: what the session set out to do); one of Claude Code's own that only
steers the session (:data:`SESSION_COMMANDS`: ``/clear``, ``/model``) run without arguments,
and a local command's output, are left out, counted.

>>> typed_command("<command-name>/clear</command-name>\\n<command-message>clear"
...               "</command-message>\\n<command-args></command-args>")
''
>>> typed_command("<command-message>fix-issue is running…</command-message>\\n"
...               "<command-name>/fix-issue</command-name>\\n<command-args>123</command-args>")
'/fix-issue 123'
>>> typed_command("<command-name>/review</command-name>")
'/review'
>>> typed_command("<local-command-stdout>Set model to opus</local-command-stdout>")
''
>>> typed_command("why does <command-name> appear in the log?") is None
True
"""

from __future__ import annotations

_ECHO_TAGS = ("command-name", "command-message", "command-args")
_OUTPUT_TAGS = ("local-command-stdout", "local-command-stderr")

SESSION_COMMANDS = frozenset({
    "clear", "compact", "exit", "quit", "model", "status", "cost", "context", "usage",
    "resume", "rewind", "config", "settings", "help", "login", "logout", "permissions",
    "memory", "doctor", "ide", "terminal-setup", "vim", "theme", "mcp", "agents", "hooks",
    "output-style", "statusline", "bashes", "tasks", "todos", "export", "release-notes",
    "upgrade", "privacy-settings", "plugin", "stats", "fast", "effort", "add-dir"})
"""Claude Code's own commands that steer the session rather than say what it is about:
without arguments, their echo is left out (a session started by ``/clear`` is listed by its
first request). The list need not be whole: a command missing from it is kept as typed."""

LEFT_OUT = "session command without arguments, or a command's output"
"""How a left-out echo is counted among an import's left-out lines."""


def typed_command(text: str) -> str | None:
    """The command ``text`` echoes as typed (``""`` when it is left out), or ``None`` when
    ``text`` is no echo but a message of its own (one that only mentions the tags). An echo
    followed by the command's prompt in the same message (``/init`` sent as two text blocks)
    is the command as typed, then the prompt."""
    read = _leading_blocks(text)
    if read is None:
        return None
    blocks, rest = read
    if all(tag in _OUTPUT_TAGS for tag in blocks):
        return None if rest else ""
    if "command-name" not in blocks or not set(blocks) <= set(_ECHO_TAGS):
        return None
    name, args = blocks["command-name"].strip(), blocks.get("command-args", "").strip()
    typed = f"{name if name.startswith('/') else '/' + name} {args}".rstrip()
    if rest:
        return f"{typed}\n\n{rest}"
    return "" if not args and name.removeprefix("/") in SESSION_COMMANDS else typed


def _leading_blocks(text: str) -> tuple[dict[str, str], str] | None:
    """The ``<tag>...</tag>`` blocks of these tags ``text`` opens with, by tag, and the text
    after them (stripped); ``None`` when it opens with none.

    Read with ``str.find``, once over the text: a regular expression with a repeated lazy
    group backtracked without end over a hostile line of many such tags.

    >>> _leading_blocks(" <command-name>/x</command-name>\\n<command-args></command-args> ")
    ({'command-name': '/x', 'command-args': ''}, '')
    >>> _leading_blocks("<command-name>/x</command-name> and more")
    ({'command-name': '/x'}, 'and more')
    >>> _leading_blocks("why does <command-name> appear?") is None
    True
    """
    blocks: dict[str, str] = {}
    at, end = 0, len(text)
    while True:
        while at < end and text[at].isspace():
            at += 1
        close = text.find(">", at)
        tag = text[at + 1:close] if text.startswith("<", at) and close >= 0 else ""
        stop = text.find(f"</{tag}>", close) if tag in _ECHO_TAGS + _OUTPUT_TAGS else -1
        if stop < 0 or tag in blocks:  # a tag again is text of its own, not lost to the first
            return (blocks, text[at:].strip()) if blocks else None
        blocks[tag] = text[close + 1:stop]
        at = stop + len(tag) + 3
