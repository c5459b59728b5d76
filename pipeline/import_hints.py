"""What ``harkback import`` says of a folder holding nothing of the kind it was asked to
read: a folder of Claude Code projects imported as ``codex`` (or an empty one) printed
``0 added`` and nothing else, as if all had gone well.

``harkback sync`` gives the same note for a location a flag named (``--codex DIR``).
The import still ends as done (exit status 0: nothing failed, and an empty folder may be
right, a new machine's), with a note naming where that kind's transcripts live.

>>> from harkback.stages.imports import SourceKey
>>> empty = ImportOutcome(key=SourceKey(kind="codex", location="/tmp/x"))
>>> print(with_hint(empty, {"CODEX_HOME": "/h/.codex"}).notes[0])
no codex transcripts found in /tmp/x: Codex keeps its sessions as rollout-*.jsonl files in \
dated folders below /h/.codex/sessions, where `harkback sync` looks
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from harkback.pipeline.config import default_location
from harkback.pipeline.importing import ImportOutcome

WHERE = {
    "claude-code": "Claude Code keeps its transcripts as <session>.jsonl files in a folder "
                   "per project below {}",
    "codex": "Codex keeps its sessions as rollout-*.jsonl files in dated folders below {}",
}
"""Where each kind of transcripts folder holds its files, around its default location."""


def with_hint(outcome: ImportOutcome, environ: Mapping[str, str] | None = None
              ) -> ImportOutcome:
    """``outcome`` with a note saying no transcripts of its kind were found where it read,
    and where they live, when it read none at all (no session, unchanged, damaged or left
    out, or kept from a file emptied since; none gone since an earlier import)."""
    d, kind = outcome.delta, outcome.key.kind
    if (kind not in WHERE or not outcome.ok or outcome.skips or outcome.left_out
            or outcome.gone or d.sessions_added or d.sessions_updated or d.sessions_unchanged
            or d.messages_kept):  # an emptied transcript is found: it is named, its session kept
        return outcome
    hint = (f"no {kind} transcripts found in {outcome.key.location}: "
            f"{WHERE[kind].format(default_location(kind, environ))}, where `harkback sync` "
            "looks")
    return attrs.evolve(outcome, notes=(*outcome.notes, hint))
