"""The ids-alike contract (``SessionStore.ids_alike``, the hint of ``harkback show`` for an
id not stored): every store names the same stored ids starting with the one asked, the
case of ASCII letters aside, in code point order, and reads ``%``, ``_`` and ``\\`` as
themselves, whatever the id's length.

:class:`AlikeContract` is mixed into each store's contract test class, beside
:class:`~tests.adapters.stores.store_contract.StoreContract`.
"""

from __future__ import annotations

from harkback.stages.ports import SessionStore
from harkback.stages.records import Conversation, Session
from tests.adapters.stores.store_contract import ok

IDS = ("abc-1", "Abc-2", "abc-3", "ABC-4", "abd", "xabc", "ab%c", "a_bc", "a\\bc", "Élan")


async def _stored(store: SessionStore) -> None:
    await ok(store.ingest([Conversation(Session(id=i), ()) for i in IDS]))


class AlikeContract:
    """What every SessionStore promises of ``ids_alike``."""

    async def test_ids_starting_with_one_in_any_ascii_case_in_code_point_order(
            self, store: SessionStore) -> None:
        """``aBc`` names the four ``abc-`` ids (the capitals first, as code points
        order), at most ``limit``; a whole id in another case is named too."""
        await _stored(store)
        assert await ok(store.ids_alike("aBc", 3)) == ("ABC-4", "Abc-2", "abc-1")
        assert await ok(store.ids_alike("aBc", 10)) == ("ABC-4", "Abc-2", "abc-1", "abc-3")
        assert await ok(store.ids_alike("ABD", 3)) == ("abd",)

    async def test_like_wildcards_and_other_letters_are_themselves(
            self, store: SessionStore) -> None:
        """``_``, ``%`` and the escape ``\\`` match only themselves; a capital beyond
        ASCII is not folded (stores fold alike); an id no stored one starts with names
        none."""
        await _stored(store)
        assert await ok(store.ids_alike("a_", 3)) == ("a_bc",)
        assert await ok(store.ids_alike("ab%", 3)) == ("ab%c",)
        assert await ok(store.ids_alike("a\\", 3)) == ("a\\bc",)
        assert await ok(store.ids_alike("élan", 3)) == ()
        assert await ok(store.ids_alike("bc", 3)) == ()

    async def test_an_id_longer_than_sqlites_like_pattern_is_named_alike(
            self, store: SessionStore) -> None:
        """An id of 13,000 emoji (52,000 bytes: past the 50,000 SQLite reads of a ``LIKE``
        pattern, which failed there alone) names the stored ids it starts, the case of an
        ASCII letter past its first 12,999 characters aside, and not one that differs
        only there."""
        long, other = "😀" * 13_000, "😀" * 12_999 + "x"
        await ok(store.ingest([Conversation(Session(id=i), ()) for i in (long, other)]))
        assert await ok(store.ids_alike("😀" * 12_999, 3)) == (other, long)
        assert await ok(store.ids_alike("😀" * 12_999 + "X", 3)) == (other,)
        assert await ok(store.ids_alike("😀" * 13_000 + "\\", 3)) == ()
