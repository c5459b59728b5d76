"""A small deterministic embedder for stage tests: words grouped into shared concepts.

Words in one group of :data:`CONCEPTS` land on the same dimension, every other word on a
hashed one, so "undergrad" and "bachelor's degree" are near while sharing no word. It
stands in for a real model where the stage's logic, not the model, is under test (the
real adapters are tested in tests/adapters/models/).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

import attrs
from returns.future import FutureResult

from harkback.stages.errors import ModelFailed
from harkback.stages.ports import EmbedKind, Vector
from harkback.stages.text.tokens import tokens

DIMENSIONS = 64
CONCEPTS = (
    frozenset({"undergrad", "bachelor", "degree", "college", "university"}),
    frozenset({"dog", "puppy", "retriever", "pet"}),
    frozenset({"guitar", "ukulele", "instrument", "music"}),
)


def _dimension(word: str) -> int:
    for i, group in enumerate(CONCEPTS):
        if word in group:
            return i
    digest = hashlib.sha256(word.encode()).digest()
    return len(CONCEPTS) + int.from_bytes(digest[:4], "big") % (DIMENSIONS - len(CONCEPTS))


def concept_vector(text: str) -> Vector:
    """The unit vector of ``text``'s words (an all-zero text gets the first axis)."""
    values = [0.0] * DIMENSIONS
    for word in tokens(text):
        values[_dimension(word)] += 1.0
    norm = math.sqrt(sum(v * v for v in values))
    if norm == 0:
        return tuple(1.0 if i == 0 else 0.0 for i in range(DIMENSIONS))
    return tuple(v / norm for v in values)


@attrs.define
class ConceptEmbedder:
    """Embeds with :func:`concept_vector`; ``fail`` makes every call a ModelFailed."""

    name: str = "concepts"
    fail: bool = False
    calls: list[tuple[EmbedKind, int]] = attrs.field(factory=list)

    def embed(self, texts: Sequence[str], kind: EmbedKind
              ) -> FutureResult[tuple[Vector, ...], ModelFailed]:
        self.calls.append((kind, len(texts)))
        if self.fail:
            return FutureResult.from_failure(ModelFailed("embedder down"))
        return FutureResult.from_value(tuple(concept_vector(t) for t in texts))

    async def aclose(self) -> None:
        return None
