"""Bounded search plans: which parts of a query select rows when some of it is common.

Scoring a term found in most messages costs a walk over its whole posting list
(FTS5's BM25 counts the rows of every phrase it scores), and an OR with such a term
matches nearly everything. Both stores therefore count each selecting unit of the
query up to a cap first. Units above the cap are *common*: :func:`narrow` removes
them, the rest selects and scores rows, and the full expression, where it could
match fewer rows than the narrowed one, filters them. When that finds too few
rows, the newest rows matching the full expression top them up (unscored).

>>> from harkback.stages.query import parse_query, to_fts5
>>> q = parse_query("docker bridge error").expression
>>> to_fts5(narrow(q, frozenset({Term("error")})))
'("docker" OR "bridge")'
>>> narrow(q, frozenset(selecting_units(q))) is None
True
"""

from __future__ import annotations

from collections.abc import Sequence, Set

from harkback.stages.query import AllOf, AnyOf, Node, Phrase, Term, Unit, Without


def selecting_units(node: Node) -> tuple[Unit, ...]:
    """The distinct terms and phrases that can make a row match (exclusions left out).

    >>> from harkback.stages.query import parse_query
    >>> selecting_units(parse_query("docker NOT swarm").expression)
    (Term(text='docker', prefix=False),)
    """
    if isinstance(node, Term | Phrase):
        return (node,)
    if isinstance(node, Without):
        return selecting_units(node.include)
    return tuple(dict.fromkeys(u for item in node.items for u in selecting_units(item)))


def narrow(node: Node, common: Set[Unit]) -> Node | None:
    """``node`` without its common units and without exclusions; None when nothing is left.

    An OR keeps its selective items; an AND keeps its selective items (a row must hold
    them anyway); an exclusion is dropped here and applied by the full expression.
    """
    if isinstance(node, Term | Phrase):
        return None if node in common else node
    if isinstance(node, Without):
        return narrow(node.include, common)
    items = tuple(n for n in (narrow(item, common) for item in node.items) if n is not None)
    if not items:
        return None
    if len(items) == 1:
        return items[0]
    return AnyOf(items) if isinstance(node, AnyOf) else AllOf(items)


def is_disjunction(node: Node) -> bool:
    """True for terms, phrases and ORs of them: narrowing those can only lose rows.

    >>> from harkback.stages.query import parse_query
    >>> is_disjunction(parse_query("bridge network").expression)
    True
    >>> is_disjunction(parse_query("bridge AND network").expression)
    False
    """
    if isinstance(node, Term | Phrase):
        return True
    if isinstance(node, AnyOf):
        return all(is_disjunction(item) for item in node.items)
    return False


def extrapolate(newest: Sequence[int], oldest: Sequence[int], *, documents: int,
                exact_up_to: int) -> int:
    """Messages holding a term counted past ``exact_up_to``, from its two ends.

    ``newest`` and ``oldest`` are (matches, lowest row id, highest row id) of the newest
    and the oldest few matches; the stretch between them is taken to hold matches at
    the mean density of the two ends (each over its own ids), so a word frequent only
    lately (a current topic) is not mistaken for one found everywhere.

    >>> extrapolate((10, 91, 100), (10, 1, 10), documents=100, exact_up_to=5)
    100
    >>> extrapolate((10, 191, 200), (10, 1, 100), documents=1000, exact_up_to=5)
    70
    """
    new_count, new_low, new_high = newest
    old_count, old_low, old_high = oldest
    density = (old_count / (old_high - old_low + 1) + new_count / (new_high - new_low + 1)) / 2
    estimate = old_count + new_count + max(new_low - old_high - 1, 0) * density
    # The count just passed the exact limit, so the estimate is at least past it too.
    return min(max(round(estimate), exact_up_to + 1), documents)
