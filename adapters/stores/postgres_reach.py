"""The part of a PostgreSQL URL that puts a schema on the search path, as a message tells
the user to write it (where the URL left out the schema holding the store).

libpq reads the server's settings from the URL's ``options`` parameter: after a URL with
no query it is ``?options=...``; after one with a query (``?sslmode=disable``, a socket's
``?host=/run/pg``) ``&options=...``, since a second ``?`` made the rest part of the value
before it (``sslmode`` "disable?options=..." is refused); where the URL has options of its
own, those with the search path after them, in their place (a second ``options=`` would
replace the first: libpq keeps the last). The URL is one (``postgresql://``): a key=value
string (``host=/tmp dbname=h``) names no PostgreSQL store to ``--db`` or ``open_store``.

>>> reaching("hb", "postgresql://me@db/team")
'?options=-csearch_path%3Dhb in the URL'
>>> reaching("hb", "postgresql://me@db/team?sslmode=disable")
'&options=-csearch_path%3Dhb in the URL'
>>> reaching("hb", "postgresql://me@db/team?options=-cstatement_timeout%3D0")
"options=-cstatement_timeout%3D0%20-csearch_path%3Dhb in place of the URL's options"
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from urllib.parse import quote

import psycopg
from psycopg import conninfo

_SETTING = re.compile(r"(?:-c|--)search[_-]path=(.*)", re.IGNORECASE | re.DOTALL)
_SEARCH_PATH = re.compile(r"search[_-]path=(.*)", re.IGNORECASE | re.DOTALL)
_TIMEOUT = re.compile(r"statement[_-]timeout=", re.IGNORECASE)


def identifier(name: str) -> str:
    """A schema's name as a search path names it: double-quoted unless plain lower case.

    >>> identifier("hb"), identifier("My Store")
    ('hb', '"My Store"')
    """
    if re.fullmatch(r"[a-z_][a-z0-9_$]*", name):
        return name
    return '"' + name.replace('"', '""') + '"'


def reaching(name: str, url: str, pgoptions: str = "") -> str:
    """Where to write, in ``url``, the option that puts schema ``name`` on the search path
    (see the module). The server splits ``options`` at whitespace unless a backslash
    escapes it: ``"My Store"`` unescaped was refused (invalid value for parameter
    "search_path": ""My"). A URL without options keeps the settings of ``pgoptions``
    (the ``$PGOPTIONS`` it was opened with), which libpq leaves unread once the URL has
    ``options=``: told only the search path, the user lost them.

    >>> reaching('back\\\\slash', "postgresql:///h")
    '?options=-csearch_path%3D%22back%5C%5Cslash%22 in the URL'
    >>> reaching("hb", "postgresql:///h?host=/s&options=-c%20search_path%3Dx%20-cwork_mem%3D1MB")
    "options=-cwork_mem%3D1MB%20-csearch_path%3Dhb in place of the URL's options"
    >>> reaching("hb", "postgresql:///h", "-c search_path=x -cstatement_timeout=0")
    '?options=-cstatement_timeout%3D0%20-csearch_path%3Dhb in the URL'
    """
    value = re.sub(r"[\\\s]", lambda found: "\\" + found.group(), identifier(name))
    setting = f"-csearch_path={value}"
    own = _options(url)
    if not own:
        kept, paths = _without_search_path(pgoptions.strip())
        if paths[-1:] == [value]:
            return f"$PGOPTIONS' -csearch_path={value}"  # as wanted: its role lacks a grant
        return f"{_separator(url)}options={_quoted(' '.join([*kept, setting]))} in the URL"
    kept, paths = _without_search_path(own)
    if paths[-1:] == [value]:
        return f"the URL's options={_quoted(own)}"  # as wanted: its role lacks a grant
    return f"options={_quoted(' '.join([*kept, setting]))} in place of the URL's options"


def timeout_lifted(text: str, url: str, environ: Mapping[str, str] = os.environ) -> str:
    """What to add to a line about a statement the server cancelled (its ``text``): for
    its ``statement_timeout`` (a role's or database's setting, often tens of milliseconds
    for a web application's role), the options that lift it for harkback alone, written
    where they go in ``url`` as :func:`reaching` writes a search path (the separator
    ``?`` or ``&``: "options=... in the URL" appended to ``?sslmode=require`` made it part
    of the sslmode). The settings in use are kept, with the lifting one after: the URL's
    own options (a second ``options=`` would replace them), else ``$PGOPTIONS``' of
    ``environ`` (libpq leaves them unread once the URL has ``options=``). Else nothing.

    >>> timeout_lifted("statement timeout", "postgresql://me@db/h?sslmode=require"
    ...                ).split("; ")[1]
    '&options=-cstatement_timeout%3D0 in the URL lifts it for harkback alone)'
    >>> timeout_lifted("statement timeout", "postgresql:///h", {"PGOPTIONS": "-cwork_mem=1MB"}
    ...                ).split("; ")[1]
    '?options=-cwork_mem%3D1MB%20-cstatement_timeout%3D0 in the URL lifts it for harkback alone)'
    >>> timeout_lifted("statement timeout", "postgresql:///h?options=-csearch_path%3Dx"
    ...                ).split("; ")[1].removesuffix(" lifts it for harkback alone)")
    "options=-csearch_path%3Dx%20-cstatement_timeout%3D0 in place of the URL's options"
    """
    if "statement timeout" not in text:
        return ""
    own = _options(url)
    given = own or environ.get("PGOPTIONS", "").strip()  # as the connection reads them
    lifted = _quoted(f"{given} -cstatement_timeout=0".strip())
    # Named as where it may be set only when it sets one: a work_mem there is no reason.
    where_set = ("" if not _TIMEOUT.search(given) else ", or in the URL's options" if own
                 else ", or in $PGOPTIONS")
    place = (f"options={lifted} in place of the URL's options" if own
             else f"{_separator(url)}options={lifted} in the URL")
    return (f" (the statement_timeout set for this role or database{where_set}; "
            f"{place} lifts it for harkback alone)")


def _options(url: str) -> str:
    """The ``options`` ``url`` gives the server ('' for none, or a URL libpq cannot read,
    which was refused before any message gave this)."""
    try:
        return str(conninfo.conninfo_to_dict(url).get("options") or "").strip()
    except psycopg.Error:
        return ""


def _separator(url: str) -> str:
    """What comes before a parameter added at the end of ``url``: ``?`` when it has no
    query (a password's ``?``, before its ``@``, is none), else ``&`` (none after a
    trailing ``?`` or ``&``). The user part ends, as libpq reads it, at the first ``@``
    before any ``/``: an ``@`` of the query (``?user=me@srv``, an Azure server's user) is
    the query's, where the last ``@`` of the URL took the query for the user part.

    >>> _separator("postgresql://me:pa?ss@db/h"), _separator("postgresql://db/h?user=me@srv")
    ('?', '&')
    """
    after = re.sub(r"^[^@/]*@", "", url.partition("://")[2])
    if "?" not in after:
        return "?"
    return "" if after.endswith(("?", "&")) else "&"


def _without_search_path(options: str) -> tuple[list[str], list[str]]:
    """The settings of ``options`` (split at whitespace a backslash does not escape, as
    the server splits them) other than the search path, and the search paths it sets.

    >>> _without_search_path("-c search_path=hb -cwork_mem=1MB --search-path=x")
    (['-cwork_mem=1MB'], ['hb', 'x'])
    """
    words = re.findall(r"(?:\\.|\S)+", options)
    kept: list[str] = []
    paths: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        following = words[index + 1] if index + 1 < len(words) else ""
        if word == "-c" and (found := _SEARCH_PATH.fullmatch(following)):
            paths.append(found.group(1))
            index += 2
            continue
        if found := _SETTING.fullmatch(word):
            paths.append(found.group(1))
        else:
            kept.append(word)
        index += 1
    return kept, paths


def _quoted(options: str) -> str:
    """``options`` as a URL's query holds them (``=`` as %3D, a space as %20)."""
    return quote(options, safe="")
