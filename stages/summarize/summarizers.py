"""The summarizers by name, for ``--summarizer`` and ``Pipeline(summarize=SUMMARIZERS[name])``.

``llm`` needs a chat model in the stage's dependencies; without one it gives every
session the extractive summary and makes no network call.

>>> sorted(SUMMARIZERS)
['extractive', 'llm', 'none', 'raw']
>>> from harkback.stages.defaults import SUMMARIZER_NAMES  # the names the MCP server lists
>>> tuple(sorted(SUMMARIZERS)) == SUMMARIZER_NAMES
True
>>> type(SUMMARIZERS[DEFAULT_SUMMARIZER]).__name__
'ExtractiveSummarize'
"""

from __future__ import annotations

from collections.abc import Mapping

from harkback.stages.flow import Loaded, SummarizedSet
from harkback.stages.stage import Stage
from harkback.stages.summarize.model import LlmSummarize
from harkback.stages.summarize.plain import ExtractiveSummarize, NoSummarize, RawSummarize

MODEL_SUMMARIZER = "llm"
"""The summarizer that asks a chat model; the default when a model is configured."""

DEFAULT_SUMMARIZER = "extractive"
"""The summarizer without a model: lines of the transcript, no network."""

SUMMARIZERS: Mapping[str, Stage[Loaded, SummarizedSet]] = {
    "extractive": ExtractiveSummarize(),
    "raw": RawSummarize(),
    "none": NoSummarize(),
    MODEL_SUMMARIZER: LlmSummarize(),
}
