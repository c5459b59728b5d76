"""Tests of the query-focused extractive summary kernel."""

from __future__ import annotations

import re

import attrs
from hypothesis import given, settings
from hypothesis import strategies as st

from harkback.stages.query import parse_query
from harkback.stages.summarize.clip import GAP
from harkback.stages.summarize.extractive import (
    NO_MATCH,
    _Line,
    _Picker,
    _show,
    _shown_length,
    extractive_summary,
)

CORS = """[USER]: The frontend keeps failing with a CORS error when calling the API.

[ASSISTANT]: Let me check the response headers.
[Called: bash]

[TOOL:bash]: HTTP/2 200
server: nginx/1.24

[USER]: We added flask-cors last week.

[ASSISTANT]: Found it: `proxy_hide_header Access-Control-Allow-Origin;` in /etc/nginx/api.conf.
Remove that line and reload:
$ sudo systemctl reload nginx

[USER]: Done, the CORS error is gone. Thanks!

[USER]: By the way, what should we have for lunch?

[ASSISTANT]: Pizza sounds good to me."""

ROLE = re.compile(r"^\[(?:USER|ASSISTANT|SYSTEM|TOOL(?::[^\]]*)?)\]: ")


def _summary(query: str, text: str = CORS, **bounds: int) -> str:
    return extractive_summary(text, parse_query(query), **bounds).text


def test_kind_is_extractive() -> None:
    """The kernel labels its summaries as extractive."""
    assert extractive_summary(CORS, parse_query("cors")).kind == "extractive"


def test_lines_covering_the_query_are_picked() -> None:
    """A line holding the query's words appears in the summary."""
    assert "[USER]: Done, the CORS error is gone. Thanks!" in _summary("cors gone")


def test_unrelated_lines_are_left_out() -> None:
    """Lines that neither match nor carry details stay out."""
    assert "lunch" not in _summary("cors error")


def test_lines_are_picked_to_cover_different_query_words() -> None:
    """With a tight line bound, lines covering different words beat repeats of one."""
    text = ("[USER]: docker docker docker\n\n[USER]: docker again\n\n"
            "[USER]: the bridge was down")
    summary = _summary("docker bridge", text, max_lines=2)
    assert "bridge was down" in summary
    assert summary.count("docker") == 3


def test_details_next_to_a_match_are_kept() -> None:
    """Commands and paths right after a matching line come along with it."""
    summary = _summary("proxy_hide_header")
    assert "[ASSISTANT]: $ sudo systemctl reload nginx" in summary


def test_continuation_lines_carry_their_role() -> None:
    """A picked line from inside a block is shown with its block's role prefix."""
    lines = _summary("reload nginx").splitlines()
    assert "[ASSISTANT]: $ sudo systemctl reload nginx" in lines


def test_lines_keep_transcript_order() -> None:
    """Picked lines come out in the order of the transcript, not of their score."""
    lines = [ln for ln in _summary("cors").splitlines() if ln != GAP]
    positions = [CORS.index(ROLE.sub("", ln)) for ln in lines]
    assert positions == sorted(positions)


def test_gap_marks_skipped_lines_only() -> None:
    """An ellipsis line sits between non-adjacent picks and never between adjacent ones."""
    text = "[USER]: alpha one\n\n[USER]: alpha two\n\n[USER]: filler\n\n[USER]: alpha three"
    assert _summary("alpha", text).splitlines() == [
        "[USER]: alpha one", "[USER]: alpha two", GAP, "[USER]: alpha three"]


def test_long_lines_are_cut_around_the_match() -> None:
    """A line wider than the width is cut, keeping the matching word in view."""
    text = "[USER]: " + "words " * 100 + "kubernetes ingress broke " + "tail " * 100
    line = _summary("ingress", text, width=80)
    assert len(line) <= 80
    assert "ingress" in line and line.endswith(GAP)


def test_tight_bound_still_shows_the_best_line() -> None:
    """A bound smaller than any line still yields the best line, cut to fit."""
    text = "[USER]: " + "long words here " * 20 + "and the docker bridge failed"
    summary = _summary("docker bridge", text, max_chars=15)
    assert summary.startswith("[USER]: ") and len(summary) == 15


def test_no_match_says_so_and_shows_the_opening_request() -> None:
    """A session that does not cover the query says so plainly instead of guessing."""
    summary = extractive_summary(CORS, parse_query("kubernetes helm chart"))
    assert summary.text.splitlines() == [
        NO_MATCH, "[USER]: The frontend keeps failing with a CORS error when calling the API."]
    assert summary.note


def test_empty_query_shows_the_opening_request_only() -> None:
    """With nothing to look for, the summary is the opening request, without a verdict."""
    text = extractive_summary(CORS, parse_query("the of")).text
    assert NO_MATCH not in text
    assert text.startswith("[USER]: The frontend")


def test_cjk_query_finds_cjk_lines() -> None:
    """A Chinese query picks the Chinese line that holds it."""
    text = "[USER]: 服务器的端口配置错了\n\n[ASSISTANT]: 改成8080就好了\n\n[USER]: 谢谢"
    assert _summary("端口配置", text).splitlines()[0] == "[USER]: 服务器的端口配置错了"


def test_phrase_query_needs_adjacent_words() -> None:
    """A quoted phrase matches only where its words stand together."""
    text = "[ASSISTANT]: network of the bridge\n\n[USER]: the bridge network is down"
    assert _summary('"bridge network" OR nothing', text) == "[USER]: the bridge network is down"


def test_markers_and_headers_are_never_picked() -> None:
    """Cut markers and session headers are structure, not content."""
    text = ("[USER]: docker broke\n\n...[120 characters omitted]...\n\n"
            "--- continued in session docker-2 ---\n\n[ASSISTANT]: docker fixed")
    summary = _summary("docker", text)
    assert "omitted" not in summary and "continued" not in summary


def test_detail_search_stops_at_a_cut() -> None:
    """A command on the far side of a cut marker is not treated as a neighbour."""
    text = "[USER]: docker broke\n...[50 characters omitted]...\n$ rm -rf /tmp/x"
    assert "rm -rf" not in _summary("docker", text)


WORDS = ["docker", "bridge", "error", "$ ls -la", "/etc/hosts", "the", "fix", "我们", "网络",
         "…", "x" * 90, "ValueError:"]


ROLES = ["[USER]: ", "[ASSISTANT]: ", "[TOOL:bash]: "]


def _line(seed: int) -> str:
    """One transcript line built from a number: a role or none, then a few words."""
    seed, role = divmod(seed, len(ROLES) + 1)
    seed, count = divmod(seed, 6)
    words = []
    for _ in range(count + 1):
        seed, word = divmod(seed, len(WORDS))
        words.append(WORDS[word])
    if role == len(ROLES):
        return "\n" + " ".join(words)
    return "\n\n" + ROLES[role] + " ".join(words)


def _transcripts() -> st.SearchStrategy[str]:
    # Built from plain integers: far cheaper for hypothesis than many nested draws.
    return st.lists(st.integers(0, 10**12), max_size=60).map(
        lambda seeds: "".join(_line(s) for s in seeds).lstrip("\n"))


QUERIES = st.sampled_from(["docker bridge", "fix error", "网络", '"bridge docker"', "nothing",
                           "the"])


@settings(max_examples=300, deadline=None)
@given(_transcripts(), QUERIES, st.integers(1, 1500), st.integers(1, 15), st.integers(1, 200))
def test_summary_respects_its_bounds(text: str, query: str, max_chars: int, max_lines: int,
                                     width: int) -> None:
    """The summary never exceeds max_chars, nor max_lines picked lines."""
    summary = extractive_summary(text, parse_query(query), max_chars=max_chars,
                                 max_lines=max_lines, width=width).text
    assert len(summary) <= max_chars
    assert len([ln for ln in summary.splitlines() if ln != GAP]) <= max(max_lines, 2)


@settings(max_examples=300, deadline=None)
@given(_transcripts(), QUERIES)
def test_summary_is_made_of_transcript_text(text: str, query: str) -> None:
    """Every summary line, minus role prefix and cut marks, is text of the transcript
    (an error's kind kept before a cut is a piece of its own)."""
    summary = extractive_summary(text, parse_query(query)).text
    for line in summary.splitlines():
        if line in (GAP, NO_MATCH):
            continue
        for piece in ROLE.sub("", line).split(GAP):
            assert piece in text


@given(st.lists(st.tuples(st.integers(0, 30), st.text(max_size=5)), max_size=15))
def test_the_picker_counts_the_rendered_length_without_rendering(
        picks: list[tuple[int, str]]) -> None:
    """Each pick's length, counted from its neighbours, is the length of the render."""
    picker = _Picker((), (), 80, 10_000, 100)
    for number, shown in picks:
        if number in picker.picked:
            continue
        expected = len(picker.render({**picker.picked, number: shown}))
        assert picker.length_with(number, len(shown)) == expected
        picker.picked[number] = shown
        picker.order = sorted(picker.picked)
        picker.length = expected


@settings(max_examples=500)
@given(prefix=st.sampled_from(["", "[USER]: ", "[TOOL:a_long_tool_name_here]: "]),
       body=st.text(min_size=1, max_size=300), width=st.integers(1, 200),
       query=st.sampled_from(["docker", "bridge network", "x*", '"a b"', "上次 修改"]))
def test_a_shown_line_is_as_long_as_foretold(prefix: str, body: str, width: int,
                                             query: str) -> None:
    """A line's longest shown length is known before its match is placed (the picker
    refuses a line too long for the room left without showing it)."""
    units = parse_query(query).units
    line = _Line(0, prefix, body, True, frozenset(range(len(units))))
    assert len(_show(line, [(u,) for u in units], width)) <= _shown_length(line, width)


def test_a_long_line_matched_by_another_spelling_is_cut_around_it() -> None:
    """'bikes' matched "bike" near the end of a long line: the shown cut keeps "bike"."""
    parsed = attrs.evolve(parse_query("bikes"), spellings=(("bike",),))
    text = "[USER]: " + "filler words about nothing much " * 12 + "then the bike was serviced"
    summary = extractive_summary(text, parsed, max_chars=400, width=80)
    assert "bike was serviced" in summary.text


def test_a_tool_output_quoting_role_tags_is_not_put_in_their_mouths() -> None:
    """A recall pasted back as tool output holds "[ASSISTANT]: ..." lines: they are the
    tool's text, shown under the tool's tag, not as what this session's assistant said."""
    text = ("[USER]: what did the search say about the vault token\n\n"
            "[TOOL:session_search]: [1] old (extractive summary)\n"
            "[USER]: rotate the vault token\n"
            "[ASSISTANT]: I ran vault token revoke -self and wiped the vault data")
    lines = _summary("vault token revoke", text).splitlines()
    said = [ln for ln in lines if "revoke" in ln]
    assert said and all(ln.startswith("[TOOL:session_search]: ") for ln in said)


COMMAND = ("docker run --rm -v /home/user/projects/very/long/path/to/the/project/directory/"
           "with/many/segments:/app -e DATABASE_URL=postgres://app@db:5432/app -p 8080:8080 "
           "myimage:latest python -m app.server --workers 4 --log-level debug")


def test_a_long_command_is_cut_between_its_words() -> None:
    """A line cut to the width keeps whole tokens: no path starting mid-name, no flag cut
    to another flag."""
    text = "[USER]: how did I run the app server container\n\n[ASSISTANT]: $ " + COMMAND
    lines = _summary("app server container", text).splitlines()
    shown = [ln for ln in lines if ln.startswith("[ASSISTANT]: ")]
    assert shown and shown[0].endswith(GAP)
    tokens = ROLE.sub("", shown[0]).replace(GAP, " ").split()
    assert tokens and set(tokens) <= set(("$ " + COMMAND).split())


def test_a_line_after_the_cut_is_not_shown_as_the_opening_request() -> None:
    """When the load stage cut the session's start away, its first user line kept is one
    from the middle: it is not added as if it were the request that opened the session."""
    text = ("...[earlier conversation truncated]...\n\n"
            "[USER]: chatter message 4262 about lunch\n\n[ASSISTANT]: ok\n\n"
            "[USER]: the redis eviction policy allkeys-lru fixed the memory issue")
    assert _summary("redis eviction", text) == (
        "[USER]: the redis eviction policy allkeys-lru fixed the memory issue")
    uncut = text.split("\n\n", 1)[1]
    assert "4262" in _summary("redis eviction", uncut)


def test_an_error_cut_from_its_start_keeps_its_kind() -> None:
    """A long error line cut to show the match keeps the error's kind in front."""
    text = ("[USER]: what was the int parse error in main.py\n\n[TOOL:bash]: ValueError: "
            + "x" * 300 + " invalid literal for int() with base 10: 'abc'")
    lines = _summary("invalid literal", text).splitlines()
    shown = [ln for ln in lines if "invalid literal" in ln]
    assert shown and shown[0].startswith("[TOOL:bash]: ValueError: " + GAP)
