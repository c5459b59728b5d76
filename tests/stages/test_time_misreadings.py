"""Words that look like times and are not, and times inside longer ones: each is read as
the user meant it, or left to be searched as words (never an error)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harkback.stages.calendar_words import calendar_windows, previous_periods
from harkback.stages.month_parts import merged, month_parts, within
from harkback.stages.named_times import named_times
from harkback.stages.when import _outermost, time_windows, time_words

NOW = datetime(2026, 3, 19, 12, tzinfo=UTC).timestamp()  # a Thursday


def _day(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


@pytest.mark.parametrize("question", [
    "who takes over the weekend shift", "who took the last weekend deploy",
    "hand over the weekend-rota", "上周期的指标怎么算", "지난 주문 내역 조회",
    "지난 주요 장애 정리", "지난 달러 환율", "an early may help",
    "what did we discuss on the last night of the offsite", "who took the last night shift",
    "the last night-shift rota", "where did we eat on our last night in lisbon",
    "지난 주기의 지표 계산", "저번 주기 회고", "지난 주주총회 안건", "지난 달리기 기록",
    "马上周末了，备份脚本怎么设置", "加上周末也要跑的任务", "登上月球的照片", "线上周报模板",
    "基本上周末都在加班", "走上月台", "the week before last release",
    "what did we change over the holidays", "during the holidays who was on call",
])
def test_a_word_that_only_looks_like_a_time_names_none(question: str) -> None:
    """A noun after "weekend", 上周期 (the previous cycle), 지난 주문 (a past order), 지난
    주요 (past major), 지난 주기 (the previous cycle), 주주총회 (shareholders' meeting), 달러
    (dollar) and 달리기 (a run) are no week, month or weekend; nor is 上 ending a word before
    it (马上周末: the weekend is near; 加上周末: weekends too; 登上月球: onto the moon; 线上周报:
    the online weekly report; 基本上: basically; 走上月台: onto the platform, all read as last
    week, weekend or month), nor "the week before last release"; "the holidays" are unread
    (which days they were turns on the country and year); and "the last night
    of the offsite", "our last night in Lisbon" or "the last night shift" no last night: no
    window is lifted and no word of them is taken from the search."""
    text = question.lower()
    assert time_windows(question, NOW) == []
    assert previous_periods(text, NOW) == [] and month_parts(text, NOW) == []
    assert time_words(question) == frozenset()


@pytest.mark.parametrize("question", ["比上周慢了多少", "跟上周一样的报错", "关上周的工单",
                                      "合上周的 pr", "贴上周的日志", "追上周的 bug",
                                      "那台上周装的机器", "那本上周买的书讲什么",
                                      "日本上周发布了什么", "落实上周的决定", "核实上周的数据",
                                      "参加上周的评审",
                                      "添加上周的日志", "木马上周又出现了", "上线上周的版本"])
def test_a_word_before_last_week_that_takes_it_is_no_word_with_it(question: str) -> None:
    """比 (than), 跟 (as), 关 (close), 合 (merge), 贴 (paste), 追 (chase), 台 and 本 (a
    machine's, a book's measure word), 日本, 落实 (carry out), 核实 (verify), 参加 (attend),
    添加 (add), 木马 (a trojan) and 上线 (ship) take 上周 after them: it is last week (9-15
    March), not read as 关上, 合上, 本上, 加上 ... as 马上周末, 加上周末 and 基本上 are (the
    previous commit left 本, 实, 加, 马, 线 before 上周 all unread)."""
    ((_, (start, _)),) = previous_periods(question, NOW)
    assert start == _day("2026-03-09")


def test_a_week_or_weekend_of_a_month_is_not_the_one_just_past() -> None:
    """"The last week of February" and "the last weekend of February" are February's: the
    ranker read them as the seven days back and as last weekend (14-15 March)."""
    for question in ("what did we ship the last week of february",
                     "what did we ship the last weekend of february"):
        assert time_windows(question, NOW) == [], question
    (_, (start, end)), = calendar_windows("the last weekend of february", NOW)
    assert (start, end) == (_day("2026-02-28"), end) and _day("2026-03-01") < end \
        < _day("2026-03-02")


@pytest.mark.parametrize("question", ["上周一起讨论的方案", "上周三个 bug 怎么修的", "上周日志在哪",
                                      "上周天气", "上周一下就好了", "上周三批数据"])
def test_a_number_or_word_after_last_week_is_no_day_of_it(question: str) -> None:
    """一起 (together), 三个 (three of), 日志 (logs), 天气 (weather), 一下 (a moment), 三批
    (three batches) after 上周 are no Monday, Wednesday or Sunday: 上周 is all of last week
    (9-15 March)."""
    ((_, (start, end)),) = previous_periods(question, NOW)
    assert (start, end < _day("2026-03-16")) == (_day("2026-03-09"), True)


@pytest.mark.parametrize("question", ["这周一定要发布的版本", "上周日报里的 bug", "本周一半的任务",
                                      "这周三十个 bug 怎么修的", "上周一共修了几个 bug"])
def test_a_number_or_word_after_this_week_is_no_day_of_it(question: str) -> None:
    """一定 (must), 日报 (daily reports), 一半 (half), 三十个 (thirty), 一共 (in all) after
    这周 or 上周 name no Monday, Sunday or Wednesday: the whole week is read (the ranker
    weighed that one day, and a listing listed it alone)."""
    windows = [w for _, w in time_windows(question, NOW)]
    windows += [w for _, w in calendar_windows(question, NOW) + previous_periods(question, NOW)]
    assert windows and all(end - start > 2 * 86400 for start, end in windows), windows


@pytest.mark.parametrize("question", ["上周五半夜出的事故", "上周五报的 bug", "上周五记录的日志",
                                      "上周五批量删除的数据", "上周五十点的发布",
                                      "上周五下午的会议", "上周五批准的 PR", "上周五下载的文件"])
def test_a_word_a_day_begins_after_last_week_is_that_day(question: str) -> None:
    """半夜 (midnight), 报 (reported), 记录 (recorded), 批量 (in bulk), 十点 (at ten), 下午
    (afternoon), 批准 (approved) and 下载 (downloaded) after 上周五 are of that Friday (13
    March): the words that make 一 or 日 no day (一半, 一下, 日报, 日记) and the counts (五十个,
    三批) read them as all of last week."""
    windows = [w for _, w in time_windows(question, NOW)]
    windows += [w for _, w in calendar_windows(question, NOW) + previous_periods(question, NOW)]
    assert windows and all(start == _day("2026-03-13") and end < _day("2026-03-14")
                           for start, end in windows), windows


def test_said_last_month_is_last_month_not_its_end() -> None:
    """말 of 말했던 (said) is no month's end: "the setting I mentioned last month" is all of
    February, not its last seven days."""
    text = "지난달 말했던 설정"
    assert month_parts(text, NOW) == []
    ((_, (start, _)),) = previous_periods(text, NOW)
    assert start == _day("2026-02-01")


def test_the_second_weekend_of_a_month_and_one_not_begun() -> None:
    """"The 2nd weekend of last month" is 14-15 February; "the fourth weekend of March" has
    not begun by 19 March: the latest begun is March 2025's (22-23 March)."""
    ((_, (start, _)),) = month_parts("the 2nd weekend of last month", NOW)
    assert start == _day("2026-02-14")
    ((_, (start, _)),) = month_parts("the fourth weekend of march", NOW)
    assert start == _day("2025-03-22")
    assert month_parts("the fourth weekend of march 2026", NOW) == []


@given(st.text(max_size=60))
def test_any_text_reads_as_month_parts_without_error(text: str) -> None:
    """Whatever the text, each part read has begun by now and ends no later."""
    for _, (start, end) in month_parts(text.lower(), NOW):
        assert start <= end <= NOW


spans = st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)).map(sorted).map(tuple),
                 max_size=12)


@given(spans)
def test_the_outermost_expressions_are_those_within_no_other(given_spans: list[tuple[int, int]]
                                                             ) -> None:
    """The one sweep keeps what comparing each expression with each kept (the same span
    twice is one expression), which took seconds on a question of 10,000 time words."""
    inside = {a for a in given_spans for b in given_spans
              if b[0] <= a[0] and a[1] <= b[1] and a != b}
    assert _outermost(given_spans) == set(given_spans) - inside


@given(spans, st.integers(0, 31))
def test_within_finds_what_any_span_holds(given_spans: list[tuple[int, int]], at: int) -> None:
    """Halving over the merged spans answers as looking through each one does."""
    assert within(at, merged(given_spans)) == any(s <= at < e for s, e in given_spans)


@pytest.mark.parametrize("question", ["what did I do until the end of last month?",
                                      "what did I do before the last weekend of february?"])
def test_a_month_part_after_until_names_no_stretch(question: str) -> None:
    """"Until the end of last month", as "until 2026-03-04", is not those seven days alone
    (as it was listed): the calendar reads no stretch, and the range up to its end is
    :mod:`~harkback.stages.time_ranges`' (tests/pipeline/test_cli_time_spans.py)."""
    assert calendar_windows(question.lower(), NOW) == []


def test_early_may_after_in_is_the_month() -> None:
    """"What did I do in early May?" is May 1st to 7th (2025's, the latest begun): the
    verb's exception ("an early may help") left it searched as words."""
    ((_, (start, end)),) = month_parts("what did i do in early may?", NOW)
    assert (start, _day("2025-05-07") < end < _day("2025-05-08")) == (_day("2025-05-01"), True)
    assert month_parts("an early may help", NOW) == []


@pytest.mark.parametrize("question", [
    "what did I fix last weekend around the auth module",
    "what did we change over the weekend besides the cache",
    "last weekend someone broke prod",
])
def test_weekend_before_a_preposition_or_pronoun_is_a_time(question: str) -> None:
    """No noun is "around", "besides" or "someone": the weekend before them is last weekend
    (14-15 March), as before "with" or "and" (they were searched as the word "weekend")."""
    ((_, (start, _)),) = time_windows(question, NOW)
    assert start == _day("2026-03-14")


@pytest.mark.parametrize(("question", "day"), [
    ("what did I do a month ago today?", "2026-02-19"),
    ("what was I working on a year ago today?", "2025-03-19"),
])
def test_a_month_or_year_ago_today_is_that_date(question: str, day: str) -> None:
    """As "a week ago today" is that one day, so is a month or a year ago today: it was the
    month or year around it, and "today" was taken into the expression."""
    ((_, (start, end)),) = time_windows(question, NOW)
    assert (start, end < _day(day) + 86400) == (_day(day), True)


@pytest.mark.parametrize("question", [
    "日本周末的定时任务", "本周期的指标怎么算", "이번 주문 처리 로직", "이번 주요 변경사항 정리",
    "이번 주기 회고", "今年度の予算はどこ", "오늘날 개발 트렌드",
])
def test_a_word_holding_this_week_or_a_year_names_no_time(question: str) -> None:
    """日本周末 (a Japanese weekend), 本周期 (this cycle), 이번 주문 (this order), 이번 주요
    (this major), 이번 주기 (this cycle) were this week or weekend; 今年度 (Japan's fiscal year,
    from April) this calendar year, 오늘날 (nowadays) today. Nothing is listed and no word is
    taken from the search."""
    said = named_times(question, NOW)
    assert said.window is None and said.rest == question.lower()
    assert time_words(question) == frozenset()


@pytest.mark.parametrize("question", [
    "前年比の売上", "前年は何をした", "当前年份怎么取", "提前年底完成", "将近一年没更新的仓库",
    "接近一个月的延迟", "几近一年没有更新的仓库", "延迟逼近一个月", "지난 해결 방법",
    "지난 3일에 배포한 버전",
])
def test_a_word_like_the_years_or_days_back_names_no_time(question: str) -> None:
    """前年 is the year before last in Chinese only: with kana after it (Japanese: the
    previous year), in 前年比 (year on year), 当前年份 (the current year) or 提前年底 (ahead,
    by the year's end) it is none; 将近一年, 接近一个月, 几近一年, 逼近一个月 (nearly a year,
    a month), 지난 해결 (a past fix) and 지난 3일에 (as likely the 3rd) no span back (each
    read so with its guard taken out of cjk_times)."""
    said = named_times(question, NOW)
    assert said.window is None and said.rest == question.lower()
    assert time_words(question) == frozenset()


@pytest.mark.parametrize("question", [
    "前年実績と比較して", "前年対比の数字を出して", "前年実績はどこ？", "売上の前年実績",
])
def test_a_japanese_previous_year_with_a_kanji_word_after_names_no_time(question: str) -> None:
    """In a Japanese question 前年 is the previous year, a word of its own (前年実績, the
    previous year's results; 前年対比, year on year): kana further on or just before it
    make the question Japanese, as 前年の does. These were 2024, the year before last."""
    said = named_times(question, NOW)
    assert said.window is None and said.rest == question.lower()
    assert time_words(question) == frozenset()


@pytest.mark.parametrize(("question", "week"), [("本周日报模板在哪", "2026-03-16"),
                                               ("上周日报写了什么", "2026-03-09"),
                                               ("上周日本发布了什么", "2026-03-09")])
def test_a_daily_report_after_a_week_is_no_sunday(question: str, week: str) -> None:
    """本周日报 is this week's daily report (日报), 上周日本 Japan last week: not this or
    last Sunday (上周日报 listed 15 March alone) with 报 or 本 searched alone."""
    said = named_times(question, NOW)
    assert said.window is not None and said.window[0] == _day(week)
    assert question[2:4] in said.rest


@pytest.mark.parametrize(("question", "days"), [
    ("最近二三十天做了什么", 30), ("最近十一二天做了什么", 12), ("过去三四十天的部署", 40),
])
def test_two_numbers_side_by_side_beside_ten_count_as_the_larger(question: str, days: int
                                                                   ) -> None:
    """二三十 (twenty or thirty), 三四十 and 十一二 (eleven or twelve) are the larger, as
    两三 is: they were read as ten days."""
    assert named_times(question, NOW).window == (NOW - days * 86400, NOW)
