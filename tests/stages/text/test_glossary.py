"""The cross-language glossary: a table the ranker can search by."""

from __future__ import annotations

from harkback.stages.match.plan import plan_units
from harkback.stages.query import Term, parse_query
from harkback.stages.text.framing import CHINESE, JAPANESE, KOREAN, is_framing_token
from harkback.stages.text.glossary import LANGUAGES, _entries, _table, english_names, named_spans
from harkback.stages.text.korean import noun_forms
from harkback.stages.text.scripts import cjk_script
from harkback.stages.text.tokens import is_stopword, normalize, tokens


def test_every_english_name_is_one_searchable_token() -> None:
    """A stopword or a two-token name could never be found as one form."""
    names = {n for ns in _table()[0].values() for n in ns}
    assert names and [n for n in names if tokens(n) != (n,) or is_stopword(n)] == []


def test_every_listed_word_is_written_in_its_column_s_language() -> None:
    """Chinese words are Han only, Korean ones Hangul; a Japanese word holds kana or is
    kanji; none is shorter than a bigram (a single character is a prefix in the index) but
    a Korean noun of one syllable, which is searched with its particles (큐, 큐에, 큐가)."""
    words = [(w, language) for _, columns in _entries() for language, ws in columns for w in ws]
    wrong = [(w, language) for w, language in words
             if cjk_script(w) != language and not (language == "ja" and cjk_script(w) == "zh")]
    short = [w for w, _ in words if len(w) < 2 and not noun_forms(w)]
    assert set(LANGUAGES) == {"zh", "ja", "ko"} and len(words) > 1000
    assert wrong == [] and short == []


def test_every_english_name_heads_one_line_and_no_word_repeats_in_a_column() -> None:
    """A name on two lines would join two concepts' words without anyone meaning it; a
    word twice in a column is a slip."""
    names = [n for ns, _ in _entries() for n in ns]
    repeated = [ws for _, columns in _entries() for _, ws in columns if len(set(ws)) < len(ws)]
    assert sorted(n for n in set(names) if names.count(n) > 1) == [] and repeated == []


def test_no_listed_word_is_framing() -> None:
    """A word the planner drops as framing (問題-like, or hiragana bigrams) is never asked."""
    assert [w for w in _table()[0] if len(w) == 2 and (is_framing_token(w) or is_stopword(w))] == []


def test_no_listed_word_is_a_generic_word_of_the_work() -> None:
    """Words every session says (code, system, data, program, use, change, run, problem,
    solve) would join every session to every question: none is listed, nor any framing
    word of :mod:`~harkback.stages.text.framing`."""
    generic = """代码 系统 数据 程序 项目 功能 使用 修改 运行 问题 解决 方法 原因 结果 操作 设置
    コード システム データ プログラム 機能 使用 変更 実行 問題 解決 方法 対応 前回 原因
    코드 시스템 데이터 프로그램 기능 사용 수정 실행 문제 해결 방법 원인 처리 작동""".split()
    framing = {normalize(w) for w in (*CHINESE, *JAPANESE, *KOREAN)}
    assert [w for w in _table()[0] if w in framing or w in generic] == []


def test_every_listed_word_is_found_as_a_question_writes_it() -> None:
    """Each listed word, asked alone, is searched by its English names: framing does not
    cut it (文件 holds 件, 디플로이 ends as a particle would), and a word the planner never
    sees whole (期限切れ: a bigram with kana goes; ホスト名: one across kana and kanji)
    is listed as the planner sees it, or not at all."""
    lost = []
    for word, names in _table()[0].items():
        forms = {f for u in plan_units(parse_query(word), script=cjk_script(word)) for f in u.forms}
        if not forms & set(names):
            lost.append(word)
    assert lost == []


def test_the_longest_listed_word_wins_where_two_overlap() -> None:
    """数据库 is 'database', not the shorter words inside it."""
    assert [names for _, _, names in named_spans("查数据库日志")] == [
        english_names("数据库"), english_names("日志")]


def test_a_cjk_question_s_words_are_also_searched_by_their_english_names() -> None:
    """The English names come as units of their own, weighed below the words as written."""
    units = plan_units(parse_query("数据库超时"))
    english = {u.unit.text: u.share for u in units if isinstance(u.unit, Term)
               and u.unit.text.isascii()}
    written = sum(u.share for u in units if not (isinstance(u.unit, Term)
                                                 and u.unit.text.isascii()))
    assert set(english) == {"database", "timeout"}
    assert sum(english.values()) < written


def test_english_words_widen_to_the_question_s_language_only() -> None:
    """'clone' in a Chinese question also looks for 克隆; in an English one it weighs
    the words of all three languages, searching none of them."""
    def forms(query: str, searched: bool = True) -> set[str]:
        return {f for u in plan_units(parse_query(query), script=cjk_script(query))
                if u.searched == searched for f in u.forms}
    assert "克隆" in forms("clone 很慢") and "클론" not in forms("clone 很慢")
    assert all(f.isascii() for f in forms("the clone was slow"))
    assert {"克隆", "클론"} <= forms("the clone was slow", searched=False)


def test_a_katakana_word_with_a_voiced_sound_is_found_as_the_question_spells_it() -> None:
    """The question's text is normalised, and so are the listed words: the loanwords with
    dakuten (ビルド, データベース, デッドロック) are found, half-width ones (ﾋﾞﾙﾄﾞ) too."""
    units = plan_units(parse_query("ビルドのデッドロック"), script="ja")
    english = {f for u in units for f in u.forms if f.isascii()}
    assert {"build", "deadlock"} <= english
    assert "build" in english_names(normalize("ﾋﾞﾙﾄﾞ"))


def test_a_voiced_sound_tells_two_listed_words_apart() -> None:
    """バケット (bucket) is not パケット (packet) nor ハケット: the mark is kept, so the
    bucket's English name is not given to a word that only looks like it once unvoiced."""
    assert english_names(normalize("バケット")) == ("bucket",)
    assert english_names(normalize("ハケット")) == ()
    assert "bucket" not in english_names(normalize("パケット"))


def test_the_words_of_running_software_are_listed() -> None:
    """Service, user, start, conflict, pod, heap: words a question about a deployment uses
    in every language (the first cross-language seed set missed them)."""
    words = ("服务", "用户", "启动", "冲突", "파드", "충돌", "ヒープ", "サービス", "체크섬")
    assert [w for w in words if not english_names(normalize(w))] == []


def test_a_korean_noun_of_one_syllable_is_named_alone_never_inside_a_word() -> None:
    """큐 ("queue") standing alone, or with a particle (큐에), is named; inside 바베큐
    ("barbecue") or 시큐리티 ("security") it is not a word."""
    assert "queue" in english_names("큐")
    assert [u.forms[0] for u in plan_units(parse_query("큐에 쌓였던 거"), script="ko")] == [
        "큐", "queue"]
    assert list(named_spans("바베큐")) == [] and list(named_spans("시큐리티")) == []
