"""A katakana word is found where a message writes it whole, not inside a longer katakana
word: ロック (lock) is not in ブロック (block), ポート (port) in サポート (support) nor サーバ
(server) in サーバレス (serverless), which held every bigram of the question's word and came
first when newer."""

from __future__ import annotations

import time

import pytest
from returns.unsafe import unsafe_perform_io

from harkback.stages.match.counting import unit_counter
from harkback.stages.match.plan import plan_units
from harkback.stages.ports import SessionStore
from harkback.stages.query import Term, parse_query
from harkback.stages.text.katakana import katakana_words
from harkback.stages.text.scripts import cjk_script
from tests.adapters.stores.test_voicing_migration import ranked
from tests.conftest import conversation

DAY = 86_400.0


@pytest.mark.parametrize(("query", "answer", "decoy"), [
    ("ロックが外れない件",
     "注文テーブルのロックが外れない",
     "ブロックエディタでブロックを並べ替えると外れる"),
    ("ポートの件、どうした？",
     "開発サーバーのポートが使用中で起動しない",
     "サポートへの問い合わせフォームのサポート窓口が表示されない"),
    ("ポートの件",
     "ポート・フォワードが切れる",
     "サポート窓口のサポートページ"),
    ("ﾎﾟｰﾄが使用中",
     "ﾎﾟｰﾄが使用中で起動しない",
     "サポートが使用中のサポート番号"),
    ("サーバの再起動",
     "本番のサーバーを再起動した",
     "サーバレス関数を再起動した"),
    ("パスの設定",
     "パスエイリアスの設定を直した",
     "コンパスの設定を直した"),
    ("メモリリークの原因",
     "メモリが増え続ける。リークの原因はキャッシュ",
     "メモリーカードのリークテストが落ちる原因"),
], ids=["lock", "port", "middle-dot", "half-width", "long-vowel", "compound", "pieces"])
async def test_a_katakana_word_inside_a_longer_one_does_not_count(
        store: SessionStore, query: str, answer: str, decoy: str) -> None:
    """The six-week-old session writes the question's katakana word whole (before a
    particle, beside another word across a middle dot, in half-width kana, with the long
    vowel that ends it written or not, as a member of a compound, or in the pieces of the
    question's compound); yesterday's holds it only inside a longer katakana word, as
    often or more."""
    now = time.time()
    old = conversation("answer", ("user", answer), ("assistant", "ok"),
                       started_at=now - 40 * DAY)
    new = conversation("decoy", ("user", decoy), ("assistant", "ok"), started_at=now - DAY)
    unsafe_perform_io((await store.ingest((old, new)).awaitable()).unwrap())
    assert (await ranked(store, query))[:1] == ["answer"]


@pytest.mark.parametrize(("query", "message", "bigram"), [
    ("ブロックのロック", "ロックが外れない", "ロッ"),
    ("サーバとサーバーの設定", "サーバーの設定", "サー"),
], ids=["word-and-longer-word", "both-spellings"])
def test_a_katakana_word_written_once_counts_once(query: str, message: str,
                                                   bigram: str) -> None:
    """A question naming two katakana words that both fit one run of the message (ロック in
    ブロック and ロック; サーバ and サーバー) counts the bigram as often as the message writes
    it, not once for each word it fits."""
    units = plan_units(parse_query(query), script=cjk_script(query),
                       katakana=katakana_words(query))
    counts = unit_counter(units, lambda counts, _length, _whole: dict(counts))(message)
    at = next(j for j, u in enumerate(units) if isinstance(u.unit, Term)
              and u.unit.text == bigram)
    assert counts[at] == message.count(bigram)
