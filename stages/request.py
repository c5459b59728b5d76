"""What a caller asks for: a search request, validated from what the caller typed.

>>> SearchRequest(query="docker network").limit
3
>>> make_request("docker", since="2026-03-01").unwrap().since
1772323200.0
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs
from returns.result import Failure, Result, Success

from harkback.stages.defaults import DEFAULT_LIMIT, MAX_LIMIT
from harkback.stages.errors import QueryRejected
from harkback.stages.query import MAX_QUERY_CHARS
from harkback.stages.record_checks import epoch_or_none
from harkback.stages.records import ROLES, Role, mended
from harkback.stages.shown_number import shown_number
from harkback.stages.time_bounds import TimeGiven, given_time, out_of_order

MAX_SHORTLIST = 50
"""The most candidates resolve keeps for a rerank stage to choose from."""

MAX_NAMES = 100
"""Sources, and projects, a request may name."""
DEFAULT_HIDDEN_SOURCES: tuple[str, ...] = ("tool", "kanban")
DEMOTED_SOURCES: tuple[str, ...] = ("cron",)
"""Sources of sessions no person started (a scheduler's): a search counts them half, a
question naming only a time lists them after the user's own sessions."""
DEFAULT_ROLES: tuple[Role, ...] = ("user", "assistant")


def _mended_names(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(map(mended, names))


def _a_text(_inst: object, attribute: attrs.Attribute[str], value: object) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{attribute.name} must be text, got {type(value).__name__}")


def _a_count(_inst: object, attribute: attrs.Attribute[int], value: object) -> None:
    # Before the range checks, which said "'>=' not supported between 'str' and 'int'".
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{attribute.name} must be a whole number, got {value!r}"[:80])


def _roles_valid(_inst: object, _attr: object, roles: tuple[str, ...]) -> None:
    unknown = [r for r in roles if r not in ROLES]
    if unknown or not roles:
        raise ValueError(f"roles must be a non-empty subset of {ROLES}, got {roles!r}")


@attrs.frozen(kw_only=True)
class SearchRequest:
    """One recall request. Build it with :func:`make_request` to get errors as values.

    ``shortlist`` is how many candidates resolve keeps when a later stage (rerank) will
    choose ``limit`` among them; 0 keeps ``limit``. ``weighed`` holds the windows of the
    times the query names as the ranker weighs them, when read already (None: the matcher
    reads them, :func:`~harkback.stages.named_times.weighed_times`). The pipeline sets
    both, not the caller.
    ``sources`` and ``projects``, when given, are the only ones searched (a project is
    named by its folder's path or name); ``hidden_sources`` are never searched, unless
    :func:`make_request` was given one of them in ``sources``.
    Texts are :func:`~harkback.stages.records.mended` as the stores hold them.
    """

    query: str = attrs.field(converter=mended, validator=_a_text)
    limit: int = attrs.field(default=DEFAULT_LIMIT, validator=[
        _a_count, attrs.validators.ge(1), attrs.validators.le(MAX_LIMIT)])
    roles: tuple[Role, ...] = attrs.field(default=DEFAULT_ROLES, validator=_roles_valid)
    current_session_id: str | None = attrs.field(default=None,
                                                  converter=attrs.converters.optional(mended))
    # Epoch seconds: text, datetimes and dates are read by make_request, not here, where
    # one failed deep in a store ("'<' not supported between 'float' and 'str'").
    since: float | None = attrs.field(default=None, validator=epoch_or_none)
    until: float | None = attrs.field(default=None, validator=epoch_or_none)
    hidden_sources: tuple[str, ...] = attrs.field(default=DEFAULT_HIDDEN_SOURCES,
                                                  converter=_mended_names)
    shortlist: int = attrs.field(default=0, validator=[
        _a_count, attrs.validators.ge(0), attrs.validators.le(MAX_SHORTLIST)])
    sources: tuple[str, ...] = attrs.field(default=(), converter=_mended_names)
    projects: tuple[str, ...] = attrs.field(default=(), converter=_mended_names)
    weighed: tuple[tuple[float, float], ...] | None = None

    @property
    def is_browse(self) -> bool:
        """An empty query lists recent sessions instead of searching."""
        return not self.query.strip()


def make_request(query: str, *, limit: int = DEFAULT_LIMIT, roles: tuple[str, ...] = DEFAULT_ROLES,
                 current_session_id: str | None = None, since: TimeGiven | None = None,
                 until: TimeGiven | None = None,
                 hidden_sources: tuple[str, ...] = DEFAULT_HIDDEN_SOURCES,
                 now: float | None = None, sources: tuple[str, ...] = (),
                 projects: tuple[str, ...] = ()) -> Result[SearchRequest, QueryRejected]:
    """Validate caller input into a :class:`SearchRequest`, or say what is wrong.

    >>> make_request("x", limit=99).failure().reason
    'limit must be between 1 and 10, got 99'
    >>> make_request("x", projects=("/",)).failure().reason[:40]
    "no project folder named by '/': give a p"
    >>> make_request("x", sources=("tool",)).unwrap().hidden_sources
    ('kanban',)
    """
    wrong = _wrong_type(query, limit, {"roles": roles, "sources": sources, "projects": projects,
                                       "hidden_sources": hidden_sources})
    if wrong is None and not isinstance(current_session_id, str | None):
        # An agent's own id as a number (12345) matched no stored id ("12345"), so its own
        # live session came back as memory without a word.
        wrong = (f"current_session_id must be text, got {type(current_session_id).__name__}"
                 f" (write it as current_session_id=str(...))")
    if wrong is not None:
        return Failure(QueryRejected(wrong))
    if not 1 <= limit <= MAX_LIMIT:
        return Failure(QueryRejected(f"limit must be between 1 and {MAX_LIMIT}, "
                                     f"got {shown_number(limit)}"))
    asked = {"sources": sources, "projects": projects}
    roles, sources, projects, hidden_sources = (
        _listed(roles), _listed(sources), _listed(projects), _listed(hidden_sources))
    problem = role_problem(roles)
    if problem is not None:
        return Failure(QueryRejected(problem))
    bounds: list[float | None] = []
    for name, bound in (("since", since), ("until", until)):
        if bound is None:
            bounds.append(None)
            continue
        # An upper bound's day is in: until "yesterday" or "2026-03-04" is to its end.
        parsed = given_time(bound, now=now, what=name, end=name == "until")
        if isinstance(parsed, Failure):
            return Failure(parsed.failure())
        bounds.append(parsed.unwrap())
    if (since is not None and until is not None and bounds[0] is not None
            and bounds[1] is not None and bounds[0] > bounds[1]):
        return Failure(out_of_order((since, bounds[0]), (until, bounds[1])))
    kept = _names(sources), _names(p.rstrip("/") for p in projects)
    for (what, given), names in zip(asked.items(), kept, strict=True):
        # A filter given that names nothing (an unset shell variable: --source "$SRC") is
        # refused, as an empty --role is: it must not quietly become no filter at all.
        if (isinstance(given, str) or given) and not names:
            return Failure(QueryRejected(_NAMES_NOTHING[what].format(_shown(given))))
        # Each project name is compared with every session: thousands of them (an agent's
        # comma list) kept a search busy for minutes.
        if len(names) > MAX_NAMES:
            return Failure(QueryRejected(f"at most {MAX_NAMES} {what}, got {len(names)}"))
        # SQLite's text functions end a text at a NUL: a project "\0/x" matched every
        # session, a source "telegram\0" those of telegram. No name holds one.
        held = [name for name in names if "\x00" in name]
        if held:
            return Failure(QueryRejected(f"{what[:-1]} names cannot hold a NUL character, "
                                         f"got {_shown(held)}"))
    # The same for a library caller's hidden sources: "cli\0x" hid the cli sessions in
    # SQLite alone (its JSON lists end a text at a NUL), and nothing in the other stores.
    held = [name for name in hidden_sources if "\x00" in name]
    if held:
        return Failure(QueryRejected(f"hidden source names cannot hold a NUL character, "
                                     f"got {_shown(held)}"))
    return Success(SearchRequest(
        # Only the first MAX_QUERY_CHARS characters are read, by every stage.
        query=query[:MAX_QUERY_CHARS].replace("\x00", " "), limit=limit,
        roles=tuple(r for r in ROLES if r in roles),
        current_session_id=current_session_id or None,
        since=bounds[0], until=bounds[1],
        # A hidden source named in ``sources`` is asked for: hiding it would answer
        # ``--source tool`` with nothing, and not a word why.
        hidden_sources=tuple(h for h in hidden_sources if h not in kept[0]),
        sources=kept[0], projects=kept[1]))


def _wrong_type(query: object, limit: object, names: dict[str, object]) -> str | None:
    """What a library caller gave of the wrong type (None: nothing), so that a slip such as
    ``search(None)`` or ``limit=1.5`` is refused as a value naming the argument, not raised
    from deep inside a stage ('NoneType' object is not subscriptable).

    >>> _wrong_type(None, 3, {})
    'query must be text, got NoneType'
    >>> _wrong_type("x", 3, {"sources": ("codex", 7)})
    'sources must be text or a tuple of texts, got a tuple holding int'
    """
    if not isinstance(query, str):
        return f"query must be text, got {type(query).__name__}"
    if isinstance(limit, bool) or not isinstance(limit, int):
        return f"limit must be a whole number, got {limit!r}"[:80]
    for name, given in names.items():
        if isinstance(given, str):
            continue
        if not isinstance(given, tuple | list | set | frozenset):
            return f"{name} must be text or a tuple of texts, got {type(given).__name__}"
        odd = [type(item).__name__ for item in given if not isinstance(item, str)]
        if odd:
            return (f"{name} must be text or a tuple of texts, got a {type(given).__name__} "
                    f"holding {odd[0]}")
    return None


def role_problem(roles: Iterable[str]) -> str | None:
    """What is wrong with a choice of roles to search or embed (None: nothing).

    >>> role_problem(("user", "robot"))
    'unknown role(s) robot; choose from user, assistant, tool, system'
    """
    chosen = tuple(roles)
    bad = [r for r in chosen if r not in ROLES]
    if bad or not chosen:
        return (f"unknown role(s) {', '.join(bad) or '(none given)'}; choose from "
                + ", ".join(ROLES))
    return None


def _listed(given: Iterable[str]) -> tuple[str, ...]:
    """Names given as a tuple, or as one comma list as the command line takes them: a
    plain string is iterable too, and ``sources="codex"`` read letter by letter found
    nothing without a word.

    >>> _listed("user, assistant"), _listed(("cli",))
    (('user', 'assistant'), ('cli',))
    """
    if isinstance(given, str):
        return tuple(name.strip() for name in given.split(",") if name.strip())
    return tuple(given)


_NAMES_NOTHING = {
    "sources": "no source named by {}: give one (codex, claude-code, cli, ...) or leave the "
               "filter out",
    "projects": "no project folder named by {}: give a project's path or its last folder's "
                "name ('/' alone names none), or leave the filter out"}


def _shown(given: str | Iterable[str]) -> str:
    return repr(given) if isinstance(given, str) else ", ".join(map(repr, given))


def _names(given: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n.strip() for n in given if n.strip()))
