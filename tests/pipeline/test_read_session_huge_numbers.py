"""``Harkback.read_session`` with numbers past what ``str()`` writes, on a real SQLite
store: each is refused (or not found) as a value, as smaller ones are."""

from __future__ import annotations

from pathlib import Path

import pytest
from returns.result import Failure

from harkback.adapters.stores.sqlite import SqliteStore
from harkback.pipeline.facade import Harkback
from tests.pipeline.test_mcp_server import db

__all__ = ["db"]  # the store fixture: docker-fix, nginx-long and cors

HUGE = 10 ** 5000


@pytest.mark.parametrize(("paging", "said"), [
    ({"limit": HUGE}, "page size must be between 1 and 200, got a number of more than 30 "
                      "digits"),
    ({"offset": -HUGE}, "offset must be 0 or more, got a negative number of more than 30 "
                        "digits"),
    ({"offset": HUGE}, "offset a number of more than 30 digits is past the end of session "
                       "'nginx-long' (7 messages)"),
])
async def test_a_page_number_of_thousands_of_digits_is_a_value(
        db: Path, paging: dict[str, int], said: str) -> None:
    """They raised ValueError from the line that was to refuse them (str() refuses an int
    of more than 4,300 digits), out of the library and out of an agent's tool handler."""
    with SqliteStore.open(db, readonly=True).unwrap() as store:
        page = await Harkback(store=store).read_session("nginx-long", **paging)
    assert isinstance(page, Failure)
    assert page.failure().reason == said
