"""Reading a JSON-lines transcript: an over-long line is passed over in pieces and named,
never held whole (a 300 MB Claude Code line took 2.5 GB of memory to import)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harkback.adapters.sources import transcript_lines
from harkback.adapters.sources.importing import Tally
from harkback.adapters.sources.transcript_lines import TORN, json_lines

CAP = 100


@pytest.fixture(autouse=True)
def small_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lines of more than CAP characters count as over-long here."""
    monkeypatch.setattr(transcript_lines, "MAX_LINE_CHARS", CAP)


def test_an_over_long_line_is_named_and_the_next_lines_are_read(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    long = '{"text": "' + "x" * (3 * CAP + 7) + '"}'
    path.write_text(f'{{"n": 1}}\n{long}\n{{"n": 3}}\n', encoding="utf-8")
    tally = Tally()
    assert [number for number, _ in json_lines(path, tally)] == [1, 3]
    assert [(k.line, k.reason) for k in tally.named] == [
        (2, f"unreadable line: longer than {CAP:,} characters")]


def test_an_over_long_last_line_without_its_newline_is_torn(tmp_path: Path) -> None:
    """Still being written: counted, not named, and read again next time."""
    path = tmp_path / "t.jsonl"
    path.write_text('{"n": 1}\n' + "y" * (2 * CAP), encoding="utf-8")
    tally = Tally()
    assert [number for number, _ in json_lines(path, tally)] == [1]
    assert tally.named == [] and tally.counts == {TORN: 1}


def test_a_line_of_exactly_the_cap_is_read(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    line = '{"t": "' + "z" * (CAP - 10) + '"}'
    path.write_text(line.ljust(CAP - 1) + "\n", encoding="utf-8")
    assert [number for number, _ in json_lines(path, Tally())] == [1]


def test_a_last_line_cut_inside_a_character_is_torn_not_damaged(tmp_path: Path) -> None:
    """An agent caught writing ``é`` (two bytes in UTF-8) between its bytes: the half
    character is not named as bytes that are not UTF-8; the line is read next time."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"n": 1}\n{"text": "caf' + "é".encode()[:1])
    tally = Tally()
    assert [number for number, _ in json_lines(path, tally)] == [1]
    assert tally.named == [] and tally.counts == {TORN: 1}


def test_an_integer_too_long_for_python_keeps_its_line(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Valid JSON with a 5,000-digit number (past Python's 4,300): the line is read, the
    number as the float it rounds to; it was skipped as "not JSON"."""
    monkeypatch.setattr(transcript_lines, "MAX_LINE_CHARS", 10_000)
    path = tmp_path / "t.jsonl"
    path.write_text('{"usage": ' + "7" * 5000 + ', "n": 1}\n', encoding="utf-8")
    tally = Tally()
    assert [(number, value["n"], value["usage"]) for number, value in json_lines(path, tally)
            ] == [(1, 1, float("inf"))]
    assert tally.named == []


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-32"])
def test_a_transcript_saved_as_utf16_or_utf32_with_its_mark_is_read(tmp_path: Path,
                                                                    codec: str) -> None:
    """A Windows shell's redirection writes "Unicode" (UTF-16 with a byte order mark): every
    line was unreadable; the mark says how to read it now."""
    path = tmp_path / "t.jsonl"
    text = '{"n": 1, "text": "登录"}\r\n{"n": 2}\r\n'
    mark = "\ufeff" if codec == "utf-16-be" else ""  # "utf-16" and "utf-32" write their own
    path.write_bytes((mark + text).encode(codec))
    tally = Tally()
    assert [(number, value["n"], value.get("text")) for number, value in json_lines(path, tally)
            ] == [(1, 1, "登录"), (2, 2, None)]
    assert tally.named == [] and tally.counts == {}


def test_nul_bytes_a_crash_left_are_removed_and_the_lines_read(tmp_path: Path) -> None:
    """A crash leaves a run of NUL bytes (a block allocated, never written) and the agent
    appends after it: the next line, glued to them, was unreadable; also one at the top."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'\x00\x00{"n": 1}\n{"n": 2}\n' + b"\x00" * 60 + b'{"n": 3}\n')
    tally = Tally()
    assert [(number, value["n"]) for number, value in json_lines(path, tally)] == [
        (1, 1), (2, 2), (3, 3)]
    assert [(k.line, k.reason, k.outcome) for k in tally.named] == [
        (1, "NUL bytes: 2 removed", "repaired"), (3, "NUL bytes: 60 removed", "repaired")]


def test_trailing_nul_bytes_are_named_not_read_again_for_ever(tmp_path: Path) -> None:
    """NUL bytes ending a file are no line still being written (which is read again at
    every sync, unnamed): they are named once."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'{"n": 1}\n' + b"\x00" * 50)
    tally = Tally()
    assert [number for number, _ in json_lines(path, tally)] == [1]
    assert TORN not in tally.counts
    assert [(k.line, k.reason) for k in tally.named] == [(2, "NUL bytes: 50 removed")]


def test_a_line_appended_to_a_cut_one_is_read(tmp_path: Path) -> None:
    """An agent that died while writing a line and ran again appends its next line to the
    cut one: that whole line was lost with it; it is read, the cut one named. (The objects
    inside a last line still being written are no line of their own: it stays torn.)"""
    path = tmp_path / "t.jsonl"
    path.write_text('{"n": 1}\n{"n": 2, "message": {"content": [{"text": "hel'
                    '{"n": 3, "message": {"content": [{"text": "hello"}]}}\n'
                    '{"n": 4, "message": {"content": {"n": 5, "message": {}}\n'
                    '{"n": 6, "message": {"content": [{"text": "hi"}, {"a": 1}', encoding="utf-8")
    tally = Tally()
    assert [(number, value["n"]) for number, value in json_lines(path, tally)] == [
        (1, 1), (2, 3), (3, 5)]
    assert [(k.line, k.reason) for k in tally.named] == [
        (line, "unreadable line: cut short, the line written after it on it read")
        for line in (2, 3)]
    assert tally.counts[TORN] == 1



def test_a_byte_order_mark_starting_a_line_inside_the_file_is_skipped(tmp_path: Path) -> None:
    """Two transcripts joined with ``cat``, the second saved with a byte order mark: its
    first line was unreadable (JSON refuses the mark; only the file's own was skipped)."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(b'\xef\xbb\xbf{"n": 1}\n{"n": 2}\n\xef\xbb\xbf{"n": 3}\n')
    tally = Tally()
    assert [(number, value["n"]) for number, value in json_lines(path, tally)] == [
        (1, 1), (2, 2), (3, 3)]
    assert tally.named == [] and tally.counts == {}
