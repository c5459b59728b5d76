"""Cut a transcript to a character budget around the places that matched.

:func:`cut_around` keeps every matched span it can (best first), then shares the
rest of the budget out as context windows around each kept region, so matches
spread through a long session each keep their surroundings. Markers show where
text was cut, and the output, markers included, never exceeds the budget.

>>> text = "\\n".join(f"line {i:02}" for i in range(40))
>>> start = text.index("line 20")
>>> cut, truncated = cut_around(text, [(start, start + 7)], 120)
>>> truncated, len(cut) <= 120, "line 20" in cut
(True, True, True)
>>> cut.startswith(EARLIER), cut.endswith(LATER)
(True, True)
>>> cut.split("\\n\\n")[1].splitlines()
['line 18', 'line 19', 'line 20', 'line 21', 'line 22']
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import pairwise

from harkback.stages.query import Term, Unit, unit_matches
from harkback.stages.text.tokens import index_tokens, is_cjk, normalize

Span = tuple[int, int]
"""A half-open character range ``text[start:end]``."""

EARLIER = "...[earlier conversation truncated]..."
LATER = "...[later conversation truncated]..."
SEPARATOR = "\n\n"
SNAP_CHARS = 160
"""How far a window edge may move inward to end on a line break instead of mid-line."""


def omitted(count: int) -> str:
    """The marker for ``count`` characters cut between two kept regions.

    >>> omitted(1234)
    '...[1234 characters omitted]...'
    """
    return f"...[{count} characters omitted]..."


def assemble(text: str, pieces: Sequence[Span]) -> str:
    """Join the kept pieces (sorted, disjoint, non-empty) with markers for the gaps.

    >>> assemble("abcdefghij", [(0, 2), (8, 10)])
    'ab\\n\\n...[6 characters omitted]...\\n\\nij'
    """
    if not pieces:
        return ""
    parts = [EARLIER] if pieces[0][0] > 0 else []
    for index, (start, end) in enumerate(pieces):
        if index:
            parts.append(omitted(start - pieces[index - 1][1]))
        parts.append(text[start:end])
    if pieces[-1][1] < len(text):
        parts.append(LATER)
    return SEPARATOR.join(parts)


def _cost(length: int, pieces: Sequence[Span]) -> int:
    """``len(assemble(text, pieces))`` without building the string."""
    if not pieces:
        return 0
    parts = [end - start for start, end in pieces]
    if pieces[0][0] > 0:
        parts.append(len(EARLIER))
    if pieces[-1][1] < length:
        parts.append(len(LATER))
    parts.extend(len(omitted(b[0] - a[1])) for a, b in pairwise(pieces))
    return sum(parts) + len(SEPARATOR) * (len(parts) - 1)


def _merge(spans: Iterable[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """Sort ``(start, end, rank)`` regions and join those whose gap costs less than a marker."""
    merged: list[tuple[int, int, int]] = []
    for start, end, rank in sorted(spans):
        if merged:
            prev_start, prev_end, prev_rank = merged[-1]
            gap = start - prev_end
            if gap <= len(omitted(max(gap, 0))) + 2 * len(SEPARATOR):
                merged[-1] = (prev_start, max(prev_end, end), min(prev_rank, rank))
                continue
        merged.append((start, end, rank))
    return merged


def _pieces(regions: Sequence[tuple[int, int, int]]) -> list[Span]:
    return [(start, end) for start, end, _ in regions]


def _select(length: int, spans: Sequence[Span], budget: int) -> list[tuple[int, int, int]]:
    """The spans to keep whole: all of them if they fit together, else greedily by rank."""
    ranked = [(start, end, rank) for rank, (start, end) in enumerate(spans)]
    everything = _merge(ranked)
    if _cost(length, _pieces(everything)) <= budget:
        return everything
    chosen: list[tuple[int, int, int]] = []
    for region in ranked:
        trial = _merge([*chosen, region])
        if _cost(length, _pieces(trial)) <= budget:
            chosen = trial
    return chosen


def _clip_best(length: int, start: int, budget: int) -> list[tuple[int, int, int]]:
    """When no span fits whole, keep as much as fits from the start of the best one."""
    earlier = len(EARLIER) + len(SEPARATOR) if start > 0 else 0
    if length - start <= budget - earlier:
        return [(start, length, 0)]
    room = budget - earlier - len(SEPARATOR) - len(LATER)
    # Markers taking most of the budget would leave a stub of the match ('needl'): a
    # plain slice from the match's start (see cut_around) shows more of it.
    return [(start, start + room, 0)] if room > budget // 2 else []


def _grow(length: int, regions: list[tuple[int, int, int]],
          budget: int) -> list[tuple[int, int, int]]:
    """Share the unused budget out as context around each region, best rank first.

    Growing a region by ``d`` characters adds at most ``d`` to the output (merging and
    reaching either end only remove markers), so handing out no more than what is
    left keeps the output within the budget.
    """
    for _ in range(4 * len(regions) + 16):
        left = budget - _cost(length, _pieces(regions))
        if left <= 0:
            break
        order = sorted(range(len(regions)), key=lambda i: regions[i][2])
        share, extra = divmod(left, len(regions))
        grown = list(regions)
        for turn, index in enumerate(order):
            amount = share + (extra if turn == 0 else 0)
            start, end, rank = grown[index]
            # Half before, half after; what one side cannot take goes to the other.
            before = min(start, amount // 2)
            after = min(length - end, amount - before)
            before = min(start, amount - after)
            grown[index] = (start - before, end + after, rank)
        merged = _merge(grown)
        if merged == regions:
            break
        regions = merged
    return regions


def _snap(text: str, regions: Sequence[tuple[int, int, int]],
          cores: Sequence[tuple[int, int, int]]) -> list[Span]:
    """Move cut edges inward to a line break (never into a kept span) and off whitespace."""
    snapped: list[Span] = []
    for start, end, _ in regions:
        inside = [(s, e) for s, e, _ in cores if start <= s and e <= end]
        first = min((s for s, _ in inside), default=end)
        last = max((e for _, e in inside), default=start)
        if start > 0:
            newline = text.find("\n", start, min(first, start + SNAP_CHARS))
            if newline < 0 and _inside_word(text, start):
                # No line break near (a long line): at least do not open mid-word, where
                # '/home/user/app' would read as the path 'me/user/app'.
                newline = text.find(" ", start, min(first, start + SNAP_CHARS))
            start = newline + 1 if newline >= 0 else start
            while start < first and text[start].isspace():
                start += 1
        if end < len(text):
            newline = text.rfind("\n", max(last, end - SNAP_CHARS), end)
            if newline < 0 and _inside_word(text, end):
                newline = text.rfind(" ", max(last, end - SNAP_CHARS), end)
            end = newline if newline >= 0 else end
            while end > last and text[end - 1].isspace():
                end -= 1
        if end > start:
            snapped.append((start, end))
    return snapped


def _inside_word(text: str, at: int) -> bool:
    """Does a cut at ``at`` fall between two characters of one word (no space between)?"""
    return 0 < at < len(text) and not text[at - 1].isspace() and not text[at].isspace()


def plan_cut(text: str, spans: Sequence[Span], budget: int) -> tuple[Span, ...]:
    """The pieces of ``text`` that :func:`cut_around` keeps (sorted, disjoint).

    ``spans`` are the matched regions, best first; those outside the text are ignored.
    """
    if budget < 0:
        raise ValueError(f"budget must not be negative, got {budget}")
    length = len(text)
    if length <= budget:
        return ((0, length),) if length else ()
    valid = [(max(0, s), min(length, e)) for s, e in spans if min(length, e) > max(0, s)]
    cores = _select(length, valid, budget) if valid else []
    if not cores and valid:
        cores = _clip_best(length, valid[0][0], budget)
    if not cores and valid:
        return ()  # no room for markers beside the match: cut_around slices at the match
    if not cores:
        head = budget - len(SEPARATOR) - len(LATER)
        return tuple(_snap(text, [(0, head, 0)], [])) if head > 0 else ()
    regions = _grow(length, cores, budget)
    snapped = _snap(text, regions, cores)
    if _cost(length, snapped) <= budget:
        return tuple(snapped)
    return tuple(_pieces(regions))


def cut_around(text: str, spans: Sequence[Span], budget: int) -> tuple[str, bool]:
    """Cut ``text`` to at most ``budget`` characters around ``spans`` (best first).

    Returns the text unchanged and ``False`` when it fits. Otherwise every span that
    can fit is kept whole (all of them when they fit together), the rest of the budget
    becomes context around them, and markers show the cuts. Without spans the head is
    kept. Tiny budgets that cannot hold a marker get a plain slice.

    >>> cut_around("short", [(0, 5)], 100)
    ('short', False)
    """
    if len(text) <= budget:
        return text, False
    pieces = plan_cut(text, spans, budget)
    if not pieces:
        valid = [s for s, e in spans if 0 <= s < len(text) and e > s]
        start = valid[0] if valid else 0
        return text[start:start + budget], True
    return assemble(text, pieces), True


def locate_units(text: str, units: Sequence[Unit], *, limit: int = 64,
                 spellings: Sequence[Sequence[str]] = ()) -> tuple[Span, ...]:
    """Spans of the lines that contain query units, most units first, then earliest.

    A unit also counts where one of its other ``spellings`` (words, by the unit's place:
    :attr:`~harkback.stages.query.ParsedQuery.spellings`) is. The fallback when the hits
    cannot be placed in the text.

    >>> from harkback.stages.query import Term
    >>> locate_units("alpha\\nbeta gamma\\ngamma", [Term("gamma"), Term("beta")])
    ((6, 16), (17, 22))
    >>> locate_units("a bike\\nbikes", [Term("bikes")], spellings=[("bike",)])
    ((0, 6), (7, 12))
    """
    if not units:
        return ()
    def forms_of(i: int) -> Sequence[str]:
        return spellings[i] if i < len(spellings) else ()

    found: list[tuple[int, int, int]] = []
    offset = 0
    for line in text.split("\n"):
        toks = index_tokens(line)
        if toks:
            token_set = frozenset(toks)
            count = sum(unit_matches(u, toks, token_set)
                        or any(form in token_set for form in forms_of(i))
                        for i, u in enumerate(units))
            if count:
                found.append((-count, offset, offset + len(line)))
        offset += len(line) + 1
    found.sort()
    return tuple((start, end) for _, start, end in found[:limit])


def _folded(text: str) -> tuple[str, list[int] | None]:
    """``normalize(text)`` and, when its length differs, each folded character's source index."""
    folded = normalize(text)
    if len(folded) == len(text):
        return folded, None
    pieces: list[str] = []
    where: list[int] = []
    index = 0
    while index < len(text):
        # A voicing mark (゙, ﾞ) joins the kana before it (ﾊﾞ is バ): fold them together.
        size = 2 if text[index + 1:index + 2] in _VOICING_AFTER else 1
        piece = normalize(text[index:index + size])
        pieces.append(piece)
        where.extend([index] * len(piece))
        index += size
    return "".join(pieces), where


_VOICING_AFTER = frozenset("\u3099\u309a\uff9e\uff9f")
"""The marks that voice the kana before them: combining, and half-width."""


def _is_word_char(char: str) -> bool:
    return char.isalnum() and not is_cjk(char)


def unit_spans(text: str, units: Sequence[Unit], *, limit: int = 64) -> tuple[Span, ...]:
    """Character spans of the places in ``text`` where query units occur, in text order.

    A unit is placed by its first term (Latin words on word boundaries, CJK bigrams
    anywhere); case, width and accents do not matter, and offsets refer to ``text``.

    >>> from harkback.stages.query import parse_query
    >>> text = "前面很长的一段话。后来改了 nginx 的配置，跨域问题就解决了。"
    >>> [text[s:e] for s, e in unit_spans(text, parse_query("跨域 NGINX").units)]
    ['nginx', '跨域']
    """
    folded, where = _folded(text)
    found: set[Span] = set()
    for unit in units:
        # The earliest ``limit`` places of each unit hold the earliest ``limit`` of all.
        found.update(_unit_places(folded, unit, limit, len(folded)))
    spans = sorted(found)[:limit]
    if where is None:
        return tuple(spans)
    return tuple((where[s], where[e - 1] + 1) for s, e in spans)


def first_place(text: str, units: Sequence[Unit]) -> Span | None:
    """The first of :func:`unit_spans`, or None.

    Once a unit is placed, the next is looked for only as far as it could still come
    first: a long tool output that names a question word early is not searched to its
    end for each of the others (a search of 2,000 characters costs ~1-3 us a unit).

    >>> from harkback.stages.query import parse_query
    >>> first_place("a docker log: docker", parse_query("log docker").units)
    (2, 8)
    """
    if text.isascii():
        # Folding keeps an ASCII text ASCII: a unit spelled otherwise (a CJK bigram) is
        # not in it, and with no other unit the text is not even folded.
        units = [unit for unit in units if _first_term(unit).isascii()]
        if not units:
            return None
    folded, where = _folded(text)
    best: Span | None = None
    for unit in units:
        # A place of this unit comes first only by starting no later than the best one.
        stop = len(folded) if best is None else best[0] + len(_first_term(unit))
        for place in _unit_places(folded, unit, 1, stop):
            best = place if best is None else min(best, place)
    if best is None or where is None:
        return best
    return where[best[0]], where[best[1] - 1] + 1


def _first_term(unit: Unit) -> str:
    return unit.text if isinstance(unit, Term) else unit.terms[0]


def _unit_places(folded: str, unit: Unit, limit: int, stop: int) -> list[Span]:
    """The first ``limit`` places of ``unit`` in ``folded`` (its offsets) ending by ``stop``."""
    term = _first_term(unit)
    places: list[Span] = []
    start = folded.find(term, 0, stop)
    if start < 0:
        return places  # most texts asked hold no unit: its kind is not looked at
    open_end = unit.prefix if isinstance(unit, Term) else True
    cjk = is_cjk(term)
    while start >= 0 and len(places) < limit:
        end = start + len(term)
        before_ok = cjk or start == 0 or not _is_word_char(folded[start - 1])
        after_ok = cjk or open_end or end == len(folded) or not _is_word_char(folded[end])
        if before_ok and after_ok:
            places.append((start, end))
        start = folded.find(term, start + 1, stop)
    return places


def focus_spans(text: str, spans: Sequence[Span], units: Sequence[Unit], *, longest: int,
                per_span: int = 8) -> tuple[Span, ...]:
    """Spans no longer than ``longest``: a longer one becomes the unit places inside it.

    A matched message or line longer than the budget would otherwise be kept from its
    start, far from the words that matched. Order is kept (best span first); a long
    span with no unit inside stays as it is.

    >>> from harkback.stages.query import parse_query
    >>> text = "x" * 50 + " docker " + "y" * 50
    >>> focus_spans(text, [(0, len(text))], parse_query("docker").units, longest=20)
    ((51, 57),)
    """
    out: dict[Span, None] = {}  # ordered, and a repeat found at once (hits run to hundreds)
    for start, end in spans:
        inner = unit_spans(text[start:end], units, limit=per_span) if end - start > longest else ()
        out.update(dict.fromkeys([(start + s, start + e) for s, e in inner] or [(start, end)]))
    return tuple(out)
