"""Exact intervals: what a claim's computation returns, and the three-valued tests against a claim.

An :class:`Interval` holds exact rational ends (Fractions), each possibly open or missing (None:
that side is not certified). It is what every registered quantity returns, whatever certdp
function produced it, so that results can cross process boundaries and be compared exactly.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from certdp.enclose import Enclosure, decimal_outward
from certdp.enclose.ball import Ball
from certdp.errors import InvalidArgument


@dataclass(frozen=True)
class Interval:
    """The quantity lies in the interval from ``lower`` to ``upper`` (None: unbounded on that side).

    ``lower_open`` / ``upper_open`` make an end strict. ``detail`` says how it was computed (the
    certdp function, grid, orders), for the report.
    """

    lower: Fraction | None
    upper: Fraction | None
    detail: str = ""
    lower_open: bool = False
    upper_open: bool = False

    def __post_init__(self) -> None:
        if self.lower is not None and self.upper is not None and self.lower > self.upper:
            raise InvalidArgument(f"interval lower={self.lower} must be <= upper={self.upper}")

    @staticmethod
    def of(enc: Enclosure | Ball, detail: str = "") -> Interval:
        """Contract: the exact ends of an Enclosure, or of a ball (outward dyadic ends)."""
        e = enc if isinstance(enc, Enclosure) else Enclosure.from_ball(enc)
        return Interval(e.lower, e.upper, detail)

    @staticmethod
    def point(value: Fraction | int, detail: str = "") -> Interval:
        """Contract: the degenerate interval [value, value] (an exact rational result)."""
        v = Fraction(value)
        return Interval(v, v, detail)

    @property
    def two_sided(self) -> bool:
        """Contract: True when both ends are certified."""
        return self.lower is not None and self.upper is not None

    def text(self, digits: int = 12) -> str:
        """Contract: decimal ends rounded outward to ``digits`` significant digits ("-inf"/"inf" for a
        missing end); an exact point prints once."""
        if self.lower is not None and self.lower == self.upper:
            return _dec(self.lower, False, digits)
        lo = "-inf" if self.lower is None else _dec(self.lower, False, digits)
        hi = "inf" if self.upper is None else _dec(self.upper, True, digits)
        # an infinite end is never attained: it prints open
        left = "(" if self.lower_open or self.lower is None else "["
        right = ")" if self.upper_open or self.upper is None else "]"
        return f"{left}{lo}, {hi}{right}"

    def to_dict(self) -> dict[str, object]:
        """Contract: decimal ends rounded outward (17 significant digits) and the exact ends as p/q."""
        return {
            "lower": None if self.lower is None else decimal_outward(self.lower, False),
            "upper": None if self.upper is None else decimal_outward(self.upper, True),
            "lower_exact": _exact(self.lower),
            "upper_exact": _exact(self.upper),
            "lower_open": self.lower_open,
            "upper_open": self.upper_open,
            "detail": self.detail,
        }


def _exact(v: Fraction | None) -> str | None:
    """p/q text of an end, or None when it is too long to print (a result of 10^4000 or so)."""
    if v is None or v.numerator.bit_length() + v.denominator.bit_length() > 4000:
        return None
    return str(v)


def _dec(v: Fraction, up: bool, digits: int) -> str:
    if v.denominator == 1 and abs(v.numerator) < 10**30:
        return str(v.numerator)
    s = decimal_outward(v, up, digits)
    if "e" not in s and "." in s:
        s = s.rstrip("0").rstrip(".")
    return s


def below(x: Interval, v: Fraction, strict: bool) -> bool:
    """Certified x < v (``strict``) or x <= v. Contract: True only when every point of x satisfies it."""
    if x.upper is None:
        return False
    return x.upper < v or (x.upper == v and (not strict or x.upper_open))


def above(x: Interval, v: Fraction, strict: bool) -> bool:
    """Certified x > v (``strict``) or x >= v. Contract: True only when every point of x satisfies it."""
    if x.lower is None:
        return False
    return x.lower > v or (x.lower == v and (not strict or x.lower_open))


def inside(x: Interval, target: Interval) -> bool:
    """Certified x within ``target`` (open ends of the target respected). Contract: True only when
    every point of x lies in the target."""
    lo_ok = target.lower is None or above(x, target.lower, target.lower_open)
    hi_ok = target.upper is None or below(x, target.upper, target.upper_open)
    return lo_ok and hi_ok


def outside(x: Interval, target: Interval) -> bool:
    """Certified x disjoint from ``target``. Contract: True only when no point of x lies in the target."""
    if target.lower is not None and below(x, target.lower, not target.lower_open):
        return True
    return target.upper is not None and above(x, target.upper, not target.upper_open)


def combine(xs: list[Interval], op: str, detail: str = "") -> Interval:
    """Enclosure of min or max over the quantities enclosed by ``xs`` (``op`` "min" or "max").

    Contract: min_i q_i lies in [min lower_i, min upper_i] and max_i q_i in [max lower_i, max upper_i]
    (a missing end makes that end missing); open flags are dropped (closed is still an enclosure).
    """
    if not xs:
        raise InvalidArgument("aggregate over no values")
    pick = min if op == "min" else max
    lows = [x.lower for x in xs]
    highs = [x.upper for x in xs]
    lo = None if any(v is None for v in lows) else pick(lows)  # type: ignore[type-var]
    hi = None if any(v is None for v in highs) else pick(highs)  # type: ignore[type-var]
    return Interval(lo, hi, detail)
