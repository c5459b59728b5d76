"""The ingest format's field readers: one field of a decoded JSON object, checked and read,
or :class:`Invalid` naming the field and what is wrong with it (the rules are in
:mod:`~harkback.stages.ingest_format`, which reads a whole line with these).

>>> optional_str({"title": None}, "title", ""), read_time({"at": "1970-01-02"}, "at", "")
('', 86400.0)
>>> content(["a", {"type": "image"}, {"text": "b"}], "content")
'a\\nb'
>>> optional_str({"model": 4}, "model", "messages[2].")
Traceback (most recent call last):
...
harkback.stages.ingest_fields.Invalid: messages[2].model: expected a string, got a number
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from harkback.stages.record_checks import briefly
from harkback.stages.records import ToolCall, is_epoch, mended
from harkback.stages.shown_number import shown_text
from harkback.stages.time_bounds import iso_seconds


class Invalid(Exception):
    """Raised by the field readers below and turned into a BadRecord at the one exit point.

    Private to the ingest format: it never escapes
    :func:`~harkback.stages.ingest_format.conversation_from_json`. It keeps the readers
    flat instead of threading a Result through two dozen fields.
    """

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}")


def kind(value: object) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
             int: "a number", float: "a number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def optional_str(obj: Mapping[str, Any], key: str, where: str) -> str:
    value = obj.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise Invalid(f"{where}{key}", f"expected a string, got {kind(value)}")
    return mended(value)


def read_time(obj: Mapping[str, Any], key: str, where: str) -> float | None:
    value = obj.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise Invalid(f"{where}{key}",
                       f"expected epoch seconds or an ISO 8601 string, got {kind(value)}")
    if isinstance(value, str):
        return _iso_time(value, f"{where}{key}")
    try:
        seconds = float(value)
    except OverflowError:
        raise Invalid(f"{where}{key}", "epoch seconds out of range") from None
    if not is_epoch(seconds):
        raise Invalid(f"{where}{key}", f"epoch seconds must be finite and between the years 1 "
                       f"and 9999 (milliseconds? divide by 1000), got {briefly(value)}")
    return seconds


def _iso_time(text: str, where: str) -> float:
    try:
        seconds = iso_seconds(text.strip())
    except (ValueError, OverflowError):
        raise Invalid(where, f"not an ISO 8601 time: {shown_text(text)}") from None
    # An offset can carry a written date past either end (0001-01-01T00:00+01:00 is in
    # year 0), where the record would refuse it and fail the whole ingest.
    if not is_epoch(seconds):
        raise Invalid(where, f"ISO 8601 time outside the years 1 to 9999: {shown_text(text)}")
    return seconds


def content(value: object, where: str) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return mended(value)
    if isinstance(value, list):
        texts: list[str] = []
        for index, part in enumerate(value):
            if isinstance(part, str):
                texts.append(mended(part))
            elif isinstance(part, dict):
                # Parts without text (images, audio) carry nothing to search.
                texts.append(optional_str(part, "text", f"{where}[{index}]."))
            else:
                raise Invalid(f"{where}[{index}]",
                               f"expected a string or an object, got {kind(part)}")
        return "\n".join(t for t in texts if t)
    raise Invalid(where, f"expected a string, a list of parts or null, got {kind(value)}")


def _arguments(value: object, where: str) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return mended(value)
    try:
        return mended(json.dumps(value, ensure_ascii=False, allow_nan=False))
    except ValueError:
        raise Invalid(where, "arguments hold a non-finite number") from None


def tool_call(value: object, where: str) -> ToolCall:
    if not isinstance(value, dict):
        raise Invalid(where, f"expected an object, got {kind(value)}")
    function = value.get("function")
    if function is None:
        # Some exporters flatten the call: {"id", "name", "arguments"}.
        function, fwhere = value, where + "."
    elif isinstance(function, dict):
        fwhere = where + ".function."
    else:
        raise Invalid(where + ".function", f"expected an object, got {kind(function)}")
    return ToolCall(id=optional_str(value, "id", where + "."),
                    name=optional_str(function, "name", fwhere),
                    arguments=_arguments(function.get("arguments"), fwhere + "arguments"))

