"""Ball values: conversion between Arb balls and the exact :class:`Enclosure` value.

An :class:`Enclosure` is the public result type: two exact dyadic endpoints
``lower = lo_man * 2**lo_exp <= upper = hi_man * 2**hi_exp`` and the working precision that
produced them. It never holds a float. Decimal rendering rounds outward (lower down, upper up),
so a printed interval always contains the exact one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction

from flint import arb, fmpq

from certdp.enclose.context import prec_at_least
from certdp.errors import InvalidArgument, PrecisionExhausted

Ball = arb
Exact = int | Fraction
MIN_DIGITS = 17


def _dyadic_of(x: arb) -> tuple[int, int]:
    """Exact (mantissa, exponent) of an exact arb."""
    man, exp = x.man_exp()
    return int(man), int(exp)


def _fraction(man: int, exp: int) -> Fraction:
    return Fraction(man * 2**exp) if exp >= 0 else Fraction(man, 2**-exp)


def _round_decimal(value: Fraction, digits: int, up: bool) -> str:
    """``value`` rounded to ``digits`` significant digits toward +inf (up) or -inf (down).

    Contract: for up=False the returned decimal d satisfies d <= value; for up=True, d >= value.
    Exact integer arithmetic, no floats.
    """
    if value == 0:
        return "0"
    neg = value < 0
    mag = -value if neg else value
    # k = floor(log10(mag)), found exactly after a float guess.
    k = math.floor(math.log10(mag.numerator) - math.log10(mag.denominator))
    while Fraction(10) ** k > mag:
        k -= 1
    while Fraction(10) ** (k + 1) <= mag:
        k += 1
    scale = Fraction(10) ** (digits - 1 - k)
    scaled = mag * scale
    # Magnitude rounding direction: toward +inf for the value means away from zero when positive.
    away = up != neg
    n = -((-scaled.numerator) // scaled.denominator) if away else scaled.numerator // scaled.denominator
    # Exact: n * 10**(k - digits + 1); a carry to 10**digits is still exact.
    with localcontext() as dctx:
        dctx.prec = digits + 2
        dec = Decimal(-n if neg else n).scaleb(k - digits + 1)
    if -7 <= dec.adjusted() < 21:
        return format(dec, "f")
    return format(dec, "E").replace("E+", "e+").replace("E-", "e-")


@dataclass(frozen=True)
class Enclosure:
    """A certified real interval [lower, upper] with exact dyadic endpoints.

    Contract: the quantity it was computed for lies in [lower, upper]; ``prec_bits`` is the
    working precision of the computation that produced it.
    """

    lo_man: int
    lo_exp: int
    hi_man: int
    hi_exp: int
    prec_bits: int

    def __post_init__(self) -> None:
        if self.lower > self.upper:
            raise InvalidArgument(f"enclosure lower={self.lower} must be <= upper={self.upper}")

    @staticmethod
    def from_ball(x: arb, prec_bits: int | None = None) -> Enclosure:
        """Enclosure of the ball ``x``; raises PrecisionExhausted when x is not finite.

        Contract: [lower, upper] contains every point of x (ends rounded outward at >= the midpoint's bits).
        """
        if not x.is_finite():
            raise PrecisionExhausted(f"ball {x} is not finite")
        # Endpoints are rounded outward at this precision: keep every bit of the midpoint. The
        # block holds the FLINT lock, so the caller's precision (old) cannot change under us.
        with prec_at_least(x.mid().bits() + 32) as old:
            lo = _dyadic_of(x.lower())
            hi = _dyadic_of(x.upper())
        return Enclosure(lo[0], lo[1], hi[0], hi[1], prec_bits or old)

    @staticmethod
    def from_bounds(lower: Exact, upper: Exact, prec_bits: int) -> Enclosure:
        """Enclosure with exact dyadic endpoints given as Fractions (must be dyadic).

        Contract: exactly [lower, upper]; non-dyadic ends raise InvalidArgument.
        """
        return Enclosure(*_split_dyadic(Fraction(lower)), *_split_dyadic(Fraction(upper)), prec_bits)

    def ball(self) -> arb:
        """The smallest arb ball (at the current precision) that contains this interval.

        Contract: the returned ball contains [lower, upper].
        """
        lo = arb((self.lo_man, self.lo_exp))
        hi = arb((self.hi_man, self.hi_exp))
        return lo.union(hi)

    @property
    def lower(self) -> Fraction:
        """Contract: the exact lower end."""
        return _fraction(self.lo_man, self.lo_exp)

    @property
    def upper(self) -> Fraction:
        """Contract: the exact upper end."""
        return _fraction(self.hi_man, self.hi_exp)

    @property
    def width(self) -> Fraction:
        """Contract: exactly upper - lower."""
        return self.upper - self.lower

    @property
    def mid(self) -> Fraction:
        """Contract: exactly (lower + upper)/2."""
        return (self.lower + self.upper) / 2

    def rel_width(self) -> float:
        """Width divided by the smallest |x| in the interval (inf when it contains 0).

        Contract: a float estimate for reporting and tests; not a certified quantity.
        """
        if self.lower <= 0 <= self.upper:
            return math.inf if self.width else 0.0
        return float(self.width / min(abs(self.lower), abs(self.upper)))

    def digits(self) -> int:
        """Significant digits that show the width: at least 17, at most 80.

        Contract: enough significant digits that the rendered ends resolve the width.
        """
        w = self.width
        if w == 0:
            return MIN_DIGITS
        mag = max(abs(self.lower), abs(self.upper))
        need = math.ceil(math.log10(float(mag / w))) + 3 if mag else MIN_DIGITS
        return max(MIN_DIGITS, min(80, need))

    def lower_str(self, digits: int | None = None) -> str:
        """Contract: a decimal <= lower (rounded toward -inf)."""
        return _round_decimal(self.lower, digits or self.digits(), up=False)

    def upper_str(self, digits: int | None = None) -> str:
        """Contract: a decimal >= upper (rounded toward +inf)."""
        return _round_decimal(self.upper, digits or self.digits(), up=True)

    def contains(self, value: Exact | float | str | Decimal) -> bool:
        """Exact test ``lower <= value <= upper`` (floats and decimals are taken exactly).

        Contract: exact rational comparison with both ends.
        """
        v = Fraction(value) if not isinstance(value, Fraction) else value
        return self.lower <= v <= self.upper

    def to_dict(self) -> dict[str, object]:
        """Contract: decimal ends rounded outward plus the exact dyadic ends and prec_bits."""
        return {
            "lower": self.lower_str(),
            "upper": self.upper_str(),
            "width": _round_decimal(self.width, 6, up=True),
            "lower_dyadic": [str(self.lo_man), self.lo_exp],
            "upper_dyadic": [str(self.hi_man), self.hi_exp],
            "prec_bits": self.prec_bits,
        }

    def __str__(self) -> str:
        return f"[{self.lower_str()}, {self.upper_str()}]"


def _split_dyadic(v: Fraction) -> tuple[int, int]:
    den = v.denominator
    if den & (den - 1):
        raise InvalidArgument(f"endpoint={v} must be a dyadic rational")
    return v.numerator, -(den.bit_length() - 1)


def to_ball(value: Exact | float | str | Decimal | arb) -> arb:
    """A ball containing ``value`` exactly, at the current precision.

    Contract: ints, dyadic floats and dyadic rationals give exact balls; other rationals and
    decimal strings give a ball that contains the exact rational value; the strings "inf" and
    "-inf" give the infinite points (bounds of branch-and-bound searches, never results).
    """
    if isinstance(value, arb):
        return value
    if isinstance(value, str) and value in ("inf", "-inf"):
        return arb(value)
    if isinstance(value, bool):
        raise InvalidArgument(f"value={value} must be a number")
    if isinstance(value, int):
        return arb(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidArgument(f"value={value} must be finite")
        return arb(value)
    q = Fraction(value) if not isinstance(value, Fraction) else value
    if q.denominator == 1:
        return arb(q.numerator)
    return arb(fmpq(q.numerator, q.denominator))


def upper_float(x: arb) -> float:
    """A float >= every point of x (for heuristics and messages only, never certified).

    Contract: a float >= every point of x (heuristics only).
    """
    u = x.upper()
    f = float(u.mid())
    return f if Fraction(f) >= _fraction(*_dyadic_of(u)) else math.nextafter(f, math.inf)


def lower_float(x: arb) -> float:
    """A float <= every point of x (for heuristics and messages only, never certified).

    Contract: a float <= every point of x (heuristics only).
    """
    lo = x.lower()
    f = float(lo.mid())
    return f if Fraction(f) <= _fraction(*_dyadic_of(lo)) else math.nextafter(f, -math.inf)


def width_of(x: arb) -> float:
    """An upper bound on the diameter of x, as a float (for heuristics and messages).

    Contract: a float >= the diameter of x (heuristics and messages only).
    """
    return upper_float(2 * x.rad())
