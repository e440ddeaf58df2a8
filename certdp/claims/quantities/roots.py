"""Certified roots of monotone functions from a float guess: the bracket every calibration needs.

``meets(x)`` returns True when it is *certified* that x is on the meeting side (e.g. epsilon(x) <=
target), False when it is certified that x is not, None when the evaluation cannot decide. The
float guess only proposes where to look: the returned bracket rests on the two certified
verdicts alone.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

from certdp.errors import PrecisionExhausted

#: Relative half-widths tried around the guess, narrowest first.
WIDTHS = tuple(Fraction(1, 10**k) for k in (10, 9, 8, 7, 6, 5, 4, 3, 2))


def _decimal(x: Fraction, up: bool, places: int) -> Fraction:
    s = 10**places
    return Fraction(math.ceil(x * s) if up else math.floor(x * s), s)


def bracket(
    meets: Callable[[Fraction], bool | None], guess: float, increasing_meets: bool, what: str
) -> tuple[Fraction, Fraction]:
    """(a, b) with ``meets`` certified False at one end and True at the other, a < b.

    ``increasing_meets``: meets holds for all x >= root (e.g. sigma: more noise meets the target);
    otherwise for all x <= root (e.g. a shift: smaller queries meet it). Contract: the root of a
    monotone predicate lies in [a, b] (at a the verdict was certified one way, at b the other);
    PrecisionExhausted when no width in WIDTHS brackets the guess.
    """
    if not (math.isfinite(guess) and guess > 0):
        raise PrecisionExhausted(f"{what}: the float search gave no usable guess ({guess})")
    g = Fraction(guess)
    for w in WIDTHS:
        places = max(12, -math.floor(math.log10(float(w * g))) + 3)
        a, b = _decimal(g * (1 - w), False, places), _decimal(g * (1 + w), True, places)
        va, vb = meets(a), meets(b)
        want_a, want_b = (False, True) if increasing_meets else (True, False)
        if va is want_a and vb is want_b:
            return a, b
    raise PrecisionExhausted(f"{what}: no certified bracket around the float guess {guess:.12g}")
