"""A source filter naming a source the store holds no session of (a typo, ``Codex`` for
``codex``, ``claude`` for ``claude-code``) finds nothing, and an agent or a person then
believes nothing happened. A filtered search or listing that found nothing says so in its
notes: which names the store holds no session of, the one meant when a name is close, and
the sources it does hold. The filter itself is unchanged: names match exactly.

The store is asked (:meth:`~harkback.stages.ports.SessionStore.source_names`) only when a
filtered call found nothing, so every other search costs what it did.

>>> note = unheld_note(("Codex",), ("claude-code", "codex"))[0]
>>> for part in note.split("; "):
...     print(part)
this store holds no session from source 'Codex' (did you mean 'codex'?)
the sources it holds: 'claude-code', 'codex'
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import TypeVar

import attrs
from returns.future import FutureResult

from harkback.stages.errors import RecallError, StoreUnavailable
from harkback.stages.ports import Deps
from harkback.stages.result import BrowseResult, RecallResult
from harkback.stages.shown_number import shown_text
from harkback.stages.stage import Step, pure, with_store

SOURCES_SHOWN = 30
"""How many of the sources held a note names (then how many more)."""

Result = TypeVar("Result", RecallResult, BrowseResult)

HERMES = (" (a Hermes session's source is the platform Hermes gave it: cli, telegram, "
          "discord, ...)")
"""Said of ``--source hermes``: ``sync`` and ``sources`` name the import ``hermes``, and
its sessions were not found under that name."""


shown = shown_text
"""A source's ``name`` as a note echoes it (:func:`~harkback.stages.shown_number.shown_text`)."""


def closest(name: str, held: Sequence[str]) -> str | None:
    """The held source ``name`` was probably meant to be: one differing only in case, else
    the nearest close spelling; None when none is close.

    >>> closest("Codex", ["codex"]), closest("claude", ["claude-code", "cli"])
    ('codex', 'claude-code')
    >>> closest("telegram", ["codex", "cli"]) is None
    True
    """
    folded = {source.casefold(): source for source in reversed(held)}  # the first one wins
    if name.casefold() in folded:
        return folded[name.casefold()]
    near = difflib.get_close_matches(name.casefold(), list(folded), n=1)
    return folded[near[0]] if near else None


def unheld_note(asked: Sequence[str], held: Sequence[str]) -> tuple[str, ...]:
    """The note on the names of ``asked`` that are none of the ``held`` sources (none when
    every one is held).

    >>> unheld_note(("codex",), ("codex",))
    ()
    >>> print(unheld_note(("cdx", "zzz"), ())[0])
    this store holds no session from sources 'cdx', 'zzz'; it holds no session at all
    >>> print(unheld_note(("hermes",), ("cli",))[0])
    this store holds no session from source 'hermes' (a Hermes session's source is the \
platform Hermes gave it: cli, telegram, discord, ...); the sources it holds: 'cli'
    """
    unheld = [name for name in asked if name not in held]
    if not unheld:
        return ()
    named = []
    for name in unheld:
        meant = closest(name, held)
        named.append(shown(name) + (f" (did you mean {shown(meant)}?)" if meant else
                                    HERMES if name.casefold() == "hermes" else ""))
    said = f"this store holds no session from source{'s' if len(unheld) > 1 else ''} " + \
        ", ".join(named)
    if not held:
        return (f"{said}; it holds no session at all",)
    listed = ", ".join(shown(source) for source in held[:SOURCES_SHOWN])
    more = f" and {len(held) - SOURCES_SHOWN} more" if len(held) > SOURCES_SHOWN else ""
    return (f"{said}; the sources it holds: {listed}{more}",)


def unheld_noted(sources: Sequence[str], result: Result) -> Step[Result]:
    """``result`` with the note on the ``sources`` it was filtered by that the store holds
    no session of, when it found nothing; as it is otherwise, the store not asked."""
    if result.results or not sources:
        return pure(result)
    return sources_held(sources).map(lambda held: held_noted(sources, held, result))


def sources_held(sources: Sequence[str]) -> Step[tuple[str, ...] | None]:
    """The sources the store holds when ``sources`` filter a call (None without a filter,
    the store not asked, or when the store cannot say)."""
    if not sources:
        return pure(None)
    return with_store(_source_names).map(_some).lash(_unsaid)


def _source_names(deps: Deps) -> FutureResult[tuple[str, ...], StoreUnavailable]:
    # A caller's own store written before the port named source_names cannot say either;
    # asking it raised AttributeError out of a search that had found nothing.
    names = getattr(deps.store, "source_names", None)
    if not callable(names):
        return FutureResult.from_failure(StoreUnavailable("the store names no sources"))
    listed: FutureResult[tuple[str, ...], StoreUnavailable] = names()
    return listed


def held_noted(sources: Sequence[str], held: tuple[str, ...] | None, result: Result) -> Result:
    """``result`` with the note on the ``sources`` none of ``held`` when it found nothing."""
    if held is None:
        return result
    unheld: tuple[str, ...] = () if result.results else unheld_note(sources, held)
    return attrs.evolve(result, notes=(*result.notes, *unheld)) if unheld else result


def _some(held: tuple[str, ...]) -> tuple[str, ...] | None:
    return held


def _unsaid(_error: RecallError) -> Step[tuple[str, ...] | None]:
    # The search itself succeeded: a store that cannot list its sources leaves it unsaid.
    return pure(None)
