"""Time words of issue 17 read as a user means them: a count in Chinese numerals (三天前), a
vague count (几天前, 며칠 전, 数日前), the days back to now (一年来, 近半年, 过去24小时,
ここ数日), "since" in Chinese (自从上周, 从上周起), a day of this week in English ("this
Monday") or framed by its part of the day (这周三下午), 礼拜 as a week; and the same
characters inside other words (今日头条, 两周前端) read as no time."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from harkback.stages.named_times import named_times, weighed_times
from harkback.stages.query import topic_tokens
from harkback.stages.recent import browse_window
from harkback.stages.request import SearchRequest

NOW = datetime(2026, 3, 19, 12, tzinfo=UTC).timestamp()  # a Thursday
DAY = 86400.0


def _day(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def _before(text: str) -> float:
    return math.nextafter(_day(text), -math.inf)


def _window(question: str) -> tuple[float, float] | None:
    return named_times(question, NOW).window


@pytest.mark.parametrize(("question", "english"), [
    ("三天前", "3 days ago"), ("两周前", "2 weeks ago"), ("一个月前", "1 month ago"),
    ("两个月前", "2 months ago"), ("十二天前", "12 days ago"), ("두 달 전", "2 months ago"),
    # The vague ones as "a few days ago" (when.VAGUE: two to five days back).
    ("几天前", "a few days ago"), ("前几天", "a few days ago"), ("며칠 전", "a few days ago"),
    ("数日前", "a few days ago"), ("前些日子", "a few days ago"),
])
def test_a_count_in_words_is_read_as_the_english_count(question: str, english: str) -> None:
    """三天前 was read only as 3天前; 几天前, 前几天, 며칠 전, 数日前 not at all (a question
    asking for the sessions of a few days ago was searched for 几天 and 天前)."""
    assert _window(question) == _window(english) is not None


def test_a_few_days_ago_is_the_second_to_fifth_day_back_in_every_language() -> None:
    """One window for every language: 14 to 17 March asked on the 19th."""
    for question in ("a few days ago", "几天前", "며칠 전", "数日前"):
        assert _window(question) == (_day("2026-03-14"), _before("2026-03-18")), question


@pytest.mark.parametrize(("question", "days"), [
    ("一年来做了什么", 365.0), ("三个月以来", 90.0), ("近半年", 182.5), ("过去半年", 182.5),
    ("过去24小时", 1.0), ("过去 24 小时", 1.0), ("ここ2、3日", 3.0),
    ("这些天", 3.0),
])
def test_the_days_back_until_now(question: str, days: float) -> None:
    """一年来 (the past year), 近半年 (the past six months), 过去24小时 (the past day),
    ここ2、3日 (the past two or three days), 这些天 (these days): from that long ago to now."""
    assert _window(question) == (NOW - days * DAY, NOW)


@pytest.mark.parametrize(("question", "start", "end"), [
    ("这一周做了什么", _day("2026-03-16"), NOW),  # this week: Monday on
    ("这一周末做了什么", _day("2026-03-14"), _before("2026-03-16")),  # the latest weekend
    ("大前年的项目", _day("2023-01-01"), _before("2024-01-01")),  # three calendar years back
    ("一昨昨年", _day("2023-01-01"), _before("2024-01-01")),
    ("さきおととし", _day("2023-01-01"), _before("2024-01-01")),
    ("这礼拜一", _day("2026-03-16"), _before("2026-03-17")),
    ("上礼拜", _day("2026-03-09"), _before("2026-03-16")),
    ("上个礼拜", _day("2026-03-09"), _before("2026-03-16")),
    ("上礼拜五", _day("2026-03-13"), _before("2026-03-14")),
    ("this monday", _day("2026-03-16"), _before("2026-03-17")),
    ("what did i do on monday this week", _day("2026-03-16"), _before("2026-03-17")),
])
def test_a_calendar_period_or_day(question: str, start: float, end: float) -> None:
    """这一周 is this week; 大前年, 一昨昨年, さきおととし the year before the year before last
    (not last year, 昨年, or the year before, おととし, inside them); 礼拜 a week as 星期
    is; "this Monday" and "on Monday this week" that Monday, not the whole week."""
    assert _window(question) == (start, end)


@pytest.mark.parametrize("question", ["自从上周", "从上周起", "自上周"])
def test_since_last_week_in_chinese_runs_until_now(question: str) -> None:
    """自从上周, 从上周起 (since last week) were last week alone, its last days' sessions
    left out; weighed by the ranker as listed."""
    since = (_day("2026-03-09"), NOW)
    assert _window(question) == since
    assert weighed_times(question, NOW) == [since]


def test_since_last_week_in_chinese_alone_is_listed() -> None:
    """自从 is a since word as 以来 is: the question names no topic (it was searched)."""
    listed = browse_window(SearchRequest(query="自从上周我做了什么"), NOW)
    assert listed is not None and (listed.since, listed.until) == (_day("2026-03-09"), NOW)


def test_since_last_month_in_chinese_runs_until_now() -> None:
    assert _window("自从上个月") == (_day("2026-02-01"), NOW)


@pytest.mark.parametrize(("question", "start"), [
    ("这周三下午我改了什么", "2026-03-18"), ("上周五晚上部署的服务", "2026-03-13"),
])
def test_a_part_of_the_day_after_a_day_frames_it(question: str, start: str) -> None:
    """这周三下午 was this week so far (三下 taken as a count), and 下午, 晚上 searched for."""
    said = named_times(question, NOW)
    assert said.window == (_day(start), _before(start) + DAY)
    assert not {"下午", "晚上"} & set(topic_tokens(said.rest))


@pytest.mark.parametrize(("question", "unread"), [
    ("今日头条的推送接口", "今日"),  # a news app
    ("两周前端开发的排期", "两周"),  # two weeks of front-end work
    ("第三天前端又挂了", "天前"),
    ("一年来一次的体检", "一年"),  # once a year
    ("这些天然气管道的数据", "些天"),  # these natural gas pipes
    ("3일 전화 기록", "3"),  # a phone call
    ("版本周五发布", "本周"),  # the version ships on Friday
    ("脚本周五运行", "本周"),  # the script runs on Friday
    ("提前几天通知用户", "几天"),  # a few days in advance
    ("上线之前几天的日志", "几天"),  # the few days before the launch
    ("周日上礼拜堂做弥撒", "礼拜"),  # to go to the chapel
    ("这些日常任务", "些日"),  # these daily tasks
    ("这些日程安排", "些日"),  # these schedules
    ("这几日元的汇率", "几日"),  # the rate of these few yen
])
def test_the_same_words_inside_other_words_are_no_time(question: str, unread: str) -> None:
    said = named_times(question, NOW)
    assert said.window is None and unread not in said.words


@pytest.mark.parametrize("question", ["上周起草的文档", "来自上周的日志", "上周起了一个新服务",
                                      "上周起动的服务为什么挂了"])
def test_a_since_word_inside_another_word_is_no_since(question: str) -> None:
    """起草 (drafted), 来自 (from: its source), 起了 (started up), 起动 (started, of a
    service) do not run last week on until now."""
    assert _window(question) == (_day("2026-03-09"), _before("2026-03-16"))


@pytest.mark.parametrize(("question", "english"), [
    ("3天前提交的代码", "3 days ago"), ("三天前提交的代码", "3 days ago"),  # submitted
    ("几天前提到的方案", "a few days ago"),  # mentioned
    ("3天前进行的测试", "3 days ago"), ("两周前面试的候选人", "2 weeks ago"),  # interviewed
    ("三天前线上出的问题", "3 days ago"),  # in production
    ("一周前任务失败了", "1 week ago"),  # the task failed
    ("三天前列出的文件", "3 days ago"),  # listed
])
def test_a_time_ago_before_a_verb_is_read(question: str, english: str) -> None:
    """前 then a verb (提交, 进行, 面试, 线上 ...) is no longer word (前提, 前进, 前面,
    前线): 3天前提交 was read on main and lost with the guard against 前提 (a premise)."""
    assert _window(question) == _window(english) is not None


@pytest.mark.parametrize(("question", "start"), [
    ("3일 전부터 오류가 났어", "2026-03-16"), ("2주 전부터", "2026-03-02"),
    ("며칠 전부터 느려졌어", "2026-03-14"),
])
def test_since_a_time_ago_in_korean_runs_until_now(question: str, start: str) -> None:
    """전부터 (since ... ago) is not 전부 (all): 3일 전부터 was read on main."""
    assert _window(question) == (_day(start), NOW)


@pytest.mark.parametrize(("question", "unread"), [
    ("几十天前的日志", "十天"),  # some tens of days ago, not ten
    ("1,000天前的版本", "天前"),  # a thousand days, not one
    ("1.5天前的构建", "天前"),  # one and a half days, not five
])
def test_the_tail_of_a_longer_number_is_no_count(question: str, unread: str) -> None:
    said = named_times(question, NOW)
    assert said.window is None and unread not in said.words


def test_this_monday_dot_com_is_a_product_not_a_day() -> None:
    said = named_times("what's on this monday.com board", NOW)
    assert said.window is None and "monday" not in said.words


@pytest.mark.parametrize("question", ["源自上周的变更", "出自上周的报告", "摘自上周的会议纪要"])
def test_from_a_source_is_no_since(question: str) -> None:
    """来自 (comes from), 源自 (stems from), 出自 (is taken from) name where a thing comes
    from, not since when: last week alone, not until now."""
    assert _window(question) == (_day("2026-03-09"), _before("2026-03-16"))


@pytest.mark.parametrize(("question", "start"), [
    ("上周以来我做了什么", "2026-03-09"), ("从上周起我做了什么", "2026-03-09"),
    ("自从上个月以来都做了啥", "2026-02-01"), ("从上周开始我做了什么", "2026-03-09"),
    ("我从上周起做了什么", "2026-03-09"),
])
def test_a_question_naming_only_since_a_time_lists_it(question: str, start: str) -> None:
    """以来, 从...起, 开始 go with the time they run on: 来我, 起我, 始我 (the pair across
    the since word's edge) were read as topic words and the question searched for them;
    啥 (what) frames as 什么 does; 从 before the time goes too (我从 is no word)."""
    listed = browse_window(SearchRequest(query=question), NOW)
    assert listed is not None and (listed.since, listed.until) == (_day(start), NOW)


@pytest.mark.parametrize("question", [
    "上周以来nginx超时了", "上周起草的方案", "从上周的日志里找超时", "上周起火了", "上周起步了",
])
def test_a_topic_beside_a_since_time_is_searched(question: str) -> None:
    """The since words go, not what follows them (起草: drafted; 起火: caught fire; 起步:
    got going) nor a 从 that runs nothing on (from last week's logs)."""
    assert browse_window(SearchRequest(query=question), NOW) is None


@pytest.mark.parametrize(("question", "hours"), [
    ("3小时前", 3), ("三个小时前", 3), ("2時間前", 2), ("3시간 전", 3), ("3 hours ago", 3),
    ("an hour ago", 1),
])
def test_hours_ago_are_that_hour(question: str, hours: int) -> None:
    """3小时前, 2時間前, 3시간 전, "3 hours ago" were no time (3 and 小时 searched for): the
    hour that many hours back, half an hour either side, as "2 weeks ago" is that week."""
    hour = 3600.0
    assert _window(question) == (NOW - (hours + 0.5) * hour, NOW - (hours - 0.5) * hour)
    assert weighed_times(question, NOW) == [_window(question)]


def test_hours_ago_alone_are_listed() -> None:
    listed = browse_window(SearchRequest(query="3小时前我做了什么"), NOW)
    assert listed is not None and (listed.since, listed.until) == _window("3 hours ago")


@pytest.mark.parametrize("question", [
    "3시간 전화 통화",  # a three-hour phone call
    "3小时前后的日志",  # the logs around three hours
    "第3个小时前的日志",  # before the third hour
    "1.5 hours ago",  # no 5 hours ago
    "how many hours ago did the build start",  # no count: a duration asked
    "half an hour ago",  # no hour ago: half an hour is not read, as 30分钟前 is not
])
def test_the_words_of_hours_ago_elsewhere_are_no_time(question: str) -> None:
    assert _window(question) is None


@pytest.mark.parametrize("question", [
    "what did I do,a week ago", "so.two weeks ago I fixed nginx",
])
def test_a_count_after_punctuation_is_read(question: str) -> None:
    """Only a number's tail is no count ("1.5 hours ago"): a count in words after a comma
    or a full stop with no space is read as it is after a space."""
    spaced = question.replace(",", ", ").replace(".", ". ")
    assert _window(spaced) is not None and _window(question) == _window(spaced)


@pytest.mark.parametrize(("question", "start"), [
    ("上周三起", "2026-03-11"), ("上周五起我做了什么", "2026-03-13"), ("从上周三起", "2026-03-11"),
    ("上周日起", "2026-03-15"), ("这周二起我做了什么", "2026-03-17"),
    # 一起 as "since Monday" (not together): 从 before it, a subject or the end after it.
    ("上周一起我做了什么", "2026-03-09"), ("从上周一起做了什么", "2026-03-09"),
    ("上周一起", "2026-03-09"),
    # 自 before it, or "until now" after it (至今, 到现在): they were "together last week"
    # (一起 searched), or until now from no start at all (上周一起到现在 listed everything).
    ("自上周一起做了什么", "2026-03-09"), ("上周一起至今我做了什么", "2026-03-09"),
    ("上周一起到现在做了什么", "2026-03-09"), ("从上周一起到现在做了什么", "2026-03-09"),
])
def test_since_a_day_of_last_week_runs_from_that_day(question: str, start: str) -> None:
    """上周三起 (since last Wednesday) was all of last week (三起 read as a count) and
    this week left out: from that day to now, listed and weighed alike."""
    since = (_day(start), NOW)
    assert _window(question) == since
    assert weighed_times(question, NOW) == [since]
    listed = browse_window(SearchRequest(query=question), NOW)
    assert listed is not None and (listed.since, listed.until) == since


@pytest.mark.parametrize("question", [
    "上周五起事故", "上周三起严重故障", "上周两起事故", "上周一起讨论的方案", "上周一起到北京出差",
])
def test_a_count_of_incidents_after_last_week_is_no_day(question: str) -> None:
    """上周五起事故 is five accidents last week, 一起 together: last week, no day."""
    assert _window(question) == (_day("2026-03-09"), _before("2026-03-16"))


@pytest.mark.parametrize("question", ["这周五起nginx", "nginx since this friday", "这周日起的日志"])
def test_since_a_day_still_to_come_is_weighed_from_now(question: str) -> None:
    """Since a day still to come (Friday, asked on Thursday) starts after now: weighed as
    it was, its window ran back to front (Friday to now), lifting the newest sessions less
    the further off the day; from now, they are lifted as the nearest."""
    assert weighed_times(question, NOW) == [(NOW, NOW)]
