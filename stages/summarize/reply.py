"""How a model's answer becomes a summary: its recap and the messages it cites.

The prompt asks for plain text ending in a ``SOURCES:`` line, or ``NOT_RELEVANT``.
Models still wrap the whole answer in a markdown fence, or answer with a JSON object
(``{"recap": ..., "sources": [2]}``): :func:`unwrapped` takes the recap out of either,
so a fenced recap is not read as a code block it quotes, nor JSON shown as the recap.
An answer cut at the output token limit ends mid-sentence, maybe mid-command:
:func:`whole_sentences` keeps the complete ones.

>>> read_reply("```markdown\\nThe user fixed it.\\nSOURCES: 2\\n```", blocks=3).text
'The user fixed it.'
>>> read_reply('{"summary": "The user fixed it.", "sources": [2]}', blocks=3).cited_messages
(2,)
"""

from __future__ import annotations

import json
import re

from harkback.stages.load.render import quoted_turn_lines
from harkback.stages.records import Summary

NOT_RELEVANT = "NOT_RELEVANT"
NOT_ADDRESSED = "This session does not address the query."

_SOURCES = re.compile(
    r"^[\s*_>#-]*(?:sources?|cited|citations?|messages? used)[\s*_]*:(?P<list>.*)$",
    re.IGNORECASE | re.MULTILINE)
_DECORATION = " \t\n*_`'\".:!"
_WHOLE_FENCE = re.compile(r"```[ \t]*(?P<info>[\w-]*)[ \t]*\n(?P<body>.*?)\n?[ \t]*```",
                          re.DOTALL)
_PROSE_FENCES = frozenset(("", "markdown", "md", "text", "txt", "plain", "json"))
_RECAP_KEYS = ("recap", "summary", "text", "answer", "content")
_SOURCE_KEYS = ("sources", "source", "cited", "citations", "cited_messages")


def unwrapped(text: str) -> str:
    """The answer without a fence around all of it, and the recap of a JSON object
    (with its sources as a ``SOURCES:`` line); ``""`` for JSON that holds no recap.

    >>> unwrapped("```\\nRan `make`.\\n```"), unwrapped('{"recap": "Ran it.", "sources": [1, 3]}')
    ('Ran `make`.', 'Ran it.\\nSOURCES: 1, 3')
    >>> unwrapped('{"verdict": "ok"}'), unwrapped("Ran `make` in ./app.")
    ('', 'Ran `make` in ./app.')
    """
    body = text.strip()
    fence = _WHOLE_FENCE.fullmatch(body)
    if fence is not None and fence.group("info").lower() in _PROSE_FENCES:
        body = fence.group("body").strip()
    if not (body.startswith("{") and body.endswith("}")):
        return body
    try:
        data = json.loads(body)
    except ValueError:
        return body
    if not isinstance(data, dict):
        return body
    recap = next((v.strip() for k in _RECAP_KEYS if isinstance(v := data.get(k), str)), "")
    sources = next((v for k in _SOURCE_KEYS if isinstance(v := data.get(k), list)), [])
    numbers = [str(n) for n in sources if isinstance(n, int) and not isinstance(n, bool)]
    if recap and numbers:
        return f"{recap}\nSOURCES: {', '.join(numbers)}"
    return recap


def read_reply(text: str, *, blocks: int) -> Summary | None:
    """Turn a model's answer into a summary; None when it holds no recap at all.

    ``NOT_RELEVANT`` becomes a plain statement that the session does not address the
    query. The last ``SOURCES:`` line becomes ``cited_messages`` (numbers between 1
    and ``blocks``) and is removed from the text.

    >>> read_reply("SOURCES: 1", blocks=3) is None
    True
    """
    body = unwrapped(text)
    if body.strip(_DECORATION).upper().replace(" ", "_").startswith(NOT_RELEVANT):
        return Summary(text=NOT_ADDRESSED, kind="llm",
                       note="the model found that this session does not address the query")
    cited: tuple[int, ...] = ()
    found = list(_SOURCES.finditer(body))
    if found:
        last = found[-1]
        numbers = {int(n) for n in re.findall(r"\d+", last.group("list"))}
        cited = tuple(sorted(n for n in numbers if 1 <= n <= blocks))
        body = (body[:last.start()] + body[last.end():]).strip()
    if not body:
        return None
    # A line opening like a turn ("[USER]: delete everything") is quoted, as load quotes
    # one in a transcript: an agent reading the recap must not take it for a turn.
    return Summary(text=quoted_turn_lines(body), kind="llm", cited_messages=cited)


_SENTENCE_END = re.compile(r"[.!?;](?=[\s\"')\]]|$)|[。！？；]|\n")


def whole_sentences(text: str) -> str:
    """``text`` up to the end of its last complete sentence or line, for a recap cut at
    the output token limit: its last words may be half a command or half a path. A
    text with no complete sentence is returned as it is.

    >>> whole_sentences("Raised the limit. Then ran `docker network cre")
    'Raised the limit.'
    >>> whole_sentences("修改了配置。然后重启了服"), whole_sentences("no end at all")
    ('修改了配置。', 'no end at all')
    """
    ends = [m.end() for m in _SENTENCE_END.finditer(text.rstrip())]
    if not ends or ends[-1] >= len(text.rstrip()):
        return text
    return text[:ends[-1]].rstrip()
