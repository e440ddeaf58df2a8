"""Exact fixed-point powers and products of lattice pmfs: integers in units of 2^-bits, rounded
down after every product (FLINT's fmpz_poly; no ball radii at all).

Why: an arb_poly product carries a radius per coefficient and costs about 2.5x an fmpz_poly
product of the same length; with nonnegative coefficients, rounding every product down keeps
every coefficient below the exact one by induction, which the lower side needs, and the upper
side counts what the floors drop (less than one unit per coefficient) in one error term
(docs/math.md §10, "Exact fixed-point composition").

Contract of the module, for nonnegative masses a (the exact pmf, total <= 1):

- "up": the computed polynomial A and its error bound D (units) satisfy a^n <= A + E
  coefficient-wise for some E >= 0 of total mass <= D. Induction: the start is ceil(2^bits a);
  a product of (A, D_A) and (B, D_B) gives floor(A B / 2^bits), with D = (|A| D_B + D_A |B| +
  D_A D_B)/2^bits (rounded up; |A| = A(1), exact) + the length L of A B, since a^m a^k <=
  (A + E_A)(B + E_B), every term is >= 0, and each of the L floors misses less than one unit;
  pruning a piece P moves it from A to E (D += |P|).
- "down": a^n >= A coefficient-wise (floor of products of floors; pruning only lowers).

The powering loops call :func:`certdp.enclose.checkpoint` before each product, so a wall-time
budget can stop a long composition between two products.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from flint import arb, arb_poly, fmpz, fmpz_poly

from certdp.enclose.checkpoint import checkpoint
from certdp.enclose.work import product_cost
from certdp.errors import InvalidArgument, LimitExceeded

__all__ = [
    "FixedPoly",
    "coarsen_down",
    "coarsen_up",
    "fixed_add",
    "fixed_mul",
    "fixed_power",
    "fixed_power_coarsening",
    "fixed_product",
    "fixed_scale",
    "to_units",
    "weighted_tail",
]


@dataclass(frozen=True)
class FixedPoly:
    """Masses ``poly[i] / 2^bits`` at lattice index ``offset + i``; ``err`` (units, "up" only)
    bounds the total mass the polynomial may miss (module docstring)."""

    offset: int
    poly: fmpz_poly
    bits: int
    err: int = 0

    @classmethod
    def from_units(cls, offset: int, units: Sequence[int], bits: int) -> FixedPoly:
        """Contract: the FixedPoly of exact integer masses ``units`` at offset + i (err 0)."""
        return cls(offset, fmpz_poly(list(units)), bits)

    def total(self) -> int:
        """Contract: the exact sum of the coefficients (units)."""
        return int(self.poly(1)) if self.poly.length() else 0

    def coeffs(self) -> list[int]:
        """Contract: the coefficients as Python ints (units), exact."""
        return [int(c) for c in self.poly.coeffs()]


def to_units(masses: Sequence[arb], bits: int, up: bool) -> list[int]:
    """Integers in units of 2^-bits: ceil of each ball's upper end (``up``) or floor of its lower
    end, clamped at 0 (a mass is never negative).

    Contract: up: result[i] / 2^bits >= every point of masses[i]; down: <= every point of it
    (and >= 0 when the ball is >= 0; a ball reaching below 0 gives 0, which is <= its masses
    only if they are >= 0, as lattice masses are).
    """
    scale = arb(2) ** bits
    out = []
    for m in masses:
        x = m * scale  # exact: a power-of-two scaling
        end = x.upper().ceil() if up else x.lower().floor()
        v = int(end.unique_fmpz())
        out.append(max(v, 0))
    return out


def _prune(fp: FixedPoly, up: bool, allowance: int, weight: int) -> FixedPoly:
    """Drop end coefficients while their mass, times ``weight`` (the copies of this polynomial in
    the final power: it only steers how much is dropped), stays within ``allowance`` units per
    end; "up" adds the dropped mass to ``err``."""
    poly = fp.poly
    n = poly.length()
    if n <= 1 or allowance <= 0:
        return fp
    budget = allowance // weight  # acc * weight <= allowance  iff  acc <= allowance // weight
    # the k lowest coefficients are truncate(k), the k highest right_shift(n - k); their sums are
    # the values at 1, in C
    lo, acc = _prunable(lambda k: int(poly.truncate(k)(1)), n - 1, budget)
    cut, acc2 = _prunable(lambda k: int(poly.right_shift(n - k)(1)), n - lo - 1, budget)
    hi = n - cut
    if lo == 0 and hi == n:
        return fp
    kept = poly.truncate(hi).right_shift(lo) if lo else poly.truncate(hi)
    return FixedPoly(fp.offset + lo, kept, fp.bits, fp.err + (acc + acc2 if up else 0))


def _prunable(end_sum: Callable[[int], int], most: int, budget: int) -> tuple[int, int]:
    """The largest k <= ``most`` with end_sum(k) <= budget (end_sum nondecreasing: sums of the k
    end coefficients, all >= 0), and end_sum(k): galloping, then bisection, so a long run of small
    end coefficients costs O(log) sums evaluated in C instead of a Python loop over them."""
    good, good_sum, bad, step = 0, 0, None, 1
    while bad is None:
        k = min(most, good + step)
        if k <= good:
            return good, good_sum
        total = end_sum(k)
        if total > budget:
            bad = k
        else:
            good, good_sum = k, total
        step *= 2
    while bad - good > 1:
        mid = (good + bad) // 2
        total = end_sum(mid)
        if total <= budget:
            good, good_sum = mid, total
        else:
            bad = mid
    return good, good_sum


def _mul(a: FixedPoly, b: FixedPoly, up: bool, max_product: int | None, bits: int | None = None) -> FixedPoly:
    """The product, in units of 2^-bits (None: a's), rounded down; the upper side adds what the
    floors drop to its error (module docstring)."""
    length = a.poly.length() + b.poly.length()
    if max_product is not None and length > max_product:
        raise LimitExceeded(f"a power's product of {length} coefficients exceeds the limit {max_product}")
    checkpoint()
    product_cost(length, a.bits + b.bits + length.bit_length())  # counted and checked before it is formed
    target = a.bits if bits is None else min(bits, a.bits + b.bits)
    shift = a.bits + b.bits - target  # the product is in units of 2^-(a.bits + b.bits)
    prod = a.poly * b.poly
    # both sides round down: a coefficient's floor misses less than one unit, which the upper side
    # adds to its error (a ceiling would keep every true value below one unit at one unit: long
    # runs of them at the ends, which pruning has to remove, needing many bits below the floor)
    poly = _floor_div(prod, fmpz(1) << shift) if shift else prod
    if up:
        ta, tb = a.total(), b.total()
        raw = ta * b.err + a.err * tb + a.err * b.err
        err = -((-raw) // (1 << shift)) + (prod.length() if shift else 0)
    else:
        err = 0
    return FixedPoly(a.offset + b.offset, poly, target, err)


def _rescale(units: int, from_bits: int, to_bits: int) -> int:
    """An amount in units of 2^-from_bits in units of 2^-to_bits, rounded down (an allowance: it
    only steers how much is pruned)."""
    return units << (to_bits - from_bits) if to_bits >= from_bits else units >> (from_bits - to_bits)


def _floor_div(poly: fmpz_poly, unit: fmpz) -> fmpz_poly:
    """Coefficient-wise floor(c / unit) of a polynomial with coefficients >= 0 (unit >= 1).

    Why this form: python-flint's ``fmpz_poly // fmpz`` is FLINT's fmpz_poly_div by a constant,
    which returns 0 for |c| < unit and fdiv_q otherwise: the floor for c >= 0 only (a negative
    c in (-unit, 0) gives 0, not -1, so ``-((-P) // unit)`` is NOT a ceiling). Every caller here
    passes coefficients >= 0 (tests/unit/test_fixed_point.py checks the floor against Python
    integers)."""
    return poly // unit


def fixed_power(
    base: FixedPoly,
    n: int,
    up: bool,
    allowance: int = 0,
    max_product: int | None = None,
    bits_for: Callable[[int, int], int] | None = None,
) -> FixedPoly:
    """The n-th power of ``base`` by binary powering in fixed point, pruned after every product.

    Contract: "up": (n-th power of the exact pmf) <= poly + E, total(E) <= err units; "down":
    poly <= the n-th power of the exact pmf (module docstring). ``allowance`` (units of
    2^-base.bits) bounds the mass each prune drops at each end, weighted by how many copies of the
    pruned polynomial the final power contains (floor(n / 2^level); only tightness depends on
    it). ``bits_for(copies, length)`` (None: base.bits throughout) gives the units of each
    product from the copies of it in the final power and its length: what a product's floors
    drop is multiplied by those copies, so early squarings need more bits than the last, long
    ones (only tightness and speed depend on it). LimitExceeded before a product longer than
    ``max_product`` coefficients is formed.
    """
    # the same binary powering as fixed_power_coarsening, on one spacing throughout
    return fixed_power_coarsening(base, n, Fraction(1), None, allowance, max_product, bits_for, up)[0]


def fixed_product(
    factors: Sequence[FixedPoly],
    up: bool,
    allowance: int = 0,
    max_product: int | None = None,
    bits_for: Callable[[int, int], int] | None = None,
) -> FixedPoly:
    """The product of ``factors``, pruned after every product.

    Contract: as :func:`fixed_power`, for the product of the exact pmfs the factors bound
    (``allowance`` in units of 2^-factors[0].bits; each product counts as one copy).
    """
    if not factors:
        raise InvalidArgument("factors=[] must be non-empty")
    acc, ref = factors[0], factors[0].bits
    for f in factors[1:]:
        length = acc.poly.length() + f.poly.length() - 1
        prod = _mul(acc, f, up, max_product, None if bits_for is None else bits_for(1, length))
        acc = _prune(prod, up, _rescale(allowance, ref, prod.bits), 1)
    return acc


def fixed_mul(
    a: FixedPoly, b: FixedPoly, up: bool, max_product: int | None = None, bits: int | None = None
) -> FixedPoly:
    """One product, in units of 2^-bits (None: a's), rounded down (the upper side counts the
    floors in its error).

    Contract: as :func:`fixed_power` for the product of the exact pmfs a and b bound."""
    return _mul(a, b, up, max_product, bits)


def fixed_add(a: FixedPoly, b: FixedPoly) -> FixedPoly:
    """The sum of two polynomials on one grid (offsets aligned), in the finer of their units
    (the coarser one is scaled exactly), errors added.

    Contract: exact (integer additions and shifts); "up": a + b's exact counterparts <= sum + E,
    total(E) <= a.err + b.err (in the sum's units)."""
    bits = max(a.bits, b.bits)
    a, b = _finer(a, bits), _finer(b, bits)
    lo = min(a.offset, b.offset)
    pa = a.poly.left_shift(a.offset - lo) if a.offset > lo else a.poly
    pb = b.poly.left_shift(b.offset - lo) if b.offset > lo else b.poly
    return FixedPoly(lo, pa + pb, bits, a.err + b.err)


def _finer(a: FixedPoly, bits: int) -> FixedPoly:
    """a in units of 2^-bits (bits >= a.bits): coefficients and error times 2^(bits - a.bits), exact."""
    if bits == a.bits:
        return a
    k = bits - a.bits
    return FixedPoly(a.offset, a.poly * (fmpz(1) << k), bits, a.err << k)


def fixed_scale(a: FixedPoly, k: int) -> FixedPoly:
    """k times a polynomial (k >= 0), error scaled too.

    Contract: exact."""
    if k < 0:
        raise InvalidArgument(f"k={k} must be >= 0")
    return FixedPoly(a.offset, a.poly * k, a.bits, a.err * k)


def weighted_tail(coeffs: Sequence[int], start: int, ratio: arb) -> arb:
    """sum_{k >= start} coeffs[k] ratio^(k - start), in Arb (exact integer coefficients).

    Contract: contains the sum (Arb's polynomial evaluation is rigorous)."""
    if start >= len(coeffs):
        return arb(0)
    return arb_poly(list(coeffs[start:]))(ratio)


#: the weights of :func:`coarsen_up` are integers in units of 2^-COARSEN_WEIGHT_BITS
COARSEN_WEIGHT_BITS = 64


def _split_weights(h: Fraction, r: int) -> tuple[list[int], list[int]]:
    """(W, V): W[k] >= 2^B phi_k and V[k] >= 2^B (1 - phi_k), k = 0..r-1, B =
    COARSEN_WEIGHT_BITS, for phi_k = (e^{-kh} - e^{-rh})/(1 - e^{-rh}): the share of an atom at
    loss a + kh that mass splitting puts at a (the rest goes to a + rh). Exact at k = 0 (1, 0)."""
    hb = arb(h.numerator) / h.denominator
    top = (-(r * hb)).exp()
    den = 1 - top
    unit = arb(2) ** COARSEN_WEIGHT_BITS
    w, v = [1 << COARSEN_WEIGHT_BITS], [0]
    for k in range(1, r):
        ek = (-(k * hb)).exp()
        w.append(int(((ek - top) / den * unit).upper().ceil().unique_fmpz()))
        v.append(int(((1 - ek) / den * unit).upper().ceil().unique_fmpz()))
    return w, v


def coarsen_up(fp: FixedPoly, h: Fraction, r: int) -> FixedPoly:
    """The upper side's coarsening of a lattice pmf of spacing h (index i: loss shift + i h) onto
    spacing r h (index J: loss shift + J r h) by mass splitting: an atom at a + k h, a = J r h,
    0 < k < r, goes to a with the share phi_k of :func:`_split_weights` and to a + r h with the
    rest, which keeps its P-mass and its Q-mass (e^{-loss} times P), so the fine pair is a
    post-processing of the coarse one (docs/math.md §10, "Coarsening the partial powers").

    Contract: "up": if (exact) <= fp.poly + E with total(E) <= fp.err, then C(exact) <= result
    + E' with total(E') <= result.err, C the exact splitting (linear, nonnegative, keeps total
    mass: C(E) has E's total); the integer weights are rounded up and the coarse sums rounded
    down, one unit per coarse coefficient added to err.
    """
    if r < 2:
        return fp
    w, v = _split_weights(h, r)
    # kernel: sum_k W_k x^(r-1-k) + sum_k V_k x^(2r-1-k); then coefficient (J r - o') + r - 1 of
    # A K holds coarse J (the W share of atoms J r + k and the V share of atoms (J-1) r + k)
    kernel = fmpz_poly([w[r - 1 - m] if m < r else v[2 * r - 1 - m] for m in range(2 * r)])
    aligned = (fp.offset // r) * r
    a = fp.poly.left_shift(fp.offset - aligned) if fp.offset > aligned else fp.poly
    checkpoint()
    product_cost(a.length() + 2 * r, fp.bits + COARSEN_WEIGHT_BITS + 2 * r.bit_length())
    sums = (a * kernel).right_shift(r - 1).deflate(r)
    poly = _floor_div(sums, fmpz(1) << COARSEN_WEIGHT_BITS)
    return FixedPoly(aligned // r, poly, fp.bits, fp.err + poly.length())


#: the fractions of :func:`coarsen_down` are integers over 2^FRACTION_BITS
FRACTION_BITS = 30


def _balance_constants(h: Fraction) -> tuple[int, int, int]:
    """(alpha, beta, K): alpha / 2^K <= 1 - e^{-h} and beta / 2^K >= e^h - 1 (Arb, directed)."""
    k = 96 + max(0, h.denominator.bit_length() - h.numerator.bit_length())
    hb = arb(h.numerator) / h.denominator
    unit = arb(2) ** k
    alpha = int(((-(-hb).expm1()) * unit).lower().floor().unique_fmpz())
    beta = int((hb.expm1() * unit).upper().ceil().unique_fmpz())
    return alpha, beta, k


def coarsen_down(fp: FixedPoly, h: Fraction) -> FixedPoly:
    """The lower side's coarsening of a lattice pmf of spacing h onto spacing 2h (index J: the
    loss of fine index 2J) by balanced groups: group J holds the atom at 2J, the fraction y_J of
    the atom at 2J - 1 (loss below its point) and what the group above left of the atom at 2J + 1
    (at least x = 1 - y, loss above its point); y_J = y (y / x = e^{-h}, which balances a flat
    pmf), lowered where the atom below outweighs the one above, so that
    x c_{2J+1} (1 - e^{-h}) >= y_J c_{2J-1} (e^h - 1) holds exactly (integers): the group's loss
    log(P_g / Q_g) is then >= its point. Groups are a post-processing, and putting each at its
    point with its P-mass (rounded down) lowers every delta (docs/math.md §10, "Coarsening the
    partial powers"). What a lowered y_J leaves of its atom stays with the group above it (the
    group below the atom), at a loss of h on a mass that is first order in h for a smooth pmf:
    second order there (a pmf that is not smooth on the scale of h, such as one step's near a hard
    edge of the loss, loses first order: the callers coarsen partial powers of many steps only).

    Contract: "down": if fp.poly <= the P-masses of a lattice pair dominated by (P, Q)
    coefficient-wise, the result is <= those of a coarser pair dominated by it (err 0).
    """
    one = 1 << FRACTION_BITS
    alpha, beta, _ = _balance_constants(h)
    e = (-(arb(h.numerator) / h.denominator)).exp()
    y_nom = int((e / (1 + e) * one).lower().floor().unique_fmpz())  # any y in [0, 1] is sound
    x_nom = one - y_nom
    aligned = fp.offset - (fp.offset % 2)
    c = [0] * (fp.offset - aligned) + fp.coeffs()
    if len(c) % 2 == 0:
        c.append(0)  # end on a coarse point
    evens, odds = c[0::2], c[1::2]  # odds[J] is the atom between coarse J and J + 1
    groups = len(evens)
    ys = [0] * (groups + 1)  # ys[J]: the fraction of odds[J - 1] in group J; none above the top
    for j in range(1, groups):
        below = odds[j - 1]
        if below == 0:
            continue
        need = below * beta
        have = x_nom * (odds[j] if j < len(odds) else 0) * alpha
        # exact: ys[j] * need <= have, so the group's loss is >= its point
        ys[j] = y_nom if y_nom * need <= have else have // need
    out = []
    for j in range(groups):
        above = odds[j] if j < len(odds) else 0
        below = odds[j - 1] if j >= 1 else 0
        out.append((evens[j] << FRACTION_BITS) + (one - ys[j + 1]) * above + ys[j] * below >> FRACTION_BITS)
    return FixedPoly(aligned // 2, fmpz_poly(out), fp.bits, 0)


#: a partial power moves only when no coefficient holds more than 2^-SPREAD_BITS of its mass
SPREAD_BITS = 6


def _spread(fp: FixedPoly) -> bool:
    """Whether no coefficient holds more than 2^-SPREAD_BITS of the total (exact integers: the
    bit length of the largest against the total's). Why: at small q the power of 2^j steps with
    2^j q << 1 is one spike (the steps that sampled nothing, within a cell of each other) plus
    little else; moving it costs the splitting's full (R h)^2/4 on most of the mass and the
    balanced groups a first-order loss (attack review: q = 1e-5, sigma = 0.5, 10^5 steps at
    h = 2^-13 had a lower end 0.007 below the one-spacing one)."""
    total = fp.total()
    return total > 0 and fp.poly.height_bits() <= total.bit_length() - 1 - SPREAD_BITS


def _move(fp: FixedPoly, h: Fraction, up: bool) -> FixedPoly:
    """fp (spacing h) on spacing 2h: splitting (upper side) or balanced groups (lower side)."""
    return coarsen_up(fp, h, 2) if up else coarsen_down(fp, h)


def fixed_power_coarsening(
    base: FixedPoly,
    n: int,
    h: Fraction,
    coarse_from: int | None,
    allowance: int = 0,
    max_product: int | None = None,
    bits_for: Callable[[int, int], int] | None = None,
    up: bool = True,
) -> tuple[FixedPoly, int]:
    """The n-th power of ``base`` (spacing h) as :func:`fixed_power`, with the partial powers moved
    to coarser lattices as they spread: after the square that forms the power of 2^j steps, the
    spacing is doubled (:func:`coarsen_up` or :func:`coarsen_down` of the square and of the
    accumulated product: splitting for the upper side, balanced groups for the lower) whenever
    (2 R)^2 <= 2^j / coarse_from, R the current factor, and the square is spread out
    (:func:`_spread`: no spike); coarse_from None: never (:func:`fixed_power`). Returns
    (power, R): the power's index J is at loss J R h.

    Why: the splitting adds at most (R h)^2/4 of variance per copy of the partial power, and the
    final power holds n / 2^j copies of it: with (2 R)^2 <= 2^j / coarse_from each doubling adds
    about 1/coarse_from of what the one-step lattice's own splitting adds (n copies of h^2/4),
    while every later product is 2x shorter (docs/math.md §10, "Coarsening the partial powers").

    Contract: as :func:`fixed_power`'s for the n-th power of the pair that the base bounds,
    coarsened: "up", a pair that dominates it; "down", one that it dominates.
    """
    if n < 1:
        raise InvalidArgument(f"n={n} must be >= 1")
    ref = base.bits

    def prune(fp: FixedPoly, weight: int) -> FixedPoly:
        return _prune(fp, up, _rescale(allowance, ref, fp.bits), weight)

    def mul(x: FixedPoly, y: FixedPoly, copies: int) -> FixedPoly:
        length = x.poly.length() + y.poly.length() - 1
        return _mul(x, y, up, max_product, None if bits_for is None else bits_for(copies, length))

    copies, level, scale = n, 0, 1
    acc: FixedPoly | None = None
    cur = prune(base, copies)
    while n:
        if n & 1:
            acc = cur if acc is None else prune(mul(acc, cur, 1), 1)
        n >>= 1
        if n:
            level += 1
            cur = prune(mul(cur, cur, copies >> level), copies >> level)
            if coarse_from is not None and (2 * scale) ** 2 * coarse_from <= 1 << level and _spread(cur):
                cur = prune(_move(cur, h * scale, up), copies >> level)
                if acc is not None:
                    acc = prune(_move(acc, h * scale, up), 1)
                scale *= 2
    assert acc is not None
    return acc, scale
