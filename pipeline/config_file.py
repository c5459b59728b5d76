"""Reading the config file: what it holds as TOML, each key with the line that sets it.

Bounded and careful before any open (a pipe, a device, a folder or a log file named by
mistake is refused in one line naming the fix); what the keys mean and whether their
values fit is :mod:`harkback.pipeline.settings`' business, not this module's.

>>> from pathlib import Path
>>> read_table(Path("/nonexistent/config.toml")).unwrap() is None
True
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import attrs
from returns.result import Failure, Result, Success

from harkback.adapters.file_kinds import special_kind

CONFIG_VARIABLE = "HARKBACK_CONFIG"
"""The environment variable naming a config file other than the default one."""

CONFIG_BYTES = 2 ** 20
"""The most a config file may hold (a few keys take a few hundred bytes)."""

_AT_LINE = re.compile(r"\s*\(at line (\d+), column \d+\)|\s*\(at end of document\)")


@attrs.frozen
class Table:
    """A config file's top-level keys with their values, in the file's order, and its text.

    >>> Table({"db": "h.db"}, "# mine\\ndb = 'h.db'").line("db")
    2
    """

    values: dict[str, Any]
    text: str

    def line(self, name: str) -> int:
        """The line (from 1) where key or table ``name`` is set, or 1 when not found.

        Asked a key at a time, as settings checks them: each call scans the text, and the
        lines of all 90,000 keys of a file, worked out before its first key was refused as
        unknown, took minutes."""
        pattern = re.compile(rf"""^\s*(?:\[\s*)?["']?{re.escape(name)}["']?\s*(?:=|\]|\.)""")
        for number, line in enumerate(self.text.splitlines(), start=1):
            if pattern.match(line):
                return number
        return 1


def read_table(path: Path, *, must_exist: bool = False) -> Result[Table | None, str]:
    """The file's :class:`Table`; None when there is no file (a Failure when
    ``must_exist``: the environment named it)."""
    import tomllib  # only when a command runs, not for --help

    # Looked at before any open: opening a FIFO with no writer hung the command unseen.
    kind = special_kind(path)
    if kind is not None:  # <(...) and a piped /dev/stdin are pipes: /dev/fd/63 hides it
        fix = ("a pipe, <(...) or a piped /dev/stdin too, is not read: write the config to a "
               "file and point" if "pipe" in kind else "point")
        return Failure(f"config file {path} is {kind}, not a regular file: {fix} "
                       f"${CONFIG_VARIABLE} at a config file")
    try:
        # Bounded: a log file named by mistake is not read whole.
        with path.open("rb") as handle:
            raw = handle.read(CONFIG_BYTES + 1)
        if len(raw) > CONFIG_BYTES:
            return Failure(f"config file {path} is longer than 1 MiB: not a harkback config "
                           f"file; point ${CONFIG_VARIABLE} at one")
        text = raw.decode("utf-8-sig")  # Notepad starts with a BOM
    except (FileNotFoundError, NotADirectoryError):  # NotADirectory: $HOME is a file
        if must_exist:
            return Failure(f"config file {path} (named by ${CONFIG_VARIABLE}) does not exist: "
                           f"create it or unset {CONFIG_VARIABLE}")
        return Success(None)
    except IsADirectoryError:  # no permission to fix: a file must be named
        return Failure(f"config file {path} is a folder: point ${CONFIG_VARIABLE} at a file "
                       f"such as {path / 'config.toml'}")
    except UnicodeDecodeError:
        return Failure(f"config file {path} is not UTF-8 text: save it as UTF-8")
    except OSError as error:
        reason = getattr(error, "strerror", None) or error
        return Failure(f"cannot read config file {path}: {reason}; fix its permissions or "
                       f"point ${CONFIG_VARIABLE} elsewhere")
    try:
        data = tomllib.loads(text)
    except RecursionError:  # tomllib recurses per nesting level: `a = [[[[...]]]]` ended in exit 70
        return Failure(f"config file {path}: not valid TOML for harkback (values nested deeper "
                       "than it reads); write key = value, text in quotes")
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        found = _AT_LINE.search(message)
        line = found.group(1) if found and found.group(1) else str(text.count("\n") + 1)
        reason = _AT_LINE.sub("", message).rstrip(".")
        return Failure(f"config file {path} line {line}: not valid TOML ({reason[:1].lower()}"
                       f"{reason[1:]}); write key = value, text in quotes")
    except ValueError:  # tomllib's int() past 4,300 digits (limit = 999…): exit 70 before
        return Failure(f"config file {path}: a whole number there has more than 4,300 "
                       "digits, more than can be read: write a shorter one")
    return Success(Table(data, text))
