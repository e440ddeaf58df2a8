"""Certified hockey-stick curves of compositions on a loss lattice (a certified PLD accountant;
docs/math.md §10).

delta(eps) = E_P[g_eps(L)], g_eps(x) = (1 - e^{eps - x})_+ (nondecreasing, g(+inf) = 1), and for
n independent steps L = L_1 + ... + L_n under the product of the P_i.

**Upper bound: a dominating pair on the lattice hZ (mass splitting).** Cut the outputs by loss
into the cells (a, b] = ((k-1)h, kh], lo < k <= hi. Inside a cell, split every output x into a
share with loss a and one with loss b that keep its P- and Q-mass: p_a + p_b = P(x) and
p_a e^{-a} + p_b e^{-b} = Q(x), both >= 0 because e^{-L(x)} is in [e^{-b}, e^{-a}]. Merging the
shares of a cell needs only its totals p = P(cell), w = Q(cell):

    alpha_a = (w - p e^{-b})/(e^{-a} - e^{-b}),   alpha_b = p - alpha_a   (both in [0, p]).

The original pair is a post-processing of the lattice pair (from an atom, emit x with probability
share(x)/atom: the same kernel under P and Q), so the lattice pair has a larger delta at every
eps, and so do its n-fold products. The ends: the cell (-inf, lo h] becomes an atom at lo h with
its P-mass (its Q-mass is >= e^{-lo h} times that; the rest goes to a Q-only atom at -inf), and
(hi h, inf) becomes a P-only atom at +inf (its Q-mass a Q-only atom). Both are again
post-processing steps. The n-fold power of the finite part is formed in Arb
(certdp.enclose.power_pruned; pruned mass is bounded and counted as if it had g = 1), and

    delta_n(eps) <= sum_k c_k g_eps(kh) + pruned + 1 - (1 - p_inf)^n.

The error is second order in h (splitting adds variance <= h^2/4 per step).

**Lower bound by merged cells** (certdp.notions.pld_merged; LOWER_SIDE = "merged"): the
composed P- and Q-masses of the loss cells, a post-processing, give
delta_n(eps) >= sum_{k >= j} (P_k - e^eps Q_k) for every j (docs/math.md §10).

**Lower bound: a dominated pair by balancing** (:func:`lower_lattice_pmf`; docs/math.md §10; what
calibrations and certificates record).
Cells are split at random between groups that sit on the lattice points (a post-processing), with
fractions checked in ball arithmetic so that every group's loss is >= its lattice point; lowering
the losses to the lattice then lowers every delta of the composition. Where the two balancing
sweeps meet, the cell is cut at a loss instead (contiguous pieces), and the lattice offset is
tuned in floats so that little stays unbalanced (:func:`choose_offset`): second order in h.

Measured at q = 0.01, sigma = 0.8, 500 steps, delta = 1e-5 (remove): the certified eps is in
[2.3993301, 2.3994916] at h = 2^-11 (relative width 6.7e-5) and [2.3994062, 2.3994508] at 2^-12
(docs/math.md §10).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from certdp.enclose import Ball, Enclosure, current_prec, power_pruned, product_pruned, to_ball, workprec
from certdp.enclose.ball import readable_repr
from certdp.errors import InvalidArgument, LimitExceeded, PrecisionExhausted, fmt_value, invalid
from certdp.notions.cost import afford_round
from certdp.notions.pld_fixed import FixedComposed, compose_fixed, compose_split, eps_lower_fixed, eps_upper_fixed
from certdp.notions.pld_grid import (
    ATOMIC_CELLS,
    AUTO_MIN_CELLS,
    DEFAULT_H,
    MIN_AUTO_H,
    Part,
    aligned_spacing,
    atom_gap,
    auto_h,
    common_grid,
    directions,
    offset_lattice,
    part_lattices,
    tuned_lattice,
)
from certdp.notions.pld_lattice import (
    MAX_CELLS,
    Cells,
    LatticePmf,
    LossLattice,
    _cell_masses,
    choose_offset,
    lattice_for,
    lower_lattice_pmf,
    tuned_offset,
    upper_lattice_pmf,
)
from certdp.notions.pld_merged import (
    MergedComposed,
    compose_merged,
    compose_split_merged,
    merged_step,
    merged_tail_step,
    q_extra_bits,
)
from certdp.notions.pld_split import (
    MAX_EXTENT,
    SplitLattice,
    TailCells,
    bulk_bits,
    split_lattice,
    tail_cells,
    tail_pmf,
)
from certdp.pairs import PrivacyPair
from certdp.pairs.params import exact_str, real

__all__ = [
    "ATOMIC_CELLS",
    "AUTO_MIN_CELLS",
    "COARSE_FACTOR",
    "DEFAULT_H",
    "DEFAULT_REL_WIDTH",
    "MAX_CALIBRATION_STEPS",
    "MAX_CELLS",
    "MAX_LOSS",
    "MAX_PARTS",
    "MAX_REFINE_PRODUCT",
    "MAX_REFINE_ROUNDS",
    "MAX_REFINE_STEP",
    "MAX_STEPS",
    "MIN_AUTO_H",
    "PROBE_FACTOR",
    "PRUNE_FLOOR",
    "REFINE_SAFETY",
    "Composed",
    "LatticeBounds",
    "LatticePmf",
    "LossLattice",
    "Part",
    "PldResult",
    "aligned_spacing",
    "atom_gap",
    "auto_h",
    "choose_offset",
    "common_grid",
    "compose",
    "compose_parts",
    "default_spacing",
    "delta_upper",
    "directions",
    "eps_lower",
    "eps_upper",
    "lattice_for",
    "lattice_record",
    "lower_lattice_pmf",
    "offset_lattice",
    "part_lattices",
    "pld_bounds",
    "refined_h",
    "resolution",
    "side_bounds",
    "tuned_lattice",
    "upper_lattice_pmf",
]


#: most composed steps of the lattice accountant (the powers' lengths grow about as their square
#: root; beyond, RDP is the accountant to use)
MAX_STEPS = 10**6

#: most composed steps of a PLD calibration and of its certificate (each sigma probe is one
#: composition, about 2 s per direction at 10^6 steps and h = 2^-12; the verifier's limit
#: certdp.cert.limits.MAX_PLD_STEPS is the same)
MAX_CALIBRATION_STEPS = MAX_STEPS

#: most distinct parts of a composition the lattice accountant composes (each adds a power and
#: a product of long lattices: 100 parts ran for minutes; beyond, RDP is the accountant to use)
MAX_PARTS = 16

#: the default target of pld_bounds without h: relative width (upper - lower)/upper of the eps enclosure
DEFAULT_REL_WIDTH = Fraction(1, 10**4)


#: the refinement's first round runs at this multiple of auto_h (a cheap probe of the width)
PROBE_FACTOR = 4

#: the predicted spacing is multiplied by this before it is rounded down to four significant bits
REFINE_SAFETY = Fraction(7, 10)

#: and by this one when the round's width is below NEAR_WIDTH: deep in the second-order regime the
#: model holds (width ~ h^1.93-2.0 from the first round to the last on the benchmark's rows whose
#: first width was 0.001-0.03, 2026-12-05), and 0.7 left them at 4.5e-5-5.6e-5 for a target of
#: 1e-4: about 25% more cells and longer products than needed. The long runs' first widths (0.18
#: and 0.36 at 10^5 and 10^6 steps) fall as h^1.3 near the target and keep 0.7
REFINE_SAFETY_NEAR = Fraction(17, 20)
NEAR_WIDTH = Fraction(1, 20)

#: one round refines the spacing by at most this factor (and at least 4/3). The width falls no
#: faster than h^2, so the model's step is never finer than the target needs (times
#: REFINE_SAFETY); at 32 the long runs' first step (width 0.18 at 10^5 steps, 0.36 at 10^6, at
#: h = 2^-9) stopped halfway and cost a third round (measured 2026-12-05, q = 0.001, sigma = 0.8)
MAX_REFINE_STEP = 128

#: the finest spacing the refinement tries (the cell and product limits bound its work): q = 1e-5
#: (one step's losses about 1e-5 wide) needs h = 9e-7 for a relative width of 1e-4
MIN_REFINE_H = Fraction(1, 2**26)

#: most rounds of the refinement (the probe included)
MAX_REFINE_ROUNDS = 6

#: longest product (coefficients) a refinement round forms: the verifier's MAX_PLD_PRODUCT
#: (certdp.cert.limits). The products are fixed-point integers of about 70-130 bits (~50 bytes
#: each): measured, q = 0.001, sigma = 0.8, 10^6 steps, delta = 1e-8 peaked at 0.5 GB at 2^22
#: (at 2^20 that row stopped at relative width 2.8e-4; at 2^22 it reaches 1.2e-4)
MAX_REFINE_PRODUCT = 1 << 22

#: coefficients below this are pruned during the powers (their mass is counted in the bound) when
#: no delta sets the scale (delta(eps) queries); see :func:`resolution`
PRUNE_FLOOR = Fraction(1, 10**40)


#: bits of the prune floor below delta (:func:`resolution`) without a target width: each product's
#: floors then move delta by at most delta 2^-32 (certdp.notions.pld_fixed.bits_for)
FLOOR_BITS = 40

#: with a target relative width w, log2(1/w) + FLOOR_MARGIN bits (at least FLOOR_MIN_BITS): 34 at
#: the default 1e-4, where the CIFAR-10 eps's products took 1.0 s instead of 1.2 s at 40 and its
#: upper end moved by 2.5e-8 relative (2026-12-05; at 30 bits, 4e-7); 47 at a width of 1e-8
FLOOR_MARGIN = 20
FLOOR_MIN_BITS = 30


def resolution(delta: Fraction | None, steps: int, rel_width: Fraction | None = None) -> tuple[Fraction, int]:
    """(prune floor, tail bits) for an eps(delta) query: mass that can only move delta by a
    fraction of about 2^-24 of delta is not resolved. The pruned mass is at most (coefficients
    pruned) x floor x steps and the tails beyond the lattice hold steps x 2^-tail_bits, each
    counted at full weight in the upper bound and lost in the lower. floor = 2^-(log2(1/delta) + b),
    b = FLOOR_BITS, or with a target relative width w log2(1/w) + FLOOR_MARGIN (at least FLOOR_MIN_BITS),
    and tail_bits = log2(1/delta) + log2(steps) + 24 (rounded up); without delta, PRUNE_FLOOR and
    140. Coarser resolution shortens the lattices and the powers. Measured at delta = 1e-5, both
    directions, h = 2^-11 (against + 64 and + 48 bits): q = 0.01, sigma = 0.8, 500 steps, 9.1 s ->
    6.4 s, and the eps enclosure's ends moved by 7e-9 and 2e-9; q = 0.004, sigma = 0.52, 2500
    steps, 16.1 s -> 11.1 s, ends moved by 2.5e-7 and 1.2e-7 (the width is 3.2e-4). At + 32 and
    + 16 bits the upper end moved by 1.1e-4: the tails matter there.

    Contract: a power-of-two floor in (0, 1) and a positive int; no enclosure (any values are
    sound, they only set how much the bounds give away).
    """
    if delta is None:
        return PRUNE_FLOOR, 140
    # an upper bound of log2(1/delta) in integers (a float 1/delta overflows below 1e-308); it is
    # ceil(log2(1/delta)) for delta = 10^-k
    scale = max(1, delta.denominator.bit_length() - delta.numerator.bit_length() + 1) if delta < 1 else 1
    bits = FLOOR_BITS
    if rel_width is not None:  # the floors need only resolve the width asked for
        need = rel_width.denominator.bit_length() - rel_width.numerator.bit_length() + 1  # >= log2(1/w)
        bits = max(FLOOR_MIN_BITS, need + FLOOR_MARGIN)
    return Fraction(1, 2 ** (scale + bits)), scale + math.ceil(math.log2(max(steps, 1))) + 24


@dataclass(frozen=True)
class Composed:
    """The pruned product of lattice pmfs (a composition), with suffix sums so that the bound at any
    eps costs O(1): sum_{l_k > eps} c_k g_eps(l_k) = S0(j) - e^eps S1(j), S0(j) = sum_{i >= j} c_i,
    S1(j) = sum_{i >= j} c_i e^{-l_i}, j the first index whose loss exceeds eps; the loss of
    index i is l_i = shift + (base + i) h, with shift the sum of the factors' offsets (each
    counted once per step)."""

    h: Fraction
    shift: Fraction
    base: int
    s0: list[Ball]
    s1: list[Ball]
    extra: Ball  # pruned mass + 1 - prod (1 - p_inf)^n: counted at g = 1

    def loss(self, j: int) -> Fraction:
        """Contract: the loss of index j, shift + (base + j) h, exact."""
        return self.shift + self.h * (self.base + j)

    def _first_index(self, e: Ball) -> int:
        """The first index whose loss is certainly > e (len(s0) if none)."""
        if not e < to_ball(self.loss(len(self.s0))):
            return len(self.s0)  # beyond every atom (also a huge or infinite eps)
        if e < to_ball(self.loss(0)):
            return 0
        # the start is found in exact arithmetic (floats of |loss|/h near 2^53 skipped atoms: attack
        # finding); it may be low by a few cells, never high: the loop only moves up
        guess = Fraction(e.mid().str(30, radius=False)) if e.is_finite() else self.loss(0)
        j = max(0, math.floor((guess - self.loss(0)) / self.h) - 2)
        while j > 0 and to_ball(self.loss(j - 1)) > e:  # never start past the first atom above e
            j -= 1
        while j < len(self.s0) and not to_ball(self.loss(j)) > e:
            j += 1
        return j

    def _first_undecided(self, e: Ball, j: int) -> int:
        """The first index whose loss is not certainly <= e, searching down from ``j`` (the first
        index certainly > e): the indices in between are those whose loss the balls cannot place."""
        while j > 0 and not to_ball(self.loss(j - 1)) <= e:
            j -= 1
        return j

    def delta_upper(self, eps: Ball) -> Ball:
        """Contract: the upper end bounds delta_n(eps) of every pair the lattice pair dominates
        (module docstring; exact eps: a ball eps uses its lower end, delta being decreasing).
        Indices whose loss cannot be placed against eps at the working precision are counted too,
        each with c_i (1 - e^{eps - l_i})_+ (at most c_i times the balls' radius), so no term of
        the sum is dropped."""
        e = to_ball(eps.lower()) if not eps.is_exact() else eps
        j = self._first_index(e)
        undecided = to_ball(0)
        for i in range(self._first_undecided(e, j), j):
            c_i = self.s0[i] - (self.s0[i + 1] if i + 1 < len(self.s0) else to_ball(0))
            g = (1 - (e - to_ball(self.loss(i))).exp()).max(to_ball(0))
            undecided += c_i.max(to_ball(0)) * g
        if j >= len(self.s0):
            return self.extra + undecided
        return self.s0[j] - e.exp() * self.s1[j] + self.extra + undecided

    def delta_lower(self, eps: Ball) -> Ball:
        """Contract: for pmfs from :func:`lower_lattice_pmf`, the lower end is <= delta_n(eps) of
        the pair (the sum over the pruned product, a sub-measure; an inexact eps uses its upper end)."""
        e = to_ball(eps.upper()) if not eps.is_exact() else eps
        j = self._first_index(e)
        if j >= len(self.s0):
            return to_ball(0)
        return (self.s0[j] - e.exp() * self.s1[j]).max(to_ball(0))


def compose(pmf: LatticePmf, steps: int, floor: Fraction = PRUNE_FLOOR, max_product: int | None = None) -> Composed:
    """Contract: see Composed; c is power_pruned(pmf.coeffs, steps, floor) (certdp.enclose.lattice:
    coefficient-wise <= the exact power, with the dropped mass bounded); LimitExceeded before a
    product longer than ``max_product`` coefficients is formed."""
    return compose_parts([(pmf, steps)], floor, max_product)


def compose_parts(
    parts: list[tuple[LatticePmf, int]], floor: Fraction = PRUNE_FLOOR, max_product: int | None = None
) -> Composed:
    """The composition of ``steps`` runs of each lattice pmf in ``parts`` (all with the same h):
    the pruned power of each, then their pruned product (certdp.enclose.product_pruned).

    Contract: see Composed; the coefficients are <= those of the exact product of the powers
    (every pruned mass is counted in ``extra``), and the +inf atoms add 1 - prod (1 - p_inf)^n;
    LimitExceeded before a product longer than ``max_product`` coefficients is formed.
    """
    if not parts:
        raise InvalidArgument("parts=[] must be non-empty")
    h = parts[0][0].lattice.h
    factors, shift, dropped, log_keep = [], Fraction(0), to_ball(0), to_ball(0)
    for pmf, steps in parts:
        if steps < 1:
            raise invalid("steps", steps, "must be >= 1")
        if pmf.lattice.h != h:
            raise invalid("h", pmf.lattice.h, f"must equal the first part's h={h} (one spacing per composition)")
        length = (len(pmf.coeffs) - 1) * steps + 1
        first, c, lost = power_pruned(pmf.coeffs, steps, length, to_ball(floor), max_product)
        factors.append((pmf.lattice.lo * steps + first, c))
        shift += steps * pmf.lattice.offset
        dropped += lost
        log_keep += steps * (-pmf.p_inf).log1p()
    base, c, lost = product_pruned(factors, to_ball(floor), max_product)
    dropped += lost
    s0, s1 = [to_ball(0)] * (len(c) + 1), [to_ball(0)] * (len(c) + 1)
    step = to_ball(-h).exp()
    weight = to_ball(-(shift + h * (base + len(c) - 1))).exp()
    for i in range(len(c) - 1, -1, -1):
        s0[i] = s0[i + 1] + c[i]
        s1[i] = s1[i + 1] + c[i] * weight
        weight = weight / step
    # 1 - prod (1 - p_inf)^n as -expm1(sum n log1p(-p_inf)): accurate when the tails are tiny
    # (the plain form carried a rounding radius of 2^-prec and refused every delta below it)
    return Composed(h, shift, base, s0[:-1], s1[:-1], dropped - log_keep.expm1())


def delta_upper(pmf: LatticePmf, steps: int, eps: Ball) -> Ball:
    """Upper bound of delta(eps) of the ``steps``-fold composition of the pair behind ``pmf``.

    Contract: the upper end bounds delta_n(eps) of every pair that the lattice pair dominates
    (module docstring): sum_k c_k g_eps(kh) + pruned mass + 1 - (1 - p_inf)^n, with c the pruned
    n-fold power of the finite part.
    """
    return compose(pmf, steps).delta_upper(eps)


def eps_lower(composed: Composed, delta: Fraction, tol: Fraction = Fraction(1, 2**40)) -> Fraction:
    """The largest eps, to within ``tol``, on the dyadic grid tol Z with delta_lower(eps) > delta
    proved (``composed`` built from :func:`lower_lattice_pmf`): no eps below it gives
    (eps, delta)-DP, since delta_n is nonincreasing in eps.

    Contract: delta_n(eps) > delta for the returned eps (Composed.delta_lower's contract);
    returns 0 when not even eps = 0 is proved to violate.
    """
    if not 0 < delta < 1:
        raise invalid("delta", delta, "must be in (0, 1)")
    d = to_ball(delta)

    def bad(eps: Fraction) -> bool:
        return bool(composed.delta_lower(to_ball(eps)) > d)

    if not bad(Fraction(0)):
        return Fraction(0)
    lo, hi = Fraction(0), Fraction(1)
    while bad(hi):
        lo, hi = hi, hi * 2
        if hi > 2**20:
            return lo
    while hi - lo > tol:  # bad(lo), not bad(hi)
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if bad(mid) else (lo, mid)
    return lo


def eps_upper(composed: Composed, delta: Fraction, tol: Fraction = Fraction(1, 2**40)) -> Fraction:
    """The smallest eps, to within ``tol``, on the dyadic grid tol Z with delta_upper(eps) <= delta
    proved: a sound epsilon for (eps, delta)-DP of the composition (delta_upper decreases in eps).

    Contract: delta_n(eps) <= delta for the returned eps (Composed.delta_upper's contract);
    raises PrecisionExhausted when no eps <= 2^20 is proved (the lattice's tail mass alone
    exceeds delta, or the precision is too low).
    """
    if not 0 < delta < 1:
        raise invalid("delta", delta, "must be in (0, 1)")
    d = to_ball(delta)

    def ok(eps: Fraction) -> bool:
        return bool(composed.delta_upper(to_ball(eps)) <= d)

    hi = Fraction(1)
    while not ok(hi):
        hi *= 2
        if hi > 2**20:
            raise PrecisionExhausted(f"delta={delta}: no eps <= 2^20 is proved (tail mass {composed.extra})")
    lo = Fraction(0)
    if ok(lo):
        return lo
    while hi - lo > tol:  # ok(hi), not ok(lo)
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


#: the factor by which a direction that only has to be shown dominated is coarsened
COARSE_FACTOR = 8


#: the largest |loss| (summed over the steps) the lattice sums handle: e^{-loss} overflows beyond
MAX_LOSS = 2**30


def _pure_dp_cap(parts: list[tuple[PrivacyPair, int]]) -> Fraction | None:
    """sum n D_inf (upper ends) when every part has a finite D_inf (``max_loss_ball``), else None:
    the composed loss never exceeds it, so delta(eps) = 0 there and eps(delta) <= it for every
    delta > 0. Why: an atom's 2^-64 spill into the next cell (the upper bound's split) can exceed
    a tiny delta, and the cap keeps the upper end at the pure-DP value."""
    total = Fraction(0)
    for p, n in parts:
        loss = p.max_loss_ball()
        if loss is None or not loss.is_finite():
            return None
        total += n * Enclosure.from_ball(loss).upper
    return total


@dataclass(frozen=True)
class PldResult:
    """A two-sided enclosure from the lattice bounds with the grid that recomputes it: ``enclosure``
    is [lower, upper] of eps (or delta); its upper end is the sound value; ``grid`` holds, per
    direction, the lattice (h, offset, lo, hi) and the two ends it gave, plus the steps and the
    pruning floor."""

    quantity: str
    enclosure: Enclosure
    grid: dict[str, object]

    __repr__ = readable_repr


class LatticeBounds:
    """The two sides of a composition on lattices of one spacing, computed lazily and kept: each
    part's cell masses are shared by the sides, and each side's product by its queries. The
    composition is ``steps`` runs of ``pair`` on ``lattice``, then those of ``others``.

    ``lower="merged"``: the lower side by merged cells (certdp.notions.pld_merged), its units sized
    for the eps it is asked at, or for ``units_eps`` when given (then fixed for every query).

    ``coarsen`` (default): the partial powers move to coarser lattices as they spread (the upper
    side always, the lower side in plain one-part compositions)
    (docs/math.md §10, "Coarsening the partial powers"; certdp.notions.pld_fixed.COARSE_FROM);
    False: one spacing throughout (what `certdp verify` recomputes: at least as tight).

    Contract: ``eps(side, delta)`` and ``delta(side, eps)`` are as :func:`side_bounds`.
    """

    def __init__(
        self,
        pair: PrivacyPair,
        steps: int,
        lattice: LossLattice,
        floor: Fraction = PRUNE_FLOOR,
        max_product: int | None = None,
        others: tuple[Part, ...] = (),
        split: SplitLattice | None = None,
        coarsen: bool = True,
        lower: str = "balanced",
        units_eps: Fraction | None = None,
    ) -> None:
        if split is not None and (others or split.bulk != lattice):
            raise InvalidArgument("a split lattice is for one part, with lattice = its bulk")
        self.split = split
        for _, n, _ in ((pair, steps, lattice), *others):
            if n < 1:
                raise invalid("steps", n, "must be >= 1")
        if not 0 < floor < 1:
            raise invalid("prune_floor", floor, "must be in (0, 1)")
        self.pair, self.steps, self.lattice, self.floor = pair, steps, lattice, floor
        self.parts: tuple[Part, ...] = ((pair, steps, lattice), *others)
        self.max_product = max_product
        self.coarsen = coarsen
        if lower not in ("balanced", "merged"):
            raise invalid("lower", lower, "must be balanced or merged")
        self.lower = lower
        # a fixed units hint makes the merged side a function of the recorded data alone (the
        # certificate verifier recomputes a refutation at the check's threshold: the same units)
        if units_eps is not None and not 0 <= units_eps <= 10**4:
            raise invalid("units_eps", units_eps, "must be in [0, 10000]")
        self.units_eps = units_eps
        self._cells: dict[int, Cells] = {}
        self._composed: dict[str, FixedComposed] = {}
        self._split_tails: dict[str, TailCells] = {}

    def composed(self, side: str, eps_hint: float = 0.0) -> FixedComposed:
        """Contract: the product of the parts' powers of the ``side`` ("upper" or "lower") lattice
        pmfs, in exact fixed point rounded in the side's direction (certdp.notions.pld_fixed); with
        ``lower="merged"`` the lower side is the composed merged pair of certdp.notions.pld_merged
        (``eps_hint``: the largest eps it will be asked at, which sets its units; the first call
        fixes it)."""
        if side not in self._composed:
            if side not in ("upper", "lower"):
                raise invalid("side", side, "must be lower or upper")
            if self.units_eps is not None:
                eps_hint = float(self.units_eps)
            if side == "lower" and self.lower == "merged" and q_extra_bits(eps_hint) is not None:
                self._composed[side] = self._merged(eps_hint)  # type: ignore[assignment]
                return self._composed[side]
            build = upper_lattice_pmf if side == "upper" else lower_lattice_pmf
            if self.split is not None:  # bulk and tails (certdp.notions.pld_split)
                if 0 not in self._cells:
                    self._cells[0] = _cell_masses(self.pair, self.lattice)
                bulk = build(self.pair, self.lattice, self._cells[0], ends=False)
                if "tails" not in self._split_tails:  # both sides read the same certified tails
                    self._split_tails["tails"] = tail_cells(self.pair, self.split)
                tail, p_inf = tail_pmf(self.pair, self.split, side, self._split_tails["tails"])
                self._composed[side] = compose_split(
                    side, bulk, tail, self.split.lo, p_inf, self.steps, self.floor, self.max_product, self.coarsen
                )
                return self._composed[side]
            pmfs = []
            for i, (pair, steps, lattice) in enumerate(self.parts):
                if i not in self._cells:
                    self._cells[i] = _cell_masses(pair, lattice)
                pmfs.append((build(pair, lattice, self._cells[i]), steps))
            self._composed[side] = compose_fixed(side, pmfs, self.floor, self.max_product, self.coarsen)
        return self._composed[side]

    def _merged(self, eps_hint: float) -> MergedComposed:
        """The merged lower side (certdp.notions.pld_merged) of the parts, or of the split lattice."""
        extra = q_extra_bits(eps_hint)
        assert extra is not None
        if self.split is not None:
            if 0 not in self._cells:
                self._cells[0] = _cell_masses(self.pair, self.lattice)
            if "tails" not in self._split_tails:
                self._split_tails["tails"] = tail_cells(self.pair, self.split)
            bulk = merged_step(self.lattice, self._cells[0], ends=False)
            tail = merged_tail_step(self.split, self._split_tails["tails"])
            return compose_split_merged(
                bulk, tail, self.steps, self.floor, self.max_product, self.coarsen, extra_bits=extra
            )
        steps_ = []
        for i, (pair, steps, lattice) in enumerate(self.parts):
            if i not in self._cells:
                self._cells[i] = _cell_masses(pair, lattice)
            steps_.append((merged_step(lattice, self._cells[i]), steps))
        return compose_merged(steps_, self.floor, self.max_product, self.coarsen, extra_bits=extra)

    def span(self, side: str) -> int | None:
        """The length of the composed ``side`` in one-step indices (its coefficients times the
        coarsening factor of its powers), or None before that side is composed: about the longest
        product a composition at one spacing would form (the recheck kernel's).

        Contract: an int >= 0 or None; steers limits only, no enclosure."""
        comp = self._composed.get(side)
        if comp is None:
            return None
        if isinstance(comp, MergedComposed):
            return comp.pair.p.poly.length() * comp.scale
        return math.ceil(len(comp.coeffs) * comp.h / self.lattice.h)

    def eps(self, side: str, delta: Fraction) -> Fraction:
        """Contract: "upper": delta_n(eps) <= delta is proved at the returned eps (:func:`eps_upper_fixed`);
        "lower": delta_n(eps) > delta is proved there, or 0 (:func:`eps_lower_fixed`)."""
        if not 0 < delta < 1:
            raise invalid("delta", delta, "must be in (0, 1)")
        if side == "upper":
            return eps_upper_fixed(self.composed(side), delta)
        hint = 0.0
        if self.lower == "merged" and "lower" not in self._composed and self.units_eps is None:
            hint = float(self.eps("upper", delta))  # the lower end lies below it
        return eps_lower_fixed(self.composed(side, hint), delta)

    def delta(self, side: str, eps: Fraction) -> Ball:
        """Contract: an exact ball >= delta_n(eps) ("upper") or <= it and >= 0 ("lower")."""
        if side == "upper":
            return self.composed(side).delta_upper(eps)
        # the hint only sizes the units (an eps past 2^1024 has no float: attack review)
        return self.composed(side, float(min(eps, Fraction(10**4)))).delta_lower(eps)


def side_bounds(
    pair: PrivacyPair,
    steps: int,
    lattice: LossLattice,
    *,
    delta: Fraction | None = None,
    eps: Fraction | None = None,
    sides: tuple[str, ...] = ("lower", "upper"),
) -> dict[str, Ball]:
    """The requested sides of eps(delta) (or delta(eps)) of the ``steps``-fold composition of one
    pair on ``lattice``, as exact balls: "upper" from the dominating pair (:func:`eps_upper`;
    delta: the upper end of Composed.delta_upper), "lower" from the dominated one
    (:func:`eps_lower`; delta: the lower end of Composed.delta_lower, at least 0).

    Contract: lower <= the exact value <= upper, for any lattice (docs/math.md §10).
    """
    if (delta is None) == (eps is None):
        raise InvalidArgument("give exactly one of delta and eps")
    bounds = LatticeBounds(pair, steps, lattice)
    if delta is not None:
        return {side: to_ball(bounds.eps(side, delta)) for side in sides}
    assert eps is not None
    return {side: bounds.delta(side, eps) for side in sides}


def lattice_record(lattice: LossLattice | SplitLattice) -> dict[str, object]:
    """Contract: the exact fields that rebuild ``lattice`` (exact decimal strings and integers; a
    split lattice adds its bulk's ends and the tails' stride)."""
    if isinstance(lattice, SplitLattice):
        return {
            **lattice_record(LossLattice(lattice.h, lattice.lo, lattice.hi, lattice.offset)),
            "bulk_lo": lattice.bulk.lo,
            "bulk_hi": lattice.bulk.hi,
            "stride": lattice.stride,
        }
    return {
        "h": exact_str(lattice.h),
        "offset": exact_str(lattice.offset),
        "lo": lattice.lo,
        "hi": lattice.hi,
    }


def _relative_width(enc: Enclosure) -> Fraction:
    """(upper - lower)/upper of an enclosure with lower >= 0; 0 when upper is 0 (exact zero)."""
    if enc.upper <= 0:
        return Fraction(0)
    return (enc.upper - enc.lower) / enc.upper


def _pow2_floor(x: Fraction) -> Fraction:
    """The largest power of two <= x (x > 0)."""
    k = x.numerator.bit_length() - x.denominator.bit_length()
    p = Fraction(2) ** k
    while p > x:
        p /= 2
    while p * 2 <= x:
        p *= 2
    return p


def _dyadic_floor(x: Fraction) -> Fraction:
    """The largest m 2^k <= x with m in [8, 16) (four significant bits; x > 0)."""
    p = _pow2_floor(x)
    return p * math.floor(x / p * 8) / 8


def refined_h(h: Fraction, width: Fraction, target: Fraction) -> Fraction:
    """The next spacing of the refinement (only steers: any spacing is sound): the second-order
    model width ~ C h^2 through (h, width) predicts sqrt(target/width) h; times REFINE_SAFETY
    (REFINE_SAFETY_NEAR for a width below NEAR_WIDTH),
    rounded down to a dyadic m 2^k with four significant bits (m in [8, 16): finer steps than
    powers of two, so one round lands near the target instead of up to 4x below it), and
    between h/MAX_REFINE_STEP (h/4 for a width >= 1/2, not yet second order) and 3h/4.

    Contract: a dyadic rational in [h/MAX_REFINE_STEP, 3h/4] when h is dyadic; no enclosure.
    """
    ratio = math.sqrt(float(target) / float(width)) if width > 0 else 1.0
    safety = REFINE_SAFETY_NEAR if width < NEAR_WIDTH else REFINE_SAFETY
    wanted = h * Fraction(ratio).limit_denominator(2**20) * safety
    # a width near 1 (the lower end still near 0) is not yet in the second-order regime
    step = MAX_REFINE_STEP if width < Fraction(1, 2) else 4
    return min(max(_dyadic_floor(wanted) if wanted > 0 else h / step, h / step), h * 3 / 4)


def default_spacing(pair: PrivacyPair, *, delta: object = None) -> Fraction:
    """The spacing pld_bounds used before the rel_width refinement (:func:`auto_h` of every
    direction's parts, at the tail bits of ``delta``): for callers that want one cheap lattice
    (an explicit h skips the refinement).

    Contract: a power of two in [MIN_AUTO_H, DEFAULT_H]; only steers tightness.
    """
    d = None if delta is None else real("delta", delta, gt=0, lt=1)  # type: ignore[arg-type]
    comps = directions(pair)
    steps = sum(n for _, n in next(iter(comps.values())))
    _, tail_bits = resolution(d, steps)
    return auto_h([part for parts in comps.values() for part in parts], tail_bits)


#: the lower side of eps and delta queries: "merged" (certdp.notions.pld_merged: composed cell
#: masses, a post-processing; tighter at one lattice, no offset search, two products per step)
#: on lattices of at least MERGED_MIN_CELLS cells, else "balanced" (the balancing of
#: certdp.notions.pld_lattice, which calibrations and certificates record and `certdp verify`
#: recomputes); "balanced" here: always the balancing
LOWER_SIDE = "merged"

#: the merged lower side serves lattices with at least this many cells per step (at the round's
#: spacing). Why: on narrow ones (a loss far below the spacing: q = 1e-4, sigma = 1e4) the
#: balancing collapses the pmf to a point or two while the merged arrays grow like the upper
#: side's (1100 coefficients against 2 at 10^6 steps): 3x the work for a lower end near 0 either
#: way; on wide ones (DP-SGD: 10^4 to 10^5 cells) the merged side is the tighter and cheaper one.
#: From 256 cells (was 2048) the refinement's first round at 4 auto_h is merged too: its width is
#: then second order like the next round's, so the model's next spacing no longer overshoots the
#: target (measured in one process: CIFAR-10 0.75 -> 0.63 s, the second round at 4.6e-5 -> 6.0e-5
#: of width; MNIST 1.15 -> 0.88 s; q = 0.001, sigma = 2, 1000 steps 0.45 -> 0.33 s)
MERGED_MIN_CELLS = 256


def _merged_for(parts: list[tuple[PrivacyPair, int]], h: Fraction, tail_bits: int) -> bool:
    """Whether a round at spacing h takes the merged lower side (LOWER_SIDE, MERGED_MIN_CELLS on
    the first part's plain lattice; only steers: both lower sides are sound)."""
    if LOWER_SIDE != "merged":
        return False
    lat = lattice_for(parts[0][0], h, tail_bits, max_cells=MAX_EXTENT)
    return lat.hi - lat.lo >= MERGED_MIN_CELLS


def pld_bounds(
    pair: PrivacyPair,
    *,
    delta: Fraction | None = None,
    eps: Fraction | None = None,
    h: Fraction | None = None,
    rel_width: object = None,
) -> PldResult:
    """Two-sided certified eps at ``delta`` (or delta at ``eps``) of a pair or a composition (of
    one pair, or of several: the product of their lattice pmfs), by the lattice bounds; a
    subsampled Gaussian with direction ``both`` takes the larger value of each end over the
    remove and add compositions (:func:`directions`). Pairs whose loss has atoms are put on a
    lattice just below them (:func:`aligned_spacing`), so their spacing may differ from h.

    ``h`` given: one lattice of that spacing (no refinement; ``rel_width`` must be None; for one
    cheap lattice pass ``h=default_spacing(pair, delta=...)``). With LOWER_SIDE = "balanced" (the
    default), in every round of an eps(delta) query of one pair without atoms the lower side may
    take a coarser lattice of its own where h leaves the balancing too much
    (:func:`_lower_spacing`; the grid's ``lower_lattice``); with "merged" the lower end comes
    from the merged cells of the same lattice (certdp.notions.pld_merged; the balancing side
    above eps of about 42).
    Otherwise: refine until the relative width (upper - lower)/upper of the enclosure is at most
    ``rel_width`` (None: DEFAULT_REL_WIDTH = 1e-4 for eps(delta); an upper end of 0 counts as
    met, and for delta(eps) an upper end <= 2^12 PRUNE_FLOOR (4e-37: the prunes of 2^8 floors per
    end and product resolve no smaller delta) too). delta(eps) without ``rel_width`` and ``h``:
    one lattice at :func:`auto_h` (no target: a tiny delta far in the loss tail has a lower end
    the lattices cannot resolve, and a default target would refuse it). The
    first round runs at PROBE_FACTOR x :func:`auto_h`; each next spacing comes from the
    second-order error model through the last round (:func:`refined_h`). When the next lattice
    would pass the limits (MAX_CELLS cells per step, MAX_REFINE_PRODUCT coefficients in a
    product, MIN_REFINE_H, MAX_REFINE_ROUNDS) the finest feasible one is tried, then
    PrecisionExhausted names rel-width, the width reached and the finest h (its ``result`` is
    the sound PldResult of the rounds so far, ``achieved_width`` its relative width). Every
    round's bounds are sound (docs/math.md §10), so the stopping rule does not matter for
    soundness, and the result is the intersection over the rounds: the largest lower end and the
    smallest upper end (the lower end is not monotone in h). The grid is the last round's, plus
    ``rel_width``, ``rounds`` (h, relative width and both ends per round), ``lower_h`` and
    ``upper_h`` (the rounds that gave the two ends).

    With two directions, both are first bounded on lattices COARSE_FACTOR times coarser; the one
    with the larger coarse upper end is computed at h, and the other only when its coarse upper
    end exceeds that lower end (else it cannot change either end of the max: its upper is below
    the max's lower, and the max's lower is at least the computed direction's). The grid records
    which lattices each direction used.

    Works at max(the context's precision, LATTICE_PREC) bits: at the default 53 the tails' balls at
    fine spacings are wider than the cells (q = 0.001, sigma = 0.8, 10^5 steps, delta = 1e-8: the
    upper end grew from 3.51853 to 3.52514 as h fell from 4.2e-5 to 9.5e-6, and the target width
    was refused; at 128 bits it is met in two rounds).

    Contract: lower <= the exact eps(delta) (resp. delta(eps)) <= upper, and upper is a sound
    value (module docstring; docs/math.md §10); Unsupported for pairs without ``loss_tail``.
    """
    with workprec(max(current_prec(), LATTICE_PREC)):
        return _pld_bounds(pair, delta=delta, eps=eps, h=h, rel_width=rel_width)


#: the least working precision of :func:`pld_bounds` (the CLI's and the accountant's PLD_PREC)
LATTICE_PREC = 128


def _pld_bounds(
    pair: PrivacyPair,
    *,
    delta: Fraction | None = None,
    eps: Fraction | None = None,
    h: Fraction | None = None,
    rel_width: object = None,
) -> PldResult:
    """:func:`pld_bounds` at the working precision it set. Contract: as :func:`pld_bounds`."""
    if (delta is None) == (eps is None):
        raise InvalidArgument("give exactly one of delta and eps")
    # validated up front, as exact rationals (strings and floats too; nan and inf are refused)
    delta = None if delta is None else real("delta", delta, gt=0, lt=1)
    eps = None if eps is None else real("eps", eps, ge=0)
    h = None if h is None else real("h", h, gt=0, le=1)
    target = None if rel_width is None else real("rel-width", rel_width, gt=0, lt=1)  # type: ignore[arg-type]
    if h is not None and target is not None:
        raise InvalidArgument(
            f"rel_width={fmt_value(target)} steers the default spacing: with h={fmt_value(h)} given "
            "there is no refinement"
        )
    comps = directions(pair)
    parts_n = len(next(iter(comps.values())))
    if parts_n > MAX_PARTS:  # each distinct part is a power and a product of long lattices
        raise LimitExceeded(
            f"the composition has {parts_n} distinct parts, more than {MAX_PARTS} (the lattice products grow "
            "with each): use --via rdp"
        )
    steps = sum(n for _, n in next(iter(comps.values())))
    if steps > MAX_STEPS:
        raise LimitExceeded(
            f"steps={steps} exceeds {MAX_STEPS}, the most the lattice accountant composes: use --via rdp"
        )
    # an eps(delta) refinement resolves only its target width (the floors' bits follow it); a given
    # h or a delta(eps) query keeps the fixed resolution
    refines = h is None and delta is not None
    floor, tail_bits = resolution(delta, steps, (DEFAULT_REL_WIDTH if target is None else target) if refines else None)
    Result = tuple[dict[str, Ball], list[Part]]
    # a round reuses the earlier rounds' lattices; keyed by (direction, h, the sides computed)
    cache: dict[tuple[str, Fraction, str], Result] = {}
    lower_on: dict[tuple[str, Fraction], list[Part]] = {}  # the lower side's lattices where they differ

    def run(
        name: str,
        hh: Fraction,
        max_product: int | None,
        upper_only: bool = False,
        offset: Fraction | None = None,
        lower_only: bool = False,
    ) -> Result:
        mode = "upper" if upper_only else "lower" if lower_only else "both"
        for key in ((name, hh, "both"), (name, hh, mode)):
            if key in cache:
                return cache[key]
        parts = comps[name]
        merged = _merged_for(parts, hh, tail_bits)
        if not merged and mode == "both" and offset is None and _retunable(parts, delta):
            hl, offset = _lower_spacing(parts[0][0], hh)
            if hl != hh:  # the lower side on a coarser lattice that balances, the upper side at hh
                # (the upper side at the coarser hl is not formed: it was a third power, a third of
                # the time at q = 0.004, sigma = 0.52, 2500 steps, and never the smaller upper end)
                upper = run(name, hh, max_product, upper_only=True)
                lower = run(name, hl, max_product, offset=offset, lower_only=True)
                both = {"lower": lower[0]["lower"], "upper": upper[0]["upper"]}
                cache[(name, hh, "both")] = (both, upper[1])
                lower_on[(name, hh)] = lower[1]
                return cache[(name, hh, "both")]
        # the balanced lower side needs a tuned offset; the merged one and the upper side do not
        tune = not upper_only and not merged
        spl = _split_for(parts, hh, tail_bits, delta, tune=tune, offset=offset)
        # one tuned lattice per part for both sides (the upper bound is second order at any offset,
        # so an upper-only run skips the offset search)
        if spl is None and offset is not None:
            lats = [(*parts[0], lattice_for(parts[0][0], hh, tail_bits, offset=offset))]
        else:
            lats = part_lattices(parts, hh, tail_bits, tune=tune) if spl is None else [(*parts[0], spl)]
        reach = sum(n * max(abs(lat.point(lat.lo)), abs(lat.point(lat.hi))) for _, n, lat in lats)
        if reach > MAX_LOSS:
            raise LimitExceeded(
                f"the composed loss reaches {float(reach):.3g}, beyond {MAX_LOSS} (the lattice sums overflow there): "
                "use --via rdp"
            )
        (p0, n0, lat0), others = lats[0], tuple(lats[1:])
        side_kind = "merged" if merged else "balanced"
        if spl is not None:
            bounds = LatticeBounds(p0, n0, spl.bulk, floor, max_product, split=spl, lower=side_kind)
        else:
            bounds = LatticeBounds(p0, n0, lat0, floor, max_product, others=others, lower=side_kind)
        cap = _pure_dp_cap(parts)
        # upper first: the merged lower side takes its units from the upper end
        sides = {"upper": ("upper",), "lower": ("lower",), "both": ("upper", "lower")}[mode]
        if delta is not None:
            ends = {side: bounds.eps(side, delta) for side in sides}
            ends.setdefault("lower", Fraction(0))  # upper only: the trivial lower end
            if cap is not None:  # eps = the largest loss gives delta = 0: pure DP (class docstrings)
                ends = {side: min(value, cap) for side, value in ends.items()}
            out: Result = ({side: to_ball(value) for side, value in ends.items()}, lats)
        else:
            assert eps is not None
            if cap is not None and eps >= cap:
                out = ({"lower": to_ball(0), "upper": to_ball(0)}, lats)
            else:
                out = ({side: bounds.delta(side, eps) for side in sides}, lats)
                out[0].setdefault("lower", to_ball(0))
        cache[(name, hh, mode)] = out
        return out

    def known(name: str) -> Result | None:
        done = [out for (nm, _, md), out in cache.items() if nm == name and md != "lower"]
        return min(done, key=lambda out: out[0]["upper"].mid(), default=None)

    def at(hh: Fraction, max_product: int | None = None) -> PldResult:
        return _assemble(comps, hh, run, max_product, delta, steps, floor, known, lower_on)

    if h is not None:
        return at(h)
    if target is None and delta is None:  # delta(eps): one lattice (docstring)
        return at(auto_h([part for parts in comps.values() for part in parts], tail_bits))
    goal = DEFAULT_REL_WIDTH if target is None else target
    hh = auto_h([part for parts in comps.values() for part in parts], tail_bits) * PROBE_FACTOR
    res = at(hh)  # the first round: LimitExceeded here is the accountant's refusal, as before
    rounds: list[dict[str, str]] = []

    def width_of(enc: Enclosure) -> Fraction:
        if delta is None and enc.upper <= PRUNE_FLOOR * 2**12:  # below what the lattices resolve
            return Fraction(0)
        return _relative_width(enc)

    def record(r: PldResult, spacing: Fraction) -> Fraction:
        w = width_of(r.enclosure)
        rounds.append(
            {
                "h": exact_str(spacing),
                "width": f"{float(w):.6g}",
                "lower": r.enclosure.lower_str(),
                "upper": r.enclosure.upper_str(),
            }
        )
        ends.append((spacing, r))
        return w

    def joined() -> tuple[PldResult, Fraction]:
        # every round's two ends are proved, so the largest lower end and the smallest upper end
        # over the rounds enclose too (the lower side's balancing is not monotone in h: measured
        # q = 0.001, sigma = 0.8, 1e5 steps: lower 3.51780 at h = 5 2^-17, 3.51607 at 2^-15)
        lo_h, lo_r = max(ends, key=lambda e: e[1].enclosure.lower)
        up_h, up_r = min(ends, key=lambda e: e[1].enclosure.upper)
        enc = Enclosure.from_bounds(lo_r.enclosure.lower, up_r.enclosure.upper, current_prec())
        grid = dict(ends[-1][1].grid)
        grid.update(rel_width=exact_str(goal), rounds=list(rounds), lower_h=exact_str(lo_h), upper_h=exact_str(up_h))
        return PldResult(ends[-1][1].quantity, enc, grid), width_of(enc)

    ends: list[tuple[Fraction, PldResult]] = []
    width = record(res, hh)
    best, best_w = joined()
    while best_w > goal:
        nxt = refined_h(hh, width, goal)
        got = None
        while got is None:
            refusal = None
            if len(rounds) >= MAX_REFINE_ROUNDS:
                refusal = f"{MAX_REFINE_ROUNDS} rounds"
            elif nxt < MIN_REFINE_H:
                refusal = f"the finest spacing {exact_str(MIN_REFINE_H)}"
            else:
                try:
                    _sure_to_overflow(pair, delta, nxt)
                    afford_round(pair, delta, nxt)  # each round against what is left of the budgets
                    got = at(nxt, MAX_REFINE_PRODUCT)
                except LimitExceeded as exc:
                    # back off towards the last spacing in steps of about 4/3 (dyadic, four
                    # significant bits): the finest lattice the limits allow, if finer than hh
                    wider = _dyadic_floor(nxt * 4 / 3)
                    if wider <= nxt:
                        wider = nxt * 2
                    if wider <= hh * 15 / 16:
                        nxt = wider
                        continue
                    refusal = str(exc)
            if refusal is not None:
                # the enclosure reached is sound: say which target accepts it (a tiny eps, such as
                # sigma = 1e4, has a relative width no lattice reaches; attack review)
                accept = f"--rel-width {_two_digits_up(float(best_w) * 1.01):g} accepts the sound enclosure reached"
                if float(best_w) * 1.01 >= 1:  # the lower end stayed 0: no --rel-width (< 1) is ever reached
                    accept = f"--h {best.grid['upper_h']} gives its sound upper end (lower end 0), --via rdp a bound"
                exc2 = PrecisionExhausted(
                    f"rel-width={fmt_value(goal)} not reached: relative width {float(best_w):.3g} at the finest "
                    f"h={exact_str(hh)} (the refinement stopped at {refusal}); {accept}",
                    achieved_width=float(best_w),
                )
                exc2.result = best  # type: ignore[attr-defined]
                raise exc2
        hh, res = nxt, got
        width = record(res, hh)
        best, best_w = joined()
    return best


#: a refinement round whose estimated longest product (certdp.notions.cost.pld_cost) passes
#: MAX_REFINE_PRODUCT by this factor is backed off from before it is built. The estimate ran 1.3x
#: the real product at CIFAR-10's second round, and up to 1.1x below the real one where rounds
#: failed (q = 0.001, sigma = 6.188176, 10^6 steps, delta = 1e-10: four rounds predicted at
#: 1.1x-2.5x the limit each built 17-21e6 work units before the limit stopped them)
SURE_OVERFLOW = 1.4


def _sure_to_overflow(pair: PrivacyPair, delta: Fraction | None, h: Fraction) -> None:
    """LimitExceeded when a round at spacing h would surely form a product longer than
    MAX_REFINE_PRODUCT (estimate over SURE_OVERFLOW x the limit); steers only."""
    from certdp.notions.cost import pld_cost  # it imports this module

    cost = pld_cost(pair, delta, h=h)
    if cost is not None and cost.product > SURE_OVERFLOW * MAX_REFINE_PRODUCT:
        raise LimitExceeded(
            f"a round at h={exact_str(h)} needs products of about {cost.product} coefficients, past the limit "
            f"{MAX_REFINE_PRODUCT}"
        )


def _two_digits_up(x: float) -> float:
    """x > 0 rounded UP to two significant digits, so that a width suggested from it is at least
    the width reached (attack review: 1.23e-7 rounded to 1.2e-7, and that suggestion failed again)."""
    digits = max(0, 1 - math.floor(math.log10(x)))
    return math.ceil(x * 10**digits) / 10**digits


def _retunable(parts: list[tuple[PrivacyPair, int]], delta: Fraction | None) -> bool:
    """A one-part composition of a pair without loss atoms at an eps(delta) query: its lattice is
    the split or plain one of one pair, whose spacing the lower side may choose itself."""
    return delta is not None and len(parts) == 1 and parts[0][0].loss_grid() is None


def _split_for(
    parts: list[tuple[PrivacyPair, int]],
    h: Fraction,
    tail_bits: int,
    delta: Fraction | None,
    tune: bool,
    offset: Fraction | None = None,
) -> SplitLattice | None:
    """The bulk/tail lattice (certdp.notions.pld_split) of a one-part composition of a pair without
    loss atoms at an eps(delta) query, when it pays (else None: the plain lattice); its offset is
    ``offset``, or tuned on the bulk when ``tune``."""
    if not _retunable(parts, delta):
        return None
    assert delta is not None
    pair, n = parts[0]
    bits = bulk_bits(delta, n)
    if offset is not None:  # the offset is known (the lower side's spacing search): one lattice
        return split_lattice(pair, h, tail_bits, bits, offset=offset)
    spl = split_lattice(pair, h, tail_bits, bits)
    if spl is None or not tune:
        return spl
    return split_lattice(pair, h, tail_bits, bits, offset=choose_offset(pair, h, base=spl.bulk))


#: the lower side keeps spacing h when the tuned offset leaves at most this many h^2 per step
#: unbalanced (:func:`certdp.notions.pld_lattice.tuned_offset`); beyond, it takes a coarser one
LOWER_IMBALANCE = 2

#: the coarser spacings tried for the lower side: h (1 + k/8), k = 1..LOWER_COARSER (up to 2h)
LOWER_COARSER = 8


def _lower_spacing(pair: PrivacyPair, h: Fraction) -> tuple[Fraction, Fraction]:
    """(spacing, offset) for the lower side: h with its tuned offset when that offset leaves at most
    LOWER_IMBALANCE h^2 per step unbalanced, else the finest of the coarser spacings h (1 + k/8),
    k = 1..LOWER_COARSER (dyadic, four significant bits) whose offset does, else the one that
    leaves the least.

    Why: near a hard edge of the loss with much mass above it (the subsampled Gaussian at small q:
    L >= log(1 - q)) the balancing of the lower bound breaks down below some spacing, for every
    offset and meeting cell (measured, q = 0.001, sigma = 0.8: 0.05 h^2 per step at h = 20 2^-19,
    1.4 h^2 at 19 2^-19, 8.5 h^2 at 18 2^-19, 20 h^2 at 16 2^-19), and n steps multiply what stays
    unbalanced: at 10^6 steps the lower end at h = 2^-15 was 12.4032 against 12.4210 at 20 2^-19.

    Contract: a spacing >= h and an offset in [0, spacing); only steers tightness (every lattice
    gives sound bounds), no enclosure.
    """
    best: tuple[float, Fraction, Fraction] | None = None
    spacings = [h, *(_dyadic_floor(h * (8 + k) / 8) for k in range(1, LOWER_COARSER + 1))]
    for hc in dict.fromkeys(sp for sp in spacings if sp >= h):
        # the search's window lies near the median: a base with light ends covers it at any cell count
        base = lattice_for(pair, hc, 40, max_cells=MAX_EXTENT)
        offset, imbalance = tuned_offset(pair, hc, base=base)
        if imbalance <= LOWER_IMBALANCE * float(hc) ** 2:
            return hc, offset
        if best is None or imbalance < best[0]:
            best = (imbalance, hc, offset)
    assert best is not None
    return best[1], best[2]


def _assemble(
    comps: dict[str, list[tuple[PrivacyPair, int]]],
    h: Fraction,
    run: object,
    max_product: int | None,
    delta: Fraction | None,
    steps: int,
    floor: Fraction,
    known: object = None,
    lower_on: dict[tuple[str, Fraction], list[Part]] | None = None,
) -> PldResult:
    """One round of :func:`pld_bounds` at spacing h: each direction's bounds (the dominated one
    on a coarse lattice, or on an earlier round's lattice: ``known(name)`` gives the earlier
    result with the smallest upper end, or None), their grid (with ``lower_lattice`` where
    ``lower_on`` has the lower side on a lattice of its own), and the max of the ends."""
    results: dict[str, tuple[dict[str, Ball], list[Part]]] = {}
    names = list(comps)
    if len(names) == 1:
        results[names[0]] = run(names[0], h, max_product)  # type: ignore[operator]
    else:
        # the coarse runs only rank the directions and show one dominated: upper ends suffice, and
        # an earlier round's (every round's upper end is sound) saves the coarse run when it
        # already shows the direction dominated (CIFAR-10: a tenth of the time)
        def coarse_run(name: str) -> tuple[dict[str, Ball], list[Part]]:
            return run(name, h * COARSE_FACTOR, max_product, True)  # type: ignore[operator]

        earlier = {name: known(name) if known is not None else None for name in names}  # type: ignore[operator]
        coarse = {name: earlier[name] or coarse_run(name) for name in names}
        order = sorted(names, key=lambda k: -float(coarse[k][0]["upper"].mid()))
        main = order[0]
        results[main] = run(main, h, max_product)  # type: ignore[operator]
        for name in order[1:]:
            if not coarse[name][0]["upper"] <= results[main][0]["lower"] and earlier[name] is not None:
                coarse[name] = coarse_run(name)
            dominated = coarse[name][0]["upper"] <= results[main][0]["lower"]
            results[name] = coarse[name] if dominated else run(name, h, max_product)  # type: ignore[operator]
    grid: dict[str, object] = {}
    prec = current_prec()
    for name, (ends, lats) in results.items():
        low_s = Enclosure.from_ball(ends["lower"], prec).lower_str()
        up_s = Enclosure.from_ball(ends["upper"], prec).upper_str()
        record: dict[str, object] = dict(lattice_record(lats[0][2]))
        if len(lats) > 1:
            record = {"parts": [{"mechanism": p.mechanism, "steps": n, **lattice_record(lat)} for p, n, lat in lats]}
        own = (lower_on or {}).get((name, h))
        if own is not None:
            record["lower_lattice"] = lattice_record(own[0][2])
        grid[name] = {**record, "lower": low_s, "upper": up_s}
    grid.update(steps=steps, prune_floor=str(floor))
    ends_all = [r[0] for r in results.values()]
    low, up = ends_all[0]["lower"], ends_all[0]["upper"]
    for ends in ends_all[1:]:  # exact balls (radius 0): max is exact
        low, up = low.max(ends["lower"]), up.max(ends["upper"])
    if low > up:  # both are proved, so this cannot happen unless a bound is wrong: refuse loudly
        raise AssertionError(f"lattice bounds cross: {low} > {up}")
    # the ends are exact dyadic balls: an Enclosure of exactly [low, up] (a ball union would round
    # its radius up and push a lower end of 0 below 0)
    enc = Enclosure.from_bounds(Enclosure.from_ball(low).lower, Enclosure.from_ball(up).upper, current_prec())
    return PldResult("epsilon" if delta is not None else "delta", enc, grid)
