"""CJK in the pure kernels: phrases across run ends, and windows that land on the match."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from harkback.stages.load.load import make_transcript
from harkback.stages.load.truncate import focus_spans, unit_spans
from harkback.stages.query import Phrase, Term, evaluate, parse_query, phrase_tokens, to_fts5
from harkback.stages.records import Candidate, Message, MessageHit, Session
from harkback.stages.summarize.extractive import extractive_summary
from harkback.stages.text.tokens import index_tokens

FILLER = "这是一段很长的无关内容，用来填充上下文。" * 200


def test_a_phrase_across_the_end_of_a_run_asks_for_its_last_character() -> None:
    """``修改youer服务端`` is indexed with ``改`` after ``修改``; the phrase asks for it too."""
    assert phrase_tokens("修改youer服务端") == (("修改", "改", "youer", "服务", "务端"), False)
    node = parse_query('"修改youer服务端"').expression
    assert node == Phrase(("修改", "改", "youer", "服务", "务端"))
    assert node is not None and evaluate(node, index_tokens("帮我修改youer服务端的登录接口"))


def test_a_phrase_ending_on_a_lone_cjk_character_is_a_prefix() -> None:
    """``"cors决"`` ends on a character that may start a longer run in the text."""
    node = parse_query('"cors决"').expression
    assert node == Phrase(("cors", "决"), prefix=True)
    assert to_fts5(node) == '"cors 决"*'
    assert node is not None and evaluate(node, index_tokens("这个cors决定很关键"))
    assert not evaluate(node, index_tokens("cors 解决"))


def test_glued_words_in_an_advanced_query_still_match() -> None:
    """``Agent通信 OR 猫`` keeps ``Agent通信`` together and finds it in longer text."""
    node = parse_query("Agent通信 OR 猫").expression
    assert node is not None and evaluate(node, index_tokens("Agent通信协议怎么设计？"))


_CJK = st.sampled_from("解决问题服务端通信猫修改设定")
_LATIN = st.sampled_from("corsyuen")
_PIECE = st.one_of(st.text(_CJK, min_size=1, max_size=4), st.text(_LATIN, min_size=1,
                                                                   max_size=4), st.just(" "))


@given(st.lists(_PIECE, min_size=1, max_size=6), st.text(st.sampled_from("前后 "), max_size=3),
       st.text(st.sampled_from("前后 "), max_size=3))
def test_a_quoted_text_always_finds_itself_in_longer_text(pieces: list[str], before: str,
                                                          after: str) -> None:
    """Whatever mix of CJK runs and Latin words, a quoted text matches where it stands."""
    text = "".join(pieces)
    parsed = parse_query(f'"{text}"')
    if parsed.expression is not None:
        assert evaluate(parsed.expression, index_tokens(before + text + after))


def test_unit_spans_respect_latin_word_boundaries_but_not_cjk_ones() -> None:
    """``cors`` is not found inside ``corsair``; ``跨域`` is found inside a run."""
    text = "corsair ships; CORS fails; 前端跨域报错"
    spans = unit_spans(text, parse_query("cors 跨域").units)
    assert [text[s:e] for s, e in spans] == ["CORS", "跨域"]


def test_unit_spans_map_back_through_width_and_length_folding() -> None:
    """Full-width letters and characters that NFKC lengthens keep offsets into the original."""
    text = "㎏㎏㎏ ＣＯＲＳ 跨域"
    spans = unit_spans(text, parse_query("cors 跨域").units)
    assert [text[s:e] for s, e in spans] == ["ＣＯＲＳ", "跨域"]


def test_unit_spans_find_half_width_and_decomposed_voiced_kana() -> None:
    """ﾊﾞｹｯﾄ (half-width) and バケット written with a combining mark are the question's
    バケット (bucket), offsets into the original; パケット (packet) is not."""
    text = "ﾊﾞｹｯﾄ と \u30cf\u3099ケット と パケット"
    spans = unit_spans(text, parse_query("バケ").units)
    assert [text[s:e] for s, e in spans] == ["ﾊﾞｹ", "\u30cf\u3099ケ"]


def test_focus_spans_narrow_only_spans_longer_than_allowed() -> None:
    """A long span becomes its unit places; a short one, or one without units, stays."""
    text = FILLER + "nginx 的配置导致跨域失败" + FILLER
    units = parse_query("跨域").units
    (start, end), = focus_spans(text, [(0, len(text))], units, longest=100)
    assert text[start:end] == "跨域"
    assert focus_spans(text, [(0, 50)], units, longest=100) == ((0, 50),)
    assert focus_spans(text, [(0, 500)], parse_query("docker").units, longest=100) == (
        (0, 500),)


def test_a_long_chinese_message_is_cut_around_its_match() -> None:
    """The load window lands on the matched words, not on the start of the message."""
    body = FILLER + "最后发现是 nginx 的 add_header 没加 always，所以跨域请求失败。" + FILLER
    messages = (Message(session_id="s", position=0, role="user", content="跨域问题怎么办"),
                Message(session_id="s", position=1, role="assistant", content=body))
    hit = MessageHit(session_id="s", position=1, role="assistant", content=body, score=1.0)
    transcript = make_transcript(Candidate(root=Session(id="s"), hits=(hit,)),
                                 (Session(id="s"),), messages, parse_query("跨域 always"),
                                 budget_chars=400)
    assert len(transcript.text) <= 400 and transcript.truncated
    assert "没加 always，所以跨域请求失败" in transcript.text


def test_extractive_summary_clips_a_long_cjk_line_around_the_match() -> None:
    """A matching line far longer than the width is shown around its match."""
    answer = "根因：nginx 没返回 Access-Control-Allow-Origin，跨域被拦截。"
    line = "[ASSISTANT]: " + FILLER + answer + FILLER
    summary = extractive_summary(line, parse_query("跨域 拦截"))
    assert "跨域被拦截" in summary.text
    assert len(summary.text) <= 1200


def test_one_character_queries_match_inside_and_at_the_end_of_a_run() -> None:
    """``猫`` matches ``猫不吃饭`` (start of a bigram) and ``小猫`` (end of a run)."""
    parsed = parse_query("猫")
    node = parsed.expression
    assert parsed.units == (Term("猫", prefix=True),)
    assert node is not None and evaluate(node, index_tokens("我家的猫不吃饭"))
    assert evaluate(node, index_tokens("一只小猫"))
    assert not evaluate(node, index_tokens("一只小狗"))
