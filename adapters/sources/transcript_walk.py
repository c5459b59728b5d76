"""Finding the transcript files under a folder: one walk, every glob at once.

>>> glob_pattern(("*/*.jsonl",)).fullmatch("-w-app/s1.jsonl") is not None
True
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path


def find_files(root: Path, patterns: Sequence[str], *,
               unreadable: list[tuple[str, str]] | None = None) -> list[str]:
    """Files under ``root`` matching any of the glob ``patterns``, as sorted paths under
    it (``/``-separated).

    One walk of the tree, matched against the patterns at once, with no ``Path`` made per
    file (``pathlib``'s glob walks it per pattern and stats every name: several times
    slower on a sync of an unchanged folder). A link to a folder is followed (a project
    folder kept elsewhere and linked in was passed over, its sessions never imported),
    unless it leads into the tree or into a folder already followed: a loop of links ends,
    and no file is found twice. An unreadable ``root`` raises ``OSError`` (a glob would
    find nothing in it); a folder below it that cannot be listed is passed over, added to
    ``unreadable`` with why. Folders deeper than any pattern reaches are not listed.

    >>> glob_pattern(("**/rollout-*.jsonl",)).fullmatch("2026/03/rollout-1.jsonl") is not None
    True
    """
    with os.scandir(root):
        pass
    wanted = glob_pattern(patterns)
    # How deep a match can lie (None: any depth). Folders below are never listed: a link to a
    # big tree (a home folder) costs nothing, and an unreadable one holding no transcript
    # (a session's tool-results) is no damage.
    deepest = None if any("**" in p for p in patterns) else max(p.count("/") for p in patterns)
    found: list[str] = []
    walked = [os.path.realpath(root)]  # the tree, and each folder a link led to
    folders = [(str(root), "")]
    while folders:
        folder, prefix = folders.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except FileNotFoundError:
            continue  # deleted since its parent was listed (an agent's clean-up): no damage
        except OSError as error:
            if unreadable is not None:
                unreadable.append((str(error.filename), str(error.strerror or error)))
            continue
        for entry in entries:
            if not _is_folder(entry):
                if wanted.fullmatch(prefix + entry.name):
                    found.append(prefix + entry.name)
            elif deepest is not None and prefix.count("/") >= deepest:
                continue
            elif not entry.is_symlink() or _new_place(os.path.realpath(entry.path), walked):
                folders.append((entry.path, f"{prefix}{entry.name}/"))
    return sorted(found)


def _is_folder(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:  # a link to nothing, or a loop of links: listed as a file
        return False


def _new_place(real: str, walked: list[str]) -> bool:
    """Whether the folder at ``real`` lies in none of ``walked`` and does not hold the tree
    (``walked[0]``: a link to its parent would walk it all again); if so it is added."""
    def inside(inner: str, outer: str) -> bool:
        return inner == outer or inner.startswith(outer.rstrip(os.sep) + os.sep)

    if inside(walked[0], real) or any(inside(real, seen) for seen in walked):
        return False
    walked.append(real)
    return True


def glob_pattern(patterns: Sequence[str]) -> re.Pattern[str]:
    """One expression matching a relative path (``/``-separated) that any glob matches:
    ``*`` and ``?`` within a name, ``**/`` any number of folders."""
    def one(pattern: str) -> str:
        parts = re.split(r"(\*\*/|\*|\?)", pattern)
        table = {"**/": "(?:[^/]+/)*", "*": "[^/]*", "?": "[^/]"}
        return "".join(table.get(part, re.escape(part)) for part in parts)
    return re.compile("|".join(f"(?:{one(p)})" for p in patterns))
