"""Whether a transcript line carries a detail worth recalling: a command, a file path, a
URL or an error message (the extractive summary keeps such lines near its picks).

Each kind is a regular expression (:data:`COMMAND`, :data:`PATH`, :data:`URL`,
:data:`ERROR`); :func:`carries_detail` says whether any of them matches a line, but runs
a pattern, or one alternative of it, only where a string it cannot match without is
present: tried at every position of a line, the error pattern cost ~15 us a line and the
path pattern ~7, most of a summary's time on a store where most lines are asked.

>>> [carries_detail(s) for s in ("run `make test`", "edit /etc/nginx/nginx.conf",
...  "see https://example.org", "ECONNREFUSED on 5432", "sounds good to me")]
[True, True, True, True, False]
"""

from __future__ import annotations

import re

_TOOLS = ("docker|docker-compose|kubectl|git|npm|npx|yarn|pnpm|pip3?|python3?|curl|wget|ssh|"
          "scp|rsync|sudo|apt|apt-get|brew|systemctl|journalctl|nginx|cargo|psql|sqlite3|grep|"
          "sed|awk|chmod|chown|crontab|pytest|terraform|helm|gcloud|aws|make|uv|poetry")
# A tool name counts only at the start of a line: in prose ("the nginx proxy") it is no command.
COMMAND = re.compile(rf"(?:^|\s)\$ \S|`[^`\n]+`|^(?:sudo +)?(?:{_TOOLS}) +-{{0,2}}[a-z]")
_EXTENSIONS = ("py|js|ts|tsx|jsx|json|ya?ml|toml|conf|cfg|ini|sh|bash|md|txt|env|sql|go|rs|"
               "java|rb|php|html|css|lock|log|service|csv|xml")
# The path pattern's three alternatives, each also on its own (see _has_path).
_ROOTED = r"(?<![\w/])(?:~|\.{1,2})?/[\w.-]+/[\w./-]*"
_NAMED = rf"\b[\w-]+(?:/[\w.-]+)*\.(?:{_EXTENSIONS})\b"
_BUILD_FILE = r"\b(?:Dockerfile|Makefile)\b"
PATH = re.compile(f"{_ROOTED}|{_NAMED}|{_BUILD_FILE}")
URL = re.compile(r"\bhttps?://\S+|\bwww\.\S+")
# The error pattern's alternatives, each with the piece of a lower-cased line it needs.
_ERROR_ANYWHERE = ("error", "exception")
_ERROR_WORDS = (("traceback", r"\btraceback\b"), ("fail", r"\bfail(?:ed|s|ure|ing)?\b"),
                ("denied", r"\bdenied\b"), ("refused", r"\brefused\b"),
                ("timed out", r"\btimed out\b"), ("timeout", r"\btimeout\b"),
                ("fatal", r"\bfatal\b"), ("panic", r"\bpanic\b"),
                ("not found", r"\bnot found\b"))
_ERROR_CODES = ("ECONNREFUSED", "ECONNRESET", "EACCES", "ENOENT", "EPERM", "EADDRINUSE",
                "ETIMEDOUT")
_CODE = r"\bE(?:CONNREFUSED|CONNRESET|ACCES|NOENT|PERM|ADDRINUSE|TIMEDOUT)\b"
ERROR = re.compile("(?i:" + "|".join((*_ERROR_ANYWHERE, *(p for _, p in _ERROR_WORDS)))
                   + ")|" + _CODE)

_ROOTED_RE = re.compile(_ROOTED)
_NAMED_RE = re.compile(_NAMED)
_BUILD_FILE_RE = re.compile(_BUILD_FILE)
_DOT_EXTENSION = re.compile(rf"\.(?:{_EXTENSIONS})")
_WORD_RES = tuple((word, re.compile(f"(?i:{pattern})")) for word, pattern in _ERROR_WORDS)
_CODE_RE = re.compile(_CODE)
CASE_TWINS = re.compile("[\u0130\u0131\u017f\u212a]")
"""İ, ı, ſ and the Kelvin sign K: the only characters beyond ASCII that a case-insensitive
pattern matches to an ASCII letter, or that lower-case to one (a test checks every
character). On a line without them, an ASCII word matches case-insensitively exactly
where the lower-cased line holds it."""


def carries_detail(line: str) -> bool:
    """Does a line hold a command, a file path, a URL or an error message (does any of
    the four patterns match it)?

    >>> carries_detail("TypeError: cannot read property"), carries_detail("it failed"), \
carries_detail("a failsafe")
    (True, True, False)
    """
    # The cheapest first: any one that matches decides.
    if _has_error(line):
        return True
    if ("http" in line or "www." in line) and URL.search(line):
        return True
    if (("$ " in line or "`" in line) and COMMAND.search(line)) or COMMAND.match(line):
        return True
    return _has_path(line)


def _has_error(line: str) -> bool:
    # ERROR.search(line), one alternative at a time, each only where the lower-cased line
    # holds its word: "error" and "exception" count anywhere, so holding them decides.
    if not line.isascii() and CASE_TWINS.search(line) is not None:
        return ERROR.search(line) is not None
    low = line.lower()
    if "error" in low or "exception" in low:
        return True
    for word, pattern in _WORD_RES:
        if word in low and pattern.search(line) is not None:
            return True
    return ("E" in line and any(code in line for code in _ERROR_CODES)
            and _CODE_RE.search(line) is not None)


def _has_path(line: str) -> bool:
    # PATH.search(line), one alternative at a time, each only where the string it needs
    # is present: two slashes, a dot and an extension, or the name of a build file.
    if line.count("/") >= 2 and _ROOTED_RE.search(line) is not None:
        return True
    if ("Dockerfile" in line or "Makefile" in line) and _BUILD_FILE_RE.search(line) is not None:
        return True
    return _DOT_EXTENSION.search(line) is not None and _NAMED_RE.search(line) is not None
