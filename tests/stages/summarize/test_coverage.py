"""The summary's line coverage against its definition: ``unit_matches`` over index tokens."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from harkback.stages.query import Unit, parse_query, unit_matches
from harkback.stages.summarize.coverage import line_coverage
from harkback.stages.text.tokens import index_tokens


def _by_definition(units: Sequence[Unit], line: str) -> frozenset[int]:
    toks = index_tokens(line)
    token_set = frozenset(toks)
    return frozenset(i for i, unit in enumerate(units) if unit_matches(unit, toks, token_set))


# CJK runs next to Latin words, full-width forms, compatibility ideographs (NFKC maps them
# to unified ones), accents, kana and Hangul: what normalization can join or split.
_PIECES = ["数据", "据库", "数据库", "连接", "超时", "数", "库连", "docker", "Docker",
           "ＤＯＣＫＥＲ", "error", "errors", "café", "cafe", "\uf900", "豈", "カタカナ", "한국어",
           "ü", "e\u0301", " ", "  ", "，", "！", "ＡＢ", "。", "-", "_", "x", "1", "😀", "’"]
_lines = st.lists(st.sampled_from(_PIECES), max_size=12).map("".join)
_queries = st.lists(st.sampled_from([*_PIECES[:13], "dock*", '"数据 连接"', "豈", "豈数", "한국"]),
                    min_size=1, max_size=4).map(" ".join)


@settings(max_examples=400, deadline=None)
@given(query=_queries, line=_lines)
def test_line_coverage_is_unit_matches_over_index_tokens(query: str, line: str) -> None:
    units = parse_query(query).units
    assert line_coverage(units)(line) == _by_definition(units, line)


def test_a_cjk_line_covers_a_bigram_only_with_both_characters_in_a_row() -> None:
    units = parse_query("数据库 docker").units
    covers = line_coverage(units)
    assert covers("数据 库") == _by_definition(units, "数据 库")
    assert {units[i] for i in covers("用数据库的docker")} == set(units)
    assert covers("数x据库 ＤＯＣＫＥＲ") == _by_definition(units, "数x据库 ＤＯＣＫＥＲ")


def test_a_line_is_normalized_before_its_bigrams_are_looked_for() -> None:
    # U+F900 is a compatibility form of 豈 (U+8C48): NFKC makes the line hold 豈数.
    units = parse_query("豈数").units
    assert line_coverage(units)("\uf900数据") == _by_definition(units, "\uf900数据") == {0}
