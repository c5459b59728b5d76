"""Claude Code ``summary`` lines naming a message of another file: that session's title.

A summary's ``leafUuid`` is the last message of the conversation it sums up, and a
resumed session's file often opens with summaries of *other* sessions' conversations
(anthropics/claude-code#2597). So a session with no title of its own (no
``custom-title``, ``ai-title`` or summary of its own messages) takes the latest summary
any file of the folder holds for one of its messages, whichever file is read first.

Each file's mark keeps, in its lineage (:mod:`~harkback.adapters.sources.replays`), what
matching needs without reading the file again (:func:`lineage`): its summaries
(``summaries``), the messages of its session a summary may name (``ends``: the last of
each branch, and any a known summary names; none when the session names itself), and the
title another file's summary gave it (``titled``). Before the changed files are read,
every summary is gathered (:func:`gather`: the marks', and the changed files' summary
lines), and an unchanged file whose title they change is read again (:func:`stale`).
The latest summary is the one in the file written last (its mtime), then the last line.

>>> named = Named.of([((5, "b", 0), "a2", "Old"), ((9, "c", 0), "a2", "New")])
>>> named.best(["a1", "a2"]), named.best(["x"])
('New', '')
>>> from harkback.adapters.sources.replays import marked
>>> said = {"ends": ["a2"], "titled": "Old"}
>>> stale(marked("10:5", json.dumps(said)), named), stale("10:5", named)
(True, False)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from harkback.adapters.sources.replays import SEPARATOR
from harkback.adapters.sources.transcript_lines import MAX_LINE_CHARS
from harkback.stages.imports import Mark

Rank = tuple[int, str, int]
"""When a summary was written: its file's mtime (ns), the file, its place in the file."""


@attrs.frozen
class Named:
    """Every summary's text by the message it names, with its rank (the latest kept)."""

    texts: Mapping[str, tuple[Rank, str]] = attrs.field(factory=dict)

    @classmethod
    def of(cls, summaries: Iterable[tuple[Rank, str, str]]) -> Named:
        """From ``(rank, leaf, text)`` triples: for each leaf, the latest text."""
        texts: dict[str, tuple[Rank, str]] = {}
        for rank, leaf, text in summaries:
            if leaf and text and (leaf not in texts or texts[leaf][0] <= rank):
                texts[leaf] = (rank, text)
        return cls(texts)

    def best(self, uuids: Iterable[str]) -> str:
        """The latest summary naming one of ``uuids`` ("" if none does)."""
        found = [self.texts[u] for u in uuids if u in self.texts]
        return max(found)[1] if found else ""

    def __contains__(self, leaf: object) -> bool:
        return leaf in self.texts


NO_NAMES = Named()


def decided(fingerprint: str) -> dict[str, Any]:
    """What a mark's lineage says ({} when it says nothing that can be read)."""
    _, _, lineage = fingerprint.partition(SEPARATOR)
    try:
        found = json.loads(lineage) if lineage else {}
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _texts(values: object) -> list[str]:
    return [v for v in values if isinstance(v, str)] if isinstance(values, list) else []


def _mtime(fingerprint: str) -> int:
    """The mtime a file's fingerprint (``[incomplete:|gone:]SIZE:MTIME``) holds (0: none)."""
    last = fingerprint.partition(SEPARATOR)[0].rpartition(":")[2]
    return int(last) if last.isdigit() else 0


def gather(marks: Mapping[str, Mark], changed: Sequence[tuple[str, str, Path]],
           scan: Callable[[Path], list[tuple[str, str]]]) -> Named:
    """Every summary of the folder: the marks' (a gone file's too: the title it gave stays)
    but those of the ``changed`` files (``item, fingerprint, path``), read now by ``scan``."""
    reread = {item for item, _, _ in changed}
    found: list[tuple[Rank, str, str]] = []
    for item, mark in marks.items():
        if item in reread:
            continue
        pairs = decided(mark.fingerprint).get("summaries")
        for index, pair in enumerate(pairs if isinstance(pairs, list) else []):
            leaf, text = [*_texts(pair), "", ""][:2]
            found.append(((_mtime(mark.fingerprint), item, index), leaf, text))
    for item, fingerprint, path in changed:
        found += [((_mtime(fingerprint), item, index), leaf, text)
                  for index, (leaf, text) in enumerate(scan(path))]
    return Named.of(found)


def scan(path: Path) -> list[tuple[str, str]]:
    """The ``(leafUuid, summary)`` of each summary line of a Claude Code file, read fast
    (other lines are not parsed); a line or file that cannot be read gives none (reading
    the file names it). A line longer than ``MAX_LINE_CHARS`` bytes is passed over in
    pieces, as reading the file passes it over: a 2 GB file with no newline took 4 GB.

    >>> scan(Path("/nowhere/t.jsonl"))
    []
    """
    found: list[tuple[str, str]] = []
    try:
        with open(path, "rb") as lines:
            while raw := lines.readline(MAX_LINE_CHARS):
                if len(raw) == MAX_LINE_CHARS and not raw.endswith(b"\n"):
                    while (piece := lines.readline(MAX_LINE_CHARS)) and piece[-1:] != b"\n":
                        pass
                    continue
                if b'"leafUuid"' not in raw:
                    continue
                try:
                    line = json.loads(raw)
                except (ValueError, RecursionError):  # nested deeper than Python reads
                    continue
                if isinstance(line, dict) and line.get("type") == "summary":
                    leaf, text = line.get("leafUuid"), line.get("summary")
                    if isinstance(leaf, str) and isinstance(text, str):
                        found.append((leaf, text))
    except OSError:
        return []
    return found


def stale(fingerprint: str, named: Named) -> bool:
    """Whether the file marked ``fingerprint`` would now get another summary's title."""
    said = decided(fingerprint)
    title = named.best(_texts(said.get("ends")))
    return bool(title) and title != said.get("titled", "")


def lineage(replays: Mapping[str, Any], summaries: Sequence[tuple[str, str]],
            ends: Collection[str], titled: str) -> str:
    """A file's lineage: what was decided of its replayed lines, and what matching needs."""
    found: dict[str, Any] = dict(replays)
    if summaries:
        found["summaries"] = [list(pair) for pair in summaries]
    if ends:
        found["ends"] = sorted(ends)
    if titled:
        found["titled"] = titled
    # ASCII: a summary's text may hold a lone surrogate (an escape), which a store cannot keep.
    return json.dumps(found) if found else ""

