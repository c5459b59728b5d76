"""``harkback check`` when SQLite's integrity_check finds hundreds of lines: a damaged
message after many broken index entries still decides the verdict (no ``--repair`` over
damaged tables), and only a few lines are shown, the rest counted (issue 20)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import conversation
from tests.pipeline.test_cli import ingested, run

REPLY = "restart the service"
SESSIONS = [conversation(f"s{i:04d}", ("user", f"docker compose note {i}"),
                         ("assistant", REPLY), title=f"deploy {i}") for i in range(400)]


def _leaves(db: Path, name: str) -> tuple[int, list[int]]:
    with contextlib.closing(sqlite3.connect(db)) as connection:
        size = connection.execute("PRAGMA page_size").fetchone()[0]
        pages = [row[0] for row in connection.execute(
            "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY pageno",
            (name,))]
    return size, pages


def _index_keys_garbled(db: Path) -> None:
    """Every entry of the messages' (session_id, position) index given another session id
    on its pages: one "row N missing from index" line per message, 800 of them."""
    size, pages = _leaves(db, "sqlite_autoindex_messages_1")
    data = bytearray(db.read_bytes())
    for page in pages:
        at = slice((page - 1) * size, page * size)
        data[at] = bytes(data[at]).replace(b"s0", b"t0")
    db.write_bytes(bytes(data))


def _last_message_damaged(db: Path) -> None:
    """A stored message's record made unreadable: on the last page of the messages table,
    an assistant reply's content column typed NULL in its header (position 1, role of 9
    characters, then the content's type), so its bytes no longer match the header."""
    size, pages = _leaves(db, "messages")
    data = bytearray(db.read_bytes())
    page = bytes(data[(pages[-1] - 1) * size:pages[-1] * size])
    header = bytes([0x09, 13 + 2 * len("assistant"), 13 + 2 * len(REPLY)])
    at = page.rfind(header)
    assert at > 0
    data[(pages[-1] - 1) * size + at + 2] = 0
    db.write_bytes(bytes(data))


def _last_page_changed(db: Path, table: str, found: bytes, offset: int,
                       change: Callable[[int], int]) -> None:
    """The byte ``offset`` past the last ``found`` on ``table``'s last page, changed."""
    size, pages = _leaves(db, table)
    data = bytearray(db.read_bytes())
    start = (pages[-1] - 1) * size
    at = bytes(data[start:start + size]).rfind(found)
    assert at > 0
    data[start + at + offset] = change(data[start + at + offset])
    db.write_bytes(bytes(data))


def test_a_damaged_message_after_hundreds_of_index_lines_is_not_rebuildable(
        tmp_path: Path) -> None:
    db = ingested(tmp_path, SESSIONS)
    _index_keys_garbled(db)
    _last_message_damaged(db)
    before = hashlib.sha256(db.read_bytes()).digest()
    checked = run("check", "--json", db=db)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    found = json.loads(checked.stdout)
    assert (found["healthy"], found["rebuildable"]) == (False, False)
    assert found["next_step"].startswith("the stored messages themselves are damaged")
    lines = [line for line in found["damaged"] if "integrity_check" in line]
    assert len(lines) <= 12 and lines[-1].endswith("more lines of SQLite's integrity_check")
    assert "SQLite's integrity_check: database disk image is malformed" in lines
    repaired = run("check", "--repair", db=db)
    assert repaired.returncode == 1, repaired.stdout + repaired.stderr
    assert "repair: nothing was written" in repaired.stdout
    assert hashlib.sha256(db.read_bytes()).digest() == before


def test_hundreds_of_index_lines_alone_are_repaired(tmp_path: Path) -> None:
    """The same index damage without the damaged message: rebuildable, and mended."""
    db = ingested(tmp_path, SESSIONS)
    _index_keys_garbled(db)
    found = json.loads(run("check", "--json", db=db).stdout)
    assert (found["healthy"], found["rebuildable"]) == (False, True)
    more = found["damaged"][-1]
    assert more.endswith(" more lines of SQLite's integrity_check")
    assert int(more.split()[0]) > 100  # past the cap integrity_check once had
    # Every session holds its messages: counted from the tables, not the broken index
    # (which said "398 sessions hold no messages" among what is fine).
    assert not any("hold no messages" in line for line in found["fine"]), found["fine"]
    assert run("check", "--repair", db=db).returncode == 0
    assert run("check", db=db).returncode == 0


@pytest.mark.parametrize(("table", "found", "offset", "change", "said"), [
    # a reply's role made "assistanu": outside the CHECK a read-only integrity_check skips
    ("messages", b"assistant", len("assistan"), lambda _: ord("u"),
     "(got 'assistanu')"),
    # a reply's content typed a blob in its record header (one bit: 13+2n is a text of n
    # bytes, 12+2n a blob), which integrity_check does not look at
    ("messages", bytes([0x09, 13 + 2 * len("assistant"), 13 + 2 * len(REPLY)]), 2,
     lambda byte: byte - 1, "its text is stored as bytes, not as text"),
    # a session's id (5 bytes), source "cli", model "", title "deploy 3nn": texts of 5, 3,
    # 0, 10 bytes; the title typed a blob
    ("sessions", bytes([13 + 2 * 5, 13 + 2 * 3, 13, 13 + 2 * 10]), 3, lambda byte: byte - 1,
     "its title is stored as bytes, not as text"),
])
def test_a_row_that_reads_as_none_beside_index_damage_is_the_tables_damage(
        tmp_path: Path, table: str, found: bytes, offset: int, change: Callable[[int], int],
        said: str) -> None:
    """Hundreds of broken index entries, and one stored row that every read refuses: the
    check called the file rebuildable (it looked at neither), and the repair stopped at
    the row. The check now names the row as the table's damage, with the ways out, and
    the repair writes nothing."""
    db = ingested(tmp_path, SESSIONS)
    _index_keys_garbled(db)
    _last_page_changed(db, table, found, offset, change)
    before = hashlib.sha256(db.read_bytes()).digest()
    checked = json.loads(run("check", "--json", db=db).stdout)
    assert (checked["healthy"], checked["rebuildable"]) == (False, False), checked["damaged"]
    assert any(said in line and "read as none (found in the table itself" in line
               for line in checked["damaged"]), checked["damaged"]
    assert checked["next_step"].startswith("the stored messages themselves are damaged")
    repaired = run("check", "--repair", db=db)
    assert repaired.returncode == 1, repaired.stdout + repaired.stderr
    assert "repair: nothing was written" in repaired.stdout
    assert hashlib.sha256(db.read_bytes()).digest() == before


def test_a_text_not_utf8_is_rebuilt_as_every_read_reads_it(tmp_path: Path) -> None:
    """A flipped bit in a stored reply leaves a byte that is not UTF-8, which no check
    looks at; every read of the store reads it as U+FFFD. The rebuild stopped at it ("could
    not decode", the text itself in the line) and the index stayed broken: it now reads
    it as every read does, and mends the store."""
    db = ingested(tmp_path, SESSIONS)
    _index_keys_garbled(db)
    # "r" (0x72) becomes 0xf2, a lead byte with no continuation
    _last_page_changed(db, "messages", REPLY.encode(), 0, lambda byte: byte | 0x80)
    repaired = run("check", "--repair", db=db)
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert run("check", db=db).returncode == 0
    found = run("search", "estart", "--json", db=db)
    assert found.returncode == 0, found.stderr


@pytest.mark.parametrize("table", ["messages", "sessions"])
def test_a_key_changed_in_its_table_is_not_called_index_damage(tmp_path: Path,
                                                              table: str) -> None:
    """One flipped byte in a session id as its table stores it (a reply's, or a session's
    own): integrity_check says only "row N missing from index", as for a broken index
    entry, and the check called it rebuildable; the rebuild made the index agree with the
    damaged row, and the check then called the store fine with a message in no session.
    Read from the tables themselves, messages of no stored session are the tables'
    damage: the ways out, and nothing written."""
    db = ingested(tmp_path, SESSIONS)
    _last_page_changed(db, table, b"s0399", 2, lambda _: ord("z"))
    before = hashlib.sha256(db.read_bytes()).digest()
    checked = run("check", "--json", db=db)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    found = json.loads(checked.stdout)
    assert (found["healthy"], found["rebuildable"]) == (False, False), found
    assert any("missing from index" in line for line in found["damaged"]), found["damaged"]
    assert any("belong to no stored session" in line for line in found["damaged"])
    assert found["next_step"].startswith("the stored messages themselves are damaged")
    repaired = run("check", "--repair", db=db)
    assert repaired.returncode == 1 and "repair: nothing was written" in repaired.stdout
    assert hashlib.sha256(db.read_bytes()).digest() == before


def _zero_last_leaf(db: Path, index_name: str) -> None:
    """A torn write: the last leaf page of index ``index_name`` zeroed."""
    size, (*_, index) = _leaves(db, index_name)
    data = bytearray(db.read_bytes())
    data[(index - 1) * size:index * size] = bytes(size)
    db.write_bytes(bytes(data))


def test_a_zeroed_index_page_beside_a_text_not_utf8_is_still_named(tmp_path: Path) -> None:
    """A torn write zeroed a page of an index; elsewhere one stored reply holds a byte that
    is not UTF-8 (which every read takes as U+FFFD). Reading each table whole decoded every
    text, and that byte made the check say "the file cannot be read", the text itself in
    the line: the rows are read, not decoded."""
    db = ingested(tmp_path, SESSIONS)
    _last_page_changed(db, "messages", REPLY.encode(), 0, lambda byte: byte | 0x80)
    _zero_last_leaf(db, "sqlite_autoindex_messages_1")
    found = json.loads(run("check", "--json", db=db).stdout)
    assert (found["healthy"], found["rebuildable"]) == (False, False)
    assert not any("decode" in line for line in found["damaged"]), found["damaged"]
    assert found["next_step"].startswith("the stored messages read whole, but SQLite cannot "
                                         "mend the damaged index"), found["next_step"]


def test_a_zeroed_index_page_beside_a_row_that_reads_as_none_says_no_row_is_whole(
        tmp_path: Path) -> None:
    """A torn write zeroed a page of an index; elsewhere one stored reply's text is typed
    a blob: the torn index's way out said "the stored messages read whole", which one
    does not. The row is named, and the ways out say the messages are damaged."""
    db = ingested(tmp_path, SESSIONS)
    _last_page_changed(db, "messages", bytes(
        [0x09, 13 + 2 * len("assistant"), 13 + 2 * len(REPLY)]), 2, lambda byte: byte - 1)
    _zero_last_leaf(db, "sqlite_autoindex_messages_1")
    found = json.loads(run("check", "--json", db=db).stdout)
    assert (found["healthy"], found["rebuildable"]) == (False, False)
    assert any("its text is stored as bytes" in line for line in found["damaged"]), found
    assert found["next_step"].startswith("the stored messages themselves are damaged"), \
        found["next_step"]


def _index_page_also_free(db: Path) -> None:
    """A page both on the free list and in the messages' (session_id, position) index, as
    a crash can leave a file whose free list was written and the index's page was not: the
    index's first leaf moved to a free page (its content copied there, the pointer to it
    changed), the old leaf put on the free list in place of the file's last page, which
    is cut off. integrity_check says one line: "2nd reference to page N"."""
    with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as connection:
        connection.execute("CREATE TABLE spare (x)")  # dropped: free pages at the end
        connection.executemany("INSERT INTO spare VALUES (?)", [("x" * 200,)] * 600)
        connection.execute("DROP TABLE spare")
        size = connection.execute("PRAGMA page_size").fetchone()[0]
        (parent,) = connection.execute(
            "SELECT pageno FROM dbstat WHERE name = 'sqlite_autoindex_messages_1' "
            "AND pagetype = 'internal'").fetchone()
    data = bytearray(db.read_bytes())

    def number(at: int) -> int:
        return int.from_bytes(data[at:at + 4], "big")

    last, trunk = number(28), number(32)  # the header's page count, first free-list trunk
    free = [number((trunk - 1) * size + 8 + 4 * i)
            for i in range(number((trunk - 1) * size + 4))]
    assert last in free and last != trunk
    held = next(page for page in free if page != last)
    cell = (parent - 1) * size + int.from_bytes(data[(parent - 1) * size + 12:
                                                     (parent - 1) * size + 14], "big")
    leaf = number(cell)
    data[(held - 1) * size:held * size] = data[(leaf - 1) * size:leaf * size]
    data[cell:cell + 4] = held.to_bytes(4, "big")
    slot = (trunk - 1) * size + 8 + 4 * free.index(last)
    data[slot:slot + 4] = leaf.to_bytes(4, "big")
    data[28:32] = (last - 1).to_bytes(4, "big")
    db.write_bytes(bytes(data[:(last - 1) * size]))


def test_an_index_page_also_free_is_not_rebuilt(tmp_path: Path) -> None:
    """REINDEX frees each page of the index, that one too: it is then free twice, given to
    two writes, and the file malformed. The check called it rebuildable (the line is the
    index's), and --repair left a file that could not be read; now the ways out, and
    nothing written."""
    db = ingested(tmp_path, SESSIONS)
    _index_page_also_free(db)
    before = hashlib.sha256(db.read_bytes()).digest()
    found = json.loads(run("check", "--json", db=db).stdout)
    assert any("2nd reference to page" in line for line in found["damaged"]), found
    assert (found["healthy"], found["rebuildable"]) == (False, False), found["damaged"]
    repaired = run("check", "--repair", db=db)
    assert repaired.returncode == 1 and "repair: nothing was written" in repaired.stdout
    assert hashlib.sha256(db.read_bytes()).digest() == before


def test_a_position_changed_in_its_table_onto_another_is_not_rebuildable(
        tmp_path: Path) -> None:
    """One flipped bit in a reply's record makes its position 0, its question's: SQLite
    says "row N missing from index", the index's line, so the check sent the user to
    --repair, whose REINDEX stopped at the unique key, and the check sent them back. Two
    messages at one place, read from the table itself, are the table's damage."""
    db = ingested(tmp_path, SESSIONS)
    # session id "s0399" (5 bytes), position 1 (type 9: the integer 1), role "assistant"
    _last_page_changed(db, "messages", bytes([13 + 2 * 5, 9, 13 + 2 * len("assistant")]), 1,
                       lambda _: 8)  # type 8: the integer 0
    before = hashlib.sha256(db.read_bytes()).digest()
    found = json.loads(run("check", "--json", db=db).stdout)
    assert (found["healthy"], found["rebuildable"]) == (False, False), found["damaged"]
    assert any("1 positions in a session hold more than one stored message" in line
               for line in found["damaged"]), found["damaged"]
    assert found["next_step"].startswith("the stored messages themselves are damaged")
    repaired = run("check", "--repair", db=db)
    assert repaired.returncode == 1 and "repair: nothing was written" in repaired.stdout
    assert hashlib.sha256(db.read_bytes()).digest() == before


def test_a_table_fault_past_ten_zeroed_index_pages_is_not_called_whole(
        tmp_path: Path) -> None:
    """Every leaf of twelve indexes zeroed (a torn write of many pages), and a table's
    rows out of order, which a read of its rows does not notice: quick_check says the
    table's line thirteenth. Only ten were weighed, and the check said "every table reads
    whole"; every line is now, and a table's fault is no torn index."""
    db = ingested(tmp_path, SESSIONS)
    with contextlib.closing(sqlite3.connect(db)) as connection:
        connection.executemany("INSERT INTO vector_models (id, name, dimensions) "
                               "VALUES (?, ?, 8)", [(1, "model-a"), (2, "model-b")])
        connection.commit()
        size = connection.execute("PRAGMA page_size").fetchone()[0]
        leaves = [page for (page,) in connection.execute(
            "SELECT d.pageno FROM dbstat AS d JOIN sqlite_master AS m ON m.name = d.name "
            "WHERE m.type = 'index' AND d.pagetype = 'leaf' "
            "AND d.name != 'sqlite_autoindex_vector_models_1'")]
        (root,) = connection.execute(
            "SELECT rootpage FROM sqlite_master WHERE name = 'vector_models'").fetchone()
    assert len(leaves) > 10
    data = bytearray(db.read_bytes())
    for page in leaves:
        data[(page - 1) * size:page * size] = bytes(size)
    first = (root - 1) * size + int.from_bytes(data[(root - 1) * size + 8:
                                                    (root - 1) * size + 10], "big")
    data[first + 1] = 5  # the first row's id, 1, made 5: before the row of id 2
    db.write_bytes(bytes(data))
    found = json.loads(run("check", "--json", db=db).stdout)
    assert (found["healthy"], found["rebuildable"]) == (False, False)
    assert not any("every table reads whole" in line for line in found["damaged"]), found
    assert found["next_step"].startswith("the stored messages themselves are damaged")


def _session_ids_alike(db: Path, pages_of: tuple[str, ...]) -> None:
    """The empty session "e0002" made "e0001" on the pages of ``pages_of`` (one flipped
    bit each: '2' is 0x32, '1' 0x31), as a torn or misdirected write can leave it."""
    data = bytearray(db.read_bytes())
    for name in pages_of:
        size, leaves = _leaves(db, name)
        for page in leaves:
            at = slice((page - 1) * size, page * size)
            data[at] = bytes(data[at]).replace(b"e0002", b"e0001")
    db.write_bytes(bytes(data))


EMPTY_TWO = [*SESSIONS, conversation("e0001", title="empty one"),
             conversation("e0002", title="empty two")]


def test_a_key_held_twice_by_its_table_is_not_sent_to_repair_again(tmp_path: Path) -> None:
    """Two sessions with one id, in the table and in its unique index (two empty
    sessions: no message strays): integrity_check says "non-unique entry in index", an
    index's line, and the check sent the user to --repair, whose REINDEX failed ("UNIQUE
    constraint failed"), and the check sent them back: the rows themselves repeat. Now
    the table's damage, the ways out, and nothing written."""
    db = ingested(tmp_path, EMPTY_TWO)
    _session_ids_alike(db, ("sessions", "sqlite_autoindex_sessions_1"))
    before = hashlib.sha256(db.read_bytes()).digest()
    found = json.loads(run("check", "--json", db=db).stdout)
    assert ("SQLite's integrity_check: non-unique entry in index sqlite_autoindex_sessions_1"
            in found["damaged"]), found["damaged"]
    assert (found["healthy"], found["rebuildable"]) == (False, False), found["damaged"]
    assert any(line.startswith("1 keys of the unique index sqlite_autoindex_sessions_1 are "
                               "each held by more than one row of sessions")
               for line in found["damaged"]), found["damaged"]
    assert found["next_step"].startswith("the stored messages themselves are damaged")
    repaired = run("check", "--repair", db=db)
    assert repaired.returncode == 1 and "repair: nothing was written" in repaired.stdout
    assert hashlib.sha256(db.read_bytes()).digest() == before


def test_a_key_held_twice_by_its_index_alone_is_repaired(tmp_path: Path) -> None:
    """The same id twice in the unique index only, the table's rows each their own: the
    index's damage, which REINDEX rebuilds from the table; the check says --repair, and
    the repair mends it."""
    db = ingested(tmp_path, EMPTY_TWO)
    _session_ids_alike(db, ("sqlite_autoindex_sessions_1",))
    found = json.loads(run("check", "--json", db=db).stdout)
    assert (found["healthy"], found["rebuildable"]) == (False, True), found["damaged"]
    assert run("check", "--repair", db=db).returncode == 0
    assert run("check", db=db).returncode == 0
