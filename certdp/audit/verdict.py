"""Verdicts: a peer's float against the certified reference of the same quantity.

Every quantity audited errs on the safe side when it is LARGER (an epsilon, a delta, a Renyi
divergence, a noise multiplier a peer says suffices), so:

* ``UNSOUND``: the peer's value is below the certified LOWER end by more than the float error of
  the peer's own method (certdp.audit.tolerance): it claims more privacy than the quantity allows
  (for a noise multiplier: that sigma is proved to miss the target);
* ``roundoff``: below the certified lower end, so below the truth, but by no more than that float
  error: reported, not counted as unsound;
* ``estimate``: a value the peer documents as an estimate, not a guarantee (dp_accounting's
  optimistic PLD, the PRV point estimate, Opacus's GDP accountant), below the lower end by more
  than the float error: reported, not counted as unsound;
* ``conservative``: above the certified UPPER end (sound, and the relative excess says how loose);
* ``exact``: inside [lower, upper], widened by the peer's own float rounding (FLOAT_SLACK relative by
  default; ``certdp audit --slack`` sets another);
* ``inconclusive``: certdp has only one side and the value lies on the other, or no reference
  (the reason is given), or the peer returned NaN or failed, or the value lies inside a ``wide``
  enclosure (proved but not tight: random allocation with k > 1).

A peer's +inf is conservative (no claim at all) with an infinite excess.

A peer that reports a two-sided band (pld-accounting's random-allocation epsilon, say) promises
that its LOWER end is at most the true value. Such a value is judged with ``side="lower"``, the
mirror image: ``UNSOUND`` above the certified UPPER end by more than the float error (the band
excludes the truth), ``roundoff`` above it by no more, ``conservative`` below the certified lower
end (a sound, loose lower bound), ``exact`` inside.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from certdp.audit.reference import Reference

VERDICTS = ("UNSOUND", "estimate", "roundoff", "exact", "conservative", "inconclusive")
#: The verdicts of a value below the certified lower end (below the truth).
BELOW = ("UNSOUND", "estimate", "roundoff")

#: Relative slack for the peer's own float rounding: about 2^12 ulps, what a float sum of a few
#: thousand terms may lose; a difference below it is not a finding. A value further below the
#: lower end is held against the float error of the peer's method (certdp.audit.tolerance).
FLOAT_SLACK = Fraction(1, 2**40)


@dataclass(frozen=True)
class Judgement:
    """The verdict and, for ``conservative`` and the verdicts below the lower end (BELOW), the
    relative distance to the nearest certified end ((value - upper)/upper, resp.
    (lower - value)/lower; inf for an infinite value)."""

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


def judge(
    value: float | Fraction,
    ref: Reference,
    slack: Fraction = FLOAT_SLACK,
    roundoff: Fraction = Fraction(0),
    estimate: bool = False,
    side: str = "upper",
) -> Judgement:
    """Contract: below = value < ref.lower - slack |value| with ref.lower certified; below and
    value >= ref.lower - slack |value| - ``roundoff`` (the peer's float error,
    certdp.audit.tolerance) gives roundoff; below by more gives estimate when ``estimate`` (a value
    the peer documents as an estimate), else UNSOUND (-inf included); conservative only if
    value > ref.upper + slack |value| (+inf included); exact only if both ends are certified and
    value lies within them up to the slack; inconclusive otherwise. The comparisons are exact (a
    float's exact rational value, or an exact Fraction, against exact ends). With ``side="lower"``
    (the value is a peer's lower bound on the quantity) the judgement is :func:`judge_lower`."""
    if side == "lower":
        return judge_lower(value, ref, slack, roundoff, estimate)
    if side != "upper":
        raise ValueError(f"side={side!r} must be 'upper' or 'lower'")
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
                if estimate:
                    return Judgement("estimate", math.inf, "the peer returned -inf (an estimate by design)")
                return Judgement("UNSOUND", math.inf, "the peer returned -inf")
            return Judgement("inconclusive", None, ref.reason)
    v = Fraction(value)
    room = slack * abs(v)
    if lo is not None and v < lo - room:
        rel = _rel(lo - v, lo)
        if v >= lo - room - roundoff:
            return Judgement(
                "roundoff", rel, "below the certified lower end by no more than the float error of the peer's method"
            )
        if estimate:
            return Judgement("estimate", rel, "below the certified lower end: an estimate by design, not a guarantee")
        return Judgement(
            "UNSOUND", rel, "below the certified lower end by more than the float error of the peer's method"
        )
    if hi is not None and v > hi + room:
        return Judgement("conservative", _rel(v - hi, hi), "above the certified upper end")
    if lo is not None and hi is not None:
        return _inside(ref)
    side = "lower" if hi is None else "upper"
    return Judgement("inconclusive", None, f"only the {side} side is certified: {ref.reason}")


def _inside(ref: Reference) -> Judgement:
    """exact inside a tight enclosure; inconclusive inside a ``wide`` one (proved, not tight: random
    allocation with k > 1), where the value may lie on either side of the truth."""
    if ref.wide:
        why = "inside a wide certified enclosure: consistent with it, neither side of the truth proved"
        return Judgement("inconclusive", None, why)
    return Judgement("exact", None, "inside the certified enclosure")


def judge_lower(
    value: float | Fraction,
    ref: Reference,
    slack: Fraction = FLOAT_SLACK,
    roundoff: Fraction = Fraction(0),
    estimate: bool = False,
) -> Judgement:
    """The verdict on a value a peer promises to be at most the true quantity (a lower bound).

    Contract: the mirror of :func:`judge`: above = value > ref.upper + slack |value| with
    ref.upper certified; above by no more than ``roundoff`` gives roundoff; above by more gives
    estimate when ``estimate``, else UNSOUND (+inf included; relative (value - upper)/upper);
    conservative only if value < ref.lower - slack |value| (-inf included; relative
    (lower - value)/lower); exact only inside both certified ends; inconclusive otherwise (NaN,
    no reference, or the value on the uncertified side). Exact comparisons."""
    lo, hi = ref.lower, ref.upper
    if lo is None and hi is None:
        return Judgement("inconclusive", None, ref.reason or "no certified reference")
    if not isinstance(value, Fraction):
        if not isinstance(value, float | int) or isinstance(value, bool) or math.isnan(value):
            return Judgement("inconclusive", None, f"the peer returned {value!r}")
        if value == -math.inf:
            if lo is not None:
                return Judgement("conservative", math.inf, "the peer's lower bound is -inf")
            return Judgement("inconclusive", None, "the peer's lower bound is -inf; " + ref.reason)
        if value == math.inf:
            if hi is not None:
                verdict = "estimate" if estimate else "UNSOUND"
                return Judgement(verdict, math.inf, "the peer's lower bound is inf")
            return Judgement("inconclusive", None, ref.reason)
    v = Fraction(value)
    room = slack * abs(v)
    if hi is not None and v > hi + room:
        rel = _rel(v - hi, hi)
        if v <= hi + room + roundoff:
            return Judgement(
                "roundoff", rel, "a lower bound above the certified upper end by no more than the float error"
            )
        if estimate:
            return Judgement("estimate", rel, "a lower bound above the certified upper end: an estimate by design")
        return Judgement(
            "UNSOUND",
            rel,
            "a lower bound above the certified upper end by more than the float error of the peer's method: "
            "the peer's band excludes the true value",
        )
    if lo is not None and v < lo - room:
        return Judgement("conservative", _rel(lo - v, lo), "a lower bound below the certified lower end (loose)")
    if lo is not None and hi is not None:
        return _inside(ref)
    side = "lower" if hi is None else "upper"
    return Judgement("inconclusive", None, f"only the {side} side is certified: {ref.reason}")
