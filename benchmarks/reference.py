"""The reference system's recall, rebuilt from harkback parts, to time side by side.

What the reference does (see the design notes): every word of the question is
required (FTS5's implicit AND), and only when that finds nothing are the same
words tried again joined by OR; all matches are BM25-scored (no bound on rows);
the first hit of each lineage stands for it; the whole conversation is loaded and
cut to one 100,000-character window around that hit. The no-model summary is the
first 500 characters; with a model, the whole window is sent.

The match stage is :class:`~harkback.stages.match.rankers.ReferenceMatch` (the ranking
comparison uses it too); this module adds the rest of the reference pipeline.

>>> type(reference_pipeline().match).__name__
'ReferenceMatch'
"""

from __future__ import annotations

import attrs

from harkback.pipeline.compose import Pipeline
from harkback.stages.flow import Matched, Resolved
from harkback.stages.load.load import Load
from harkback.stages.match.rankers import ReferenceMatch
from harkback.stages.resolve import LineageResolve
from harkback.stages.stage import Step
from harkback.stages.summarize.plain import RawSummarize

WINDOW_CHARS = 100_000


@attrs.frozen
class FirstHitResolve:
    """One candidate per lineage, carrying only its first hit."""

    inner: LineageResolve = LineageResolve()

    def __call__(self, matched: Matched) -> Step[Resolved]:
        """Resolve, then keep each candidate's first hit."""
        return self.inner(matched).map(lambda resolved: attrs.evolve(
            resolved, candidates=tuple(attrs.evolve(c, hits=c.hits[:1])
                                       for c in resolved.candidates)))


def reference_pipeline() -> Pipeline:
    """The reference recall: strict match, first hit, one 100k window, raw summary."""
    return Pipeline(match=ReferenceMatch(), resolve=FirstHitResolve(),
                    load=Load(budget_chars=WINDOW_CHARS), summarize=RawSummarize())
