"""How much of a transcript the model needs to see: evidence kept against tokens sent.

For every question of a LongMemEval file and every session holding evidence turns
(``has_answer``), the transcript goes through the product's own path: the match
stage finds the question's hits in the question's haystack, the load stage's kernel
(:func:`~harkback.stages.load.load.make_transcript`: render, then cut to 100,000
characters around the hits) builds the transcript, and the model summarizer's
kernel (:func:`~harkback.stages.summarize.model.prepare`) cuts it to each token
budget and builds the request. A turn counts as kept when its whole rendered block
is in the text the model would see. The reference row is the reference system's
setting: one window of 100,000 characters around the first match.

Run from the repository root::

    .venv/bin/python -m benchmarks.budget \\
        --data ../shared/data/longmemeval-dev/longmemeval_oracle.json.gz
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

import attrs
from returns.io import IOResult
from returns.unsafe import unsafe_perform_io

from benchmarks.arguments import count, counts
from benchmarks.entry import run_main
from benchmarks.longmemeval import Dataset, Question
from harkback.adapters.stores.memory import MemoryStore
from harkback.stages.errors import RecallError
from harkback.stages.flow import Matched
from harkback.stages.load.load import BUDGET_CHARS, hit_spans, make_transcript
from harkback.stages.load.render import render_lineage, render_message
from harkback.stages.match.rankers import CoverageMatch
from harkback.stages.ports import Deps
from harkback.stages.query import ParsedQuery
from harkback.stages.records import Candidate, Conversation, Message
from harkback.stages.request import SearchRequest
from harkback.stages.summarize.model import (
    TRANSCRIPT_TOKENS,
    build_request,
    estimate_tokens,
    prepare,
    request_tokens,
)

BUDGETS = (250, 500, 750, 1000, 1500, 2000, 3000, 4000)
REFERENCE_CHARS = 100_000


@attrs.frozen(kw_only=True)
class Row:
    """One setting's totals over all evidence sessions."""

    label: str
    evidence: int
    kept: int
    sessions: int
    cut: int
    transcript_tokens: tuple[int, ...]
    prompt_tokens: tuple[int, ...]

    @property
    def kept_share(self) -> float:
        """Share of evidence turns the model would see."""
        return self.kept / self.evidence if self.evidence else 1.0


def reference_window(text: str, first_match: int, chars: int = REFERENCE_CHARS) -> str:
    """The reference system's cut: one ``chars`` window centred on the first match.

    >>> reference_window("abcdefghij", 8, 4)
    'ghij'
    >>> reference_window("short", 0)
    'short'
    """
    if len(text) <= chars:
        return text
    start = min(max(first_match - chars // 2, 0), len(text) - chars)
    return text[start:start + chars]


async def _matched(store: MemoryStore, question: Question) -> Matched:
    request = SearchRequest(query=question.text, hidden_sources=())
    outcome: IOResult[Matched, RecallError] = await CoverageMatch()(request)(
        Deps(store=store)).awaitable()
    return unsafe_perform_io(outcome.unwrap())


def _evidence_blocks(conversation: Conversation, positions: Sequence[int]) -> list[str]:
    by_position = {m.position: m for m in conversation.messages}
    blocks = [render_message(by_position[p]) for p in positions if p in by_position]
    return [b for b in blocks if b]


def _kept(text: str, blocks: Sequence[str]) -> int:
    return sum(1 for block in blocks if block in text)


@attrs.define
class Tally:
    """Running totals for one setting."""

    label: str
    evidence: int = 0
    kept: int = 0
    sessions: int = 0
    cut: int = 0
    transcript_tokens: list[int] = attrs.field(factory=list)
    prompt_tokens: list[int] = attrs.field(factory=list)

    def add(self, text: str, truncated: bool, blocks: Sequence[str], prompt: int) -> None:
        """Count one session's cut."""
        self.evidence += len(blocks)
        self.kept += _kept(text, blocks)
        self.sessions += 1
        self.cut += truncated
        self.transcript_tokens.append(estimate_tokens(text))
        self.prompt_tokens.append(prompt)

    def row(self) -> Row:
        """The finished row."""
        return Row(label=self.label, evidence=self.evidence, kept=self.kept,
                   sessions=self.sessions, cut=self.cut,
                   transcript_tokens=tuple(self.transcript_tokens),
                   prompt_tokens=tuple(self.prompt_tokens))


async def measure(data: Dataset, budgets: Sequence[int] = BUDGETS,
                  limit: int | None = None) -> list[Row]:
    """Evidence kept and tokens sent for each budget, and for the reference setting."""
    reference = Tally(f"reference ({REFERENCE_CHARS:,} chars)")
    tallies = {b: Tally(f"{b} tokens") for b in budgets}
    questions = data.questions[:limit] if limit else data.questions
    for question in questions:
        evidence: dict[str, list[int]] = {}
        for session_id, position in question.evidence:
            evidence.setdefault(session_id, []).append(position)
        if not evidence:
            continue
        store = MemoryStore()
        haystack = data.haystack(question)
        await store.ingest(haystack)
        matched = await _matched(store, question)
        by_id = {c.session.id: c for c in haystack}
        for session_id, positions in evidence.items():
            conversation = by_id[session_id]
            blocks = _evidence_blocks(conversation, positions)
            hits = tuple(h for h in matched.hits if h.session_id == session_id)
            candidate = Candidate(root=conversation.session, hits=hits)
            _reference(reference, conversation, candidate, matched.parsed, question, blocks)
            transcript = make_transcript(candidate, (conversation.session,),
                                         conversation.messages, matched.parsed,
                                         budget_chars=BUDGET_CHARS)
            for budget, tally in tallies.items():
                prepared = prepare(transcript, matched.parsed, question.text,
                                   transcript_tokens=budget)
                tally.add(prepared.transcript.text, prepared.transcript.truncated, blocks,
                          request_tokens(prepared.request))
    return [reference.row(), *(t.row() for t in tallies.values())]


def _reference(tally: Tally, conversation: Conversation, candidate: Candidate,
               parsed: ParsedQuery, question: Question, blocks: Sequence[str]) -> None:
    messages: tuple[Message, ...] = conversation.messages
    rendered = render_lineage((conversation.session,), messages)
    spans = hit_spans(rendered, candidate.hits)
    first = min((start for start, _ in spans), default=0)
    text = reference_window(rendered.text, first)
    prompt = request_tokens(build_request(question.text, text))
    tally.add(text, len(text) < len(rendered.text), blocks, prompt)


def table(rows: Sequence[Row]) -> str:
    """The result as a Markdown table."""
    base = statistics.fmean(rows[0].transcript_tokens) if rows[0].transcript_tokens else 1.0
    lines = ["| setting | evidence turns kept | sessions cut | mean transcript tokens | "
             "max transcript tokens | mean prompt tokens | tokens vs reference |",
             "|---|---|---|---|---|---|---|"]
    for row in rows:
        mean = statistics.fmean(row.transcript_tokens) if row.transcript_tokens else 0.0
        prompt = statistics.fmean(row.prompt_tokens) if row.prompt_tokens else 0.0
        ratio = f"{base / mean:.1f}x fewer" if mean and row is not rows[0] else "1x"
        lines.append(
            f"| {row.label} | {row.kept}/{row.evidence} ({100 * row.kept_share:.1f} %) | "
            f"{row.cut}/{row.sessions} | {mean:,.0f} | {max(row.transcript_tokens, default=0):,}"
            f" | {prompt:,.0f} | {ratio} |")
    return "\n".join(lines)


def choose(rows: Sequence[Row], *, keep: float = 0.95) -> Row | None:
    """The smallest budget that keeps at least ``keep`` of the evidence turns."""
    candidates = [r for r in rows[1:] if r.kept_share >= keep]
    return min(candidates, key=lambda r: statistics.fmean(r.transcript_tokens), default=None)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the table and the budget it suggests."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.budget", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True,
                        help="a LongMemEval file (.json or .json.gz) with has_answer turns")
    parser.add_argument("--budgets", type=counts, default=",".join(map(str, BUDGETS)),
                        help="comma-separated token budgets to measure")
    parser.add_argument("--limit", type=count, default=None, help="only the first N questions")
    args = parser.parse_args(argv)
    budgets = args.budgets
    started = time.perf_counter()
    data = Dataset.read(args.data)
    rows = asyncio.run(measure(data, budgets, args.limit))
    elapsed = time.perf_counter() - started
    print(table(rows))
    chosen = choose(rows)
    print()
    print(f"{rows[0].sessions} evidence sessions, {rows[0].evidence} evidence turns; "
          f"{elapsed:.1f} s on {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}")
    if chosen is not None:
        print(f"smallest budget keeping >= 95 % of evidence turns: {chosen.label} "
              f"(current default: {TRANSCRIPT_TOKENS} tokens)")
    return 0


if __name__ == "__main__":
    run_main(main)
