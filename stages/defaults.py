"""The defaults the command line names in its help, in a module that imports nothing.

Each value belongs to a stage and is importable from there too
(:mod:`~harkback.stages.request`, :mod:`~harkback.stages.embedding`,
:mod:`~harkback.stages.match.rankers`, :mod:`~harkback.stages.summarize.model`); it lives
here so that ``harkback --help`` and ``--version`` build their parser, and ``harkback mcp``
lists its tools, without loading the stages.

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
"""Messages per page of ``harkback show`` (and of the library's ``read_session``) unless
asked otherwise: a person's page, read on a terminal."""

TOOL_PAGE_LIMIT = 50
"""Messages per page of the MCP ``read_session`` tool unless asked otherwise: an agent's
page, each page a call of its own (and bounded by :data:`PAGE_CHARS` however many)."""

MAX_PAGE_LIMIT = 200
"""The largest page, of ``show`` and of ``read_session``: a long tool output times 200 is
already a lot to print."""

EMBED_BATCH = 64
"""Messages per embedder call and per write of ``harkback embed`` and an import's embedding."""

SUMMARIZER_NAMES = ("extractive", "llm", "none", "raw")
"""The summarizers by name (:data:`~harkback.stages.summarize.summarizers.SUMMARIZERS`)."""

MESSAGE_CHARS = 20_000
"""The most of one message's text, and of each of its tool calls' arguments, that
``read_session`` returns: the middle of a longer one is left out, in its place a note of
how many characters and of the command that prints the message whole
(:func:`~harkback.pipeline.answer_bounds.bounded`).

Agents' MCP clients cap a tool's answer (Claude Code at 25,000 tokens unless
``MAX_MCP_OUTPUT_TOKENS`` says otherwise, about 100,000 characters of English), and the
server sends each answer twice, as text and as structured content: a 14 MB message gave a
28 MB answer that no client took. 20,000 characters, doubled, still fit under that cap
with room for short neighbours, and keep most pasted logs and files whole."""

PAGE_CHARS = 45_000
"""The most characters of messages (as JSON) one ``read_session`` page holds: a page of
long messages ends early (:func:`~harkback.pipeline.answer_bounds.within_page`), at least
one message always, and its ``next_offset`` goes on from there. Doubled (text and
structured content), a page stays under Claude Code's default cap: 200 messages of 20,000
characters made 8 MB."""
