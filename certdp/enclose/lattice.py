"""Truncated powers of polynomials with ball coefficients (arb_poly), for lattice convolutions.

Contract of every function: coefficients are balls that contain the exact coefficients of the
truncated power (Arb's polynomial multiplication is rigorous); nothing is dropped silently:
callers that need the mass above the truncation get it from :func:`power_truncated`'s second
return value or bound it themselves.
"""

from __future__ import annotations

from collections.abc import Sequence

from flint import arb, arb_poly

from certdp.errors import InvalidArgument


def _mul_trunc(a: arb_poly, b: arb_poly, length: int) -> arb_poly:
    return (a * b).truncate(length)


def power_truncated(coeffs: Sequence[arb], n: int, length: int) -> list[arb]:
    """Coefficients 0..length-1 of (sum_k coeffs[k] z^k)^n, by binary powering with truncation.

    Contract: each returned ball contains the exact coefficient of z^j (j < length) of the
    n-th power; truncating a factor before multiplying never changes coefficients below
    ``length`` because every exponent is >= 0.
    """
    if n < 0:
        raise InvalidArgument(f"n={n} must be >= 0")
    if length < 1:
        raise InvalidArgument(f"length={length} must be >= 1")
    base = arb_poly(list(coeffs)).truncate(length)
    result = arb_poly([1])
    while n:
        if n & 1:
            result = _mul_trunc(result, base, length)
        n >>= 1
        if n:
            base = _mul_trunc(base, base, length)
    out = result.coeffs()
    return out + [arb(0)] * (length - len(out))
