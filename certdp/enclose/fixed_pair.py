"""Exact fixed-point powers of a *merged pair*: the P- and the Q-masses of the cells of a
post-processing, composed side by side (FLINT's fmpz_poly; docs/math.md §10, "The lower bound by
merged cells").

Why: index k of a composed pair of cell masses holds every outcome whose cell indices add up to
k. Merging outcomes is a post-processing, so sum_k (P_k - e^eps Q_k)_+ of the composed masses is
at most the true delta_n(eps), with no rounding of losses to lattice points (the balancing of
certdp.notions.pld_lattice loses where the loss has a hard edge; merging only loses the Jensen
term, second order). Dropping an index from both arrays restricts both measures to one event,
which only lowers that sum (each (x)_+ dropped is >= 0, and merging never raises it).

Contract of the module, for the exact merged sub-pair (P~, Q~) that a FixedPair bounds:

- ``p`` <= P~ coefficient-wise (floors of products of floors);
- Q~ <= ``q`` + E coefficient-wise for some E >= 0 of total mass <= ``q_err`` units (the "up"
  fixed-point invariant of certdp.enclose.fixed: every floor misses less than one unit);
- pruning and coarsening act on both arrays alike (restriction to an event; merging pairs of
  indices), so the invariants hold for the restricted or merged exact pair.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from flint import arb, fmpz_poly

from certdp.enclose.fixed import FixedPoly, _mul, _prunable, _rescale, _spread, fixed_add, fixed_scale, to_units
from certdp.errors import InvalidArgument

__all__ = [
    "FixedPair",
    "merge_times",
    "merge_two",
    "pair_add",
    "pair_from_masses",
    "pair_mul",
    "pair_power",
    "pair_product",
    "pair_scale",
]


@dataclass(frozen=True)
class FixedPair:
    """P-masses ``p.poly[i] / 2^bits`` and Q-masses ``q.poly[i] / 2^bits`` at merged index
    ``offset + i`` (p and q share offset and bits; q.err bounds what q may miss)."""

    p: FixedPoly
    q: FixedPoly

    def __post_init__(self) -> None:
        if self.p.offset != self.q.offset or self.p.bits != self.q.bits:
            raise InvalidArgument("a merged pair's two arrays must share offset and units")

    @property
    def offset(self) -> int:
        """Contract: the index of the first coefficient of both arrays (exact)."""
        return self.p.offset

    @property
    def bits(self) -> int:
        """Contract: the units 2^-bits of both arrays."""
        return self.p.bits

    def length(self) -> int:
        """Contract: the longer array's length."""
        return max(self.p.poly.length(), self.q.poly.length())

    def suffix(self, j: int) -> tuple[int, int]:
        """Contract: the exact sums of p's and q's coefficients at positions >= j (units)."""
        return _suffix(self.p.poly, j), _suffix(self.q.poly, j)


def _suffix(poly: fmpz_poly, j: int) -> int:
    n = poly.length()
    if j >= n:
        return 0
    return int((poly.right_shift(j) if j > 0 else poly)(1))


def pair_from_masses(offset: int, p: Sequence[arb], q: Sequence[arb], bits: int) -> FixedPair:
    """Contract: p rounded down (floor of each ball's lower end, >= 0) and q rounded up (ceil of
    its upper end): p <= the P-masses and the Q-masses <= q for masses the balls contain (err 0)."""
    if len(p) != len(q):
        raise InvalidArgument(f"p and q must have one mass per cell (got {len(p)} and {len(q)})")
    return FixedPair(
        FixedPoly.from_units(offset, to_units(p, bits, up=False), bits),
        FixedPoly.from_units(offset, to_units(q, bits, up=True), bits),
    )


def pair_mul(a: FixedPair, b: FixedPair, max_product: int | None = None, bits: int | None = None) -> FixedPair:
    """The merged pair of the composition of a and b (indices add), in units of 2^-bits.

    Contract: as the module's, for the product of the exact pairs a and b bound (P products
    rounded down; Q products rounded down with their floors and the factors' errors in q.err).
    LimitExceeded before a product longer than ``max_product`` coefficients is formed."""
    return FixedPair(_mul(a.p, b.p, False, max_product, bits), _mul(a.q, b.q, True, max_product, bits))


def pair_add(a: FixedPair, b: FixedPair) -> FixedPair:
    """Contract: exact sum of two merged pairs (a mixture of disjoint events: merging is a
    post-processing of their union); q errors added."""
    return FixedPair(fixed_add(a.p, b.p), fixed_add(a.q, b.q))


def pair_scale(a: FixedPair, k: int) -> FixedPair:
    """Contract: k times both arrays and q's error (exact)."""
    return FixedPair(fixed_scale(a.p, k), fixed_scale(a.q, k))


def _prune_pair(fp: FixedPair, allowance: int, weight: int) -> FixedPair:
    """Drop the end indices whose P-mass, times ``weight``, stays within ``allowance`` units per
    end, from both arrays (a restriction: module docstring), and the Q coefficients beyond P's
    last nonzero one at either end (indices with no P-mass never raise the sum)."""
    p, q = fp.p.poly, fp.q.poly
    n = p.length()
    if n == 0:
        return FixedPair(
            FixedPoly(fp.offset, fmpz_poly([]), fp.bits, 0), FixedPoly(fp.offset, fmpz_poly([]), fp.bits, fp.q.err)
        )
    lo, hi = 0, n
    if n > 1 and allowance > 0:
        budget = allowance // weight
        lo, _ = _prunable(lambda k: int(p.truncate(k)(1)), n - 1, budget)
        cut, _ = _prunable(lambda k: int(p.right_shift(n - k)(1)), n - lo - 1, budget)
        hi = n - cut
    # p's trailing zeros are not stored (fmpz_poly normalises), so hi <= n cuts q's longer tail too
    kp = p.truncate(hi).right_shift(lo) if lo else p.truncate(hi)
    kq = q.truncate(hi).right_shift(lo) if lo else q.truncate(hi)
    return FixedPair(FixedPoly(fp.offset + lo, kp, fp.bits, 0), FixedPoly(fp.offset + lo, kq, fp.bits, fp.q.err))


def merge_two(fp: FixedPair) -> FixedPair:
    """Merge the indices 2J and 2J + 1 into J, in both arrays (a post-processing; exact integer
    sums, q's error unchanged).

    Contract: the module's invariants hold for the merged exact pair."""

    def merged(poly: fmpz_poly, offset: int) -> fmpz_poly:
        if offset % 2:  # index offset is odd: it pairs with offset - 1
            poly = poly.left_shift(1)
        return (poly * fmpz_poly([1, 1])).right_shift(1).deflate(2) if poly.length() > 1 else poly

    aligned = fp.offset - (fp.offset % 2)
    p = merged(fp.p.poly, fp.offset)
    q = merged(fp.q.poly, fp.offset)
    return FixedPair(FixedPoly(aligned // 2, p, fp.bits, 0), FixedPoly(aligned // 2, q, fp.bits, fp.q.err))


def pair_power(
    base: FixedPair,
    n: int,
    coarse_from: int | None,
    allowance: int = 0,
    max_product: int | None = None,
    bits_for: Callable[[int, int], int] | None = None,
) -> tuple[FixedPair, int]:
    """The n-th power of a merged pair by binary powering, pruned after every product; with
    ``coarse_from``, the partial powers are merged onto 2x coarser index grids as they spread
    (the rule of certdp.enclose.fixed.fixed_power_coarsening: after the square forming the power
    of 2^j steps, when (2 R)^2 <= 2^j / coarse_from and the square has no spike). Returns
    (power, R): index J of the power holds the merged indices J R .. J R + R - 1 of the plain
    power.

    Contract: the module's invariants for the n-th composition of the exact pair the base
    bounds, restricted and merged. ``allowance`` (units of 2^-base.bits) and ``bits_for``
    steer tightness and speed only, as in certdp.enclose.fixed.fixed_power.
    """
    if n < 1:
        raise InvalidArgument(f"n={n} must be >= 1")
    ref = base.bits

    def prune(fp: FixedPair, weight: int) -> FixedPair:
        return _prune_pair(fp, _rescale(allowance, ref, fp.bits), weight)

    def mul(x: FixedPair, y: FixedPair, copies: int) -> FixedPair:
        length = x.length() + y.length() - 1
        return pair_mul(x, y, max_product, None if bits_for is None else bits_for(copies, length))

    copies, level, scale = n, 0, 1
    acc: FixedPair | None = None
    cur = prune(base, copies)
    while n:
        if n & 1:
            acc = cur if acc is None else prune(mul(acc, cur, 1), 1)
        n >>= 1
        if n:
            level += 1
            cur = prune(mul(cur, cur, copies >> level), copies >> level)
            if coarse_from is not None and (2 * scale) ** 2 * coarse_from <= 1 << level and _spread(cur.p):
                cur = prune(merge_two(cur), copies >> level)
                if acc is not None:
                    acc = prune(merge_two(acc), 1)
                scale *= 2
    assert acc is not None
    return acc, scale


def merge_times(fp: FixedPair, times: int) -> FixedPair:
    """Contract: ``times`` rounds of :func:`merge_two` (index J holds 2^times consecutive ones)."""
    for _ in range(times):
        fp = merge_two(fp)
    return fp


def pair_product(
    factors: Sequence[FixedPair],
    allowance: int = 0,
    max_product: int | None = None,
    bits_for: Callable[[int, int], int] | None = None,
) -> FixedPair:
    """Contract: the module's invariants for the composition of the exact pairs the factors
    bound (one copy each; pruned after every product)."""
    if not factors:
        raise InvalidArgument("factors=[] must be non-empty")
    acc, ref = factors[0], factors[0].bits
    for f in factors[1:]:
        length = acc.length() + f.length() - 1
        acc = pair_mul(acc, f, max_product, None if bits_for is None else bits_for(1, length))
        acc = _prune_pair(acc, _rescale(allowance, ref, acc.bits), 1)
    return acc
