"""Read LongMemEval files into harkback records: conversations, and questions with gold.

A LongMemEval file is a JSON list (plain or gzip) of questions. Each question carries
its haystack: ``haystack_session_ids``, ``haystack_dates`` (``"2023/05/20 (Sat) 00:27"``)
and ``haystack_sessions`` (lists of ``{"role", "content", "has_answer"?}`` turns), plus
``question``, ``question_type``, ``question_date``, ``answer`` and the gold
``answer_session_ids``. Questions whose id ends in ``_abs`` are abstention questions.

Each haystack session becomes a :class:`~harkback.stages.records.Conversation` built
through the public records: session id = haystack session id, ``started_at`` = its
haystack date (UTC), one message per turn in order. The ``has_answer`` flags are kept
as :attr:`Question.evidence` (session id, message position) for benchmarks that score
turns or summaries. Every session gets the same neutral ``source`` so nothing about
the data's origin (``answer_...`` ids aside) can leak into a ranker.

The same session id can carry different dates in different questions. The per-question
protocol uses the question's own dates (:meth:`Dataset.haystack`); the pooled protocol
stores each distinct session once, dated as it was first seen (:meth:`Dataset.pooled`).

>>> parse_date("2023/05/20 (Sat) 00:27")
1684542420.0
>>> data = Dataset.from_json([{"question_id": "q1", "question_type": "single-session-user",
...     "question": "Which playlist?", "question_date": "2023/05/30 (Tue) 19:19",
...     "answer": "Summer Vibes", "answer_session_ids": ["s2"],
...     "haystack_session_ids": ["s1", "s2"],
...     "haystack_dates": ["2023/05/20 (Sat) 00:27", "2023/05/21 (Sun) 10:00"],
...     "haystack_sessions": [[{"role": "user", "content": "hi"}],
...         [{"role": "user", "content": "I made Summer Vibes", "has_answer": True},
...          {"role": "assistant", "content": "Nice!"}]]}])
>>> q = data.questions[0]
>>> q.gold, q.evidence, q.is_abstention
(('s2',), (('s2', 0),), False)
>>> [c.session.id for c in data.haystack(q)], len(data.pooled())
(['s1', 's2'], 2)
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs

from benchmarks.entry import run_main
from harkback.stages.records import Conversation, Message, Role, Session

SOURCE = "longmemeval"
"""The ``source`` of every session read from LongMemEval."""

_ROLES: Mapping[str, Role] = {"user": "user", "assistant": "assistant", "system": "system"}


def parse_date(text: str | None) -> float | None:
    """A LongMemEval date (``2023/05/20 (Sat) 00:27``, taken as UTC) as epoch seconds.

    Unreadable or missing dates give None rather than an error.

    >>> parse_date("2023/05/30 (Tue) 19:19") - parse_date("2023/05/30 (Tue) 00:00")
    69540.0
    >>> parse_date("someday") is None
    True
    """
    if not text:
        return None
    parts = text.split()
    day = parts[0]
    clock = parts[-1] if len(parts) > 1 and ":" in parts[-1] else "00:00"
    try:
        moment = datetime.strptime(f"{day} {clock}", "%Y/%m/%d %H:%M")
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC).timestamp()


@attrs.frozen(kw_only=True)
class Question:
    """One question: its text, type, date, gold sessions and haystack."""

    id: str
    type: str
    text: str
    asked_at: float | None
    answer: str
    gold: tuple[str, ...]
    haystack: tuple[str, ...]
    dates: tuple[float | None, ...]
    evidence: tuple[tuple[str, int], ...] = ()

    @property
    def is_abstention(self) -> bool:
        """True for abstention questions (``_abs``), which retrieval scores leave out."""
        return self.id.endswith("_abs")


@attrs.frozen
class Dataset:
    """Questions, and every distinct haystack session as a conversation (undated)."""

    questions: tuple[Question, ...]
    sessions: Mapping[str, Conversation]

    @classmethod
    def from_json(cls, records: Iterable[Mapping[str, Any]]) -> Dataset:
        """Build from parsed LongMemEval records (a list of question objects)."""
        questions: list[Question] = []
        sessions: dict[str, Conversation] = {}
        for record in records:
            ids = tuple(str(i) for i in record["haystack_session_ids"])
            dates = tuple(parse_date(d) for d in record.get("haystack_dates") or [None] * len(ids))
            evidence: list[tuple[str, int]] = []
            for sid, date, turns in zip(ids, dates, record["haystack_sessions"], strict=True):
                if sid not in sessions:
                    sessions[sid] = _conversation(sid, date, turns)
                evidence.extend((sid, pos) for pos, turn in enumerate(turns)
                                if turn.get("has_answer"))
            questions.append(Question(
                id=str(record["question_id"]), type=str(record.get("question_type", "")),
                text=str(record["question"]), asked_at=parse_date(record.get("question_date")),
                answer=str(record.get("answer", "")),
                gold=tuple(str(g) for g in record.get("answer_session_ids") or ()),
                haystack=ids, dates=dates, evidence=tuple(evidence)))
        return cls(tuple(questions), sessions)

    @classmethod
    def load(cls, path: str | Path) -> Dataset:
        """Read a LongMemEval JSON file, gzip-compressed (``.gz``) or plain."""
        location = Path(path)
        opener = gzip.open if location.suffix == ".gz" else open
        with opener(location, "rt", encoding="utf-8") as handle:
            return cls.from_json(json.load(handle))

    @classmethod
    def read(cls, path: str | Path) -> Dataset:
        """:meth:`load`, or exit with one line saying why the file cannot be read (missing,
        not gzip, not JSON, not LongMemEval's shape) instead of a traceback:
        ``cannot read the LongMemEval file x.json: No such file or directory``.
        """
        try:
            return cls.load(path)
        except OSError as error:  # missing, unreadable, or a .gz that is not gzip
            reason = error.strerror or str(error)
        except (ValueError, EOFError) as error:  # not JSON, not UTF-8, a cut-off .gz
            reason = f"not a JSON file ({error})"
        except (KeyError, TypeError, AttributeError) as error:
            reason = f"not LongMemEval's shape (a list of questions; {error!r})"
        raise SystemExit(f"cannot read the LongMemEval file {path}: {reason}")

    def haystack(self, question: Question) -> tuple[Conversation, ...]:
        """The question's own haystack, each session dated as this question dates it."""
        return tuple(_dated(self.sessions[sid], date)
                     for sid, date in zip(question.haystack, question.dates, strict=True))

    def pooled(self) -> tuple[Conversation, ...]:
        """Every distinct session once, dated as first seen."""
        return tuple(self.sessions.values())

    def scored(self) -> tuple[Question, ...]:
        """The questions retrieval is scored on: abstention questions left out."""
        return tuple(q for q in self.questions if not q.is_abstention and q.gold)


def _conversation(session_id: str, date: float | None,
                  turns: Sequence[Mapping[str, Any]]) -> Conversation:
    session = Session(id=session_id, source=SOURCE, started_at=date)
    messages = tuple(
        Message(session_id=session_id, position=pos, role=_ROLES.get(turn.get("role", ""), "user"),
                content=str(turn.get("content") or ""))
        for pos, turn in enumerate(turns))
    return Conversation(session, messages)


def _dated(conversation: Conversation, date: float | None) -> Conversation:
    if conversation.session.started_at == date:
        return conversation
    return Conversation(attrs.evolve(conversation.session, started_at=date),
                        conversation.messages)


def session_line(conversation: Conversation) -> dict[str, Any]:
    """A conversation as one line of ``harkback ingest``'s JSON-lines format."""
    session = conversation.session
    return {"id": session.id, "source": session.source, "started_at": session.started_at,
            "messages": [{"role": m.role, "content": m.content} for m in conversation.messages]}


def question_line(question: Question) -> dict[str, Any]:
    """A question as one line of the retrieval benchmark's ``--question-file`` format."""
    return {"id": question.id, "question": question.text, "gold": list(question.gold),
            "type": question.type, "answer": question.answer}


def export(data: Dataset, folder: Path) -> tuple[Path, Path]:
    """Write ``sessions.jsonl`` (every distinct session) and ``questions.jsonl`` (scored)."""
    folder.mkdir(parents=True, exist_ok=True)
    sessions, questions = folder / "sessions.jsonl", folder / "questions.jsonl"
    with sessions.open("w", encoding="utf-8") as out:
        for conversation in data.pooled():
            out.write(json.dumps(session_line(conversation), ensure_ascii=False) + "\n")
    with questions.open("w", encoding="utf-8") as out:
        for question in data.scored():
            out.write(json.dumps(question_line(question), ensure_ascii=False) + "\n")
    return sessions, questions


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m benchmarks.longmemeval export --data FILE --out DIR``."""
    import argparse
    parser = argparse.ArgumentParser(prog="python -m benchmarks.longmemeval")
    commands = parser.add_subparsers(dest="command", required=True)
    out = commands.add_parser("export", help="write an ingest file and a question file")
    out.add_argument("--data", type=Path, required=True)
    out.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    sessions, questions = export(Dataset.read(args.data), args.out)
    print(f"wrote {sessions} and {questions}")
    return 0


if __name__ == "__main__":
    run_main(main)
