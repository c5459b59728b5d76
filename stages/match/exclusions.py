"""A query's ``NOT`` parts, taken out of what the store is asked for, to exclude whole
sessions (:func:`split_exclusions`)."""

from __future__ import annotations

from harkback.stages.query import AllOf, AnyOf, Node, Without


def split_exclusions(node: Node) -> tuple[Node, Node | None]:
    """``node`` with every ``NOT`` taken out, and what its ``NOT`` parts excluded (one OR).

    ``NOT term`` leaves out whole sessions holding the term, not only the messages that
    hold it beside the rest (:attr:`~harkback.stages.ports.MatchQuery.excluded`), so
    the store is asked for the rest and, apart, for what to exclude.

    >>> from harkback.stages.query import Term, parse_query, to_fts5
    >>> kept, excluded = split_exclusions(parse_query("docker NOT swarm NOT k8s").expression)
    >>> to_fts5(kept), to_fts5(excluded)
    ('"docker"', '("swarm" OR "k8s")')
    >>> split_exclusions(Term("docker"))
    (Term(text='docker', prefix=False), None)
    """
    excluded: list[Node] = []

    def kept(part: Node) -> Node:
        if isinstance(part, Without):
            rest = kept(part.include)
            excluded.append(part.exclude)
            return rest
        if isinstance(part, AllOf):
            return AllOf(tuple(kept(item) for item in part.items))
        if isinstance(part, AnyOf):
            return AnyOf(tuple(kept(item) for item in part.items))
        return part

    rest = kept(node)
    unique = tuple(dict.fromkeys(excluded))
    if not unique:
        return rest, None
    return rest, unique[0] if len(unique) == 1 else AnyOf(unique)
