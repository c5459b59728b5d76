"""English irregular verbs and plurals: the forms that share no stem with their base.

A question asks "what did I *buy*"; the session says "I *bought*". Suffix stemming
(:func:`~harkback.stages.text.stem.stem`) joins "bike" and "biked", never "buy" and
"bought", so the common irregular verbs are listed here, each base with its past
forms. Verbs whose past form is also a common word of another meaning ("left", "rose",
"led", "shot", "sat", "bent", "meant") are left out: widening "how many pages do I have
left" to "leave" would find what it does not mean. Stopwords ("did", "got", "told")
are never searched for, so they are not listed either. Plurals that no suffix rule
reaches ("children", "people", "analyses") are listed the same way, singular first.

>>> irregular_forms("bought")
('buy', 'bought')
>>> irregular_forms("ride")
('ride', 'rode', 'ridden')
>>> irregular_forms("bike")
()
"""

from __future__ import annotations

_VERBS = """
buy bought | bring brought | teach taught | catch caught | seek sought | fight fought
go went gone | make made | take took taken | give gave given | see saw seen | come came
eat ate eaten | drink drank drunk | drive drove driven | ride rode ridden
write wrote written | speak spoke spoken | break broke broken | choose chose chosen
wear wore worn | swim swam swum | sing sang sung | begin began begun | run ran | win won
sell sold | pay paid | spend spent | send sent | lend lent | build built | lose lost
meet met | feel felt | keep kept | sleep slept | find found | hold held | stand stood
understand understood | feed fed | hear heard | say said | fly flew flown | grow grew grown
throw threw thrown | draw drew drawn | fall fell fallen | forget forgot forgotten
hide hid hidden | shake shook shaken | wake woke woken | freeze froze frozen
steal stole stolen | hang hung | dig dug | become became | forgive forgave forgiven
spin spun | swing swung | deal dealt | speed sped
"""

_NOUNS = """
child children | man men | woman women | person people | mouse mice | foot feet
tooth teeth | goose geese | leaf leaves | knife knives | wife wives | half halves
shelf shelves | wolf wolves | thief thieves | loaf loaves | criterion criteria
phenomenon phenomena | analysis analyses | index indices | matrix matrices
vertex vertices | appendix appendices | cactus cacti | fungus fungi | nucleus nuclei
radius radii | hypothesis hypotheses | thesis theses | crisis crises | axis axes
"""


def _table(text: str) -> dict[str, tuple[str, ...]]:
    return {form: tuple(group.split())
            for group in text.replace("\n", "|").split("|") if group.strip()
            for form in group.split()}


IRREGULAR_VERBS: dict[str, tuple[str, ...]] = _table(_VERBS)
"""Each form of an irregular verb, to the verb's forms (base first)."""

IRREGULAR_NOUNS: dict[str, tuple[str, ...]] = _table(_NOUNS)
"""Each form of an irregular noun, to its singular and plural."""
"""Each form of an irregular verb, mapped to all of its forms (the base first)."""


def irregular_forms(word: str) -> tuple[str, ...]:
    """The forms of the irregular verb or noun ``word`` is a form of (the base first), or ().

    >>> irregular_forms("went"), irregular_forms("children")
    (('go', 'went', 'gone'), ('child', 'children'))
    """
    return IRREGULAR_VERBS.get(word) or IRREGULAR_NOUNS.get(word, ())
