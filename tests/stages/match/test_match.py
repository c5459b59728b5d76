"""Tests of the coverage ranking in the match stage (pure part)."""

from __future__ import annotations

from harkback.stages.match.rankers import coverage, rank_by_coverage
from harkback.stages.query import parse_query
from harkback.stages.records import MessageHit


def _hit(session: str, content: str, score: float, source: str = "cli") -> MessageHit:
    return MessageHit(session_id=session, position=0, role="user", content=content,
                      score=score, source=source)


def test_coverage_counts_query_units_found() -> None:
    """Coverage is the share of query units present in the text."""
    units = parse_query("docker bridge dns").units
    assert coverage("docker bridge", units) == 2 / 3


def test_more_coverage_beats_higher_bm25() -> None:
    """A message covering more of the query outranks one with a bigger BM25 on one word."""
    units = parse_query("nginx cors header").units
    ranked = rank_by_coverage([_hit("loud", "cors cors cors", 50.0),
                               _hit("right", "nginx cors header missing", 1.0)], units)
    assert ranked[0].session_id == "right"


def test_bm25_breaks_ties_between_equal_coverage() -> None:
    """With equal coverage the store's BM25 order decides."""
    units = parse_query("nginx").units
    ranked = rank_by_coverage([_hit("low", "nginx", 1.0), _hit("high", "nginx", 3.0)], units)
    assert [h.session_id for h in ranked] == ["high", "low"]


def test_demoted_source_sinks_below_equal_peer() -> None:
    """A cron hit with the same text as a cli hit ranks below it."""
    units = parse_query("backup failed").units
    ranked = rank_by_coverage([_hit("cron", "backup failed", 2.0, source="cron"),
                               _hit("cli", "backup failed", 2.0)], units,
                              demoted_sources=("cron",))
    assert ranked[0].session_id == "cli"
