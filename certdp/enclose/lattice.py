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


def _prune(offset: int, poly: arb_poly, floor: arb, dropped: list[arb]) -> tuple[int, arb_poly]:
    """Drop leading and trailing coefficients whose balls lie below ``floor``; add their upper
    ends to ``dropped[0]``."""
    c = poly.coeffs()
    lo, hi = 0, len(c)
    while lo < hi and c[lo].upper() < floor:
        dropped[0] += c[lo].upper().max(arb(0))
        lo += 1
    while hi > lo and c[hi - 1].upper() < floor:
        dropped[0] += c[hi - 1].upper().max(arb(0))
        hi -= 1
    return offset + lo, arb_poly(c[lo:hi])


def power_pruned(coeffs: Sequence[arb], n: int, length: int, floor: arb) -> tuple[int, list[arb], arb]:
    """(offset, c, dropped): c[i] encloses the coefficient of z^(offset+i), offset+i < length, of
    a polynomial that is coefficient-wise <= (sum_k coeffs[k] z^k)^n (nonnegative coefficients).

    Contract: coefficients are nonnegative masses with total <= 1. After every product the
    leading and trailing coefficients below ``floor`` are dropped: the result is the power of a
    sub-measure (mass is lost, never created), and ``dropped`` bounds the lost mass below
    ``length``: a mass d dropped from a factor removes at most d times the other factor's total
    (<= 1) from the product, so the sum of the dropped upper ends bounds it. Pruning keeps the
    dynamic range small, which makes Arb's products fast.
    """
    if n < 1:
        raise InvalidArgument(f"n={n} must be >= 1")
    dropped = [arb(0)]
    b_off, base = _prune(0, arb_poly(list(coeffs)).truncate(length), floor, dropped)
    r_off, result = 0, arb_poly([1])
    first = True
    while n:
        if n & 1:
            if first:
                r_off, result, first = b_off, base, False
            else:
                prod = (result * base).truncate(max(length - r_off - b_off, 1))
                r_off, result = _prune(r_off + b_off, prod, floor, dropped)
        n >>= 1
        if n:
            b_off, base = _prune(2 * b_off, (base * base).truncate(max(length - 2 * b_off, 1)), floor, dropped)
    out = result.coeffs()
    return r_off, out[: max(length - r_off, 0)], dropped[0]
