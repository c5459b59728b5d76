"""Runs every docstring example in the package as a doctest."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

PACKAGES = ("harkback.stages", "harkback.adapters", "harkback.pipeline")


def _modules() -> list[str]:
    names = []
    for package in PACKAGES:
        module = importlib.import_module(package)
        for info in pkgutil.walk_packages(module.__path__, prefix=package + "."):
            names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("name", _modules())
def test_doctests_pass(name: str) -> None:
    """Each module's examples run and print what they say."""
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {name}"
