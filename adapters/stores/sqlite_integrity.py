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

import attrs

from harkback.adapters.stores.read_watch import is_corrupt

DERIVED = re.compile(r"(messages_fts|session_titles_fts)(_\w+)?|session_titles")
"""The tables harkback fills from the stored messages and titles (the indexes, their
shadow tables, the titles' index text): damage in them is rebuilt, not lost."""

_ACROSS = re.compile(r"2nd reference to page|invalid page number|ptr ?map", re.IGNORECASE)
"""integrity_check's lines about a pointer to another page (one held twice, one past the
file's end, autovacuum's map): said on the page holding the pointer, an index's, they are
not that index's alone. REINDEX frees each page of the index: one also on the free list
was then free twice, given to two writes, and the file malformed."""

# What names its index or table: an index by name; an FTS5 table (SQLite 3.44 and later
# check each full-text index too: "malformed inverted index for FTS5 table main.x"; later
# ones say "fts5: corruption found reading blob 10 from table "x""). Not FTS5's "unable to
# validate the inverted index for FTS5 table main.x: database is locked": the check could
# not run (a lock, a read failing), which no rebuild mends: weighed as the worst.
_NAMED = re.compile(r"(?:from|in|of) index (\w+)|^malformed inverted index for FTS5 table "
                    r"(?:\w+\.)?(\w+)$|^fts5: .* table \"(\w+)\"$")
# A B-tree's page: "Tree 5 page 7 cell 3: ...", "Tree 5 page 7 right child: ...", "Tree 5
# page 7: ..." from SQLite 3.42 on (its root page first); before, "On tree page 7 cell 3:
# ...", "On page 7 at right child: ...", "Page 7: ...".
_TREE = re.compile(r"Tree (\d+) page (\d+)")
_PAGE = re.compile(r"(?:On tree page|On page|Page) (\d+)")

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
    owners: Owners | None = None
    derived, seen, table_line = True, 0, None
    kept = len(damaged)
    lines = connection.execute(f"PRAGMA integrity_check({EVERY_LINE})")
    try:
        for row in lines:
            for line in str(row[0]).splitlines():
                if line == "ok" or line.startswith("***"):
                    continue
                if owners is None:  # read once damage shows: dbstat reads the whole file
                    owners = Owners.of(connection)
                owner = owners.owner(line)
                said = f"SQLite's integrity_check: {line}" + (
                    f" (in {owner})" if owner and owner not in line else "")
                if not owners.rebuilt(line):
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
    of = Owners.of(connection)
    owners = [of.owner(line) for line in lines]
    if lines == ["ok"] or any(of.kinds.get(owner or "") != "index" for owner in owners):
        raise error  # a free page, or what quick_check cannot place
    damaged.extend(f"SQLite's quick_check: {line} (in {owner})"  # every line weighed
                   for line, owner in zip(lines[:SHOWN], owners, strict=False))
    if len(lines) > SHOWN:
        damaged.append(f"{len(lines) - SHOWN} more lines of SQLite's quick_check")
    damaged.append(TORN_INDEX)
    return False


@attrs.frozen
class Owners:
    """What a file's B-trees are (``kinds``: a name's type, ``table`` or ``index``), which
    one each root page starts (``roots``) and each page belongs to (``pages``): whose an
    integrity_check line is, in the words of SQLite 3.40 or of 3.42 and later.

    >>> owners = Owners(kinds={"sessions_started": "index", "messages": "table"},
    ...                 roots={5: "sessions_started", 2: "messages"}, pages={})
    >>> owners.rebuilt("Tree 5 page 7 cell 3: Extends off end of page")
    True
    >>> owners.rebuilt("Tree 2 page 9 cell 0: Rowid 21 out of order")
    False
    """

    kinds: dict[str, str]
    roots: dict[int, str]
    pages: dict[int, str]

    @classmethod
    def of(cls, connection: sqlite3.Connection) -> Owners:
        """The owners in the file ``connection`` reads (``dbstat`` reads every page)."""
        schema = connection.execute("SELECT name, type, rootpage FROM sqlite_master").fetchall()
        return cls(kinds={name: kind for name, kind, _ in schema},
                   roots={root: name for name, _, root in schema if root},
                   pages=_page_owners(connection))

    def owner(self, line: str) -> str | None:
        """The index or table ``line`` is about, if it says."""
        named = _NAMED.search(line)
        if named:
            return next(name for name in named.groups() if name)
        tree = _TREE.match(line)  # the B-tree's root page, then the page, as 3.42 says
        if tree:
            return self.roots.get(int(tree.group(1))) or self.pages.get(int(tree.group(2)))
        page = _PAGE.match(line)
        return self.pages.get(int(page.group(1))) if page else None

    def rebuilt(self, line: str) -> bool:
        """Whether ``line`` is about what harkback rebuilds (a B-tree index, a full-text
        index and its tables), and no pointer to another page (:data:`_ACROSS`)."""
        owner = self.owner(line)
        return owner is not None and not _ACROSS.search(line) and (
            self.kinds.get(owner) == "index" or DERIVED.fullmatch(owner) is not None)


def _page_owners(connection: sqlite3.Connection) -> dict[int, str]:
    """Which table or index each page belongs to (``dbstat``), as far as it can be read."""
    try:
        return dict(connection.execute("SELECT pageno, name FROM dbstat"))
    except sqlite3.Error:
        # dbstat walks the B-trees: a broken one stops it. The roots still say something.
        return {row[0]: row[1] for row in connection.execute(
            "SELECT rootpage, name FROM sqlite_master WHERE rootpage > 0")}
