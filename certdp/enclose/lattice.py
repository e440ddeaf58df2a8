"""Truncated powers of polynomials with ball coefficients (arb_poly), for lattice convolutions.

Contract of every function: coefficients are balls that contain the exact coefficients of the
truncated power (Arb's polynomial multiplication is rigorous); nothing is dropped silently:
callers that need the mass above the truncation get it from :func:`power_truncated`'s second
return value or bound it themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

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
    off, c, dropped, _ = power_multires(coeffs, n, length - 1, floor, lambda j: 0, spread=True)
    return off, c, dropped


def coarsen_spread(offset: int, coeffs: list[arb]) -> tuple[int, list[arb]]:
    """Halve the resolution of masses at offset + i (spacing H) by mean-keeping splitting: an
    atom at even n moves to n/2 (spacing 2H); an odd atom splits half to (n-1)/2, half to (n+1)/2.

    Contract: the result is a mean-preserving spread of the input (same total, same mean; each
    atom's mass moves to the two ends of its cell keeping its mean), so E g only decreases for
    concave g. Used by the TV upper bound (seed 003 Lemma C.5 applied to partial sums).
    """
    lo = offset // 2 if offset % 2 == 0 else (offset - 1) // 2
    hi = (offset + len(coeffs)) // 2 + 1
    out = [arb(0)] * (hi - lo + 1)
    for i, c in enumerate(coeffs):
        n = offset + i
        if n % 2 == 0:
            out[n // 2 - lo] += c
        else:
            half = c / 2
            out[(n - 1) // 2 - lo] += half
            out[(n + 1) // 2 - lo] += half
    while len(out) > 1 and out[-1].is_zero():
        out.pop()
    return lo, out


def coarsen_group(offset: int, coeffs: list[arb]) -> tuple[int, list[arb]]:
    """Halve the resolution (spacing H -> 2H) by grouping atoms into cells whose mean is <= the
    cell's point 2kH: cell k = {what is left of atom 2k-1, atom 2k, a part x_k of atom 2k+1} with
    x_k <= (lower end of the mass left of atom 2k-1) (1 - 2^-40), so the +H of the part above
    never outweighs the -H of the part below.

    Contract: the result is the distribution of a point u(C) >= E[X | C] for a partition C of the
    outcomes (splitting an atom between cells is an independent randomisation): by Jensen, E g
    only increases for concave g (and more so after raising to u). Masses are lower-rounded where
    they are split (never created). Used by the TV lower bound on partial sums.
    """
    shrink = 1 - arb(2) ** -40
    first = offset // 2 if offset % 2 == 0 else (offset + 1) // 2
    last = (offset + len(coeffs)) // 2 + 1

    def mass(n: int) -> arb:
        i = n - offset
        return coeffs[i] if 0 <= i < len(coeffs) else arb(0)

    out: list[arb] = []
    below = mass(2 * first - 1)  # an odd first atom: no cell below takes it, it joins cell `first`
    for k in range(first, last + 1):
        above = mass(2 * k + 1)
        room = below.lower().min(above.lower())
        x = (room * shrink).lower() if room > 0 else arb(0)
        out.append(below + mass(2 * k) + x)
        below = above - x
    while len(out) > 1 and out[-1].is_zero():
        out.pop()
    return first, out


def power_multires(
    coeffs: Sequence[arb],
    n: int,
    top: int,
    floor: arb,
    doublings: Callable[[int], int],
    spread: bool,
) -> tuple[int, list[arb], arb, int]:
    """(offset, c, dropped, d): c[i] encloses the mass at (offset + i) 2^d of a lattice sum of n
    i.i.d. copies of ``coeffs`` (masses at 0, 1, 2, ...), with partial sums coarsened on the way.

    Binary powering; before the partial sum of 2^j copies is used, its spacing is doubled until it
    has ``doublings(j)`` doublings (a nondecreasing schedule), by :func:`coarsen_spread`
    (``spread``: upper bounds) or :func:`coarsen_group` (lower bounds); the accumulated result is
    coarsened to match. Values above ``top`` (in units of the original spacing) are truncated;
    masses below ``floor`` at either end are pruned and counted in ``dropped``.
    Contract: for every concave g, E g(sum) under the returned sub-measure is <= (spread) or >=
    (group, up to the truncated and pruned mass) E g under the exact sum on the original lattice;
    ``dropped`` bounds the pruned mass (as in :func:`power_pruned`). Proof: the docstrings of
    the two coarsening maps; each applies to one summand group and the others are independent.
    """
    if n < 1:
        raise InvalidArgument(f"n={n} must be >= 1")
    coarsen = coarsen_spread if spread else coarsen_group
    dropped = [arb(0)]

    def lim(d: int) -> int:
        return top // (1 << d) + 1  # indices 0 .. top/2^d kept at spacing 2^d

    b_off, base = _prune(0, arb_poly(list(coeffs)).truncate(lim(0)), floor, dropped)
    b_d, level = 0, 0
    result: arb_poly | None = None
    r_off, r_d = 0, 0
    while n:
        while b_d < doublings(level):
            b_off, lst = coarsen(b_off, base.coeffs())
            b_d += 1
            b_off, base = _prune(b_off, arb_poly(lst).truncate(max(lim(b_d) - b_off, 1)), floor, dropped)
        if n & 1:
            if result is None:
                result, r_off, r_d = base, b_off, b_d
            else:
                while r_d < b_d:
                    r_off, lst = coarsen(r_off, result.coeffs())
                    r_d += 1
                    result = arb_poly(lst)
                prod = (result * base).truncate(max(lim(b_d) - r_off - b_off, 1))
                r_off, result = _prune(r_off + b_off, prod, floor, dropped)
        n >>= 1
        if n:
            sq = (base * base).truncate(max(lim(b_d) - 2 * b_off, 1))
            b_off, base = _prune(2 * b_off, sq, floor, dropped)
            level += 1
    assert result is not None
    out = result.coeffs()
    return r_off, out[: max(lim(r_d) - r_off, 0)], dropped[0], r_d
