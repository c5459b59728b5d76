"""Tests of cutting transcripts to a budget around matches."""

from __future__ import annotations

import re
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harkback.stages.load.truncate import (
    EARLIER,
    LATER,
    SEPARATOR,
    assemble,
    cut_around,
    first_place,
    locate_units,
    omitted,
    plan_cut,
    unit_spans,
)
from harkback.stages.query import Phrase, Term, parse_query

LINES = "\n".join(f"line {i:04} " + "filler " * 8 for i in range(2000))


def _span_of(text: str, needle: str) -> tuple[int, int]:
    start = text.index(needle)
    return start, start + len(needle)


def _overhead_bound(length: int, pieces: int) -> int:
    """The most markers and separators that ``pieces`` kept regions can cost."""
    gap = len(omitted(length)) + 2 * len(SEPARATOR)
    return len(EARLIER) + len(LATER) + 2 * len(SEPARATOR) + max(pieces - 1, 0) * gap


def _union(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def test_text_that_fits_is_unchanged() -> None:
    """A text within budget comes back as it is, not marked truncated."""
    assert cut_around("short text", [(0, 5)], 100) == ("short text", False)


def test_no_spans_keeps_the_head() -> None:
    """Without matches the start of the conversation is kept, with a later marker."""
    cut, truncated = cut_around(LINES, [], 500)
    assert truncated
    assert cut.startswith("line 0000")
    assert cut.endswith(LATER)


def test_match_in_the_middle_gets_both_markers() -> None:
    """A match far from both ends is shown with earlier and later markers."""
    cut, _ = cut_around(LINES, [_span_of(LINES, "line 1000")], 1000)
    assert cut.startswith(EARLIER) and cut.endswith(LATER)
    assert "line 1000" in cut


def test_context_surrounds_the_match() -> None:
    """The budget left after the match is spent on text on both sides of it."""
    cut, _ = cut_around(LINES, [_span_of(LINES, "line 1000")], 1000)
    assert "line 0998" in cut and "line 1002" in cut


def test_spread_matches_each_keep_a_window() -> None:
    """Matches spread through a long text each keep their own window, with omitted markers."""
    spans = [_span_of(LINES, f"line {i:04}") for i in (100, 900, 1700)]
    cut, _ = cut_around(LINES, spans, 3000)
    for i in (99, 100, 101, 899, 900, 901, 1699, 1700, 1701):
        assert f"line {i:04}" in cut
    assert len(re.findall(r"\.\.\.\[\d+ characters omitted\]\.\.\.", cut)) == 2


def test_omitted_marker_counts_the_cut_characters() -> None:
    """The number in an omitted marker is the length of the text cut there."""
    pieces = plan_cut(LINES, [_span_of(LINES, "line 0100"), _span_of(LINES, "line 1700")], 2000)
    cut = assemble(LINES, pieces)
    numbers = [int(n) for n in re.findall(r"\[(\d+) characters omitted\]", cut)]
    assert numbers == [b[0] - a[1] for a, b in pairwise(pieces)]


def test_best_span_wins_when_not_all_fit() -> None:
    """When only one of two matches fits, the first (best) one is kept."""
    best = _span_of(LINES, "line 1500 " + "filler " * 8)
    other = _span_of(LINES, "line 0200 " + "filler " * 8)
    budget = (best[1] - best[0]) + len(EARLIER) + len(LATER) + 2 * len(SEPARATOR) + 20
    cut, _ = cut_around(LINES, [best, other], budget)
    assert "line 1500" in cut and "line 0200" not in cut


def test_close_matches_share_one_window() -> None:
    """Matches a few lines apart are kept as one region, with no omitted marker between."""
    spans = [_span_of(LINES, "line 0500"), _span_of(LINES, "line 0502")]
    cut, _ = cut_around(LINES, spans, 800)
    assert "line 0501" in cut
    assert "characters omitted" not in cut


def test_cuts_fall_on_line_breaks() -> None:
    """Kept regions start and end at line boundaries when one is near."""
    cut, _ = cut_around(LINES, [_span_of(LINES, "line 1000")], 1000)
    body = cut.split(SEPARATOR)[1]
    assert body.startswith("line ") and body.endswith("filler")


def test_oversized_match_keeps_its_start() -> None:
    """A match longer than the budget is kept from its start, as far as it fits."""
    start = LINES.index("line 0700")
    cut, _ = cut_around(LINES, [(start, start + 5000)], 600)
    assert len(cut) <= 600
    assert EARLIER + SEPARATOR + "line 0700" in cut


def test_tiny_budget_still_holds() -> None:
    """A budget too small for any marker still returns at most that many characters."""
    cut, truncated = cut_around(LINES, [_span_of(LINES, "line 0042")], 7)
    assert truncated and len(cut) <= 7


def test_locate_units_finds_lines_with_most_units_first() -> None:
    """The fallback ranks lines by how many query units they hold."""
    text = "nothing here\ndocker only\ndocker bridge together\n"
    spans = locate_units(text, [Term("docker"), Term("bridge")])
    assert [text[s:e] for s, e in spans] == ["docker bridge together", "docker only"]


def test_locate_units_matches_phrases_and_cjk() -> None:
    """Phrases and CJK bigrams are found the same way the search finds them."""
    text = "[USER]: 上次怎么解决的\n[ASSISTANT]: the bridge network"
    spans = locate_units(text, [Term("解决"), Phrase(("bridge", "network"))])
    assert sorted(text[s:e] for s, e in spans) == ["[ASSISTANT]: the bridge network",
                                                  "[USER]: 上次怎么解决的"]


TEXTS = st.text(alphabet=st.sampled_from("ab \n.x"), min_size=0, max_size=3000)


@st.composite
def _cases(draw: st.DrawFn) -> tuple[str, list[tuple[int, int]], int]:
    text = draw(TEXTS)
    spans = draw(st.lists(st.tuples(st.integers(-10, len(text) + 10),
                                    st.integers(0, 300)).map(lambda p: (p[0], p[0] + p[1])),
                          max_size=8))
    budget = draw(st.integers(0, len(text) + 50))
    return text, spans, budget


@settings(max_examples=400, deadline=None)
@given(_cases())
def test_output_never_exceeds_the_budget(case: tuple[str, list[tuple[int, int]], int]) -> None:
    """Whatever the text, spans and budget, the output, markers included, fits."""
    text, spans, budget = case
    cut, truncated = cut_around(text, spans, budget)
    assert len(cut) <= budget
    assert truncated == (len(text) > budget)


@settings(max_examples=400, deadline=None)
@given(_cases())
def test_all_spans_are_kept_when_they_fit_together(
        case: tuple[str, list[tuple[int, int]], int]) -> None:
    """If the matched spans and the markers they need fit, every span is kept whole."""
    text, spans, budget = case
    valid = [(max(0, s), min(len(text), e)) for s, e in spans
             if min(len(text), e) > max(0, s)]
    union = _union(valid)
    needed = sum(e - s for s, e in union) + _overhead_bound(len(text), len(union))
    if not valid or needed > budget:
        return
    pieces = plan_cut(text, spans, budget)
    for start, end in valid:
        assert any(p <= start and end <= q for p, q in pieces), (start, end, pieces)


@settings(max_examples=300, deadline=None)
@given(_cases())
def test_a_kept_span_is_never_cut(case: tuple[str, list[tuple[int, int]], int]) -> None:
    """The best span that fits on its own is kept whole."""
    text, spans, budget = case
    valid = [(max(0, s), min(len(text), e)) for s, e in spans
             if min(len(text), e) > max(0, s)]
    if not valid or len(text) <= budget:
        return
    start, end = valid[0]
    if (end - start) + _overhead_bound(len(text), 1) > budget:
        return
    pieces = plan_cut(text, spans, budget)
    assert any(p <= start and end <= q for p, q in pieces)


@settings(max_examples=200, deadline=None)
@given(_cases())
def test_pieces_are_sorted_disjoint_and_reassemble(
        case: tuple[str, list[tuple[int, int]], int]) -> None:
    """Kept pieces are ordered, non-overlapping slices, and cut_around is their assembly."""
    text, spans, budget = case
    pieces = plan_cut(text, spans, budget)
    assert all(0 <= s < e <= len(text) for s, e in pieces)
    assert all(a[1] < b[0] for a, b in pairwise(pieces))
    if pieces and len(text) > budget:
        assert cut_around(text, spans, budget)[0] == assemble(text, pieces)


ONE_LINE = ("rsync -av /home/user/projects/app/ backup:/srv/app/ && " * 40
            + "the needle was found " + "docker compose -f /srv/app/compose.yaml up -d && " * 40)


def test_a_cut_in_a_long_line_falls_between_words() -> None:
    """A line with no break near the cut is cut at a space: no path starting mid-name."""
    for budget in (200, 250, 333, 500):
        cut, truncated = cut_around(ONE_LINE, [_span_of(ONE_LINE, "needle")], budget)
        kept = cut.split(SEPARATOR)[1]
        assert truncated and "needle" in kept
        assert set(kept.split()) <= set(ONE_LINE.split()), budget


def test_a_budget_too_small_for_markers_keeps_the_match_not_the_head() -> None:
    """Between the smallest budgets (a plain slice) and one that holds both markers, the
    cut still lands on the match, not on the top of the text."""
    span = _span_of(ONE_LINE, "needle")
    for budget in (20, 45, 60, 83):
        cut, _ = cut_around(ONE_LINE, [span], budget)
        assert "needle" in cut, budget



@pytest.mark.parametrize(("text", "question"), [
    ("a prefix, then fix the docker bridge", "fix docker"),  # 'fix' inside a word first
    ("docker " * 3 + "network fix", "fix network docker"),  # the later-listed unit first
    ("net networks network", "networks net"),  # a shorter place at the same start
    ("x" * 40 + "ECONNREFUSED" + "y" * 40, "econnrefused x"),
    ("ＤＯＣＫＥＲ ｆｉｘ then docker fix", "fix docker"),  # folded: offsets mapped back
    ("前面很长的一段话。后来改了 nginx 的配置，跨域问题就解决了。", "跨域 NGINX 配置"),
    ("nothing to find here", "docker"),
    ("an ascii log: timeout after 30 s", "超时 timeout"),  # a CJK unit in ASCII text
    ("an ascii log: timeout after 30 s", "超时"),
])
def test_first_place_is_the_first_of_unit_spans(text: str, question: str) -> None:
    """Each unit is looked for only as far as it could come first: the place is the same,
    whichever order the units come in."""
    units = parse_query(question).units
    for ordered in (units, units[::-1]):
        spans = unit_spans(text, ordered, limit=1)
        assert first_place(text, ordered) == (spans[0] if spans else None)


def test_a_text_holding_no_unit_is_placed_without_classing_the_units(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Most tool outputs and lines asked hold no query word: the search for a unit's text
    decides, and its script (CJK or not) is looked at only once a place is found."""
    from harkback.stages.load import truncate
    from harkback.stages.text.tokens import is_cjk

    asked: list[str] = []
    real = is_cjk

    def counted(text: str) -> bool:
        asked.append(text)
        return real(text)

    monkeypatch.setattr(truncate, "is_cjk", counted)
    units = parse_query("nginx 超时 bridge*").units
    assert first_place("log line " * 300, units) is None
    assert unit_spans("log line " * 300 + "日志", units) == ()
    assert asked == []
    assert first_place("a log: nginx 超时", units) == (7, 12)
    assert asked
