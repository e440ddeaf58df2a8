"""Supported parameter domains of the pairs: float-safe magnitudes and work limits.

Parameters are stored exactly, but the pairs choose truncation lengths and search points with
floats, and the cost of the integral and finite-sum pairs grows with some parameters. So:

* every nonzero real parameter has magnitude in [MIN_MAGNITUDE, MAX_MAGNITUDE] = [1e-100, 1e100]
  unless the pair states a narrower range (InvalidArgument otherwise): inside it the floats
  derived from the parameters (their squares, reciprocals, logs) neither overflow nor underflow;
* a pair whose cost grows with a parameter or with the order states a work limit and refuses a
  request beyond it before doing the work (LimitExceeded naming the parameter, the limit and why).

Each pair's docstring lists its domain; the limits were measured so that a single evaluation
(cgf, rdp, kl) finishes in a few seconds and well under 1 GiB on a laptop core.
"""

from __future__ import annotations

from fractions import Fraction

from certdp.errors import LimitExceeded, fmt_value, invalid
from certdp.pairs.params import Number, real

MIN_MAGNITUDE = Fraction(1, 10**100)
MAX_MAGNITUDE = Fraction(10**100)


def shown_bound(b: Fraction | int) -> str:
    """A bound as text: ``1e-100``, ``1e+100`` for powers of ten, else the exact value.

    Contract: a short string whose value is exactly ``b``.
    """
    b = Fraction(b)
    n, d = b.numerator, b.denominator
    if n == 1 and str(d).rstrip("0") == "1":
        return f"1e-{len(str(d)) - 1}"
    if d == 1 and str(n).rstrip("0") == "1" and n > 10**6:
        return f"1e+{len(str(n)) - 1}"
    return str(b)


def bounded(
    name: str,
    value: Number,
    mechanism: str,
    *,
    low: Fraction | int = MIN_MAGNITUDE,
    high: Fraction | int = MAX_MAGNITUDE,
    **bounds: Fraction | int | bool | None,
) -> Fraction:
    """A real parameter validated by :func:`certdp.pairs.params.real` (``bounds``: gt, ge, lt, le,
    nonzero) whose magnitude, when nonzero, also lies in [low, high].

    Contract: the exact value, or InvalidArgument ``name=value must ...`` naming the range.
    """
    v = real(name, value, **bounds)  # type: ignore[arg-type]
    if v != 0 and not Fraction(low) <= abs(v) <= Fraction(high):
        raise invalid(
            name,
            value,
            f"must have magnitude in [{shown_bound(low)}, {shown_bound(high)}] (the supported range of {mechanism})",
        )
    return v


def work_limit(name: str, value: object, limit: object, mechanism: str, why: str) -> LimitExceeded:
    """The canonical refusal ``name=value exceeds the limit L for mechanism (why)``.

    Contract: a LimitExceeded with that one-line message.
    """
    return LimitExceeded(f"{name}={fmt_value(value)} exceeds the limit {fmt_value(limit)} for {mechanism} ({why})")
