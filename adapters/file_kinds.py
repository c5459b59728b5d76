"""What stands at a path that exists but is no regular file: a FIFO, a socket, a device.

Found with ``stat``, which opens nothing: opening a FIFO to read it waits for a writer (a
command hung before printing a line), a device may read forever (``/dev/zero``) or swallow
what is written (``/dev/null``). Each reader of a file (the store, a config file, a Hermes
``state.db``) names the kind in its own refusal.

>>> special_kind(Path("/dev/null"))
'a character device'
>>> special_kind(Path("/no/such/file")) is None, special_kind(Path("/")) is None
(True, True)
"""

from __future__ import annotations

import stat
from pathlib import Path

_KINDS = {stat.S_IFIFO: "a named pipe (FIFO)", stat.S_IFSOCK: "a socket",
          stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device"}


def special_kind(path: Path) -> str | None:
    """The kind of ``path`` when it is a FIFO, a socket or a device (symbolic links are
    followed); None for a regular file, a folder (each reader words that one its own way),
    or a path that is missing or cannot be looked at (the open then says why)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    return _KINDS.get(stat.S_IFMT(mode))
