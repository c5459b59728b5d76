"""Developers' abbreviations and the words they stand for.

A question says "the prod db"; the session says "the production database". No stemmer
joins the two, so the common short forms of a developer's vocabulary are listed here,
each with what it abbreviates, and the ranker searches a short form's expansions as more
forms of the same word (one IDF for all of them). Only the short form widens: a
question about "production" does not look for "prod", which also stands inside file
names and flags (``prod-anon.dump``) meaning something narrower. Two names of one thing
(postgres, postgresql) widen both ways. Short forms with another common meaning are left
out: "ts" is also a timestamp, "tf" TensorFlow, "var" the ``/var`` of a path.

>>> expansions("prod"), expansions("postgresql"), expansions("docker")
(('production',), ('postgres',), ())
"""

from __future__ import annotations

from functools import cache

_SHORT_FORMS = """
prod production | db database | dbs databases | pg postgres postgresql
k8s kubernetes | js javascript | repo repository | repos repositories
auth authentication authorization | config configuration | configs configurations
env environment | envs environments | perm permission | perms permissions
dep dependency | deps dependencies | dir directory | dirs directories
pkg package | pkgs packages | param parameter | params parameters
arg argument | args arguments | impl implementation
msg message | msgs messages | req request | reqs requests | resp response
infra infrastructure | gh github
"""

_SAME_THING = """
postgres postgresql | mongo mongodb | kube kubernetes
"""


@cache
def short_forms() -> dict[str, tuple[str, ...]]:
    """Every listed short form, and each name of one thing, with what it stands for."""
    table: dict[str, tuple[str, ...]] = {}
    for group in _groups(_SHORT_FORMS):
        short, *long = group
        table[short] = tuple(long)
    for names in _groups(_SAME_THING):
        for name in names:
            others = tuple(n for n in names if n != name)
            table[name] = tuple(dict.fromkeys((*table.get(name, ()), *others)))
    return table


def _groups(text: str) -> list[list[str]]:
    # Groups are separated by "|" or a line's end.
    return [part.split() for line in text.splitlines() for part in line.split("|")
            if part.split()]


def expansions(word: str) -> tuple[str, ...]:
    """What ``word`` (a lower-case token) stands for, or () when it is no listed short form."""
    return short_forms().get(word, ())
