"""Truncated powers of polynomials with ball coefficients (arb_poly), for lattice convolutions.

Contract of every function: coefficients are balls that contain the exact coefficients of the
truncated power (Arb's polynomial multiplication is rigorous); nothing is dropped silently:
callers that need the mass above the truncation get it from :func:`power_truncated`'s second
return value or bound it themselves. The powering loops call :func:`certdp.enclose.checkpoint`
before each round of products, so a caller's wall-time budget can stop a long composition
between two products (with its error, never with a partial result).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TypeVar

from flint import arb, arb_poly

from certdp.enclose.checkpoint import checkpoint
from certdp.enclose.context import current_prec
from certdp.enclose.work import product_cost
from certdp.errors import InvalidArgument, LimitExceeded


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
        checkpoint()
        if n & 1:
            result = _mul_trunc(result, base, length)
        n >>= 1
        if n:
            base = _mul_trunc(base, base, length)
    out = result.coeffs()
    return out + [arb(0)] * (length - len(out))


def _prune(offset: int, poly: arb_poly, floor: arb, dropped: list[arb], weight: int = 1) -> tuple[int, arb_poly]:
    """Drop leading and trailing coefficients whose balls lie below ``floor``; add their upper
    ends, times ``weight`` (how many copies of this factor the final power contains), to
    ``dropped[0]``. Reads the coefficients by index from the ends (no list of the whole poly)."""
    n = poly.length()
    lo, hi = 0, n
    lost, zero = arb(0), arb(0)
    while lo < hi and (c := poly[lo]) < floor:  # an arb is < floor iff all of it is
        lost += c.upper().max(zero)
        lo += 1
    while hi > lo and (c := poly[hi - 1]) < floor:
        lost += c.upper().max(zero)
        hi -= 1
    dropped[0] += weight * lost
    if lo == 0 and hi == n:
        return offset, poly
    return offset + lo, poly.truncate(hi).right_shift(lo)


def power_pruned(
    coeffs: Sequence[arb], n: int, length: int, floor: arb, max_product: int | None = None
) -> tuple[int, list[arb], arb]:
    """(offset, c, dropped): c[i] encloses the coefficient of z^(offset+i), offset+i < length, of
    a polynomial that is coefficient-wise <= (sum_k coeffs[k] z^k)^n (nonnegative coefficients).

    Contract: coefficients are nonnegative masses with total <= 1. After every product the
    leading and trailing coefficients below ``floor`` are dropped: the result is the power of a
    sub-measure (mass is lost, never created), and ``dropped`` bounds the lost mass below
    ``length``. A mass d dropped from one factor of a product removes at most d times the other
    factor's total (<= 1); but binary powering squares its partial powers, so a mass d dropped
    from the partial sum of 2^j copies removes at most d floor(n/2^j) from the n-th power (the
    number of such partial sums it contains, each loss counted once per copy): every pruned mass
    is weighted by that count. Pruning keeps the dynamic range small, which makes Arb's products
    fast. ``max_product`` (None: no limit) refuses, with LimitExceeded and before it is formed, a
    product longer than that many coefficients (the certificate verifier's memory guard).
    """
    off, c, dropped, _ = power_multires(coeffs, n, length - 1, floor, lambda j: 0, spread=True, max_product=max_product)
    return off, c, dropped


def product_pruned(
    factors: Sequence[tuple[int, Sequence[arb]]], floor: arb, max_product: int | None = None
) -> tuple[int, list[arb], arb]:
    """(offset, c, dropped): the product of the lattice pmfs ``factors`` = [(offset_i, coeffs_i)]
    (masses at offset_i + k), pruned after every product as in :func:`power_pruned`.

    Contract: c[i] encloses the coefficient at offset + i of a polynomial coefficient-wise <= the
    exact product (nonnegative coefficients, totals <= 1); ``dropped`` bounds the total mass lost:
    a mass d pruned from a partial product removes at most d times the rest's total (<= 1).
    LimitExceeded (before it is formed) for a product longer than ``max_product`` coefficients.
    """
    if not factors:
        raise InvalidArgument("factors=[] must be non-empty")
    dropped = [arb(0)]
    off, acc = factors[0][0], arb_poly(list(factors[0][1]))
    for f_off, coeffs in factors[1:]:
        checkpoint()
        poly = arb_poly(list(coeffs))
        _guard(acc.length() + poly.length(), max_product)
        off, acc = _prune(off + f_off, acc * poly, floor, dropped)
    out = acc.coeffs()
    return off, out if out else [arb(0)], dropped[0]


def coarsen_spread(offset: int, coeffs: list[arb]) -> tuple[int, list[arb]]:
    """Halve the resolution of masses at offset + i (spacing H) by mean-keeping splitting: an
    atom at even n moves to n/2 (spacing 2H); an odd atom splits half to (n-1)/2, half to (n+1)/2.

    Contract: the result is a mean-preserving spread of the input (same total, same mean; each
    atom's mass moves to the two ends of its cell keeping its mean), so E g only decreases for
    concave g. Used by the TV upper bound (arXiv:2610.09651 Lemma C.5 applied to partial sums; docs/math.md §9.6).
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


def _reflect(offset: int, coeffs: list[arb]) -> tuple[int, list[arb]]:
    """The masses at -(offset + i): the lattice mirrored about 0 (exact)."""
    return -(offset + len(coeffs) - 1), coeffs[::-1]


def coarsen_group_down(offset: int, coeffs: list[arb]) -> tuple[int, list[arb]]:
    """:func:`coarsen_group` of the mirrored lattice, mirrored back: spacing H -> 2H by grouping
    atoms into cells whose mean is >= the cell's point 2kH (cell k = {a part of atom 2k-1, atom
    2k, what is left of atom 2k+1}, the part below never outweighing the part above).

    Contract: the result is the distribution of a point u(C) <= E[X | C] for a partition C of the
    outcomes (splitting an atom between cells is an independent randomisation): by Jensen, E g
    only decreases for convex g (and more so after lowering to u, for nondecreasing g). Masses
    are lower-rounded where they are split (never created). Used by the lower bound of the remove
    direction of random allocation (docs/math.md §9.8, "The remove direction's lower bound").
    """
    if not coeffs:
        return offset // 2, []
    off, out = coarsen_group(*_reflect(offset, coeffs))
    return _reflect(off, out)


def power_multires(
    coeffs: Sequence[arb],
    n: int,
    top: int,
    floor: arb,
    doublings: Callable[[int], int],
    spread: bool,
    max_product: int | None = None,
    down: bool = False,
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
    with ``down`` (and not ``spread``) the groups are :func:`coarsen_group_down`'s, and E g is
    <= that under the exact sum for every convex nondecreasing g >= 0 (mass is only lost);
    ``dropped`` bounds the pruned mass (as in :func:`power_pruned`: a prune of the partial sum
    at level j is weighted by floor(n/2^j), one of the accumulated result by 1). Proof: the
    docstrings of the two coarsening maps; each applies to one summand group and the others are
    independent.
    """
    if n < 1:
        raise InvalidArgument(f"n={n} must be >= 1")
    coarsen = coarsen_spread if spread else coarsen_group_down if down else coarsen_group
    dropped = [arb(0)]

    def lim(d: int) -> int:
        return top // (1 << d) + 1  # indices 0 .. top/2^d kept at spacing 2^d

    copies = n  # the n-th power contains floor(n / 2^level) copies of the partial sum at ``level``
    b_off, base = _prune(0, arb_poly(list(coeffs)).truncate(lim(0)), floor, dropped, copies)
    b_d, level = 0, 0
    result: arb_poly | None = None
    r_off, r_d = 0, 0
    while n:
        checkpoint()
        while b_d < doublings(level):
            b_off, lst = coarsen(b_off, base.coeffs())
            b_d += 1
            b_off, base = _prune(
                b_off, arb_poly(lst).truncate(max(lim(b_d) - b_off, 1)), floor, dropped, copies >> level
            )
        if n & 1:
            if result is None:
                result, r_off, r_d = base, b_off, b_d
            else:
                while r_d < b_d:
                    r_off, lst = coarsen(r_off, result.coeffs())
                    r_d += 1
                    result = arb_poly(lst)
                _guard(result.length() + base.length(), max_product)
                prod = (result * base).truncate(max(lim(b_d) - r_off - b_off, 1))
                r_off, result = _prune(r_off + b_off, prod, floor, dropped)
        n >>= 1
        if n:
            _guard(2 * base.length(), max_product)
            sq = (base * base).truncate(max(lim(b_d) - 2 * b_off, 1))
            level += 1
            b_off, base = _prune(2 * b_off, sq, floor, dropped, copies >> level)
    assert result is not None
    out = result.coeffs()
    return r_off, out[: max(lim(r_d) - r_off, 0)], dropped[0], r_d


def _guard(length: int, max_product: int | None) -> None:
    if max_product is not None and length > max_product:
        raise LimitExceeded(f"a power's product of {length} coefficients exceeds the limit {max_product}")
    product_cost(length, current_prec())  # counted and checked before it is formed (certdp.enclose.work)


_HALF_HALF = arb_poly([arb(1) / 2, arb(1) / 2])
_X = arb_poly([0, 1])


def _halve_spread(offset: int, poly: arb_poly) -> tuple[int, arb_poly]:
    """:func:`coarsen_spread` (the same map) by polynomial arithmetic: even atoms stay, an odd atom
    at 2j+1 goes half to j and half to j+1 (all halvings are exact)."""
    c = poly.coeffs()
    if not c:
        return offset // 2, arb_poly([])
    if offset % 2 == 0:
        lo, even, odd = offset // 2, c[0::2], c[1::2]
    else:
        lo, even, odd = (offset - 1) // 2, [arb(0), *c[1::2]], c[0::2]
    return lo, arb_poly(even) + arb_poly(odd) * _HALF_HALF


def _halve_up(offset: int, poly: arb_poly) -> tuple[int, arb_poly]:
    """Spacing H -> 2H by rounding up: the cell {2k-1, 2k} goes to the point 2k, which is >= every
    point of the cell, so E g only increases for nondecreasing g (and for concave g, as a special
    case of :func:`coarsen_group`'s argument). Exact (additions of the masses only)."""
    c = poly.coeffs()
    if not c:
        return (offset + 1) // 2, arb_poly([])
    if offset % 2 == 0:  # odd atoms 2(lo+j)+1 round up to lo+j+1
        return offset // 2, arb_poly(c[0::2]) + arb_poly(c[1::2]).left_shift(1)
    return (offset + 1) // 2, arb_poly(c[1::2]) + arb_poly(c[0::2])


def _halve_down(offset: int, poly: arb_poly) -> tuple[int, arb_poly]:
    """Spacing H -> 2H by rounding down: the cell {2k, 2k+1} goes to the point 2k, which is <=
    every point of the cell (:func:`_halve_up` of the mirrored lattice), so E g only decreases for
    nondecreasing g. Exact (additions of the masses only)."""
    c = poly.coeffs()
    if not c:
        return offset // 2, arb_poly([])
    if offset % 2 == 0:  # the cell {2(lo+j), 2(lo+j)+1} goes to lo+j
        return offset // 2, arb_poly(c[0::2]) + arb_poly(c[1::2])
    # the first atom is odd, 2 lo + 1, alone in its cell; then cells {2(lo+j), 2(lo+j)+1}, j >= 1
    return (offset - 1) // 2, arb_poly(c[0::2]) + arb_poly(c[1::2]).left_shift(1)


def _add_shifted(a: tuple[int, arb_poly], b: tuple[int, arb_poly]) -> tuple[int, arb_poly]:
    """Sum of two offset polynomials on the same lattice."""
    (oa, pa), (ob, pb) = a, b
    if len(pa) == 0:
        return b
    if len(pb) == 0:
        return a
    off = min(oa, ob)
    # exact shifts, then one C-level addition (the same ball additions as coefficient by coefficient)
    return off, pa.left_shift(oa - off) + pb.left_shift(ob - off)


State = TypeVar("State", bound=tuple)


def coarsened_powering(
    base: State,
    n: int,
    doublings: Callable[[int], int],
    halve: Callable[[State], State],
    mul: Callable[[State, State], State],
) -> State:
    """The schedule of :func:`power_two_scale`: binary powering of ``base`` to the n-th power in
    which the partial sum of 2^j copies is first halved until it has ``doublings(j)`` doublings,
    and the accumulated result is halved to match before each product. A state's item 1 is its
    number of doublings. certdp.notions.tv_certified.largest_product runs the same schedule on
    lengths (its memory estimate), so the two cannot drift apart.

    Contract: returns mul/halve applied in that order (n >= 1); computes nothing else.
    """
    level = 0
    result: State | None = None
    while n:
        checkpoint()
        while base[1] < doublings(level):
            base = halve(base)
        if n & 1:
            if result is None:
                result = base
            else:
                while result[1] < base[1]:
                    result = halve(result)
                result = mul(result, base)
        n >>= 1
        if n:
            base = mul(base, base)
            level += 1
    assert result is not None
    return result


def power_two_scale(
    coeffs: Sequence[arb],
    n: int,
    top: int,
    floor: arb,
    doublings: Callable[[int], int],
    spread: bool,
    gap: int,
    split: Callable[[int], float],
    down: bool = False,
) -> tuple[int, list[arb], arb, int]:
    """:func:`power_multires` with each partial sum held in two parts: a fine part (spacing 2^d)
    below ``split(k)`` (k = copies summed) and a coarse part (spacing 2^(d + gap)) for the rare
    values above it, so that the long, light tail of the partial sums costs short products.

    Products: fine x fine is computed on the fine lattice and its part at or above the split is
    moved to the coarse lattice; the cross terms (fine x coarse) and coarse x coarse are computed
    on the coarse lattice after moving the fine factor there. Every move to a coarser lattice is
    :func:`_halve_spread` (``spread``: a mean-preserving spread, E g only decreases for concave g)
    or :func:`_halve_up` (rounding up, E g only increases for nondecreasing g), applied to one
    summand (or one partial sum) conditionally on which part it came from, which is an
    independent randomisation given the value, so the argument of :func:`power_multires` holds
    term by term. Truncation at ``top`` and pruning below ``floor`` as there (``dropped``).
    Returns (offset, c, dropped, d) with c on spacing 2^d (the coarse part written into it).

    Contract: for every concave nondecreasing g, E g(sum) under the returned sub-measure is <=
    (spread) or >= (up to the truncated and pruned mass) E g under the exact sum; ``dropped``
    bounds the pruned mass. ``down`` (not ``spread``): the moves are :func:`coarsen_group_down`
    and :func:`_halve_down` (rounding down), and E g is <= that under the exact sum for every
    convex nondecreasing g >= 0. ``split`` and ``gap`` only change tightness and speed.
    """
    if n < 1:
        raise InvalidArgument(f"n={n} must be >= 1")
    if gap < 1:
        raise InvalidArgument(f"gap={gap} must be >= 1")
    fine_halve = coarsen_spread if spread else coarsen_group_down if down else coarsen_group
    coarse_halve = _halve_spread if spread else _halve_down if down else _halve_up
    dropped = [arb(0)]

    def lim(d: int) -> int:
        return top // (1 << d) + 1

    def to_coarse(off: int, p: arb_poly) -> tuple[int, arb_poly]:
        for _ in range(gap):
            off, p = coarse_halve(off, p)
        return off, p

    def settle(k: int, d: int, f_off: int, f: arb_poly, c: tuple[int, arb_poly]) -> tuple:
        """Split the fine part at split(k), truncate both parts at top, prune."""
        cut = max(0, min(len(f), math.ceil(split(k) / (1 << d)) - f_off))
        lst = f.coeffs()
        if cut < len(lst):
            c = _add_shifted(c, to_coarse(f_off + cut, arb_poly(lst[cut:])))
            f = arb_poly(lst[:cut])
        f_off, f = _prune(f_off, f.truncate(max(lim(d) - f_off, 0)), floor, dropped)
        c_off, cp = c
        c_off, cp = _prune(c_off, cp.truncate(max(lim(d + gap) - c_off, 0)), floor, dropped)
        return k, d, f_off, f, (c_off, cp)

    def halve(state: tuple) -> tuple:
        k, d, f_off, f, (c_off, cp) = state
        f_off, lst = fine_halve(f_off, f.coeffs())
        c = coarse_halve(c_off, cp)
        return settle(k, d + 1, f_off, arb_poly(lst), c)

    def mul(a: tuple, b: tuple) -> tuple:
        ka, d, fa_off, fa, ca = a
        kb, _, fb_off, fb, cb = b
        ll = lim(d)
        fine = (fa * fb).truncate(max(ll - fa_off - fb_off, 1))
        fa_c, fb_c = to_coarse(fa_off, fa), to_coarse(fb_off, fb)
        lc = lim(d + gap)
        coarse: tuple[int, arb_poly] = (0, arb_poly([]))
        for (o1, p1), (o2, p2) in ((fa_c, cb), (ca, fb_c), (ca, cb)):
            if len(p1) and len(p2):
                coarse = _add_shifted(coarse, (o1 + o2, (p1 * p2).truncate(max(lc - o1 - o2, 1))))
        return settle(ka + kb, d, fa_off + fb_off, fine, coarse)

    f0_off, f0 = 0, arb_poly(list(coeffs))
    base = settle(1, 0, f0_off, f0, (0, arb_poly([])))
    _, d, f_off, f, (c_off, cp) = coarsened_powering(base, n, doublings, halve, mul)
    off, merged = _add_shifted((f_off, f), (c_off << gap, _spaced(cp, 1 << gap)))
    out = merged.coeffs()
    return off, out[: max(lim(d) - off, 0)], dropped[0], d


def _spaced(p: arb_poly, step: int) -> arb_poly:
    """The masses of p placed every ``step`` positions (a coarse lattice written on the fine one)."""
    c = p.coeffs()
    if not c:
        return p
    out = [arb(0)] * ((len(c) - 1) * step + 1)
    out[::step] = c
    return arb_poly(out)
