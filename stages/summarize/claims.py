"""What a recap's prose states as exact without quoting it: a command it says was run,
a ``--flag``, a ``name@version`` or ``user@host``, a version or address, a port, an
exit or HTTP status, an errno or exception name.

A model told to quote exact things in backticks still writes "I ran docker compose up -d"
or "pinned lodash@4.17.21 and retried with --force" in plain words; these are as easy to
make up as a quoted command (:mod:`.grounding` checks both against the transcript). Only
shapes that prose rarely takes by chance are read: a command after a word saying it ran
(``ran``, ``executed``, 运行) and opening with a known program, a flag of two dashes, a
number with two dots or more, a number after ``port``/``exit code``/``HTTP``.

>>> prose_commands("The user ran docker compose up -d again, then it worked.")
('docker compose up -d',)
>>> prose_words("Pinned lodash@4.17.21, retried with --force on port 8080.")
('--force', 'lodash')
>>> prose_numbers("Pinned lodash@4.17.21, retried with --force on port 8080.")
('4.17.21', '8080')
"""

from __future__ import annotations

import re

# Programs an agent session runs; a command in prose must open with one, so "ran the
# tests", "ran into a CORS error" or "ran out of memory" are not read as commands.
# Programs whose name is also a common English word (kind, service, source, touch,
# export, bundle) are left out: "ran source code checks" is prose.
HEADS = frozenset("""
    docker docker-compose podman kubectl helm minikube git gh npm npx yarn pnpm bun
    node deno pip pip3 pipx uv poetry conda python python3 pytest tox ruff mypy black
    cargo rustc rustup go make cmake gcc clang mvn gradle dotnet apt apt-get brew dnf yum
    pacman systemctl journalctl sudo rm mv cp mkdir chmod chown ln grep rg find sed awk
    curl wget ssh scp rsync tar unzip psql mysql sqlite3 redis-cli terraform ansible aws
    gcloud az nginx kill pkill killall bash sh zsh pwsh powershell openssl dig ping tsc
    eslint prettier vite webpack uvicorn gunicorn alembic pm2 php ruby rails java
    javac""".split())
_RAN = re.compile(r"(?<![\w-])(?:re-?)?(?:ran|run|runs|running|executed|executes|executing"
                  r"|execute|typed|invoked)\b[ \t]*:?"
                  r"|(?:运行|执行|運行|執行|実行)(?:了|し(?:た|て)?)?[:：]?"
                  r"|(?<!\S)(?:&&|\|\|)(?=[ \t])", re.IGNORECASE)  # "ran a && b" ran b too
# A token's printable ASCII, read no further than a command's word can be long: a word
# in another script (运行了测试…) or an overlong run ends it without being scanned to its end,
# and so does a line's end ("1. ran make\n2. ran ..." is no "make 2").
_ASCII_TOKEN = re.compile(r"[^\S\n]*+([\x21-\x7e]{0,200}+)(?![\x21-\x7e])")
# Words where the sentence takes over again from the command it named.
_STOP = frozenset("""
    to and then so which that but because after before when while until in on for from
    with without into onto over under at by of the a an it its this these those their
    his her them again twice once first successfully locally manually instead too also
    as there here now later earlier inside within against or if each every all both
    via using through during like just only plus per where whose since across unless
    though although about around behind between
    - -- & && / -> =>""".split())  # ASCII prose's dash and joiners: "ran make -- it passed"
_CLOSING = ".,;:!?)\"'*"  # * closes markdown's bold: ran **make test**
_MOST_TOKENS = 12
_VERSION = re.compile(r"v?\d+(?:\.\d+)*", re.IGNORECASE)
# A verb in the past ("fixed", "showed") goes on the sentence. Words in -ing or -ly, and
# -eed, name a command's target as often (staging, logging, nightly, apply, npm run seed):
# "ran kubectl delete namespace staging" where the session deleted "dev" is invented.
_PROSE_WORD = re.compile(r"[a-z]{2,}(?<!e)ed")
# "ran git commands", "ran the python scripts": the program's name used as an adjective.
_GENERIC = frozenset("""
    command commands script scripts container containers tests checks builds jobs
    migrations queries images processes calls tools version versions code file files
    server servers suite target targets task tasks hooks steps""".split())


def _command_tokens(prose: str, at: int) -> list[str]:
    """The tokens of the command that starts at ``at``, up to where the sentence goes on."""
    tokens: list[str] = []
    while len(tokens) < _MOST_TOKENS:
        match = _ASCII_TOKEN.match(prose, at)
        if match is None:  # an overlong token: no command's word
            break
        head, at = match.group(1), match.end()
        head = head if tokens else head.lstrip("*")
        bare = head.rstrip(_CLOSING)
        if not bare or bare.startswith("(") or (tokens and bare.casefold() in _STOP):
            break
        tokens.append(bare)
        # Punctuation closing a token (not inside it: requirements.txt) or a word in
        # another script glued on ends the command with that token.
        if bare != head or (at < len(prose) and not prose[at].isspace()):
            break
    return tokens


def prose_commands(prose: str) -> tuple[str, ...]:
    """The commands ``prose`` says were run, each opening with a program of :data:`HEADS`
    and at least one word after it.

    >>> prose_commands("运行了 kubectl rollout restart deploy/api 来重启。I ran the tests.")
    ('kubectl rollout restart deploy/api',)
    """
    found = []
    for ran in _RAN.finditer(prose):
        tokens = _command_tokens(prose, ran.end())
        # "runs Python 3.12", "ran node 20": a program's version (a dotted one is checked
        # as a number), not a command.
        if len(tokens) >= 2 and tokens[0].casefold() in HEADS and not _VERSION.fullmatch(
                tokens[1]):
            found.append(" ".join(tokens))
    return tuple(dict.fromkeys(found))


def ends_in_prose(tokens: list[str], held: int) -> bool:
    """When only the first ``held`` of a prose command's ``tokens`` are in the transcript:
    does the rest read as the sentence going on ("ran pytest -x fixed it", "ran python
    scripts"), not as an argument the session never used ("ran git push origin main")?

    >>> ends_in_prose(["pytest", "-x", "fixed"], 2), ends_in_prose(["git", "push", "main"], 2)
    (True, False)
    >>> ends_in_prose(["kubectl", "delete", "ns", "staging"], 3)
    False
    >>> ends_in_prose(["python", "scripts"], 1), ends_in_prose(["git", "rebase"], 1)
    (True, False)
    """
    word = tokens[held]
    return word in _GENERIC or (held >= 2 and _PROSE_WORD.fullmatch(word) is not None)


_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*", re.IGNORECASE)
# name@version (the name is checked here, the version as a number), user@host, an email,
# an npm scope (@types/node).
_AT = re.compile(r"(?<![\w@./+-])(@?[A-Za-z0-9_][A-Za-z0-9_.+-]*(?:/[A-Za-z0-9_.-]+)?)"
                 r"@([\^~]?[0-9](?:[0-9A-Za-z.+-]*[0-9A-Za-z])?|[A-Za-z0-9][A-Za-z0-9_.-]*"
                 r"[A-Za-z0-9])|(?<![\w@./+-])@[A-Za-z0-9_][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+")
_ERRNO = frozenset("""
    enoent eacces eperm eaddrinuse eaddrnotavail econnrefused econnreset econnaborted
    etimedout eexist enotdir eisdir enospc emfile epipe eai_again enotfound ehostunreach
    enetunreach enotempty ebusy erofs einval eagain eloop ebadf""".split())
_ERRNAME = re.compile(r"(?<![\w-])(?:E[A-Z]{2,11}(?:_[A-Z]+)?|ERR_[A-Z_]{3,40}[A-Z])(?![\w-])")
# An exception's class name (ModuleNotFoundError, NullPointerException); a qualified one
# (asyncio.TimeoutError) is left alone, as the session may have named it unqualified.
_EXCEPTION = re.compile(r"(?<![\w.-])[A-Z][A-Za-z0-9]*(?:Error|Exception)(?![\w-])")


def prose_words(prose: str) -> tuple[str, ...]:
    """The flags, ``@`` names, errno names and exception names ``prose`` names, each to be
    found whole.

    >>> prose_words("Logged in as deploy@prod.example.com; npm said EACCES, not ENOENT.")
    ('deploy@prod.example.com', 'EACCES', 'ENOENT')
    >>> prose_words("It raised ModuleNotFoundError (not asyncio.TimeoutError); Error: none.")
    ('ModuleNotFoundError',)
    """
    found = _FLAG.findall(prose)
    for match in _AT.finditer(prose):
        version = match.group(2)
        is_version = version is not None and version.lstrip("^~")[:1].isdigit()
        found.append(match.group(1) if is_version else match.group().rstrip("."))
    found += [name for name in _ERRNAME.findall(prose)
              if name.startswith("ERR_") or name.casefold() in _ERRNO]
    found += _EXCEPTION.findall(prose)
    return tuple(dict.fromkeys(found))


def at_versions(prose: str) -> tuple[str, ...]:
    """The versions of ``name@version`` with fewer than two dots (:func:`prose_numbers`
    reads the others), each to be found as a number or the start of a longer version.

    >>> at_versions("Pinned react@^18 and lodash@4.17.21; mailed ops@example.com.")
    ('18',)
    """
    versions = [match.group(2).lstrip("^~") for match in _AT.finditer(prose)
                if match.group(2) and match.group(2).lstrip("^~")[:1].isdigit()]
    return tuple(dict.fromkeys(v for v in versions if v.count(".") < 2))


_DOTTED = re.compile(r"(?<![\w.])v?(\d+(?:\.\d+){2,})(?![\w]|\.\d)")
# A date in the recap's own words: 05.12.2026 or 05.12.26 as German or Russian write it,
# 2026.12.05 as Korean, Chinese or Japanese do.
_DATE = re.compile(r"\d{1,2}\.\d{1,2}\.\d{4}|(?:0[1-9]|[12]\d|3[01])\.(?:0[1-9]|1[0-2])\.\d\d"
                   r"|(?:19|20)\d\d\.(?:0?[1-9]|1[0-2])\.(?:0?[1-9]|[12]\d|3[01])")
_AFTER_WORD = re.compile(
    r"(?<![\w-])(?:ports?|(?:localhost|\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:]*\]):"
    r"|exit(?:ed)?(?: with)?(?: code| status)|status code|error code|errno|HTTP(?: status)?"
    r"|status(?=[ \t]*:?[ \t]*[1-5]\d\d(?!\d)))[ \t]*:?[ \t]*(\d{2,5})(?!\w|\.\d)",
    re.IGNORECASE)


def prose_numbers(prose: str) -> tuple[str, ...]:
    """The versions and addresses (two dots or more), ports and status codes ``prose``
    names, each to be found as a number of its own.

    >>> prose_numbers("Node 20.11.1 on 10.0.0.5; the build exited with code 137 (HTTP 502).")
    ('20.11.1', '10.0.0.5', '137', '502')
    >>> prose_numbers("Served on 127.0.0.1:8000, status 503; 12 pods.")
    ('127.0.0.1', '8000', '503')
    >>> prose_numbers("Am 05.12.2026 lief Version 1.2.3.")
    ('1.2.3',)
    """
    numbers = [m.group(1) for m in _DOTTED.finditer(prose) if not _DATE.fullmatch(m.group(1))]
    numbers += [m.group(1) for m in _AFTER_WORD.finditer(prose)]
    return tuple(dict.fromkeys(numbers))


def holds_number(held: str, number: str, *, prefix: bool = False) -> bool:
    """Does ``held`` hold ``number`` as a number of its own (no digit, or dot and digit,
    either side), or as the start of a longer version (``prefix``: 18 of 18.2.0)?

    >>> holds_number("listening on 0.0.0.0:8080", "8080"), holds_number("v4.17.210", "4.17.21")
    (True, False)
    >>> holds_number("react@18.2.0", "18", prefix=True), holds_number("react@18.2.0", "1")
    (True, False)
    """
    start = held.find(number)
    while start >= 0:
        end = start + len(number)
        before, after = held[max(start - 2, 0):start], held[end:end + 2]
        glued_before = before[-1:].isdigit() or (before[-1:] == "." and before[:1].isdigit())
        glued_after = after[:1].isdigit() or (
            not prefix and after[:1] == "." and after[1:].isdigit())
        if not glued_before and not glued_after:
            return True
        start = held.find(number, start + 1)
    return False
