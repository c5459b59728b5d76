"""The summarize stages that need no model, and the helper every summarizer shares.

A summarizer turns :class:`~harkback.stages.flow.Loaded` into
:class:`~harkback.stages.flow.SummarizedSet`. :func:`summarize_each` runs a
per-transcript step over all transcripts at once with ``asyncio.gather``; each
step already returns a container, so one failure cannot cancel its siblings.
The summarizers here neither wait nor fail: :func:`summarize_all` runs them in one pass.

>>> ExtractiveSummarize().max_chars, RawSummarize().chars
(1200, 500)
"""

from __future__ import annotations

from collections.abc import Callable

import attrs
from returns.context import RequiresContextFutureResult
from returns.future import FutureResult

from harkback.stages.errors import RecallError
from harkback.stages.flow import Loaded, SummarizedSet
from harkback.stages.ports import Deps
from harkback.stages.records import Summarized, Summary, Transcript
from harkback.stages.stage import Step, gather
from harkback.stages.summarize.extractive import (
    LINE_WIDTH,
    MAX_CHARS,
    MAX_LINES,
    extractive_summary,
)

RAW_CHARS = 500
"""The reference system's fallback: the first 500 characters of the transcript."""

PerTranscript = Callable[[Transcript], Step[Summary]]
Fallback = Callable[[Transcript, RecallError], Summary]


def summarize_each(loaded: Loaded, one: PerTranscript, *,
                   fallback: Fallback | None = None) -> Step[SummarizedSet]:
    """Summarise every transcript of ``loaded`` concurrently, keeping their order.

    A transcript whose step fails gets ``fallback(transcript, error)`` instead; without
    a fallback, the first failure (in transcript order) fails the whole set, but only
    after every step has finished.
    """
    def run(deps: Deps) -> FutureResult[SummarizedSet, RecallError]:
        steps = [one(t)(deps) for t in loaded.transcripts]
        if fallback is not None:
            steps = [step.lash(_rescue(t, fallback)) for t, step in zip(loaded.transcripts, steps,
                                                                        strict=True)]
        paired = [step.map(_pair(t)) for t, step in zip(loaded.transcripts, steps, strict=True)]
        return gather(paired).map(lambda items: SummarizedSet.after(loaded, items=items))

    return RequiresContextFutureResult(run)


def summarize_all(loaded: Loaded, one: Callable[[Transcript], Summary]) -> Step[SummarizedSet]:
    """Summarise every transcript of ``loaded`` with ``one``, a function that cannot fail
    and waits for nothing, keeping their order.

    :func:`summarize_each` gathers a task per transcript, ~20 us each; work that never
    waits runs one transcript after another either way, so it is done in one pass here.
    """
    def run(_deps: Deps) -> FutureResult[SummarizedSet, RecallError]:
        return FutureResult.from_value(SummarizedSet.after(loaded, items=tuple(
            Summarized(transcript=t, summary=one(t)) for t in loaded.transcripts)))

    return RequiresContextFutureResult(run)


def _rescue(transcript: Transcript, fallback: Fallback
            ) -> Callable[[RecallError], FutureResult[Summary, RecallError]]:
    return lambda error: FutureResult.from_value(fallback(transcript, error))


def _pair(transcript: Transcript) -> Callable[[Summary], Summarized]:
    return lambda summary: Summarized(transcript=transcript, summary=summary)


@attrs.frozen
class ExtractiveSummarize:
    """The default summarizer without a model: query-focused lines of the transcript.

    See :func:`~harkback.stages.summarize.extractive.extractive_summary`.
    """

    max_chars: int = attrs.field(default=MAX_CHARS, validator=attrs.validators.ge(1))
    max_lines: int = attrs.field(default=MAX_LINES, validator=attrs.validators.ge(1))
    width: int = attrs.field(default=LINE_WIDTH, validator=attrs.validators.ge(1))

    def __call__(self, loaded: Loaded) -> Step[SummarizedSet]:
        """Summarise every transcript of ``loaded``."""
        return summarize_all(loaded, lambda t: extractive_summary(
            t.text, loaded.parsed, max_chars=self.max_chars, max_lines=self.max_lines,
            width=self.width))


def raw_summary(text: str, chars: int = RAW_CHARS) -> Summary:
    """The first ``chars`` characters of a transcript.

    >>> raw_summary("[USER]: hello there", 12).text
    '[USER]: hell'
    """
    return Summary(text=text[:chars], kind="raw")


@attrs.frozen
class RawSummarize:
    """The first ``chars`` characters of each transcript (the reference's fallback)."""

    chars: int = attrs.field(default=RAW_CHARS, validator=attrs.validators.ge(0))

    def __call__(self, loaded: Loaded) -> Step[SummarizedSet]:
        """Summarise every transcript of ``loaded``."""
        return summarize_all(loaded, lambda t: raw_summary(t.text, self.chars))


NO_SUMMARY = Summary(text="", kind="none")


@attrs.frozen
class NoSummarize:
    """No summary at all: the ranked sessions alone (for evaluation harnesses)."""

    def __call__(self, loaded: Loaded) -> Step[SummarizedSet]:
        """Pair every transcript of ``loaded`` with an empty summary."""
        return summarize_all(loaded, lambda _t: NO_SUMMARY)
