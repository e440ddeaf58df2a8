"""Arithmetic on certified intervals (ratios of two quantities) and named constants."""

from __future__ import annotations

from fractions import Fraction

from certdp.claims.interval import Interval
from certdp.claims.quantities import Args, quantity
from certdp.enclose import Enclosure, workprec
from certdp.enclose.special import pi
from certdp.errors import InvalidArgument


def ratio_of(
    num: Interval, den: Interval, shift: Fraction = Fraction(0), minus_one: bool = False, power: int = 1
) -> Interval:
    """Enclosure of ((x - shift)/(y - shift))^power [- 1] for x in ``num``, y in ``den``.

    Contract: exact interval division; the shifted denominator must be certified > 0 and the
    shifted numerator certified >= 0 (InvalidArgument otherwise).
    """
    if None in (num.lower, num.upper, den.lower, den.upper):
        raise InvalidArgument("ratio: both quantities must be certified on both sides")
    a, b = num.lower - shift, num.upper - shift  # type: ignore[operator]
    c, d = den.lower - shift, den.upper - shift  # type: ignore[operator]
    if not (c > 0 and a >= 0):
        raise InvalidArgument("ratio: the numerator must be >= 0 and the denominator > 0 (after the shift)")
    lo, hi = (a / d) ** power, (b / c) ** power
    if minus_one:
        lo, hi = lo - 1, hi - 1
    return Interval(lo, hi, "exact interval division")


MAX_POWER = 8


@quantity(
    "ratio",
    "exact interval arithmetic on the two certified enclosures",
    ("num", "den", "shift", "minus_one", "power"),
    ("num", "den"),
)
def _ratio(a: Args) -> Interval:
    """((num - shift)/(den - shift))^power, minus 1 when ``minus_one`` ("X% more noise": sigma_a/sigma_b - 1)."""
    power = a.int("power", "1")
    if not 1 <= power <= MAX_POWER:
        raise InvalidArgument(f"power={power} must be an integer in [1, {MAX_POWER}]")
    return ratio_of(
        a.interval("num"), a.interval("den"), a.frac("shift", "0"), a.text("minus_one", "false") == "true", power
    )


@quantity("constant", "certdp.enclose.special.pi (Arb)", ("name",))
def _constant(a: Args) -> Interval:
    name = a.text("name")
    if name not in ("sqrt(pi/2)", "sqrt(pi)"):
        raise InvalidArgument(f"constant name={name!r} must be sqrt(pi/2) or sqrt(pi)")
    with workprec(128):
        x = (pi() / 2).sqrt() if name == "sqrt(pi/2)" else pi().sqrt()
        return Interval.of(Enclosure.from_ball(x), name)
