"""Flags, identifiers, versions and file names in a text, as the index splits them.

``--no-cache`` is indexed as the tokens "no" and "cache" side by side; searched as loose
words it would be "cache" alone ("no" is a stopword). The query planner searches each such
word also as the phrase of its parts (:func:`~harkback.stages.query.parse_query`).

>>> code_words("why --no-cache? DATABASE_URL, Python 3.12, re-run")
(('no', 'cache'), ('database', 'url'), ('3', '12'))
"""

from __future__ import annotations

import re

from harkback.stages.text.tokens import tokens

_JOINED = re.compile(r"(?<![\w-])-{0,2}[A-Za-z0-9]+(?:[-_.][A-Za-z0-9]+)+")
"""A word joined by hyphens, underscores or dots."""

_CODE_LIKE = re.compile(r"^-|[_.0-9]")
"""What makes a joined word a flag, an identifier, a version or a file name (``--no-cache``,
``DATABASE_URL``, ``3.12``, ``daemon.json``) rather than an English compound ("front-end",
which stays loose words)."""


def code_words(text: str, *, max_tokens: int = 16) -> tuple[tuple[str, ...], ...]:
    """The tokens of each flag, identifier, version or file name of ``text`` (at most
    ``max_tokens`` of each), in order, each once; a word of one token is left out."""
    found = (tokens(m.group())[:max_tokens] for m in _JOINED.finditer(text)
             if _CODE_LIKE.search(m.group()))
    return tuple(dict.fromkeys(t for t in found if len(t) > 1))
