"""Synthetic agent transcripts for scale benchmarks, deterministic from a seed.

:func:`generate` streams :class:`~harkback.stages.records.Conversation` records until
exactly ``messages`` messages were produced, one session (and its children) at a
time, so a million messages never sit in memory at once. The same seed gives the
same stream whatever the size: a 10k corpus is the first 10k messages of the 1M one
(only the last session is cut short).

What the stream holds, roughly as agent histories do:

- interactive sessions (``cli``, ``telegram``, ``discord``): user turns, assistant
  answers, tool calls (``bash``, ``read_file``, ``write_file``, ``web_search``) with long
  outputs: logs, code, test runs, directory listings;
- delegated sub-agent sessions and compression continuations (children linked by
  ``parent_session_id``; the compressed parent ends with ``end_reason="compression"``);
- noisy scheduled sessions (``cron``) repeating the same report vocabulary;
- a share of sessions written in Chinese, and Chinese mixed into English ones;
- a few hidden ``tool`` sessions.

Words follow a Zipf-Mandelbrot law over a fixed vocabulary (function words, technical
words, then a long tail of made-up words), so common words are really common and
most words are rare. The vocabulary does not depend on the seed, so benchmark
queries can name its words (:data:`RARE_WORD`).

>>> chats = list(generate(50, seed=1))
>>> sum(len(c.messages) for c in chats)
50
>>> [c.session.id for c in generate(50, seed=1)] == [c.session.id for c in chats]
True
>>> parse_size("100k"), parse_size("1m"), parse_size("2500")
(100000, 1000000, 2500)
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import json
import random
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TypeVar

import attrs

from benchmarks.entry import run_main
from harkback.stages.records import Conversation, Message, Role, Session, ToolCall

START = 1_740_000_000.0
"""When the first generated session starts (epoch seconds, February 2025)."""

FUNCTION_WORDS = """
the to and a of is it in that i you for this on with be we not can but have are so if
as what was do at from or an will my there just all they how your by me when no about
which now then one up out use like some would should get because also here more run
""".split()

TECH_WORDS = """
error file config server test build code function data request docker api user service
version output command line path install update log fix issue database port network
value package module script container deploy check image branch commit repo response
client query table key string type model message default local setting connection token
directory process job status cache python node json yaml environment variable endpoint
nginx cors header proxy host bridge volume compose kubernetes pod cluster namespace secret
timeout retry queue worker thread memory cpu disk latency request_id schema migration index
postgres redis sqlite select insert column field null import class method return async
await promise callback handler route middleware session cookie auth password login permission
denied refused failed warning info debug trace stack exception traceback undefined missing
found invalid syntax parse format encode decode utf unicode byte buffer stream socket tcp
http https url domain dns certificate ssl tls cert expired renew cron schedule daily report
backup restore snapshot bucket upload download sync remote origin merge rebase pull push
release tag pipeline ci workflow action runner artifact lint format typecheck coverage unit
integration fixture mock assert expected actual diff patch review approve reject comment
frontend backend react vue component state props render style css html template layout
page button form input validation submit event listener browser chrome firefox mobile
ios android app store review crash bug regression performance slow fast optimize profile
benchmark metric alert dashboard grafana prometheus monitor health probe readiness liveness
ingress service_account role binding helm chart values terraform plan apply state provider
aws gcp azure lambda function_name region zone instance ami vpc subnet gateway firewall rule
ssh key_pair tunnel vpn bastion jump host_key known_hosts fingerprint rsa ed25519 agent
prompt completion embedding vector similarity search retrieval chunk context window
summary recall transcript agent tool_call subagent compression budget truncate
""".split()

CHINESE_WORDS = """
服务器 配置 错误 部署 数据库 网络 端口 容器 问题 解决 修改 代码 脚本 测试 日志 文件
用户 接口 请求 响应 超时 连接 失败 成功 重启 安装 更新 版本 环境 变量 权限 目录 路径
缓存 内存 磁盘 进程 线程 队列 任务 定时 报告 备份 恢复 证书 域名 代理 跨域 前端 后端
页面 按钮 表单 组件 样式 模型 提示 摘要 搜索 检索 会话 记录 历史 上次 之前 现在 然后
已经 需要 可以 应该 因为 所以 但是 如果 还是 这个 那个 一下 怎么 什么 为什么 我们 你们
看看 检查 确认 运行 执行 命令 参数 返回 结果 输出 输入 数据 字段 表格 索引 查询 迁移
""".split()

CHINESE_PARTICLES = ["的", "了", "吗", "呢", "吧", "是", "在", "和", "也", "就", "都", "把", "被"]

TOOLS = ("bash", "read_file", "write_file", "web_search", "patch", "run_tests")
INTERACTIVE_SOURCES = ("cli", "cli", "cli", "telegram", "discord")

CRON_REPORT = ("daily health report for the backup job: disk usage {pct}% on /var/lib, "
               "backup snapshot {snap} uploaded to the bucket, {n} files synced, "
               "no errors, next run scheduled at 03:00")

T = TypeVar("T")

PHRASE = ("connection", "refused")
"""Two words that stand together in generated logs (for phrase queries)."""


def _made_up_words(count: int) -> list[str]:
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"] + ["ar", "el", "in", "or"]
    rng = random.Random(20260301)
    seen = set(FUNCTION_WORDS) | set(TECH_WORDS)
    words: list[str] = []
    while len(words) < count:
        word = "".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


@attrs.frozen
class Vocabulary:
    """Words by frequency rank and the cumulative Zipf-Mandelbrot weights to draw them."""

    words: tuple[str, ...]
    cumulative: tuple[float, ...]

    @classmethod
    def zipf(cls, words: Sequence[str], *, exponent: float = 1.05, shift: float = 2.7
             ) -> Vocabulary:
        """Weights ``1 / (rank + shift) ** exponent``: rank 1 is the most common word.

        >>> v = Vocabulary.zipf(["a", "b", "c"])
        >>> v.cumulative[0] < v.cumulative[1] < v.cumulative[2]
        True
        """
        weights = (1.0 / (rank + shift) ** exponent for rank in range(1, len(words) + 1))
        return cls(tuple(words), tuple(itertools.accumulate(weights)))

    def draw(self, rng: random.Random, count: int) -> list[str]:
        """``count`` words drawn independently by their weights."""
        return rng.choices(self.words, cum_weights=self.cumulative, k=count)

    def stream(self, rng: random.Random, block: int = 1 << 16) -> Iterator[str]:
        """An endless stream of words, drawn in blocks (far faster than one draw each)."""
        while True:
            yield from self.draw(rng, block)

    def rank_of(self, word: str) -> int:
        """The 1-based frequency rank of ``word``."""
        return self.words.index(word) + 1


def _english() -> Vocabulary:
    # Function and technical words interleave at the top, as in real transcripts,
    # then 30,000 made-up words form the long tail.
    head = [w for pair in itertools.zip_longest(FUNCTION_WORDS, TECH_WORDS) for w in pair if w]
    return Vocabulary.zipf([*head, *_made_up_words(30_000)])


ENGLISH = _english()
CHINESE = Vocabulary.zipf(CHINESE_WORDS, exponent=0.9)
RARE_WORD = ENGLISH.words[20_000]
"""A tail word: a handful of messages per 10k contain it."""


def parse_size(text: str) -> int:
    """A message count written as ``2500``, ``10k`` or ``1m``."""
    text = text.strip().lower()
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    number = text[:-1] if scale > 1 else text
    return int(float(number) * scale)


class _Random:
    """The generator's randomness: buffered word streams and cheap integer draws."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.random = self.rng.random
        self.uniform = self.rng.uniform
        self.getrandbits = self.rng.getrandbits
        self.expovariate = self.rng.expovariate
        self._english = ENGLISH.stream(random.Random(self.rng.getrandbits(64)))
        self._chinese = CHINESE.stream(random.Random(self.rng.getrandbits(64)), 1 << 12)

    def between(self, low: int, high: int) -> int:
        """A whole number from ``low`` to ``high`` inclusive."""
        return low + int(self.random() * (high - low + 1))

    def choice(self, items: Sequence[T]) -> T:
        """One of ``items``."""
        return items[int(self.random() * len(items))]

    def weighted(self, items: Sequence[T], weights: Sequence[float]) -> T:
        """One of ``items``, drawn by ``weights``."""
        cumulative = list(itertools.accumulate(weights))
        return items[bisect.bisect(cumulative, self.random() * cumulative[-1])]

    def words(self, count: int) -> list[str]:
        """``count`` English words."""
        return list(itertools.islice(self._english, count))

    def zh(self, count: int) -> list[str]:
        """``count`` Chinese words."""
        return list(itertools.islice(self._chinese, count))


@attrs.define
class _Writer:
    """Builds one session's messages: positions, timestamps, tool call ids."""

    rng: _Random
    session_id: str
    clock: float
    messages: list[Message] = attrs.Factory(list)
    calls: int = 0

    def add(self, role: Role, content: str = "", *, tool_name: str = "",
            tool_call_id: str = "", tool_calls: tuple[ToolCall, ...] = ()) -> None:
        self.clock += self.rng.uniform(2.0, 90.0)
        self.messages.append(Message(
            session_id=self.session_id, position=len(self.messages), role=role,
            content=content, tool_name=tool_name, tool_call_id=tool_call_id,
            tool_calls=tool_calls, timestamp=round(self.clock, 3)))

    def call(self, name: str, arguments: dict[str, str]) -> str:
        self.calls += 1
        call_id = f"call_{self.session_id}_{self.calls}"
        self.add("assistant", self._maybe_sentence(), tool_calls=(
            ToolCall(id=call_id, name=name, arguments=json.dumps(arguments)),))
        return call_id

    def _maybe_sentence(self) -> str:
        return _sentence(self.rng, 4, 12) if self.rng.random() < 0.4 else ""


def _sentence(rng: _Random, low: int, high: int) -> str:
    words = rng.words(rng.between(low, high))
    text = " ".join(words)
    return text[0].upper() + text[1:] + rng.choice(".....?!:")


def _prose(rng: _Random, low: int, high: int) -> str:
    return " ".join(_sentence(rng, 5, 18) for _ in range(rng.between(low, high)))


def _chinese(rng: _Random, low: int, high: int, *, mixed: float = 0.15) -> str:
    parts: list[str] = []
    for _ in range(rng.between(low, high)):
        words = rng.zh(rng.between(4, 12))
        for i in range(len(words)):
            roll = rng.random()
            if roll < mixed:
                words[i] = rng.words(1)[0]
            elif roll < mixed + 0.25:
                words[i] += rng.choice(CHINESE_PARTICLES)
        parts.append("".join(words) + rng.choice("。。？！，"))
    return "".join(parts)


def _identifier(rng: _Random) -> str:
    return "_".join(rng.words(rng.between(1, 3)))


def _path(rng: _Random) -> str:
    folders = "/".join(rng.words(rng.between(1, 3)))
    return f"/srv/{folders}/{_identifier(rng)}.{rng.choice(('py', 'ts', 'yaml', 'conf', 'md'))}"


def _log(rng: _Random, lines: int) -> str:
    out = []
    stamp = rng.between(0, 86_000)
    for _ in range(lines):
        stamp += rng.between(0, 30)
        level = rng.weighted(("INFO", "DEBUG", "WARN", "ERROR"), (70, 15, 10, 5))
        hh, mm, ss = stamp // 3600 % 24, stamp // 60 % 60, stamp % 60
        detail = (f"{PHRASE[0]} {PHRASE[1]} to {rng.choice(ENGLISH.words[:400])}:"
                  f"{rng.between(1024, 9999)}" if level == "ERROR" and rng.random() < 0.3
                  else " ".join(rng.words(rng.between(3, 10))))
        out.append(f"2026-03-{rng.between(1, 28):02}T{hh:02}:{mm:02}:{ss:02}Z {level} "
                   f"{_identifier(rng)} request_id={rng.getrandbits(32):08x} "
                   f"latency_ms={rng.between(1, 900)} {detail}")
    return "\n".join(out)


def _code(rng: _Random, lines: int) -> str:
    out = [f"import {_identifier(rng)}", ""]
    while len(out) < lines:
        out.append(f"def {_identifier(rng)}({_identifier(rng)}, {_identifier(rng)}):")
        out.append(f'    """{_sentence(rng, 4, 10)}"""')
        for _ in range(rng.between(1, 6)):
            out.append(f"    {_identifier(rng)} = {_identifier(rng)}({_identifier(rng)})")
        out.append(f"    return {_identifier(rng)}")
        out.append("")
    return "\n".join(out)


def _listing(rng: _Random, lines: int) -> str:
    return "\n".join(f"-rw-r--r-- 1 dev dev {rng.between(10, 99999):>6} "
                     f"Mar {rng.between(1, 28):>2} "
                     f"{_identifier(rng)}.{rng.choice(('py', 'json', 'log', 'md'))}"
                     for _ in range(lines))


def _tests(rng: _Random, count: int) -> str:
    out = [f"tests/test_{_identifier(rng)}.py::test_{_identifier(rng)} "
           f"{rng.weighted(('PASSED', 'FAILED'), (9, 1))}" for _ in range(count)]
    failed = sum(line.endswith("FAILED") for line in out)
    out.append(f"==== {count - failed} passed, {failed} failed in {rng.uniform(0.5, 60):.2f}s ====")
    return "\n".join(out)


def _tool_cycle(w: _Writer) -> None:
    rng = w.rng
    name = rng.choice(TOOLS)
    if name == "bash":
        command = f"{rng.choice(('docker', 'git', 'npm', 'pytest', 'kubectl', 'curl'))} " \
                  f"{' '.join(rng.words(rng.between(1, 4)))}"
        call_id = w.call(name, {"command": command})
        output = _log(rng, rng.between(3, 40)) if rng.random() < 0.6 else _listing(
            rng, rng.between(3, 30))
    elif name == "read_file":
        call_id = w.call(name, {"path": _path(rng)})
        output = _code(rng, rng.between(8, 90))
    elif name == "write_file":
        path = _path(rng)
        call_id = w.call(name, {"path": path, "content": _code(rng, rng.between(4, 30))})
        output = f"wrote {rng.between(100, 9000)} bytes to {path}"
    elif name == "web_search":
        call_id = w.call(name, {"query": " ".join(rng.words(rng.between(2, 6)))})
        output = "\n".join(f"{i + 1}. https://docs.example.org/{_identifier(rng)} - "
                           f"{_sentence(rng, 8, 20)}" for i in range(rng.between(3, 8)))
    elif name == "run_tests":
        call_id = w.call(name, {"target": "tests/"})
        output = _tests(rng, rng.between(5, 60))
    else:
        call_id = w.call(name, {"path": _path(rng), "diff": _code(rng, rng.between(3, 12))})
        output = "patch applied"
    w.add("tool", output, tool_name=name, tool_call_id=call_id)


def _interactive(w: _Writer, *, chinese: bool, turns: int) -> None:
    rng = w.rng
    for _ in range(turns):
        if chinese:
            w.add("user", _chinese(rng, 1, 3))
        else:
            ask = _prose(rng, 1, 3)
            if rng.random() < 0.2:
                ask += "\n" + _log(rng, rng.between(1, 4))
            elif rng.random() < 0.1:
                ask += " " + _chinese(rng, 1, 1, mixed=0.3)
            w.add("user", ask)
        for _ in range(rng.weighted((0, 1, 2, 3, 5), (25, 30, 20, 15, 10))):
            _tool_cycle(w)
        if chinese:
            answer = _chinese(rng, 2, 6)
        else:
            answer = _prose(rng, 1, 6)
            if rng.random() < 0.25:
                answer += f"\n\n```python\n{_code(rng, rng.between(4, 20))}\n```"
            if rng.random() < 0.2:
                answer += f"\nSaved to {_path(rng)}."
        w.add("assistant", answer)


def _cron(w: _Writer) -> None:
    rng = w.rng
    w.add("user", "Run the daily health report for the backup job and post a summary.")
    call_id = w.call("bash", {"command": "backup-report --daily"})
    w.add("tool", _log(rng, rng.between(4, 12)), tool_name="bash", tool_call_id=call_id)
    w.add("assistant", CRON_REPORT.format(pct=rng.between(40, 95), snap=rng.getrandbits(24),
                                          n=rng.between(10, 5000)))


def _session(rng: _Random, index: int | str, when: float, *, source: str, chinese: bool,
             parent: str | None = None) -> tuple[Session, _Writer]:
    sid = str(index) if parent is None else f"{parent}-{index}"
    title = (_chinese(rng, 1, 1, mixed=0.0)[:12] if chinese
             else " ".join(rng.words(rng.between(2, 6))))
    session = Session(id=sid, source=source, model=rng.choice(("gpt-5", "claude-4", "qwen3")),
                      title=title, started_at=round(when, 3), parent_session_id=parent)
    return session, _Writer(rng, sid, when)


def _finish(session: Session, writer: _Writer, end_reason: str = "") -> Conversation:
    ended = session.started_at if not writer.messages else writer.messages[-1].timestamp
    return Conversation(attrs.evolve(session, ended_at=ended, end_reason=end_reason),
                        tuple(writer.messages))


def _lineage(rng: _Random, index: str, when: float) -> Iterator[Conversation]:
    kind = rng.weighted(("interactive", "cron", "hidden"), (80, 17, 3))
    if kind == "cron":
        session, w = _session(rng, index, when, source="cron", chinese=False)
        _cron(w)
        yield _finish(session, w)
        return
    chinese = rng.random() < 0.08
    source = "tool" if kind == "hidden" else rng.choice(INTERACTIVE_SOURCES)
    session, w = _session(rng, index, when, source=source, chinese=chinese)
    _interactive(w, chinese=chinese, turns=rng.weighted((1, 2, 4, 8, 16), (30, 30, 20, 15, 5)))
    children: list[Conversation] = []
    if rng.random() < 0.12:
        # A delegated sub-agent starts while its parent is still running.
        child, cw = _session(rng, 1, w.clock, source=source, chinese=chinese, parent=session.id)
        _interactive(cw, chinese=chinese, turns=rng.between(1, 4))
        children.append(_finish(child, cw))
    compressed = rng.random() < 0.06
    root = _finish(session, w, "compression" if compressed else "")
    if compressed:
        child, cw = _session(rng, 2, w.clock + 1.0, source=source, chinese=chinese,
                             parent=session.id)
        cw.add("system", "Summary of the earlier conversation: " + _prose(rng, 2, 4))
        _interactive(cw, chinese=chinese, turns=rng.between(2, 8))
        children.append(_finish(child, cw))
    yield root
    yield from children


def generate(messages: int, seed: int = 0, *, prefix: str = "s", start: float = START
             ) -> Iterator[Conversation]:
    """Stream sessions holding exactly ``messages`` messages in all (the last one cut short).

    Roots come before their children; sessions start in time order, roughly every
    twenty minutes from ``start``. Root ids are ``prefix`` and a 7-digit number.
    """
    rng = _Random(seed)
    left = messages
    when = start
    for index in itertools.count():
        if left <= 0:
            return
        when += rng.expovariate(1 / 1200.0)
        for conversation in _lineage(rng, f"{prefix}{index:07d}", when):
            if left <= 0:
                return
            if len(conversation.messages) > left:
                conversation = attrs.evolve(conversation,
                                            messages=conversation.messages[:left])
            left -= len(conversation.messages)
            yield conversation


def to_json_line(conversation: Conversation) -> str:
    """A conversation in the ``harkback ingest`` JSON-lines format."""
    s = conversation.session
    return json.dumps({
        "id": s.id, "source": s.source, "model": s.model, "title": s.title,
        "started_at": s.started_at, "ended_at": s.ended_at,
        "parent_session_id": s.parent_session_id, "end_reason": s.end_reason,
        "messages": [{
            "role": m.role, "content": m.content, "timestamp": m.timestamp,
            "tool_name": m.tool_name or None, "tool_call_id": m.tool_call_id or None,
            "tool_calls": [{"id": c.id, "type": "function",
                            "function": {"name": c.name, "arguments": c.arguments}}
                           for c in m.tool_calls]}
            for m in conversation.messages]}, ensure_ascii=False)


def main(argv: Sequence[str] | None = None) -> int:
    """Write a generated corpus as JSON lines (``python -m benchmarks.generate``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--messages", type=parse_size, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=None, help="file (default: stdout)")
    args = parser.parse_args(argv)
    handle = args.out.open("w", encoding="utf-8") if args.out else sys.stdout
    try:
        for conversation in generate(args.messages, args.seed):
            handle.write(to_json_line(conversation) + "\n")
    finally:
        if args.out:
            handle.close()
    return 0


if __name__ == "__main__":
    run_main(main)
