"""Which sessions a query's filters keep: not a hidden source, one of the sources and of
the projects asked for. The memory store applies this; the SQLite store's statements say
the same in SQL (``adapters/stores/sql/statement.py``).
"""

from __future__ import annotations

from harkback.stages.ports import MatchQuery, NearestQuery, RecentQuery


def project_matches(project: str, wanted: str) -> bool:
    """Is a session's ``project`` folder the one ``wanted`` names: the same path, or a
    path whose last folder is that name?

    >>> project_matches("/home/me/src/harkback", "harkback")
    True
    >>> project_matches("/home/me/src/harkback/", "/home/me/src/harkback")
    True
    >>> project_matches("/home/me/src/old-harkback", "harkback"), project_matches("", "x")
    (False, False)
    """
    folder, name = project.rstrip("/"), wanted.rstrip("/")
    return bool(name) and (folder == name or folder.endswith("/" + name))


def in_scope(query: MatchQuery | RecentQuery | NearestQuery, source: str,
             project: str = "") -> bool:
    """Does a session of ``source`` and ``project`` pass the query's filters: not a hidden
    source, one of ``sources`` and of ``projects`` (:func:`project_matches`) when given?

    >>> in_scope(RecentQuery(limit=1, sources=("codex",)), "hermes")
    False
    >>> in_scope(RecentQuery(limit=1, hidden_sources=("cron",)), "codex")
    True
    >>> in_scope(RecentQuery(limit=1, projects=("api",)), "codex", "/src/web")
    False
    """
    if source in query.hidden_sources or (query.sources and source not in query.sources):
        return False
    return not query.projects or any(project_matches(project, p) for p in query.projects)
