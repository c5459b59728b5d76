"""What the command line prints: human tables of a payload, or the JSON payload itself.

>>> format_payload({"mode": "search", "results": [], "message": "No sessions found."})
'No sessions found.'
"""

from __future__ import annotations

import json
import textwrap
from datetime import UTC, datetime
from typing import Any


def print_json(payload: dict[str, Any]) -> None:
    """Print ``payload`` as indented JSON, non-ASCII text kept readable."""
    print(json.dumps(payload, ensure_ascii=False, indent=2))


def format_payload(payload: dict[str, Any]) -> str:
    """Human output for a search or recent payload: a table, then each summary."""
    rows = payload["results"]
    if not rows:
        return str(payload.get("message", "No sessions found."))
    if payload["mode"] == "recent":
        return _recent_table(rows)
    header = f"{'#':>2}  {'when':<30} {'source':<10} {'hits':>4}  session / title"
    asked = ""
    if payload.get("as_of") is not None:
        moment = datetime.fromtimestamp(payload["as_of"], UTC)
        asked = f" as of {moment.isoformat(timespec='seconds').replace('+00:00', 'Z')}"
    lines = [f'{payload["count"]} of {payload["sessions_searched"]} matching session(s) '
             f'for "{payload["query"]}"{asked}']
    if payload.get("rerank"):
        lines.append(f"reranked by the model: {payload['rerank']['kept']} kept of "
                     f"{payload['rerank']['shown']} shown")
    lines += [f"note: {note}" for note in payload.get("notes", ())]
    lines += ["", header, "-" * len(header)]
    for i, r in enumerate(rows, 1):
        lines.append(f"{i:>2}  {r['when']:<30} {r['source'][:10]:<10} "
                     f"{r['matched_messages']:>4}  {r['session_id']}  {r['title']}")
    for i, r in enumerate(rows, 1):
        lines += ["", f"[{i}] {r['title'] or r['session_id']} ({r['summary_kind']} summary)"]
        if r.get("summary_note"):
            lines.append(f"    note: {r['summary_note']}")
        for para in r["summary"].splitlines():
            lines.append(textwrap.fill(para, width=100, initial_indent="    ",
                                       subsequent_indent="      ") if para else "")
    return "\n".join(lines)


def _recent_table(rows: list[dict[str, Any]]) -> str:
    header = f"{'#':>2}  {'when':<30} {'source':<10} {'msgs':>5}  title / first request"
    lines = [header, "-" * len(header)]
    for i, r in enumerate(rows, 1):
        lines.append(f"{i:>2}  {r['when']:<30} {r['source'][:10]:<10} "
                     f"{r['message_count']:>5}  {r['title'] or '(untitled)'}")
        lines.append(f"{'':>4}{r['session_id']}: {r['preview'][:90]}")
    return "\n".join(lines)
