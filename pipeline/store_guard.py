"""Whether a store file is still the one a long-running command opened.

SQLite writes to the file it opened, whatever its name points at later: a store deleted
(or replaced by another file) under a running ``sync --watch`` took every re-sync into a
file no one can open again, each one reported as stored. :class:`StoreFile` remembers
the file by its identity (device and inode) when the command opens it, and
:meth:`StoreFile.problem` says, before each write, when the name no longer leads there.

>>> StoreFile.of("postgresql://db.example/h") is None, StoreFile.of(":memory:") is None
(True, True)
"""

from __future__ import annotations

import os
from pathlib import Path

import attrs

from harkback.pipeline.terminal import one_line


@attrs.frozen
class StoreFile:
    """A SQLite store's path and the identity (device, inode) it had when opened."""

    path: Path
    identity: tuple[int, int]

    @classmethod
    def of(cls, target: str) -> StoreFile | None:
        """The store file ``target`` names now; None for a server URL, ``:memory:`` or a
        file that is not there (nothing to guard)."""
        from harkback.pipeline.wiring import store_kind  # only for a long-running command

        if store_kind(target) != "sqlite":
            return None
        path = Path(os.path.expanduser(target))
        try:
            found = os.stat(path)
        except OSError:
            return None
        return cls(path, (found.st_dev, found.st_ino))

    def problem(self) -> str | None:
        """What became of the file when its name no longer leads to it, else None."""
        try:
            found = os.stat(self.path)
        except FileNotFoundError:
            # A store moved (mv) reads as one deleted: its name leads nowhere either way.
            became = "was deleted or moved away"
        except OSError:
            return None  # a folder on the way made unreadable: the writes still land there
        else:
            if (found.st_dev, found.st_ino) == self.identity:
                return None
            became = "was replaced by another file"
        return (f"the store {one_line(str(self.path))} {became} while harkback wrote to it; "
                f"stopped (run the command again to fill the file there now)")
