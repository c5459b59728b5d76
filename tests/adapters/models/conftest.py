"""Fixtures shared by the model adapters' tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.chat_server import ChatServer


@pytest.fixture
def server() -> Iterator[ChatServer]:
    """A real local server answering chat with a short recap and embeddings with hashed
    bags of words."""
    with ChatServer() as running:
        yield running
