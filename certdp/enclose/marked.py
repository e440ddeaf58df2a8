"""Marked powers: the laws of an additive statistic of n coordinates, k of them drawn from a
second law, with the statistic's index merged two-to-one whenever it grows long; exact integers
in units of 2^-bits, rounded down (the marked laws) or up (the unmarked law).

Setting: n independent coordinates, each mapped to an integer index a(x_i) in [0, A]; coordinate i
has index law ``mu`` (masses mu[j] at j) or, when it is *marked*, ``nu``. The statistic is the sum
of the indices, except that a partial sum may be merged, w -> floor(w / 2), before it is added to
another. The merge schedule depends only on A, n and ``max_len`` (nominal lengths, never the
data), so the statistic is one deterministic function F(x), the same whichever coordinates are
marked.

Its laws come from one bivariate power: (mu(t) + z nu(t))^n, truncated at degree k in z, with every
merge applied to all z-coefficients alike (merging is linear on measures). The coefficient of z^c
is the sum, over the C(n, c) sets S of c marked coordinates, of the law of F under "S marked":
z^0 is the law with nothing marked, and z^k / C(n, k) the law when a uniformly random k-set is
marked (random allocation's P, docs/math.md §9.8, "k > 1: the lower end").

Contract of the module, for masses mu, nu >= 0 that the input balls contain: the "down" rows are
<= the exact coefficients (floors of the balls' lower ends, every product floored: nonnegative
terms, induction), the "up" row 0 is >= the exact law of F with nothing marked (ceilings
throughout). Only z-degrees above k are not formed (a coefficient of z^c depends on degrees <= c
alone); no index is dropped. The powering calls :func:`certdp.enclose.checkpoint` and charges
:func:`certdp.enclose.work.product_cost` before each product.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from flint import arb, fmpz, fmpz_poly

from certdp.enclose.checkpoint import checkpoint
from certdp.enclose.fixed import to_units
from certdp.enclose.work import product_cost
from certdp.errors import InvalidArgument, LimitExceeded

__all__ = ["MarkedLaws", "marked_power"]


@dataclass(frozen=True)
class MarkedLaws:
    """rows_down[c][w] / 2^bits <= the z^c coefficient at index w <= rows_up[c][w] / 2^bits
    (c = 0..k; rows_up only for the degrees asked); indices in units of 2^merges of the
    coordinates' index."""

    rows_down: list[list[int]]
    rows_up: list[list[int]]
    bits: int
    merges: int


@dataclass
class _State:
    rows: list[fmpz_poly]  # z-coefficients, rounded down
    up: list[fmpz_poly]  # z-coefficients 0..len(up) - 1, rounded up
    top: int  # the nominal largest index (every coefficient up to it may be nonzero)
    merges: int


def _merge_poly(p: fmpz_poly) -> fmpz_poly:
    """Index w -> floor(w / 2): the coefficients of 2J and 2J + 1 added into J (exact)."""
    if p.length() == 0:
        return p
    # coefficient 2J + 1 of p (1 + t) is c_{2J} + c_{2J+1}
    return (p * fmpz_poly([1, 1])).right_shift(1).deflate(2) if p.length() > 1 else p


def _merge(s: _State) -> _State:
    return _State([_merge_poly(p) for p in s.rows], [_merge_poly(p) for p in s.up], s.top // 2, s.merges + 1)


def _floor_shift(p: fmpz_poly, shift: int) -> fmpz_poly:
    """floor(c / 2^shift) coefficient-wise (coefficients >= 0)."""
    return p // (fmpz(1) << shift) if shift else p


def _ceil_shift(p: fmpz_poly, shift: int) -> fmpz_poly:
    """ceil(c / 2^shift) coefficient-wise (coefficients >= 0): floor((c + 2^shift - 1) / 2^shift)."""
    n = p.length()
    if not shift or n == 0:
        return p
    return (p + fmpz_poly([(1 << shift) - 1] * n)) // (fmpz(1) << shift)


def _conv(a: list[fmpz_poly], b: list[fmpz_poly], c: int, square: bool, cost: int, bits: int) -> fmpz_poly:
    """The exact z^c coefficient sum_i a_i b_(c-i) (a square counts each pair once, doubled)."""
    total = fmpz_poly([])
    for i in range(c + 1):
        j = c - i
        if square and i > j:
            continue  # counted twice at (j, i)
        product_cost(cost, 2 * bits + cost.bit_length())
        term = a[i] * b[j]
        total += term * 2 if square and i < j else term
    return total


def _mul(a: _State, b: _State, k: int, bits: int, max_product: int | None) -> _State:
    """z-degrees 0..k of the product of two marked laws at the same merges (indices add): one
    floor per coefficient of the down rows, one ceiling per coefficient of the up rows."""
    length = a.top + b.top + 1
    if max_product is not None and length > max_product:
        raise LimitExceeded(f"a marked power's product of {length} coefficients exceeds the limit {max_product}")
    checkpoint()
    square = a is b
    rows = [_floor_shift(_conv(a.rows, b.rows, c, square, length, bits), bits) for c in range(k + 1)]
    up = [_ceil_shift(_conv(a.up, b.up, c, square, length, bits), bits) for c in range(len(a.up))]
    return _State(rows, up, a.top + b.top, a.merges)


def marked_power(
    mu: Sequence[arb],
    nu: Sequence[arb],
    n: int,
    k: int,
    bits: int,
    max_len: int,
    max_product: int | None = None,
    up_degrees: int = 1,
) -> MarkedLaws:
    """The z^0..z^k coefficients of (mu(t) + z nu(t))^n in fixed point by binary powering: a
    partial power is merged two-to-one (w -> floor(w / 2), all rows alike) while its nominal
    length exceeds ``max_len`` before it is squared, the finer factor is merged to the other's
    merges before each product, and the accumulated product is merged while its nominal length
    exceeds ``max_len`` after it (nominal: the largest index the indices can reach, from A = len(mu)
    - 1 and the schedule alone, so the schedule never depends on the masses).

    Contract: rows_down[c] / 2^bits <= the exact z^c coefficients of the statistic F's laws (c =
    0..k) <= rows_up[c] / 2^bits (c < ``up_degrees``: 1 gives z^0 only, k + 1 every degree), for
    masses in the balls (module docstring); 0 <= k <= n, n >= 1, max_len >= 2, 1 <= up_degrees
    <= k + 1, len(mu) == len(nu) >= 1, else InvalidArgument;
    LimitExceeded before a product longer than ``max_product`` is formed.
    """
    if n < 1:
        raise InvalidArgument(f"n={n} must be >= 1")
    if not 0 <= k <= n:
        raise InvalidArgument(f"k={k} must be in [0, n={n}]")
    if max_len < 2:
        raise InvalidArgument(f"max_len={max_len} must be >= 2")
    if len(mu) != len(nu) or not mu:
        raise InvalidArgument(f"mu and nu must have one mass per index (got {len(mu)} and {len(nu)})")
    if not 1 <= up_degrees <= k + 1:
        raise InvalidArgument(f"up_degrees={up_degrees} must be in [1, k + 1 = {k + 1}]")

    def start(up: bool, degrees: int) -> list[fmpz_poly]:
        rows = [fmpz_poly(to_units(mu, bits, up=up)), fmpz_poly(to_units(nu, bits, up=up))]
        return (rows + [fmpz_poly([]) for _ in range(degrees)])[:degrees]

    base = _State(start(False, k + 1), start(True, up_degrees), len(mu) - 1, 0)
    result: _State | None = None
    while n:
        checkpoint()
        while base.top + 1 > max_len:
            base = _merge(base)
        if n & 1:
            if result is None:
                result = base
            else:
                while result.merges < base.merges:
                    result = _merge(result)
                while base.merges < result.merges:
                    base = _merge(base)
                result = _mul(result, base, k, bits, max_product)
                while result.top + 1 > max_len:
                    result = _merge(result)
        n >>= 1
        if n:
            while 2 * base.top + 1 > max_len:
                base = _merge(base)
            base = _mul(base, base, k, bits, max_product)
    assert result is not None
    down = [[int(c) for c in p.coeffs()] for p in result.rows]
    return MarkedLaws(down, [[int(c) for c in p.coeffs()] for p in result.up], bits, result.merges)
