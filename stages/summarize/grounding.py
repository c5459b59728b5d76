"""What a model's recap quotes that the transcript it was shown does not hold, and a
recap that is only the transcript repeated.

The prompt asks the model to copy commands, file paths, URLs and error messages
verbatim and to add nothing; a small or confused model still writes
``sudo rm -rf /var/lib/docker`` into a recap of a session that never ran it. What a recap
presents as exact (a span in backticks, a line of a fenced code block, a file path, a
relative or Windows one too, a URL of any scheme) must appear in the transcript, compared
without case, with runs of whitespace as one space and ``\\`` as ``/`` (``C:\\proj\\run.ps1`` quotes
``C:/proj/run.ps1``); so must what its prose states as exact (:mod:`.claims`: a command
it says was run, a flag, a version, a port). Any other prose is not checked. A small model
also answers by repeating the quoted transcript, its markers and message numbers
included (SmolLM2-135M does, in the test suite): that is no recap either, and nor is a
short refusal written as the answer ("I'm sorry, but I can't help with that"), which
servers without a structured ``refusal`` field send as content.

>>> seen = "[USER]: it fails\\n\\n[ASSISTANT]: Run `docker network create app-net`."
>>> unquoted("Ran `docker network create app-net`, then edited /etc/hosts.", seen)
('/etc/hosts',)
>>> unquoted("Created the network with `docker network  create`.", seen)
()
"""

from __future__ import annotations

import re

from harkback.stages.load.render import unquoted_turn_lines
from harkback.stages.summarize.claims import (
    at_versions,
    ends_in_prose,
    holds_number,
    prose_commands,
    prose_numbers,
    prose_words,
)

_TICKED = re.compile(r"`([^`\n]{2,})`")
_FENCE = re.compile(r"^[ \t]*```[^\n]*\n(.*?)^[ \t]*```", re.DOTALL | re.MULTILINE)
# ASCII only: in Chinese or Japanese a path is often written against the next word
# (修改了/etc/hosts文件, 见https://x.io/a。), and \w would take that word into the item.
_PATH = re.compile(r"(?<![A-Za-z0-9_/.~-])(?:~|\.{1,2})?/[A-Za-z0-9_.@%+=:-]+"
                   r"(?:/[A-Za-z0-9_.@%+=:-]*)+|(?<![A-Za-z0-9_/.~-])~/[A-Za-z0-9_.@%+=:-]+")
# C:\Users\me\run.ps1 (or C:/Users/...), .\scripts\build.bat, ~\x, %APPDATA%\x,
# \\server\share: a path a Windows session names, as exact as a Unix one.
_WIN_PATH = re.compile(
    r"(?:(?<![A-Za-z0-9_])[A-Za-z]:[\\/]|(?<![A-Za-z0-9_\\/.~-])(?:\.{1,2}|~"
    r"|%[A-Za-z_][A-Za-z0-9_]*%|\\\\[A-Za-z0-9_.$-]+)\\)"
    r"[A-Za-z0-9_.@%+=$~-]+(?:[\\/][A-Za-z0-9_.@%+=$~-]*)*")
# Any scheme: postgresql://admin@db:5432/prod, redis://, s3://, ssh:// are as exact as https.
_URL = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,19}://"
                  r"[A-Za-z0-9._~:/?#@!$&*+,;=%-]+")
# A path relative to a project (lumen/billing/refunds.py): a folder, a slash, a file name
# with an extension. "Express/Node.js" names frameworks (a capitalised name before .js).
_RELATIVE = re.compile(r"(?<![A-Za-z0-9_/.~@$%-])[A-Za-z0-9_][A-Za-z0-9_.-]*"
                       r"(?:/[A-Za-z0-9_.@%+=-]+)*/(?![A-Z][A-Za-z0-9]*\.js\b)"
                       r"[A-Za-z0-9_][A-Za-z0-9_.-]*\.[A-Za-z][A-Za-z0-9]{0,7}(?![A-Za-z0-9_/-])")
# "README.md/CHANGELOG.md" is prose naming two files: a folder named like a file is no path.
_NAMED_FOLDER = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}/")
_TRAILING = ".,;:!?)'\"/\\"


def _folded(text: str) -> str:
    return " ".join(text.casefold().split())


_SLASHES = re.compile(r"[\\/]+")
_QUOTES = str.maketrans({mark: "'" for mark in "\"\u201c\u201d\u2018\u2019"})


def _comparable(text: str) -> str:
    """``text`` folded (:func:`_folded`), each run of slashes either way as one ``/``, each
    quotation mark as ``'``: a Windows path quotes its forward-slash spelling (and JSON's
    doubled ``\\\\``), ``git commit -m “fix dns”`` the session's ``-m "fix dns"``."""
    return _SLASHES.sub("/", _folded(text)).translate(_QUOTES)


def quoted_items(recap: str) -> tuple[str, ...]:
    """What ``recap`` presents as exact: backticked spans, code-block lines, URLs, paths.

    >>> quoted_items("See https://x.io/a. Ran `make`, kept ~/bin/run.sh and ./a/b.")
    ('make', 'https://x.io/a', '~/bin/run.sh', './a/b')
    """
    fenced = [line for block in _FENCE.findall(recap) for line in block.splitlines()]
    prose = _FENCE.sub(" ", recap)
    items = [*_TICKED.findall(prose), *fenced]
    rest = _TICKED.sub(" ", prose)
    items += [m.group().rstrip(_TRAILING) for m in _URL.finditer(rest)]
    rest = _URL.sub(" ", rest)
    items += [m.group().rstrip(_TRAILING) for m in _WIN_PATH.finditer(rest)]
    rest = _WIN_PATH.sub(" ", rest)
    items += [m.group().rstrip(_TRAILING) for m in _PATH.finditer(rest)]
    rest = _PATH.sub(" ", rest)
    items += [m.group().rstrip(_TRAILING) for m in _RELATIVE.finditer(rest)
              if not _NAMED_FOLDER.search(m.group())]
    return tuple(dict.fromkeys(item.strip() for item in items if item.strip(_TRAILING + " ")))


# A commit hash or other hex id (7 to 64 hex digits, a digit and a letter among them),
# and a UUID: named in prose, still exact, and as easy for a model to make up.
_HEX_ID = re.compile(r"(?<![\w-])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,64}(?![\w-])",
                     re.IGNORECASE)
_UUID = re.compile(r"(?<![\w-])[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}(?![\w-])",
                   re.IGNORECASE)


def quoted_ids(recap: str) -> tuple[str, ...]:
    """The hex ids and UUIDs that ``recap`` names in its prose (outside the items of
    :func:`quoted_items`).

    >>> quoted_ids("Reverted 3f9a2c7 (see `git show 9e1d0aa`); added a decade of logs.")
    ('3f9a2c7',)
    """
    prose = _prose(recap)
    return tuple(dict.fromkeys([*_UUID.findall(prose), *_HEX_ID.findall(prose)]))


def _unticked(recap: str) -> str:
    return _TICKED.sub(" ", _FENCE.sub(" ", recap))


def _prose(recap: str) -> str:
    """``recap`` without the items of :func:`quoted_items`."""
    return _RELATIVE.sub(" ", _PATH.sub(" ", _WIN_PATH.sub(" ", _URL.sub(" ", _unticked(recap)))))


def _is_word(char: str) -> bool:
    return char == "_" or (char.isascii() and char.isalnum())


_JOINS = "/-.~@+%*"
"""Characters that join what stands on their two sides into one path or argument:
``/var/lib/docker`` followed by ``/tmp`` is another path, ``feature`` by ``-branch``
another branch. ``:`` and ``=`` separate: ``src/app.py:42:`` (a compiler's or grep's line)
and ``pgdata:/var/lib/postgresql/data`` or ``--data-root=/var/lib/docker`` hold the path
whole. ``@`` before a version separates too: ``lodash@4.17.21`` names the package
``lodash`` (the version is checked when quoted), while ``deploy@prod`` is not ``deploy``."""


def _joined(held: str, at: int) -> bool:
    """Does the text at ``at`` go on the word just before it: a word character, or a
    joining character with a word (or another path step) right after it? A sentence's
    full stop, a closing backtick or a trailing slash end it."""
    char = held[at:at + 1]
    if not char or _is_word(char):
        return bool(char)
    following = held[at + 1:at + 3]
    if char == "@" and following.lstrip("^~")[:1].isdigit():
        return False
    following = following[:1]
    return char in _JOINS and bool(following) and (_is_word(following) or following in "/~*-")


def _holds(held: str, item: str, *, whole_end: bool = True) -> bool:
    """Does ``held`` hold ``item`` as whole words, its end not going on (``whole_end``)?

    A substring is not enough: `docker network cre` is in ``docker network create``, and
    says another command; so is `sudo rm -rf /var/lib/docker` in ``sudo rm -rf
    /var/lib/docker/tmp/cache``, and `/lib/docker` in ``/var/lib/docker``. A short hash may
    stand for a longer one (``whole_end=False``).

    >>> _holds("ran rm -rf /var/lib/docker/tmp/cache.", "rm -rf /var/lib/docker")
    False
    >>> _holds("ran `rm -rf /var/lib/docker/`.", "rm -rf /var/lib/docker")
    True
    """
    start = held.find(item)
    while start >= 0:
        end = start + len(item)
        before = held[start - 1] if start else ""
        glued = _is_word(before) or (not _is_word(item[0]) and before in _JOINS and before != "")
        if not glued and (not whole_end or not _joined(held, end)):
            return True
        start = held.find(item, start + 1)
    return False


def unquoted(recap: str, transcript: str) -> tuple[str, ...]:
    """The items of :func:`quoted_items` and :func:`quoted_ids`, and what the prose states
    as exact (:mod:`.claims`), that ``transcript`` does not hold, each as whole words (an
    id may be the start of a longer one, a number stands apart from other digits).

    >>> unquoted("Ran `docker network cre` at 3f9a2c7.", "$ docker network create x  3f9a2c7e1")
    ('docker network cre',)
    """
    held = _comparable(transcript)
    prose = _prose(recap)
    exact = [item for item in [*quoted_items(recap), *prose_words(prose)]
             if not _holds(held, _comparable(item))]
    ids = [item for item in quoted_ids(recap)
           if not _holds(held, _comparable(item), whole_end=False)]
    numbers = [number for number in prose_numbers(prose) if not holds_number(held, number)]
    numbers += [v for v in at_versions(prose) if not holds_number(held, v, prefix=True)]
    said = prose_commands(_unticked(recap).translate(_QUOTES))
    lines = "\n".join(map(_comparable, transcript.splitlines())) if said else ""
    commands = [tokens for tokens in map(str.split, said)
                if not _command_held(held, lines, tokens)]
    return tuple(dict.fromkeys([*exact, *ids, *numbers, *map(" ".join, commands)]))


def _command_held(held: str, lines: str, tokens: list[str]) -> bool:
    """Does ``held`` hold the command a recap's prose says was run: all its ``tokens``, or
    a start after which the sentence goes on (:func:`.claims.ends_in_prose`), or a start
    the session ran as a whole command (``lines``: the transcript line by line) followed by
    a plain word ("ran npm test showing 3 failures", "... 3 times")?"""
    if not _holds(held, _comparable(tokens[0])):
        return False
    count = 1
    while count < len(tokens) and _holds(held, _comparable(" ".join(tokens[:count + 1]))):
        count += 1
    if count == len(tokens) or ends_in_prose(tokens, count):
        return True
    # Where the session's command went on ("kubectl delete namespace dev"), a plain word
    # in its place ("... namespace staging") is an argument it never used.
    return count >= 2 and _PLAIN.fullmatch(tokens[count]) is not None and _ends_a_command(
        lines, _comparable(" ".join(tokens[:count])))


_PLAIN = re.compile(r"[A-Za-z]+|\d+")


def _ends_a_command(lines: str, start: str) -> bool:
    """Does a line of ``lines`` hold ``start`` as a whole command, nothing after it but the
    end of the line, a quotation mark or what chains another (``;``, ``&&``, ``|``)?

    >>> _ends_a_command("$ npm test", "npm test"), _ends_a_command("$ npm test x", "npm test")
    (True, False)
    """
    # No lookbehind in the pattern: its literal start lets re skip ahead fast; the
    # character before is checked here (as _holds does) for the few lines that end so.
    ends = re.finditer(rf"{re.escape(start)}[ \t]*(?:$|[;&|')`])", lines, re.MULTILINE)
    return any(not _is_word(lines[m.start() - 1:m.start()]) for m in ends)


_ECHO = re.compile(r"<<<TRANSCRIPT [0-9a-f]{12}|TRANSCRIPT [0-9a-f]{12}>>>"
                   r"|^\[#\d+\] \[(?:USER|ASSISTANT|SYSTEM|TOOL)", re.MULTILINE)


# How refusals open, in the languages harkback answers in; a recap opens with what the
# session did. Only a short answer counts: a refusal is a sentence or two.
_REFUSAL = re.compile(
    r"(?:i'?m sorry|i am sorry|sorry|i apologi[sz]e)\b.{0,40}?"
    r"\b(?:can(?:no|')t|unable|not able)\b|i (?:can(?:no|')t|am unable to|won'?t) "
    r"(?:help|assist|provide|summari[sz]e|do that|comply)|as an ai\b"
    r"|^(?:抱歉|对不起|很抱歉|申し訳|すみません|죄송)", re.IGNORECASE)
REFUSAL_CHARS = 400
"""Longer answers are never read as a refusal."""


def refused(recap: str) -> bool:
    """True when ``recap`` is a short refusal rather than a recap.

    >>> refused("I'm sorry, but I can't help with that."), refused("I’m sorry, I can’t.")
    (True, True)
    >>> refused("Sorry for the noise: the user fixed the nginx timeout with proxy_read_timeout.")
    False
    """
    text = recap.strip().replace("\u2019", "'")  # I’m, can’t: as models often write them
    return len(text) <= REFUSAL_CHARS and _REFUSAL.match(text) is not None


ECHO_FRAGMENT = 24
"""A piece of a recap this long or longer, found in the instructions, was copied from them."""
_FRAGMENT = re.compile(r"(?<=[.;!?])\s+|\n")


def repeats_instructions(recap: str, instructions: str) -> bool:
    """Is at least half of ``recap`` sentences or lines copied from ``instructions``
    (the prompt without the transcript)? A small model answers with its system prompt.

    >>> rules = "You recall past work sessions. Use only what the transcript says."
    >>> repeats_instructions("You recall past work sessions.", rules)
    True
    >>> repeats_instructions("The user raised proxy_read_timeout to 300s in nginx. "
    ...                      "Use only what the transcript says.", rules)
    False
    """
    told = _folded(instructions)
    pieces = [_folded(p).strip("-*• ") for p in _FRAGMENT.split(recap)]
    copied = sum(len(p) for p in pieces if len(p) >= ECHO_FRAGMENT and p in told)
    return copied > 0 and 2 * copied >= sum(len(p) for p in pieces)


def recap_problem(recap: str, transcript: str, instructions: str = "") -> str | None:
    """Why ``recap`` cannot stand for a summary of ``transcript``, or None when it can
    (``instructions``: what the model was told besides the transcript).

    >>> recap_problem("<<<TRANSCRIPT 0123456789ab\\n[#1] [USER]: hi", "[USER]: hi")
    'the model repeated the transcript instead of a recap'
    >>> recap_problem("The user said hi.", "[USER]: hi") is None
    True
    """
    # Checked as the model wrote it: a code line "user: root" quoted ("> user: root",
    # reply.read_reply) is not in the transcript, and the grounded recap was refused.
    recap = unquoted_turn_lines(recap)
    if _ECHO.search(recap):
        return "the model repeated the transcript instead of a recap"
    if instructions and repeats_instructions(recap, instructions):
        return "the model repeated its instructions instead of a recap"
    if refused(recap):
        return "the model refused to recap the session"
    invented = unquoted(recap, transcript)
    if invented:  # the recap claims as exact what the session never said
        return (f"the model's recap quotes what the transcript does not hold: "
                f"{', '.join(invented[:3])}")
    return None
