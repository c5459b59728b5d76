"""Query language: parse any text into a safe search expression.

Two modes. A plain question ("how did we fix the docker network bridge issue") becomes
an OR of its topic words, and ranking rewards messages that cover more of them: nothing
is required, so one missing word cannot empty the result. Text using FTS syntax (``OR``,
``NOT``, ``AND``, ``"phrases"``, ``prefix*``) keeps its meaning, with implicit AND between
operands as FTS5 does. Everything else (punctuation, stray operators, unbalanced quotes,
NUL bytes) is dropped, and every token is re-quoted, so :func:`to_fts5` can never produce
a string that makes FTS5 raise.

Any query costs time linear in its length, and little past the limits: only the first
:data:`MAX_QUERY_CHARS` characters are read; operators past the first
:data:`MAX_OPERATORS` are left out (their operands stay, as terms AND-ed with their
neighbours); repeated terms are searched once; a phrase keeps its first
:data:`MAX_PHRASE_TERMS` tokens; at most :data:`MAX_UNITS` distinct terms and phrases are
searched, and at most :data:`MAX_PREFIXES` written ``prefix*`` widened. A chain of ``NOT``
is one exclusion of all its operands, so the expression never nests deeper than four levels.

>>> to_fts5(parse_query("how did we fix the docker network?").expression)
'("fix" OR "docker" OR "network")'
>>> to_fts5(parse_query('"bridge network" OR dock*').expression)
'("bridge network" OR "dock"*)'
>>> parse_query("C++ (problem ***").advanced
False
>>> to_fts5(parse_query("docker NOT swarm NOT swarm NOT k8s").expression)
'("docker" NOT ("swarm" OR "k8s"))'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

import attrs

from harkback.stages.text.framing import is_framing_token, without_framing
from harkback.stages.text.identifiers import code_words
from harkback.stages.text.tokens import index_tokens, is_cjk, is_stopword, token_matches, tokens


@attrs.frozen
class Term:
    """One token; ``prefix`` matches every token that starts with it."""

    text: str
    prefix: bool = False


@attrs.frozen
class Phrase:
    """Tokens that must stand next to each other, in order; ``prefix`` widens the last one."""

    terms: tuple[str, ...]
    prefix: bool = False


@attrs.frozen
class AllOf:
    """Every item must match."""

    items: tuple[Node, ...]


@attrs.frozen
class AnyOf:
    """At least one item must match."""

    items: tuple[Node, ...]


@attrs.frozen
class Without:
    """``include`` must match and ``exclude`` must not."""

    include: Node
    exclude: Node


Node = Term | Phrase | AllOf | AnyOf | Without
Unit = Term | Phrase


@attrs.frozen
class ParsedQuery:
    """A parsed query: its expression (None when nothing is searchable) and coverage units."""

    expression: Node | None
    units: tuple[Unit, ...]
    advanced: bool
    spellings: tuple[tuple[str, ...], ...] = ()
    """Other words that count as each unit, by place: "bike" for "bikes" (none past the end)."""

    @property
    def is_empty(self) -> bool:
        """True when the query holds nothing to search for."""
        return self.expression is None


# English contractions and possessives: the part after the apostrophe is never a topic
# ("sister's", "runners'", "I've", "don't"), and "n't" goes with its apostrophe.
_CONTRACTION = re.compile(r"(?<=[^\W\d_])(?:n['’]t|['’](?:s|d|m|re|ve|ll)?)(?![^\W_])",
                          re.IGNORECASE)
_IRREGULAR_NEGATIONS = {"can't": "can", "won't": "will", "shan't": "shall"}


def without_contractions(text: str) -> str:
    """``text`` with the contraction and possessive endings of its words taken off.

    >>> without_contractions("How did we fix the runners' cache keys? My sister's car won't start")
    'How did we fix the runners cache keys? My sister car will start'
    """
    for negation, plain in _IRREGULAR_NEGATIONS.items():
        text = re.sub(rf"\b{negation[:-2]}['’]t\b", plain, text, flags=re.IGNORECASE)
    return _CONTRACTION.sub("", text)


MAX_QUERY_CHARS = 10_000
"""Characters of a query that are read; the rest is ignored."""

MAX_OPERATORS = 32
"""``OR``, ``AND`` and ``NOT`` past this many are left out (their operands stay, as terms
AND-ed with their neighbours)."""

MAX_UNITS = 64
"""Distinct terms and phrases searched for; later ones are ignored."""

MAX_PREFIXES = 4
"""Distinct ``word*`` prefixes widened; later ones match as the whole word. FTS5 reads
every token a prefix starts with, at each use: a short one (``co*``) costs 20-50 ms in a
100k-message store."""

MAX_PHRASE_TERMS = 16
"""Tokens of a phrase (or a hyphenated word) kept; the phrase matches as its first ones."""

_LEXEME = re.compile(r'"([^"]*)"|(?<!\S)(OR|AND|NOT)(?!\S)|(\S+)')
_OPERATORS = frozenset({"OR", "AND", "NOT"})


_QUESTION = re.compile(r"^\s*(?:how|what|where|when|why|which|who|whom|whose|did|do|does|"
                       r"can|could|is|are|was|were|have|has)\b|\?\s*$", re.IGNORECASE)


_WORDISH = re.compile(r"\w")


def _is_advanced(text: str) -> bool:
    # Any two consecutive quotes around a word; a regex over the text would backtrack
    # quadratically on a long unclosed quote.
    if any(_WORDISH.search(between) for between in text.split('"')[1:-1]):
        return True
    if re.search(r"\w\*(?!\w)", text):
        return True
    if _QUESTION.search(text):
        # A question in words: "NOT NULL" or "OR" in it are words, not operators.
        return False
    return re.search(r"\S\s+(OR|AND|NOT)\s+\S", text) is not None


def phrase_tokens(text: str) -> tuple[tuple[str, ...], bool]:
    """The tokens a phrase must match in the index, and whether the last is a prefix.

    The index holds each CJK run's last character alone after the run's bigrams, so a
    phrase that goes on past the end of a run must ask for that character too. At the
    end of the phrase the text may go on, so the phrase ends on the run's last bigram;
    a phrase ending on a lone CJK character matches it as a prefix (``"cors 决"*``).

    >>> phrase_tokens("修改youer服务端")
    (('修改', '改', 'youer', '服务', '务端'), False)
    >>> phrase_tokens("cors决")
    (('cors', '决'), True)
    """
    toks = tokens(text)
    if not toks:
        return (), False
    indexed = list(index_tokens(text))
    last = toks[-1]
    if len(last) == 2 and is_cjk(last):
        indexed.pop()
    return tuple(indexed), len(last) == 1 and is_cjk(last)


def _phrase(text: str, *, prefix: bool = False) -> Node | None:
    toks, open_end = phrase_tokens(text)
    if not toks:
        return None
    if len(toks) > MAX_PHRASE_TERMS:
        toks, open_end = toks[:MAX_PHRASE_TERMS], False
    if len(toks) == 1:
        return _single(toks[0], prefix or open_end)
    return Phrase(toks, prefix=prefix or open_end)


def _word_node(chunk: str, *, advanced: bool) -> Node | None:
    # "chat-send", "config.yaml" and CJK runs are kept together as a phrase.
    return _phrase(chunk, prefix=advanced and chunk.endswith("*"))


def _single(token: str, prefix: bool) -> Term:
    return Term(token, prefix=prefix or (len(token) == 1 and is_cjk(token)))


def _units(node: Node) -> list[Unit]:
    if isinstance(node, Term | Phrase):
        return [node]
    if isinstance(node, Without):
        return _units(node.include)
    return [u for item in node.items for u in _units(item)]


def _dedupe(units: Sequence[Unit]) -> tuple[Unit, ...]:
    return tuple(dict.fromkeys(units))


def topic_tokens(text: str) -> tuple[str, ...]:
    """The tokens of a plain question that name something: no stopwords, no contraction
    endings, no CJK framing. Empty for a question of framing alone.

    >>> topic_tokens("How did we fix the runners' cache?"), topic_tokens("上次怎么解决的？")
    (('fix', 'runners', 'cache'), ())
    """
    text = without_contractions(text)
    # CJK framing (上次, 怎么, どうやって, 어떻게) glues to topic words: out before bigrams.
    toks = tokens(text if text.isascii() else without_framing(text))
    return tuple(t for t in toks if not (is_stopword(t) or is_framing_token(t)))


def _plain(text: str) -> ParsedQuery:
    # A question of framing alone ("上次怎么解决的？") still searches its own words.
    topical = topic_tokens(text) or tokens(without_contractions(text))
    # Repeated words are dropped as strings, before a record is made for each.
    words: tuple[Unit, ...] = tuple(
        _single(t, False) for t in list(dict.fromkeys(topical))[:MAX_UNITS])
    # A flag or an identifier ("--no-cache") is also the phrase of its parts.
    joined = tuple(Phrase(t) for t in code_words(text, max_tokens=MAX_PHRASE_TERMS))
    units = (words + joined)[:MAX_UNITS] if words else ()
    if not units:
        return ParsedQuery(None, (), advanced=False)
    return ParsedQuery(AnyOf(units), units, advanced=False)


def _advanced(text: str) -> ParsedQuery:
    items: list[Node | str] = []
    operators = prefixes = 0
    seen: set[Node] = set()
    made: dict[tuple[str, str], Node | None] = {}  # a repeated word is tokenized once
    for quoted, operator, word in _LEXEME.findall(text):
        if operator:
            operators += 1
            # An operator needs an operand on its left; a second operator replaces the first.
            # Past the limit an operator is left out: its operands are plain terms.
            if operators > MAX_OPERATORS:
                continue
            if items and isinstance(items[-1], str):
                items[-1] = operator
            elif items:
                items.append(operator)
            continue
        if (quoted, word) not in made:
            widen = prefixes < MAX_PREFIXES
            made[quoted, word] = (_phrase_node(quoted) if quoted else
                                  _word_node(word.replace('"', " "), advanced=widen))
            prefixes += widen and word.endswith("*") and _widened(made[quoted, word])
        node = made[quoted, word]
        if node is None or (len(seen) >= MAX_UNITS and node not in seen):
            continue
        seen.add(node)
        items.append(node)
    while items and isinstance(items[-1], str):
        items.pop()
    if not items:
        return ParsedQuery(None, (), advanced=True)
    expression = _parse_or(items)
    return ParsedQuery(expression, _dedupe(_units(expression)), advanced=True)


def _widened(node: Node | None) -> bool:
    return isinstance(node, Term | Phrase) and node.prefix


def _phrase_node(quoted: str) -> Node | None:
    return _phrase(quoted)


def _split(items: Sequence[Node | str], operator: str) -> list[list[Node | str]]:
    groups: list[list[Node | str]] = [[]]
    for item in items:
        if item == operator:
            groups.append([])
        else:
            groups[-1].append(item)
    return [g for g in groups if g]


def _either(nodes: Sequence[Node], kind: type[AllOf] | type[AnyOf]) -> Node:
    distinct = tuple(dict.fromkeys(nodes))
    return distinct[0] if len(distinct) == 1 else kind(distinct)


def _parse_or(items: Sequence[Node | str]) -> Node:
    return _either([_parse_and(g) for g in _split(items, "OR")], AnyOf)


def _parse_and(items: Sequence[Node | str]) -> Node:
    # Explicit AND and plain adjacency both mean AND, as in FTS5; NOT binds tightest,
    # excluding its right operand from the operand just before it. A chain of NOTs is
    # one exclusion of any of its operands: "a NOT b NOT c" is "a NOT (b OR c)".
    nodes: list[Node] = []
    negate = False
    for item in items:
        if isinstance(item, str):
            negate = item == "NOT"
        elif negate and nodes:
            last = nodes[-1]
            if isinstance(last, Without):
                excluded = last.exclude.items if isinstance(last.exclude, AnyOf) else (
                    last.exclude,)
                nodes[-1] = Without(last.include, _either((*excluded, item), AnyOf))
            else:
                nodes[-1] = Without(last, item)
            negate = False
        else:
            nodes.append(item)
    return _either(nodes, AllOf)


@lru_cache(maxsize=32)
def parse_query(text: str) -> ParsedQuery:
    """Parse any string into a :class:`ParsedQuery`; never raises (the stages of one search
    parse its query more than once: the last few are remembered)."""
    text = text[:MAX_QUERY_CHARS].replace("\x00", " ")
    return _advanced(text) if _is_advanced(text) else _plain(text)


def _quote(token: str) -> str:
    return '"' + token.replace('"', '""') + '"'


def to_fts5(node: Node | None) -> str:
    """Render an expression as an FTS5 MATCH string in which every token is quoted."""
    if node is None:
        return ""
    if isinstance(node, Term):
        return _quote(node.text) + ("*" if node.prefix else "")
    if isinstance(node, Phrase):
        return _quote(" ".join(node.terms)) + ("*" if node.prefix else "")
    if isinstance(node, Without):
        return f"({to_fts5(node.include)} NOT {to_fts5(node.exclude)})"
    joiner = " AND " if isinstance(node, AllOf) else " OR "
    return "(" + joiner.join(to_fts5(i) for i in node.items) + ")"


def unit_matches(unit: Unit, text_tokens: Sequence[str], token_set: frozenset[str]) -> bool:
    """Does one coverage unit occur in a message's tokens?

    >>> unit_matches(Phrase(("bridge", "network")), ["the", "bridge", "network"],
    ...              frozenset({"the", "bridge", "network"}))
    True
    """
    if isinstance(unit, Term):
        return token_matches(unit.text, token_set, prefix=unit.prefix)
    if not all(t in token_set for t in unit.terms[:-1]):
        return False
    if not token_matches(unit.terms[-1], token_set, prefix=unit.prefix):
        return False
    return phrase_count(unit, text_tokens) > 0


def phrase_count(phrase: Phrase, text_tokens: Sequence[str]) -> int:
    """How often ``phrase`` occurs in a message's tokens (its last term as a prefix if asked).

    >>> phrase_count(Phrase(("cors", "决"), prefix=True), ["cors", "决定", "cors", "决"])
    2
    """
    n = len(phrase.terms)
    head, last = phrase.terms[:-1], phrase.terms[-1]
    found = 0
    for i in range(len(text_tokens) - n + 1):
        if head and (text_tokens[i] != head[0] or tuple(text_tokens[i:i + n - 1]) != head):
            continue
        end = text_tokens[i + n - 1]
        if end == last or (phrase.prefix and end.startswith(last)):
            found += 1
    return found


def evaluate(node: Node, text_tokens: Sequence[str]) -> bool:
    """Does an expression match a message's index tokens? (the in-memory store's matcher)"""
    token_set = frozenset(text_tokens)
    return _eval(node, list(text_tokens), token_set)


def _eval(node: Node, seq: list[str], token_set: frozenset[str]) -> bool:
    if isinstance(node, Term | Phrase):
        return unit_matches(node, seq, token_set)
    if isinstance(node, Without):
        return _eval(node.include, seq, token_set) and not _eval(node.exclude, seq, token_set)
    if isinstance(node, AllOf):
        return all(_eval(i, seq, token_set) for i in node.items)
    return any(_eval(i, seq, token_set) for i in node.items)
