"""``harkback redact``: take the secrets out of a store built before redaction was on.

Every title, message (content and tool-call arguments) and cached summary goes through
:func:`~harkback.stages.redact.scrub.redact` by the store's ``text_rewriter`` capability
(:mod:`harkback.stages.rewrite`): changed sessions are indexed again, the vectors of
changed messages dropped, cached summaries holding a secret or made from a changed
session's lineage deleted. ``--dry-run`` opens the store read-only and only counts.
"""

from __future__ import annotations

import sys
from typing import Any

from returns.result import Failure

from harkback.pipeline.terminal import line_of, one_line
from harkback.stages.ports import SessionStore
from harkback.stages.redact.scrub import NO_SECRETS, SecretCounts, redact
from harkback.stages.rewrite import RewriteReport
from harkback.stages.stage import as_result


class Counting:
    """:func:`redact` as a text function for a rewrite, adding up what it found."""

    def __init__(self) -> None:
        """Start with nothing found."""
        self.counts = NO_SECRETS

    def __call__(self, text: str) -> str:
        """``text`` redacted."""
        clean, found = redact(text)
        if found.by_kind:
            self.counts += found
        return clean


def describe(target: str, report: RewriteReport, counts: SecretCounts, *, dry_run: bool) -> str:
    """A line for people.

    >>> describe("h.db", RewriteReport(sessions=1, messages=2), NO_SECRETS, dry_run=True)[:46]
    'h.db: no secrets found; would change 2 message'
    """
    verb = "would change" if dry_run else "changed"
    drop = "drop" if dry_run else "dropped"
    found = counts.describe("found" if dry_run else "redacted")
    return (f"{one_line(target)}: {found}; {verb} {report.messages} message(s) and "
            f"{report.titles} title(s) in {report.sessions} session(s), {drop} "
            f"{report.summaries_dropped} cached summary(ies)")


def payload(target: str, report: RewriteReport, counts: SecretCounts, *, dry_run: bool
            ) -> dict[str, Any]:
    """The JSON form of a run."""
    return {"success": True, "db": target, "dry_run": dry_run,
            "secrets_redacted": dict(counts.by_kind), "sessions": report.sessions,
            "messages": report.messages, "titles": report.titles,
            "summaries_dropped": report.summaries_dropped,
            **({"notes": list(report.notes)} if report.notes else {})}


async def run_redact(store: SessionStore, target: str, *, dry_run: bool
                     ) -> tuple[dict[str, Any], str]:
    """Redact ``store`` (closing it): the counts as JSON and as a line for people."""
    from harkback.pipeline.command_kit import CliError
    try:
        rewriter = store.text_rewriter()
        if rewriter is None:
            raise CliError(f"the store at {target} cannot rewrite its texts")
        edit = Counting()
        done = as_result(await rewriter.rewrite_texts(edit, dry_run=dry_run).awaitable())
    finally:
        store.close()
    if isinstance(done, Failure):
        raise CliError(done.failure().message())
    for note in done.unwrap().notes:  # what stays readable: never unsaid, --json or not
        print(line_of(f"harkback: note: {note}"), file=sys.stderr)
    return (payload(target, done.unwrap(), edit.counts, dry_run=dry_run),
            describe(target, done.unwrap(), edit.counts, dry_run=dry_run))
