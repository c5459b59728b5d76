"""Titles as evidence: a session whose title answers the question ranks as if one of its
user messages said the title.

A title ("CORS fix for the API") is what the session was about, in a few words; a
question that shares them ("CORS API") should find it as surely as a message saying
them. The store finds the sessions whose title or source matches the question
(:meth:`~harkback.stages.ports.SessionStore.search_titles`); each becomes one more
scored hit (:func:`title_evidence`):

- the title is scored as a user message would be: BM25 over the question's units with
  the messages' statistics (:func:`~harkback.stages.match.score.message_scorer`), times
  the user's role weight, so it counts in the session's best messages and its coverage;
- the source ("claude-code", "codex", "telegram") only covers the units it names: it
  says where the session happened, not what it was about, and it is shared by every
  session from there, so it adds to coverage, never to a session's message scores;
- the project's name ("mobile-app" of /home/me/code/mobile-app, what ``--project``
  matches) covers the units it names, and the word "project" with them ("the billing
  project"), and adds a share of what a title saying them would score
  (:func:`project_score`): a question naming the project finds its sessions, while a
  name every session of a big project shares does not outweigh the answer's words;
- the hit points at the session's first message (position 0), so the load stage cuts
  the transcript around the request that opened it, and a session found only by its
  title still comes back.

>>> from harkback.stages.match.score import RankUnit, message_scorer
>>> from harkback.stages.query import Term
>>> units = (RankUnit(Term("cors"), ("cors",), 3.0), RankUnit(Term("codex"), ("codex",), 2.0))
>>> found = TitleHit(session_id="s", title="CORS fix", source="codex", score=1.0)
>>> [(s.hit.position, round(s.score, 2), sorted(s.covered))
...  for s in title_evidence((found,), message_scorer(units, average_length=10.0), 1.5)]
[(0, 6.69, [0, 1])]
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from harkback.stages.match.score import B, MessageScorer, Scored
from harkback.stages.ports import DEFAULT_MAX_SCORED, MatchQuery
from harkback.stages.query import Node
from harkback.stages.records import MessageHit, TitleHit, project_name

TITLE_B = B
"""BM25's length normalization for a title: the messages' (a title is scored against their
average length, so a few words read as a dense message).

Measured at 0 (a title as a message of ordinary length): the demo's "how did we fix the
docker network problem" then put the fix before a short explainer titled "Docker bridge vs
host network mode", and the lexical seed sets stayed at 531 of 598 (0.3: 532), but with an
embedder the hybrid ranker lost six seed questions the words answered (its fusion leans on
the margin a matching title gives the answer). Kept where it was until a change keeps both.
"""

TITLE_LIMIT = 50
"""How many sessions the title search may bring in, best first.

Enough to cover the sessions a question can rank (the match stage hands on a few dozen);
a word every title holds finds no more than this many.
"""


def title_query(query: MatchQuery, expression: Node, max_scored: int = DEFAULT_MAX_SCORED
                ) -> MatchQuery:
    """The title search for a message search: the whole ``expression`` with the same
    filters; a word in more than ``max_scored`` titles (a source most sessions share)
    selects none, as with messages.

    >>> from harkback.stages.query import Term
    >>> q = title_query(MatchQuery(expression=Term("a"), roles=("user",), since=5.0,
    ...                            max_scored=None), Term("b"))
    >>> q.expression, q.since, q.limit, q.max_scored
    (Term(text='b', prefix=False), 5.0, 50, 2000)
    """
    # Counts of messages say nothing of titles.
    return attrs.evolve(query, expression=expression, limit=TITLE_LIMIT, max_scored=max_scored,
                        known_counts=())


PROJECT_WORD = "project"
"""The word a question names a project by ("the billing project"): read, with the name, in
each session of a project the question names (:func:`project_score`)."""


PROJECT_SHARE = 0.75
"""What a project's name scores, as a share of a title saying "NAME project" (scored only
when the name holds a word of the question).

Measured on the developer store of tests/pipeline/test_project_names.py: at 0 (the
name covering its words, scoring nothing, as a source does) ``mobile-app`` put a session
saying "app" above the one session of /home/me/code/mobile-app, and a session titled "New
project scaffolding" came first for "the session in the billing project about refunds"
and "what did we change in the gateway project?"; 0.5 left the gateway question so; 0.75
and 1.0 answer all three. The smaller keeps a name shared by every session of a big
project from outweighing the words of its answer elsewhere. No seed set, nor LongMemEval,
stores a project: their figures cannot move with it.
"""


def project_score(score: MessageScorer, project: str) -> tuple[float, frozenset[int]]:
    """A session's project folder as evidence: nothing unless its name (:func:`project_name`)
    holds a word of the question; then "NAME project" scored as a title (times
    :data:`PROJECT_SHARE`) and the units it covers, so "the billing project" is found in
    each session of project billing, not in a session about a project.

    >>> from harkback.stages.match.score import RankUnit, message_scorer
    >>> from harkback.stages.query import Term
    >>> units = tuple(RankUnit(Term(w), (w,), 1.0) for w in ("billing", "project", "refund"))
    >>> scorer = message_scorer(units, average_length=10.0)
    >>> value, covered = project_score(scorer, "/code/billing")
    >>> value > 0, sorted(covered), project_score(scorer, "/code/web")
    (True, [0, 1], (0.0, frozenset()))
    """
    name = project_name(project)
    if not name or not score(name)[1]:
        return 0.0, frozenset()
    value, covered = score(f"{name} {PROJECT_WORD}")
    return value * PROJECT_SHARE, covered


def title_evidence(titles: Sequence[TitleHit], score: MessageScorer, weight: float
                   ) -> tuple[Scored, ...]:
    """Each title as a scored hit on its session's first message (see the module).

    The title scores like a message (times ``weight``, the user's role weight) and covers
    the units it holds; the source covers the units it names and scores nothing; the
    project adds :func:`project_score`. A session whose title, source and project cover
    no unit (the store matched a form the ranker does not count) adds nothing.
    """
    out = []
    for title in titles:
        value, covered = score(title.title) if title.title else (0.0, frozenset[int]())
        extra, by_project = project_score(score, title.project)
        named = (score(title.source)[1] if title.source else frozenset[int]()) | by_project
        if not covered | named:
            continue
        value = (value + extra) * weight
        hit = MessageHit(session_id=title.session_id, position=0, role="user",
                         content=title.title, score=value, timestamp=title.started_at,
                         source=title.source)
        out.append(Scored(hit, value, covered | named))
    return tuple(out)
