"""What the command line prints: human tables of a payload, or the JSON payload itself.

>>> format_payload({"mode": "search", "results": [], "message": "No sessions found."})
'No sessions found.'
"""

from __future__ import annotations

import textwrap
from datetime import UTC, datetime
from typing import Any

from harkback.pipeline.columns import clipped, padded
from harkback.pipeline.terminal import json_text, one_line
from harkback.stages.local_days import local_iso
from harkback.stages.shell_words import shell_quoted
from harkback.stages.shown_url import shown_url


def print_json(payload: dict[str, Any]) -> None:
    """Print ``payload`` as indented JSON, non-ASCII text kept readable (control characters
    and lone surrogates escaped: :func:`~harkback.pipeline.terminal.json_text`)."""
    print(json_text(payload, indent=2))


WHEN_WIDTH = len("September 30, 2026 at 10:00 PM UTC-08:00")
"""The when column: the longest time :func:`~harkback.stages.result.when_text` writes."""
SOURCE_WIDTH = len("claude-code")
"""The source column: the longest source name harkback's importers write, whole."""


def format_payload(payload: dict[str, Any], *, db: str | None = None,
                   open_hints: bool = True) -> str:
    """Human output for a search or recent payload: a table, then each summary (each
    result's hint to open its best match names ``db``, the store a flag named; none
    without ``open_hints``, for a store gone when the command ends)."""
    rows = payload["results"]
    if payload["mode"] == "recent" and payload.get("window"):
        # A question that named only a time: say which time was listed, found or not.
        named = f'Sessions of "{one_line(payload["query"])}": {_span(payload["window"])}'
        return "\n".join([named, *_notes(payload), "",
                          _recent_table(rows) if rows else "No sessions found."])
    if payload["mode"] == "recent" and rows:
        return "\n".join([*_notes(payload), _recent_table(rows)])
    # Said even with no rows: a rerank that kept none, or a ranking by words alone, is
    # why a search found nothing as much as the words are.
    said = _search_notes(payload) if payload["mode"] == "search" else _notes(payload)
    if not rows:
        return "\n".join([str(payload.get("message", "No sessions found.")), *said])
    header = (f"{'#':>2}  {'when':<{WHEN_WIDTH}} {'source':<{SOURCE_WIDTH}} {'hits':>4}  "
              "session / title (or first request)")
    asked = "" if payload.get("as_of") is None else f" as of {_utc(payload['as_of'])}"
    lines = [f'{payload["count"]} of {payload["sessions_searched"]} matching session(s) '
             f'for "{one_line(payload["query"])}"{asked}', *said]
    lines += ["", header, "-" * len(header)]
    for i, r in enumerate(rows, 1):
        lines.append(f"{i:>2}  {padded(r['when'], WHEN_WIDTH)} {_source_cell(r['source'])} "
                     f"{r['matched_messages']:>4}  {one_line(r['session_id'])}  {_named(r)}")
    for i, r in enumerate(rows, 1):
        kind = "no" if r["summary_kind"] == "none" else r["summary_kind"]  # not "none summary"
        lines += ["", f"[{i}] {_named(r) or one_line(r['session_id'])} ({kind} summary)"]
        if r.get("summary_note"):
            lines.append(f"    note: {r['summary_note']}")
        if r.get("matched_message_ids"):
            ids = [one_line(i) for i in r["matched_message_ids"]]
            hint = (f"  (open: {one_line(show_command(r['matched_message_ids'][0], db))})"
                    if open_hints else "")
            lines.append(f"    matched: {', '.join(ids[:5])}" + (" ..." if len(ids) > 5 else "")
                         + hint)
        for para in r["summary"].splitlines():
            lines.append(textwrap.fill(para, width=100, initial_indent="    ",
                                       subsequent_indent="      ") if para else "")
    return "\n".join(lines)


def _named(result: dict[str, Any]) -> str:
    """A search result's title; for an untitled session its first request, as ``recent``
    lists it (else such results differ by their ids alone).

    >>> _named({"title": "", "preview": "fix the CORS error"}), _named({"title": "CORS"})
    ('fix the CORS error', 'CORS')
    """
    return one_line(result["title"]) or _first_request(result.get("preview", ""))


def _first_request(preview: str) -> str:
    return clipped(one_line(preview), 90)


def _search_notes(payload: dict[str, Any]) -> list[str]:
    lines = []
    rerank = payload.get("rerank")
    if rerank and rerank.get("model_order", True):
        lines.append(f"reranked by the model: {rerank['kept']} kept of {rerank['shown']} shown")
    elif rerank:  # every batch kept the word ranking: the note below says why
        lines.append(f"not reranked: {rerank['kept']} kept of {rerank['shown']} shown, "
                     "in the lexical order")
    return lines + _notes(payload)


def _notes(payload: dict[str, Any]) -> list[str]:
    return [f"note: {note}" for note in payload.get("notes", ())]


def show_command(message_id: str, db: str | None = None) -> str:
    """The ``harkback show`` command that opens the page around ``message_id`` (of ``db``
    when given), as a POSIX shell runs it pasted: values quoted, and a value starting
    with ``-`` written so that it cannot pass for an option. A server URL's password is
    masked (output is no place for it), so that one command needs it typed in again.

    >>> show_command("cors:3"), show_command("a b:0", "h.db")
    ('harkback show cors --around cors:3', "harkback show 'a b' --around 'a b:0' --db h.db")
    >>> show_command("-x:0")
    'harkback show --around=-x:0 -- -x'
    """
    session = message_id.rpartition(":")[0]
    options = [_option("--around", message_id)]
    if db is not None:
        options.append(_option("--db", shown_url(db)))
    if session.startswith("-"):
        return " ".join(["harkback show", *options, "--", shell_quoted(session)])
    return " ".join(["harkback show", shell_quoted(session), *options])


def _option(flag: str, value: str) -> str:
    # "--around -x:0" reads -x:0 as an option of its own; "--around=-x:0" does not.
    quoted = shell_quoted(value)
    return f"{flag}={quoted}" if value.startswith("-") else f"{flag} {quoted}"


def _utc(moment: float | None) -> str:
    """``moment`` as an ISO time in UTC: ``2026-03-05T00:00:00Z``."""
    if moment is None:
        return "any time"
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _span(window: dict[str, float | None]) -> str:
    """A listed window, local days with their offset:
    ``2026-03-04T00:00:00-08:00 to 2026-03-05T00:00:00-08:00``."""
    return f"{local_iso(window['since'])} to {local_iso(window['until'])}"


def _recent_table(rows: list[dict[str, Any]]) -> str:
    header = (f"{'#':>2}  {'when':<{WHEN_WIDTH}} {'source':<{SOURCE_WIDTH}} {'msgs':>5}  "
              "title / first request")
    lines = [header, "-" * len(header)]
    for i, r in enumerate(rows, 1):
        lines.append(f"{i:>2}  {padded(r['when'], WHEN_WIDTH)} {_source_cell(r['source'])} "
                     f"{r['message_count']:>5}  {one_line(r['title']) or '(untitled)'}")
        lines.append(f"{'':>4}{one_line(r['session_id'])}: {_first_request(r['preview'])}")
    return "\n".join(lines)


def _source_cell(source: str) -> str:
    """The source column, in terminal columns (a source in Chinese takes two a character)."""
    return padded(clipped(one_line(source), SOURCE_WIDTH), SOURCE_WIDTH)


def format_page(payload: dict[str, Any]) -> str:
    """Human output for a ``show`` payload: the session and its lineage, then each message
    under its id, role and time.

    >>> print(format_page({"session": {"session_id": "s", "title": "", "source": "cli",
    ...     "when": "unknown time", "message_count": 0}, "lineage": {"parent": None,
    ...     "children": []}, "offset": 0, "next_offset": None, "messages": []}))
    session s  (untitled)  cli, unknown time, 0 messages
    no messages

    A session ingested without a source shows none (not a stray comma):

    >>> print(format_page({"session": {"session_id": "s", "title": "t", "source": "",
    ...     "when": "unknown time", "message_count": 0}, "lineage": {"parent": None,
    ...     "children": []}, "offset": 0, "next_offset": None, "messages": []}))
    session s  t  unknown time, 0 messages
    no messages
    """
    s, lineage = payload["session"], payload["lineage"]
    lines = [f"session {one_line(s['session_id'])}  {one_line(s['title']) or '(untitled)'}  "
             f"{_from(s['source'], s['when'])}, {s['message_count']} messages"]
    parent = lineage["parent"]
    if parent is not None:
        known = (one_line(parent["title"]) or "(untitled)") if parent["stored"] else "(not stored)"
        lines.append(f"parent: {one_line(parent['session_id'])}  {known}")
    for child in lineage["children"]:
        lines.append(f"child: {one_line(child['session_id'])}  "
                     f"{one_line(child['title']) or '(untitled)'}  "
                     f"{_from(child['source'], child['when'])}")
    messages = payload["messages"]
    if not messages:
        lines.append("no messages")
        return "\n".join(lines)
    more = payload["next_offset"]
    lines.append(f"messages {payload['offset']}-{payload['offset'] + len(messages) - 1} of "
                 f"{s['message_count']}" + (f" (next page: --offset {more})" if more else ""))
    for m in messages:
        tool = f" {one_line(m['tool_name'])}" if m.get("tool_name") else ""
        lines += ["", f"[{one_line(m['id'])}] {m['role']}{tool}, {m['when']}"]
        lines += [f"    {line}" for line in m["content"].splitlines()]
        # Arguments may run over lines (code a tool wrote): each is indented as content
        # is, so none can pass for a message's header.
        for call in m.get("tool_calls", ()):
            text = f"-> {one_line(call['name'])}({call['arguments']})"
            lines += [f"    {line}" for line in text.splitlines()]
    return "\n".join(lines)


def _from(source: str, when: str) -> str:
    """``source, when``; only ``when`` for a session stored without a source."""
    return f"{one_line(source)}, {when}" if source else when
