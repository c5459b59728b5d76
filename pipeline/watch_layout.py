"""What a ``sync --watch`` watches, and whether that changed under it.

The watcher (``watchfiles``) follows the folders it was started on: a source folder moved
away, deleted or made again, or an agent's history that first appears while the watch
runs (Codex run for the first time), went unseen until the watch was restarted. A
:class:`Layout` is the importers watched and each one's folder with its identity (device
and inode, None when it is not there); :meth:`Layout.now` is the layout with what is there
now, and the watch starts its watcher again when the two differ.

>>> from harkback.adapters.sources.hermes import HermesImporter
>>> watched_folder(HermesImporter(Path("/h/state.db"))).as_posix()
'/h'
>>> Layout.of([]).folders
()
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from stat import S_ISDIR

import attrs

from harkback.adapters.sources.hermes import HermesImporter
from harkback.adapters.sources.importing import Importer
from harkback.adapters.sources.transcripts import TranscriptImporter
from harkback.pipeline.sync import Located

Identity = tuple[int, int] | None
"""A folder's device and inode; None when no folder is there."""


def watched_folder(importer: Importer) -> Path:
    """The folder to watch for ``importer``'s source."""
    location = Path(importer.key.location)
    return location.parent if isinstance(importer, HermesImporter) else location


def watched_folders(importer: Importer) -> tuple[Path, ...]:
    """Every folder to watch for ``importer``'s source: :func:`watched_folder`, then the
    folders read beside it (Codex's ``archived_sessions``).

    >>> from harkback.adapters.sources.codex import CODEX
    >>> [p.as_posix() for p in watched_folders(TranscriptImporter(
    ...     CODEX, Path("/c/sessions"), (Path("/c/archived_sessions"),)))]
    ['/c/sessions', '/c/archived_sessions']
    """
    beside = importer.beside if isinstance(importer, TranscriptImporter) else ()
    return (watched_folder(importer), *beside)


def identity(folder: Path) -> Identity:
    """The device and inode of ``folder``, or None when it is not a folder there now."""
    try:
        found = os.stat(folder)
    except OSError:
        return None
    return (found.st_dev, found.st_ino) if S_ISDIR(found.st_mode) else None


@attrs.frozen
class Layout:
    """The importers a watch re-syncs, and each watched folder with its identity."""

    importers: tuple[Importer, ...]
    identities: tuple[tuple[Path, Identity], ...]
    optional: frozenset[Path] = frozenset()
    """Folders watched once they are there, and not missed until then (an archive)."""

    @classmethod
    def of(cls, importers: Iterable[Importer]) -> Layout:
        """The layout of ``importers``, their folders as they are now."""
        kept = tuple(importers)
        folders = sorted({f for i in kept for f in watched_folders(i)})
        main = {watched_folder(i) for i in kept}
        return cls(kept, tuple((folder, identity(folder)) for folder in folders),
                   frozenset(folders) - main)

    @property
    def folders(self) -> tuple[Path, ...]:
        """The watched folders that are there (the watcher can only be given those)."""
        return tuple(folder for folder, found in self.identities if found is not None)

    @property
    def missing(self) -> tuple[Path, ...]:
        """The watched folders that are not there now (but an optional one)."""
        return tuple(folder for folder, found in self.identities
                     if found is None and folder not in self.optional)

    def now(self, found: Sequence[Located] = ()) -> Layout:
        """This layout as the folders are now, with the importers of ``found`` it lacks.

        An importer whose source went away is kept: its next sync says so, and it is
        watched again when it comes back.
        """
        known = {i.key for i in self.importers}
        added = [i for place in found for i in place.importers if i.key not in known]
        return Layout.of((*self.importers, *added))
