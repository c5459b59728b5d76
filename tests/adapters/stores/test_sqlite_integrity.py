"""integrity_check's lines, as SQLite 3.40 words them and as 3.42 and later do: each is
the same index's or table's either way (issue 20). This machine's SQLite is 3.40.1, so
the later forms are the lines SQLite's source prints (btree.c's prefixes "Tree %u page
%u cell %u: ", "Tree %u page %u right child: ", "Tree %u page %u: ", from 3.42.0, whose
notes say its errors now name the B-tree's root page; FTS5's xIntegrity, from 3.44.0)."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest

from harkback.adapters.stores.sqlite_integrity import Owners
from tests.conftest import conversation
from tests.pipeline.test_cli import ingested

# The index sessions_started: root page 5, a leaf on page 7; the table messages: root
# page 2, a leaf on page 9. dbstat's pages, and the roots of sqlite_master.
OWNERS = Owners(kinds={"sessions_started": "index", "messages": "table",
                       "messages_fts": "table", "messages_fts_data": "table"},
                roots={5: "sessions_started", 2: "messages"},
                pages={5: "sessions_started", 7: "sessions_started", 2: "messages",
                       9: "messages"})


@pytest.mark.parametrize(("before", "after", "owner", "rebuilt"), [
    # a cell of an index's leaf
    ("On tree page 7 cell 0: Extends off end of page",
     "Tree 5 page 7 cell 0: Extends off end of page", "sessions_started", True),
    # the right child of an index's page
    ("On page 7 at right child: Child page depth differs",
     "Tree 5 page 7 right child: Child page depth differs", "sessions_started", True),
    # an index's page as a whole
    ("Page 7: btreeInitPage() returns error code 11",
     "Tree 5 page 7: btreeInitPage() returns error code 11", "sessions_started", True),
    # a table's rows: the stored messages themselves
    ("On tree page 9 cell 0: Rowid 21 out of order",
     "Tree 2 page 9 cell 0: Rowid 21 out of order", "messages", False),
    # a pointer to a page held twice, said on an index's page (recorded on 3.40.1): not
    # the index's alone, never rebuilt
    ("On tree page 7 cell 0: 2nd reference to page 66",
     "Tree 5 page 7 cell 0: 2nd reference to page 66", "sessions_started", False),
    # a page no B-tree holds
    ("Page 31 is never used", "Page 31: never used", None, False),
])
def test_each_line_is_the_same_btrees_in_either_words(
        before: str, after: str, owner: str | None, rebuilt: bool) -> None:
    assert [OWNERS.owner(before), OWNERS.owner(after)] == [owner, owner]
    assert [OWNERS.rebuilt(before), OWNERS.rebuilt(after)] == [rebuilt, rebuilt]


@pytest.mark.parametrize("line", [
    "row 12 missing from index sessions_started",  # every version
    "wrong # of entries in index sessions_started",
    "non-unique entry in index sessions_started",
    "rowid not at end-of-record for row 12 of index sessions_started",  # 3.41.1 and later
])
def test_a_line_naming_an_index_is_that_indexs(line: str) -> None:
    assert (OWNERS.owner(line), OWNERS.rebuilt(line)) == ("sessions_started", True)


@pytest.mark.parametrize("line", [
    # 3.44.0 and later: integrity_check runs FTS5's own check of each full-text index
    "malformed inverted index for FTS5 table main.messages_fts",
    # later releases say what FTS5 met (its fts5_index.c's "fts5: corruption found
    # reading blob %lld from table \"%s\"")
    'fts5: corruption found reading blob 10 from table "messages_fts"',
])
def test_a_full_text_index_line_is_the_rebuilt_indexs(line: str) -> None:
    """SQLite 3.40 says nothing of a full-text index; later ones do, and the line was
    read as a table's damage, the ways out instead of --repair."""
    assert (OWNERS.owner(line), OWNERS.rebuilt(line)) == ("messages_fts", True)


@pytest.mark.parametrize("line", [
    # FTS5 says "malformed" of a damaged index; this, of a check it could not run (its
    # read failed, the file was locked): no damage a rebuild mends, and unsure
    "unable to validate the inverted index for FTS5 table main.messages_fts: disk I/O error",
    "unable to validate the inverted index for FTS5 table main.messages_fts: database is locked",
])
def test_a_full_text_index_that_could_not_be_checked_is_not_sent_to_repair(line: str) -> None:
    assert OWNERS.rebuilt(line) is False


def test_a_line_that_names_nothing_is_a_tables() -> None:
    """What says no B-tree is weighed as the worst: the stored rows' damage."""
    assert (OWNERS.owner("Freelist: size is 3 but should be 4"),
            OWNERS.rebuilt("Main freelist: size is 3 but should be 4")) == (None, False)


# Recorded from SQLite 3.54.1 (apsw 3.54.1.0), read-only, on copies of a store made as
# below and damaged as tests/pipeline/test_cli_check.py damages them: a flipped byte on
# the page of sessions_started, a table page's cell pointers zeroed, a row of
# messages_fts_data rewritten.
RECORDED_3_54 = [
    ("Tree 5 page 5 cell 11: Extends off end of page", "sessions_started", True),
    ("Tree 6 page 6 cell 3: Offset 0 out of range 4076..4092", "messages", False),
    ('fts5: corruption found reading blob 137438953473 from table "messages_fts"',
     "messages_fts", True),
]


def test_lines_a_later_sqlite_printed_for_a_store_are_weighed_by_its_btrees(
        tmp_path: Path) -> None:
    """The owners read from a real store (sqlite_master's roots, dbstat's pages), the
    lines as SQLite 3.54 printed them for that layout: the index's line is rebuilt, the
    table's is not."""
    db = ingested(tmp_path, [conversation("s1", ("user", "hi"))])
    with contextlib.closing(sqlite3.connect(db)) as connection:
        owners = Owners.of(connection)
    assert {5: "sessions_started", 6: "messages"}.items() <= owners.roots.items(), \
        "the store's layout changed: record the lines again"
    assert [(line, owners.owner(line), owners.rebuilt(line)) for line, _, _ in RECORDED_3_54
            ] == RECORDED_3_54
