"""Fixtures of the matching stages' tests."""

from __future__ import annotations

from tests.support.new_stores import new_stores

store = new_stores("memory", "sqlite")
"""An empty store of each kind."""
