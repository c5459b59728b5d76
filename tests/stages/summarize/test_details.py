"""Tests of the detail check the extractive summary asks of lines near its picks."""

from __future__ import annotations

import re
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from harkback.stages.summarize.details import CASE_TWINS, COMMAND, ERROR, PATH, URL, carries_detail


def test_detail_detection() -> None:
    """Commands, paths, URLs and errors count as details; plain prose does not."""
    assert carries_detail("$ docker ps -a")
    assert carries_detail("docker network create app-net")
    assert carries_detail("saved it to ~/scripts/backup.sh")
    assert carries_detail("docs at https://example.org/x")
    assert carries_detail("TypeError: cannot read property")
    assert carries_detail("connect ECONNREFUSED 127.0.0.1:5432")
    assert not carries_detail("I suspect the nginx proxy config is wrong")
    assert not carries_detail("Pizza sounds good to me.")


def test_errors_beyond_ascii_are_found_as_the_pattern_finds_them() -> None:
    """Chinese text around an error word, and letters that fold to ASCII ones."""
    assert carries_detail("连接 timed out 了")
    assert not carries_detail("超时timeout")  # no word boundary between 时 and t
    assert carries_detail("数据库 ERROR：连接失败")
    assert carries_detail("TRACEBAC\u212a 出现")  # the Kelvin sign for the K
    assert carries_detail("permission DEN\u0130ED")  # a dotted capital I
    assert not carries_detail("数据库连接超时的问题")


def test_the_case_twins_are_every_character_that_folds_to_ascii() -> None:
    """No other character beyond ASCII matches an ASCII letter case-insensitively or
    lower-cases to one (the error check relies on it)."""
    letter = re.compile("(?i)[a-z]")
    twins = [chr(code) for code in range(128, sys.maxunicode + 1)
             if letter.fullmatch(chr(code)) or any(c.isascii() for c in chr(code).lower())]
    assert "".join(twins) == CASE_TWINS.pattern[1:-1]


_DETAIL_PIECES = st.one_of(
    st.sampled_from(["$ ls", "`make`", "docker run -d", "sudo apt install", "/etc/x/y", "a.py",
                     "Dockerfile", "https://x.org", "www.a.b", "ERROR", "Traceback", "failed",
                     "faİl", "ſ", "timed out", "Not Found", "ECONNREFUSED", "terrorist", "K",
                     "EPERMS", "fails.", "refused!", "timeouts", "panic:", "…", "ok", "失败",
                     "超时", "错误", "é", "ı", "/", "x/y.log", "Makefiles", "a.b/c.md", "DENIED"]),
    st.text(max_size=8))


@settings(max_examples=500)
@given(st.lists(_DETAIL_PIECES, max_size=12).map(lambda pieces: "".join(pieces)) | st.lists(
    _DETAIL_PIECES, max_size=12).map(" ".join))
def test_carries_detail_is_any_of_its_four_patterns(line: str) -> None:
    """The cheap look-ups before each pattern, or each of its alternatives, never change
    what the pattern says of a line."""
    assert carries_detail(line) == any(
        p.search(line) for p in (COMMAND, PATH, URL, ERROR))
