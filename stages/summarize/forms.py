"""Other spellings of what a recap quotes that name what the session named: not inventions.

A model copying a path or an address writes it as people do: ``./src/app.py`` for the
session's ``src/app.py``, ``~/srv/db`` for ``/home/u/srv/db``, ``redis://localhost:6379``
for "Redis on localhost:6379", ``https://github.com/org/repo.git`` for the remote
``git@github.com:org/repo.git``, one path whole where a tool's output wrapped it after a
slash. Each names what the session named; refused, the recap fell back to the extractive
summary.

>>> item_forms("./src/app.py"), item_forms("ssh://git@github.com/org/repo.git")
(('./src/app.py', 'src/app.py'), ('ssh://git@github.com/org/repo.git', \
'git@github.com/org/repo.git', 'git@github.com:org/repo.git'))
"""

from __future__ import annotations

import re

_WRAPPED = re.compile(r"(?<=[A-Za-z0-9_.-]/)[ \t]*\r?\n[ \t]*(?=[A-Za-z0-9_.-])")
_HOME = re.compile(r"(?<![a-z0-9_.~-])(?:/home/[a-z0-9_.-]+|/users/[a-z0-9_.-]+|/root)(?=/)")
# Two letters at least: C:/Users is a drive, not a scheme.
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+://")
_HOST_PATH = re.compile(r"([^/:]+)/(?=[^/])")  # the first step of a path after the host


def unwrapped(transcript: str) -> str:
    """``transcript`` with each path that a line's end split after a slash made whole.

    >>> unwrapped("Wrote api/lumen/billing/\\ninvoices.py; src/ and\\ntests/")
    'Wrote api/lumen/billing/invoices.py; src/ and\\ntests/'
    """
    return _WRAPPED.sub("", transcript)


def home_as_tilde(held: str) -> str:
    """``held`` with each home folder (``/home/u``, ``/Users/me``, ``/root``) written ``~``.

    >>> home_as_tilde("/home/u/srv/db and c:/users/me/proj and /srv/home/x")
    '~/srv/db and c:~/proj and /srv/home/x'
    """
    return _HOME.sub("~", held)


def item_forms(item: str) -> tuple[str, ...]:
    """``item`` and the spellings that name the same: without a leading ``./``; a URL's
    address without its scheme (``localhost:6379``, ``example.com/docs``), and as git's
    ``host:path`` (``git@github.com:org/repo.git``)."""
    if item.startswith(("./", ".\\")):
        return item, item[2:]
    scheme = _SCHEME.match(item)
    if scheme is None:
        return (item,)
    address = item[scheme.end():]
    return item, address, _HOST_PATH.sub(r"\1:", address, count=1)


def names_both(held: str, pair: str) -> bool:
    """Does ``held`` name both sides of ``pair`` ("typescript/tsconfig.json" in prose), and
    neither as a folder? A recap joining two names the session holds pairs them
    ("TypeScript/tsconfig.json" as "Express/Node.js"); one putting a file in a folder of
    the session's (``lumen/app.py``) names a path, and that path must be held.

    >>> names_both("the typescript build reads tsconfig.json", "typescript/tsconfig.json")
    True
    >>> names_both("moved it to lumen/ and src/app.py", "lumen/app.py")
    False
    """
    return all(re.search(rf"(?<![a-z0-9_./~-]){re.escape(side)}(?![a-z0-9_/-]|\.[a-z0-9])",
                         held) for side in pair.split("/"))


def folder_and_rest(path: str) -> tuple[tuple[str, str], ...]:
    """The ways to cut a rooted ``path`` (compared form) into a folder and a relative
    path of two steps or more in it: a session naming "api/lumen/billing.py in
    ~/code/lumen" named ``~/code/lumen/api/lumen/billing.py`` (a bare ``billing.py`` may be
    another folder's). None for what holds a space (a command is held whole).

    >>> folder_and_rest("~/code/lumen/api/billing.py")
    (('~/code', 'lumen/api/billing.py'), ('~/code/lumen', 'api/billing.py'))
    """
    if not path.startswith(("/", "~/")) or any(char.isspace() for char in path):
        return ()
    cuts = [at for at, char in enumerate(path) if char == "/" and at > 1]
    return tuple((path[:at], path[at + 1:]) for at in cuts
                 if "/" in path[at + 1:].strip("/"))

