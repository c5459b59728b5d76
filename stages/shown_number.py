"""A number as an error line may echo it: whole, unless it is too long to read.

``str()`` of an int of more than 4,300 digits raises ValueError, so a library caller's
``limit=10 ** 5000`` (or an agent tool's arguments, parsed by a runner) raised from the
very line that was to refuse it; one of a few thousand digits filled the line.

>>> shown_number(12), shown_number(-3.5), shown_number(10 ** 5000)
('12', '-3.5', 'a number of more than 30 digits')
>>> shown_number(-(10 ** 40))
'a negative number of more than 30 digits'
"""

from __future__ import annotations

DIGITS = 30
"""The most digits of a whole number shown as it is."""


def shown_number(value: int | float) -> str:
    """``value`` as text, or a word on its size when it has more than :data:`DIGITS` digits."""
    if isinstance(value, float) or abs(value) < 10 ** DIGITS:
        return str(value)
    sign = "a negative number" if value < 0 else "a number"
    return f"{sign} of more than {DIGITS} digits"
