"""SQLite's ``PRAGMA integrity_check`` read whole, each line it says classified: about an
index harkback rebuilds (a B-tree index, a full-text index's tables) or about a table's
own rows (:func:`pages`); and a page it cannot read at all (:func:`unreadable_page`).
Part of ``harkback check`` (:mod:`~harkback.adapters.stores.sqlite_check`).

>>> import sqlite3
>>> fine, damaged = [], []
>>> pages(sqlite3.connect(":memory:"), fine, damaged), damaged
(True, [])
"""

from __future__ import annotations

import re
import sqlite3

from harkback.adapters.stores.read_watch import is_corrupt

DERIVED = re.compile(r"(messages_fts|session_titles_fts)(_\w+)?|session_titles")
"""The tables harkback fills from the stored messages and titles (the indexes, their
shadow tables, the titles' index text): damage in them is rebuilt, not lost."""

_ACROSS = re.compile(r"2nd reference to page|invalid page number|ptr ?map", re.IGNORECASE)
"""integrity_check's lines about a pointer to another page (one held twice, one past the
file's end, autovacuum's map): said on the page holding the pointer, an index's, they are
not that index's alone. REINDEX frees each page of the index: one also on the free list
was then free twice, given to two writes, and the file malformed."""

EVERY_LINE = 2**31 - 1
"""integrity_check's limit on the lines it finds: none in effect (its default, 100, hid
what came after)."""

SHOWN = 10
"""The integrity_check lines a check shows (one per broken row: thousands for one torn
page), leaving room for the other looks' findings in :data:`~store_check.ROOM`."""

TORN_INDEX = ("a page of a B-tree index cannot be read; every table reads whole, but "
              "SQLite rebuilds no index over an unreadable page in place")
_TABLES = "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'"


def pages(connection: sqlite3.Connection, fine: list[str], damaged: list[str]) -> bool:
    """SQLite's integrity_check; whether all it found is in what harkback rebuilds (a
    B-tree index, a full-text index's tables).

    Every line is read and classified, and only a few kept (:data:`SHOWN`, the first of
    a damaged table's among them): with a cap on the lines, a thousand broken index
    entries hid a damaged message after them, and the file was called rebuildable.
    """
    owners: tuple[dict[str, str], dict[int, str]] | None = None
    derived, seen, table_line = True, 0, None
    kept = len(damaged)
    lines = connection.execute(f"PRAGMA integrity_check({EVERY_LINE})")
    try:
        for row in lines:
            for line in str(row[0]).splitlines():
                if line == "ok" or line.startswith("***"):
                    continue
                if owners is None:  # read once damage shows: dbstat reads the whole file
                    owners = (dict(connection.execute("SELECT name, type FROM sqlite_master")),
                              _page_owners(connection))
                owner = _owner(line, owners[1])
                said = f"SQLite's integrity_check: {line}" + (
                    f" (in {owner})" if owner and owner not in line else "")
                if owner is None or _ACROSS.search(line) or not (
                        owners[0].get(owner) == "index" or DERIVED.fullmatch(owner) is not None):
                    if derived and seen >= SHOWN:  # the first such line, past those shown
                        table_line = said
                    derived = False
                seen += 1
                if seen <= SHOWN:
                    damaged.append(said)
    except sqlite3.DatabaseError as error:  # SQLite 3.40 stops at an unreadable page
        if not is_corrupt(error):
            raise
        # The read transaction the error ended in fails its COMMIT: rolled back (it only
        # read) and begun again for the looks below.
        lines.close()
        connection.execute("ROLLBACK")
        connection.execute("BEGIN")
        del damaged[kept:]
        return unreadable_page(connection, damaged, error)
    if not seen:
        fine.append("every page, table and B-tree index (SQLite's integrity_check)")
        return True
    if table_line is not None:  # what decides the verdict, shown even past the others
        damaged.append(table_line)
    if seen > SHOWN:
        damaged.append(f"{seen - SHOWN - (table_line is not None)} more lines of SQLite's "
                       f"integrity_check")
    return derived


def unreadable_page(connection: sqlite3.Connection, damaged: list[str],
                     error: sqlite3.DatabaseError) -> bool:
    """integrity_check stopped at a page it cannot read (a torn write zeroes one): which?
    ``quick_check`` (no look at rows through their indexes) names the page, and each
    table read whole, indexes unused, says whether the stored rows are whole; either
    raises where a table's own page is unreadable, and ``error`` is raised again where a
    line names no index (the file "cannot be read", the ways out).

    Never rebuildable: REINDEX, DROP INDEX and VACUUM each stop at the unreadable page."""
    lines = [line for row in connection.execute(f"PRAGMA quick_check({EVERY_LINE})")
             for line in str(row[0]).splitlines() if not line.startswith("***")]
    tables = connection.execute(_TABLES).fetchall()
    # Texts as bytes: SQLite reads every row and column all the same, and a text that is
    # not UTF-8 (which every read takes as U+FFFD) is no unreadable page.
    connection.text_factory = bytes
    try:
        for (table,) in tables:
            for _ in connection.execute(f'SELECT * FROM "{table}" NOT INDEXED'):
                pass  # every row and column read, one at a time
    finally:
        connection.text_factory = str
    kinds = dict(connection.execute("SELECT name, type FROM sqlite_master"))
    pages = _page_owners(connection)
    owners = [_owner(line, pages) for line in lines]
    if lines == ["ok"] or any(kinds.get(owner or "") != "index" for owner in owners):
        raise error  # a free page, or what quick_check cannot place
    damaged.extend(f"SQLite's quick_check: {line} (in {owner})"  # every line weighed
                   for line, owner in zip(lines[:SHOWN], owners, strict=False))
    if len(lines) > SHOWN:
        damaged.append(f"{len(lines) - SHOWN} more lines of SQLite's quick_check")
    damaged.append(TORN_INDEX)
    return False


def _page_owners(connection: sqlite3.Connection) -> dict[int, str]:
    """Which table or index each page belongs to (``dbstat``), as far as it can be read."""
    try:
        return dict(connection.execute("SELECT pageno, name FROM dbstat"))
    except sqlite3.Error:
        # dbstat walks the B-trees: a broken one stops it. The roots still say something.
        return {row[0]: row[1] for row in connection.execute(
            "SELECT rootpage, name FROM sqlite_master WHERE rootpage > 0")}


def _owner(line: str, pages: dict[int, str]) -> str | None:
    """The index or table an integrity_check line is about, if it says."""
    named = re.search(r"(?:from index|in index|entries in index) (\w+)", line)
    if named:
        return named.group(1)
    page = re.search(r"(?:tree page|Page) (\d+)", line)
    return pages.get(int(page.group(1))) if page else None
