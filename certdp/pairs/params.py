"""Up-front validation of pair parameters (Hypothesis style: fail before any computation).

Parameters are stored as exact rationals (``Fraction``): a decimal string such as ``"0.01"``
means exactly 1/100, and a float means its exact binary value. Errors read ``sigma=-1 must be > 0``.
"""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from certdp.errors import fmt_value, invalid

Number = int | float | str | Fraction | Decimal


def as_fraction(name: str, value: Number) -> Fraction:
    """Exact rational value of ``value``; rejects NaN, infinities, booleans and non-numbers.

    Contract: the exact rational value, or InvalidArgument naming the parameter.
    """
    if isinstance(value, bool):
        raise invalid(name, value, "must be a number")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise invalid(name, value, "must be a finite number")
        return Fraction(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise invalid(name, value, "must be a finite number")
        return Fraction(value)
    if isinstance(value, str):
        text = value.strip()
        try:
            dec = Decimal(text)
        except InvalidOperation:
            try:
                return Fraction(text)
            except (ValueError, ZeroDivisionError):
                raise invalid(name, value, "must be a number") from None
        if not dec.is_finite():
            raise invalid(name, value, "must be a finite number")
        return Fraction(dec)
    raise invalid(name, value, "must be a number")


def real(
    name: str,
    value: Number,
    *,
    gt: Fraction | int | None = None,
    ge: Fraction | int | None = None,
    lt: Fraction | int | None = None,
    le: Fraction | int | None = None,
    nonzero: bool = False,
) -> Fraction:
    """Validated exact real parameter with optional bounds (each checked exactly).

    Contract: an exact rational inside the bounds, or InvalidArgument ``name=value must ...``.
    """
    v = as_fraction(name, value)
    shown = value if not isinstance(value, Fraction) else v
    if gt is not None and not v > gt:
        raise invalid(name, shown, f"must be > {fmt_value(gt)}")
    if ge is not None and not v >= ge:
        raise invalid(name, shown, f"must be >= {fmt_value(ge)}")
    if lt is not None and not v < lt:
        raise invalid(name, shown, f"must be < {fmt_value(lt)}")
    if le is not None and not v <= le:
        raise invalid(name, shown, f"must be <= {fmt_value(le)}")
    if nonzero and v == 0:
        raise invalid(name, shown, "must be != 0")
    return v


def integer(name: str, value: Number, *, ge: int | None = None) -> int:
    """Validated integer parameter (``2``, ``2.0`` and ``"2"`` are accepted; ``2.5`` is not).

    Contract: an exact integer inside the bound, or InvalidArgument.
    """
    v = as_fraction(name, value)
    if v.denominator != 1:
        raise invalid(name, value, "must be an integer")
    n = int(v)
    if ge is not None and n < ge:
        raise invalid(name, value, f"must be >= {ge}")
    return n


def decimal_str(v: Fraction) -> str:
    """Exact, canonical text of a rational: a finite decimal when one exists, else ``p/q``.

    Contract: Fraction(decimal_str(v)) == v.
    """
    den = v.denominator
    d2 = d5 = 0
    while den % 2 == 0:
        den //= 2
        d2 += 1
    while den % 5 == 0:
        den //= 5
        d5 += 1
    if den != 1:
        return f"{v.numerator}/{v.denominator}"
    digits = max(d2, d5)
    scaled = v * 10**digits
    s = format(Decimal(int(scaled)).scaleb(-digits), "f")
    return s
