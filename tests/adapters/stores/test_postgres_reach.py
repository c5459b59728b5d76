"""The option a message tells the user to write in a PostgreSQL URL to reach the schema
holding the store: written into the URL as told, libpq reads it (no server needed)."""

from __future__ import annotations

import re

import pytest
from psycopg import conninfo

from harkback.adapters.stores.postgres_migrations import no_store_yet
from harkback.adapters.stores.postgres_reach import reaching


def _written(url: str, told: str) -> str:
    """``url`` with the option ``told`` written into it as the words say."""
    if told.endswith(" in place of the URL's options"):
        option = told.removesuffix(" in place of the URL's options")
        return re.sub(r"options=[^&]*", lambda _: option, url)
    assert told.endswith(" in the URL"), told
    return url + told.removesuffix(" in the URL")


@pytest.mark.parametrize(("url", "kept"), [
    ("postgresql://u@h/db", {}),
    ("postgresql://u@h/db?sslmode=disable", {"sslmode": "disable"}),
    ("postgresql://u@/db?host=/run/pg&port=5433", {"host": "/run/pg", "port": "5433"}),
    ("postgresql://u:pa?ss@h/db", {"password": "pa?ss"}),
    ("postgresql://u@h/db?options=-cstatement_timeout%3D0&sslmode=require",
     {"sslmode": "require"}),
    ("postgresql://u@h/db?options=-c%20search_path%3Dpublic,hb", {}),
])
def test_the_option_told_reaches_the_schema_when_written_into_the_url(
        url: str, kept: dict[str, str]) -> None:
    """For a URL with a query (``?sslmode=disable``) the hint was ``?options=...``: added
    as told it made a second ``?``, which libpq refuses (extra key/value separator "=" in
    URI query parameter: "sslmode"). Written as told now, libpq reads the search path, the
    URL's other parameters and its own options alike."""
    parts = conninfo.conninfo_to_dict(_written(url, reaching("hb", url)))
    settings = str(parts["options"]).split()
    assert settings[-1] == "-csearch_path=hb"
    assert not any("search_path" in s for s in settings[:-1])
    if "statement_timeout" in url:
        assert settings[:-1] == ["-cstatement_timeout=0"]
    assert {key: parts[key] for key in kept} == kept


def test_a_url_with_a_query_is_told_to_add_the_option_with_an_ampersand() -> None:
    """The line a command prints for a database whose store is in schema hb, its URL
    with ``?sslmode=disable`` and no search path."""
    said = no_store_yet("postgresql://u@h/db?sslmode=disable", ["hb"]).split("; ", 1)[1]
    assert said == "schema hb holds one (&options=-csearch_path%3Dhb in the URL reaches it)"


def test_options_already_naming_the_schema_are_not_told_again() -> None:
    """A role barred from hb whose URL already puts hb on its search path is pointed at
    its URL's options, not told to write them again."""
    url = "postgresql://u@h/db?options=-csearch_path%3Dhb"
    said = no_store_yet(url, ["hb"], barred=["hb"], role="ann").split("; ", 1)[1]
    assert said.endswith("then the URL's options=-csearch_path%3Dhb reaches it)")


@pytest.mark.parametrize(("url", "kept"), [
    ("postgresql://h/db?user=me@srv", {"user": "me@srv"}),
    ("postgresql://u:pa?ss@h/db?application_name=a@b&sslmode=disable",
     {"password": "pa?ss", "application_name": "a@b", "sslmode": "disable"}),
])
def test_an_at_sign_in_the_query_is_not_the_end_of_a_user_part(
        url: str, kept: dict[str, str]) -> None:
    """An ``@`` in the query (an Azure server's ``?user=me@srv``) was taken for the end of
    the URL's user part, the query before it unseen: ``?options=`` was told, which libpq
    refuses after the query (extra key/value separator "=" in URI query parameter:
    "user"). The user part ends at the first ``@`` before any ``/``, as libpq reads it."""
    told = reaching("hb", url)
    assert told.startswith("&options=")
    parts = conninfo.conninfo_to_dict(_written(url, told))
    assert parts["options"] == "-csearch_path=hb"
    assert {key: parts[key] for key in kept} == kept


def test_pgoptions_already_naming_the_schema_are_not_told_again() -> None:
    """A role barred from hb whose ``$PGOPTIONS`` already put hb on its search path (and a
    URL with no options) is pointed at them, not told to write them into the URL."""
    said = no_store_yet("postgresql://u@h/db", ["hb"], barred=["hb"], role="ann",
                        pgoptions="-cwork_mem=1MB -c search_path=hb").split("; ", 1)[1]
    assert said.endswith("then $PGOPTIONS' -csearch_path=hb reaches it)")
