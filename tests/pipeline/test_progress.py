"""The progress bar's line, drawn as a terminal shows it."""

from __future__ import annotations

import io

import pytest

from harkback.pipeline.columns import columns as shown_width
from harkback.pipeline.progress import Progress


@pytest.mark.parametrize("width", [18, 20, 40])
def test_a_label_of_wide_characters_fits_the_terminal(monkeypatch: pytest.MonkeyPatch,
                                                      width: int) -> None:
    """An embedder named in Chinese (``embed with 中文向量模型``): the bar was fitted by
    counting characters, but a terminal gives each of these two columns, so the line still
    wrapped and every redraw left a row behind. No row drawn is as wide as the terminal, and
    a newline in the name breaks no row."""
    monkeypatch.setenv("COLUMNS", str(width))
    out = io.StringIO()
    bar = Progress(total=4, label="embed with 中文向量模型\n嵌入", stream=out, enabled=True)
    for _ in range(4):
        bar.advance(1)
    bar.finish()
    drawn = out.getvalue()
    assert drawn.count("\n") == 1 and drawn.endswith("100%\n"), drawn  # finish's alone
    rows = [row for row in drawn.rstrip("\n").split("\r") if row]
    assert all(shown_width(row) < width for row in rows), rows
