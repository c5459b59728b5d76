"""The summary cache port: model summaries kept for reuse, by what they depend on.

Part of the ports (:mod:`~harkback.stages.ports` names both again): kept apart so that
each module holds one concept.

>>> SummaryKey(root_session_id="s", content="d1", query="q", model="m", prompt_version="1"
...            ).root_session_id
's'
"""

from __future__ import annotations

from typing import Protocol

import attrs
from returns.future import FutureResult

from harkback.stages import records
from harkback.stages.errors import StoreUnavailable
from harkback.stages.redact.scrub import redact
from harkback.stages.text.tokens import normalize


@attrs.frozen(kw_only=True)
class SummaryKey:
    """What a cached model summary depends on.

    ``content`` is a digest of the exact model input (transcript cut, prompt,
    sampling settings), so any change to what the model would see is a new key.
    """

    root_session_id: str
    content: str
    query: str
    model: str
    """The model's name and endpoint (:func:`~harkback.stages.stage.model_in_key`)."""
    prompt_version: str


RANKINGS = "rerank-"
"""How the prompt version of a rerank batch's cached answer begins. The row sits under
the batch's first root only, but the answer (the model's whole reply) may quote any of
the batch's sessions: a rewrite that changes any session drops them all."""


def key_query(query: str) -> str:
    """The question as a :class:`SummaryKey` holds it: normalized, blanks collapsed, and
    a secret replaced by its placeholder, looked for first (case-folding hides ``AKIA…``
    from the rules, and a cache must not keep such a question: see ``keeps_no_secret``).

    >>> key_query("Docker  DNS"), key_query("why AKIAIOSFODNN7EXAMPLE")
    ('docker dns', 'why [secret:aws-access-key]')
    """
    return " ".join(normalize(redact(query)[0]).split())


class SummaryCache(Protocol):
    """Model summaries kept for reuse. A cache that cannot be written simply misses."""

    def cached_summary(self, key: SummaryKey
                       ) -> FutureResult[records.Summary | None, StoreUnavailable]:
        """The summary kept under ``key``, or None."""
        ...

    def keep_summary(self, key: SummaryKey, summary: records.Summary
                     ) -> FutureResult[None, StoreUnavailable]:
        """Keep ``summary`` under ``key`` (replacing any older one)."""
        ...
