"""``harkback migrate`` stopped by Ctrl-C says which schema version the store is at (it
said only "interrupted"), read from a real SQLite file."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harkback.adapters.stores.sql.schema import SCHEMA_VERSION
from harkback.pipeline import wiring
from harkback.pipeline.cli import main
from tests.adapters.stores.old_files import old_file
from tests.conftest import conversation
from tests.pipeline.test_cli_migrate import _version

DOCKER = conversation("docker", ("user", "the docker bridge lost its dns"))


def ctrl_c(migrate: Callable[[str], Any], *, after: bool) -> Callable[[str], Any]:
    """``migrate``, with a Ctrl-C arriving just before it starts or just as it ends."""
    def stopped(target: str) -> Any:
        if after:
            migrate(target)
        raise KeyboardInterrupt
    return stopped


@pytest.mark.parametrize("after", [True, False])
def test_an_interrupted_migrate_says_where_the_store_is(
        after: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """A version-1 file: stopped before the migration it is still at 1, and "run again";
    stopped as it ends, at this harkback's version, and migrated."""
    db = tmp_path / "h.db"
    old_file(db, [DOCKER])
    monkeypatch.setattr(wiring, "migrate_store", ctrl_c(wiring.migrate_store, after=after))
    assert main(["migrate", "--db", str(db), "--json"]) == 130
    out, err = capsys.readouterr()
    version = _version(db)
    assert version == (SCHEMA_VERSION if after else 1)
    said = (f"the store was migrated: it is at schema version {version}" if after else
            f"the store is still at schema version {version}, not migrated to "
            f"{SCHEMA_VERSION}")
    assert said in err.splitlines()[-1], err
    assert said in json.loads(out)["kept"]
