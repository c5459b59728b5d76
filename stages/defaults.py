"""The defaults the command line names in its help, in a module that imports nothing.

Each value belongs to a stage and is importable from there too
(:mod:`~harkback.stages.request`, :mod:`~harkback.stages.embedding`,
:mod:`~harkback.stages.match.rankers`, :mod:`~harkback.stages.summarize.model`); it lives
here so that ``harkback --help`` and ``--version`` build their parser without loading the
stages.

>>> DEFAULT_LIMIT <= MAX_LIMIT, DEFAULT_RANKER, EMBED_ROLES
(True, 'lexical', ('user',))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harkback.stages.records import Role

MAX_LIMIT = 10
"""The most sessions one recall returns."""

DEFAULT_LIMIT = 3
"""Sessions a recall returns unless asked for more (the CLI, the facade, the agent tool)."""

EMBED_ROLES: tuple[Role, ...] = ("user",)
"""The roles whose messages get a vector unless asked otherwise."""

DEFAULT_RANKER = "lexical"
"""The match stage when none is named and no embedder is configured."""

DEADLINE_S = 60.0
"""Default time for all model summaries of one recall together."""

PAGE_LIMIT = 20
"""Messages per page of ``harkback show`` unless asked otherwise."""

MAX_PAGE_LIMIT = 200
"""The largest page: a long tool output times 200 is already a lot to print."""

EMBED_BATCH = 64
"""Messages per embedder call and per write of ``harkback embed`` and an import's embedding."""
