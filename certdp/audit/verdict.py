"""Verdicts: a peer's float against the certified reference of the same quantity.

Every quantity audited errs on the safe side when it is LARGER (an epsilon, a delta, a Renyi
divergence, a noise multiplier a peer says suffices), so:

* ``UNSOUND``: the peer's value is below the certified LOWER end: it claims more privacy than the
  quantity allows (for a noise multiplier: that sigma is proved to miss the target);
* ``conservative``: above the certified UPPER end (sound, and the relative excess says how loose);
* ``exact``: inside [lower, upper], widened by the peer's own float rounding (FLOAT_SLACK relative by
  default; ``certdp audit --slack`` sets another);
* ``inconclusive``: certdp has only one side and the value lies on the other, or no reference
  (the reason is given), or the peer returned NaN or failed.

A peer's +inf is conservative (no claim at all) with an infinite excess.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from certdp.audit.reference import Reference

VERDICTS = ("exact", "conservative", "UNSOUND", "inconclusive")

#: Relative slack for the peer's own float rounding: about 2^12 ulps, what a float sum of a few
#: thousand terms may lose; a difference below it is not a finding. (The smallest finding the
#: audit is asked to see, Opacus's fractional orders, is 1e-9 relative and above it.)
FLOAT_SLACK = Fraction(1, 2**40)


@dataclass(frozen=True)
class Judgement:
    """The verdict and, for ``conservative`` / ``UNSOUND``, the relative distance to the nearest
    certified end ((value - upper)/upper, resp. (lower - value)/lower; inf for an infinite value)."""

    verdict: str
    relative: float | None
    why: str


def _rel(num: Fraction, den: Fraction) -> float:
    if den == 0:
        return math.inf
    try:
        return float(num / den)
    except OverflowError:  # a distance beyond the float range
        return math.inf


def judge(value: float | Fraction, ref: Reference, slack: Fraction = FLOAT_SLACK) -> Judgement:
    """Contract: UNSOUND only if value < ref.lower - slack |value| with ref.lower certified;
    conservative only if value > ref.upper + slack |value| (+ inf included); exact only if
    both ends are certified and value lies within them up to the slack; inconclusive otherwise.
    The comparisons are exact (a float's exact rational value, or an exact Fraction, against
    exact ends)."""
    lo, hi = ref.lower, ref.upper
    if lo is None and hi is None:
        return Judgement("inconclusive", None, ref.reason or "no certified reference")
    if not isinstance(value, Fraction):
        if not isinstance(value, float | int) or isinstance(value, bool) or math.isnan(value):
            return Judgement("inconclusive", None, f"the peer returned {value!r}")
        if value == math.inf:
            if hi is not None:
                return Judgement("conservative", math.inf, "the peer returned inf")
            return Judgement("inconclusive", None, "the peer returned inf; " + ref.reason)
        if value == -math.inf:
            if lo is not None:
                return Judgement("UNSOUND", math.inf, "the peer returned -inf")
            return Judgement("inconclusive", None, ref.reason)
    v = Fraction(value)
    room = slack * abs(v)
    if lo is not None and v < lo - room:
        return Judgement("UNSOUND", _rel(lo - v, lo), "below the certified lower end")
    if hi is not None and v > hi + room:
        return Judgement("conservative", _rel(v - hi, hi), "above the certified upper end")
    if lo is not None and hi is not None:
        return Judgement("exact", None, "inside the certified enclosure")
    side = "lower" if hi is None else "upper"
    return Judgement("inconclusive", None, f"only the {side} side is certified: {ref.reason}")
