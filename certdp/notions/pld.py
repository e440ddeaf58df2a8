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

**Lower bound: a dominated pair by balancing** (:func:`lower_lattice_pmf`; docs/math.md §10).
Cells are split at random between groups that sit on the lattice points (a post-processing), with
fractions checked in ball arithmetic so that every group's loss is >= its lattice point; lowering
the losses to the lattice then lowers every delta of the composition. Second order in h, except
for the mass a cell cannot place (rounded down to the cell's left edge).

Measured at q = 0.01, sigma = 0.8, 500 steps, delta = 1e-5 (remove): the certified eps is in
[2.385055, 2.399654] at h = 2^-10 and [2.396957, 2.399491] at h = 2^-11 (docs/math.md §10).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from certdp.enclose import Ball, Enclosure, current_prec, power_pruned, to_ball, workprec
from certdp.errors import InvalidArgument, LimitExceeded, PrecisionExhausted, Unsupported, invalid
from certdp.pairs import Composition, PrivacyPair, SubsampledGaussian

#: coefficients below this are pruned during the powers (their mass is counted in the bound)
PRUNE_FLOOR = Fraction(1, 10**40)


@dataclass(frozen=True)
class LossLattice:
    """The lattice of the upper bound: spacing ``h`` (exact) and the index range (lo, hi] of the
    finite cells of one step; losses <= lo h sit at lo h, losses > hi h at +inf."""

    h: Fraction
    lo: int
    hi: int

    def __post_init__(self) -> None:
        if not self.h > 0:
            raise invalid("h", self.h, "must be > 0")
        if not self.lo < self.hi:
            raise InvalidArgument(f"lattice=({self.lo}, {self.hi}) must have lo < hi")


@dataclass(frozen=True)
class LatticePmf:
    """P-masses of the dominating lattice pair of one step: ``coeffs[i]`` at loss (lo + i) h,
    ``p_inf`` at +inf (Q-only atoms carry no P-mass and never count in delta)."""

    lattice: LossLattice
    coeffs: list[Ball]
    p_inf: Ball


def _cell_masses(pair: PrivacyPair, lattice: LossLattice) -> tuple[list[tuple[Ball, Ball]], list[Ball], list[Ball]]:
    """(tails, p, w): tails[i] = (P(L > (lo+i)h), Q(L > (lo+i)h)); p[i], w[i] the P- and Q-mass of
    cell i = ((lo+i-1)h, (lo+i)h] for i >= 1 (p[0] = w[0] = 0: no cell)."""
    h, lo, hi = lattice.h, lattice.lo, lattice.hi
    tails = []
    for k in range(lo, hi + 1):
        t = pair.loss_tail(to_ball(h * k))
        if t is None:
            raise Unsupported(f"{pair.mechanism}: no loss distribution, so no lattice accountant (use rdp)")
        tails.append(t)
    zero = to_ball(0)
    p = [zero] + [tails[i - 1][0] - tails[i][0] for i in range(1, len(tails))]
    w = [zero] + [tails[i - 1][1] - tails[i][1] for i in range(1, len(tails))]
    return tails, p, w


def upper_lattice_pmf(pair: PrivacyPair, lattice: LossLattice) -> LatticePmf:
    """The dominating lattice pair of ``pair`` by mass splitting (module docstring).

    Contract: the returned masses contain those of a pair that dominates (P, Q) (the original is
    a post-processing of it), provided ``pair.loss_tail`` encloses the tails of its loss
    (docs/math.md §10; proofs_checks ``lattice_mass_splitting``).
    """
    h, lo = lattice.h, lattice.lo
    tails, p, w = _cell_masses(pair, lattice)
    coeffs = [1 - tails[0][0]]  # the cell (-inf, lo h]: its P-mass at lo h
    for i in range(1, len(tails)):
        k = lo + i
        ea, eb = to_ball(-(h * (k - 1))).exp(), to_ball(-(h * k)).exp()
        alpha_a = ((w[i] - p[i] * eb) / (ea - eb)).intersection(to_ball(0).union(p[i].upper()))
        coeffs[-1] = coeffs[-1] + alpha_a
        coeffs.append(p[i] - alpha_a)
    return LatticePmf(lattice, coeffs, tails[-1][0])


def lower_lattice_pmf(pair: PrivacyPair, lattice: LossLattice) -> LatticePmf:
    """P-masses of a lattice sub-measure whose delta under composition is <= the pair's (balancing;
    module docstring). ``p_inf`` is 0.

    Group i (loss (lo+i)h) takes the fraction u_i of cell i (losses just below) and v_i of cell
    i+1 (just above), exact dyadic numbers with u_i |B_i| <= v_i A_i certified, where
    B_i = p_i - e^{(lo+i)h} w_i <= 0 and A_i = p_{i+1} - e^{(lo+i)h} w_{i+1} >= 0: the group's loss
    log(P/Q) is then >= (lo+i)h. What a cell keeps, 1 - u_k - v_{k-1} >= 0, is a group of its own
    with loss > its left edge. Randomly splitting the outputs of a cell is a post-processing, so
    these groups form a pair dominated by (P, Q); lowering each group's loss to the lattice point
    below (keeping P-masses) lowers every delta of a composition (g_eps is nondecreasing); and the
    mass outside (lo h, hi h] is dropped or put at hi h, which lowers it too. Floats choose the
    fractions (the stable direction of the recursion: down from the top above the mode, up from
    the bottom below it); the certified inequalities make any choice sound.

    Contract: coefficient i is <= (enclosed) the P-mass that a pair dominated by (P, Q) puts at a
    loss >= (lo+i)h, for fractions checked as above (docs/math.md §10).
    """
    h, lo = lattice.h, lattice.lo
    tails, p, w = _cell_masses(pair, lattice)
    n = len(tails)
    zero = to_ball(0)
    # A[i], B[i] for the boundary at (lo+i)h, i = 1..n-2 (cells i and i+1 both exist)
    A, B = [zero] * n, [zero] * n
    for i in range(1, n - 1):
        e = to_ball(h * (lo + i)).exp()
        B[i] = p[i] - e * w[i]
        A[i] = p[i + 1] - e * w[i + 1]
    used = [Fraction(0)] * (n + 1)  # fraction of cell k given away so far
    u, v = [Fraction(0)] * n, [Fraction(0)] * n
    mode = max(range(n), key=lambda k: float(p[k].mid()))

    def settle(i: int, below_first: bool) -> None:
        """Choose u_i (of cell i) and v_i (of cell i+1) with u_i |B_i| <= v_i A_i certified."""
        a_lo, b_hi = A[i].lower(), (-B[i]).upper()
        if not (a_lo > 0 and b_hi > 0):
            return
        room_below, room_above = 1 - used[i], 1 - used[i + 1]
        if room_below <= 0 or room_above <= 0:
            return
        ratio = float(a_lo / b_hi)  # u/v at balance (a float: only steers)
        if below_first:  # take all the room below, as much above as balance needs
            ui = room_below
            vi = min(room_above, _dyadic_up(float(ui) / ratio))
            ui = min(ui, _dyadic_down(float(vi) * ratio))
        else:
            vi = room_above
            ui = min(room_below, _dyadic_down(float(vi) * ratio))
            vi = min(vi, _dyadic_up(float(ui) / ratio))
        while ui > 0 and not to_ball(ui) * (-B[i]).upper() <= to_ball(vi) * A[i].lower():
            ui = _dyadic_down(float(ui) * (1 - 2.0**-30))  # floats rounded the balance the wrong way
        u[i], v[i] = ui, vi
        used[i] += ui
        used[i + 1] += vi

    for i in range(n - 2, max(mode, 1) - 1, -1):  # above the mode the density falls: from the top
        settle(i, below_first=False)
    for i in range(1, min(mode, n - 1)):  # below it the density rises: from the bottom
        settle(i, below_first=True)
    coeffs = [zero] * n
    for i in range(1, n - 1):
        coeffs[i] += to_ball(u[i]) * p[i] + to_ball(v[i]) * p[i + 1]
    for k in range(1, n):  # what cell k keeps: its loss is > (lo+k-1)h
        keep = 1 - used[k]
        if keep < 0:
            raise AssertionError("cell fractions exceed 1")  # construction invariant
        coeffs[k - 1] += to_ball(keep) * p[k]
    coeffs[-1] += tails[-1][0]  # losses above hi h, lowered to hi h
    return LatticePmf(lattice, [c.max(zero) if c.lower() < 0 else c for c in coeffs], zero)


def _dyadic_down(x: float) -> Fraction:
    """A dyadic number <= x, >= 0 (x a float)."""
    return Fraction(max(x, 0.0)) if math.isfinite(x) else Fraction(0)


def _dyadic_up(x: float) -> Fraction:
    """A dyadic number >= x (x a finite float >= 0)."""
    return Fraction(x) if math.isfinite(x) else Fraction(1)


def lattice_for(pair: PrivacyPair, h: Fraction, tail_bits: int = 140) -> LossLattice:
    """The smallest lattice (by doubling, then bisection of each end) whose ends hold P-mass below
    2^-tail_bits: P(L > hi h) and P(L <= lo h). The choice only steers tightness (the bound holds
    for any lattice: mass beyond the ends is placed at lo h or at +inf, as in the module
    docstring), so it is made at 64 bits.

    Contract: a valid LossLattice (lo < hi); no enclosure.
    """
    limit = 2**26  # cells per step: beyond, the powers would not fit in memory anyway

    def small(k: int, upper: bool) -> bool:
        with workprec(64):
            tails = pair.loss_tail(to_ball(h * k))
        if tails is None:
            raise Unsupported(f"{pair.mechanism}: no loss distribution, so no lattice accountant (use rdp)")
        mass = tails[0] if upper else 1 - tails[0]
        return bool(mass < to_ball(2) ** -tail_bits)

    def end(sign: int) -> int:
        k = sign * max(1, math.ceil(1 / h))
        while not small(k, sign > 0):
            k *= 2
            if abs(k) > limit:
                raise LimitExceeded(f"h={h}: the loss range needs more than {limit} lattice cells per step")
        inner = 0  # the bisection keeps small(k) and moves toward 0, where the end test may fail
        while abs(k - inner) > 1:
            mid = (k + inner) // 2
            k, inner = (mid, inner) if small(mid, sign > 0) else (k, mid)
        return k

    return LossLattice(h, end(-1), end(1))


@dataclass(frozen=True)
class Composed:
    """The pruned n-fold power of a lattice pmf, with suffix sums so that the bound at any eps
    costs O(1): sum_{kh > eps} c_k g_eps(kh) = S0(j) - e^eps S1(j), S0(j) = sum_{i >= j} c_i,
    S1(j) = sum_{i >= j} c_i e^{-(base + i) h}, j the first index whose loss exceeds eps."""

    pmf: LatticePmf
    steps: int
    base: int
    s0: list[Ball]
    s1: list[Ball]
    extra: Ball  # pruned mass + 1 - (1 - p_inf)^n: counted at g = 1

    def _first_index(self, e: Ball) -> int:
        """The first index whose loss (base + j) h is certainly > e (len(s0) if none)."""
        h = to_ball(self.pmf.lattice.h)
        if not e < h * (self.base + len(self.s0)):
            return len(self.s0)  # beyond every atom (also a huge or infinite eps)
        if e < h * self.base:
            return 0
        j = max(0, math.floor(float(e.mid()) / float(self.pmf.lattice.h)) - self.base - 2)
        while j < len(self.s0) and not h * (self.base + j) > e:
            j += 1
        return j

    def delta_upper(self, eps: Ball) -> Ball:
        """Contract: the upper end bounds delta_n(eps) of every pair the lattice pair dominates
        (module docstring; exact eps: a ball eps uses its lower end, delta being decreasing)."""
        e = to_ball(eps.lower()) if not eps.is_exact() else eps
        j = self._first_index(e)
        if j >= len(self.s0):
            return self.extra
        return self.s0[j] - e.exp() * self.s1[j] + self.extra

    def delta_lower(self, eps: Ball) -> Ball:
        """Contract: for a pmf from :func:`lower_lattice_pmf`, the lower end is <= delta_n(eps) of
        the pair (the sum over the pruned power, a sub-measure; an inexact eps uses its upper end)."""
        e = to_ball(eps.upper()) if not eps.is_exact() else eps
        j = self._first_index(e)
        if j >= len(self.s0):
            return to_ball(0)
        return (self.s0[j] - e.exp() * self.s1[j]).max(to_ball(0))


def compose(pmf: LatticePmf, steps: int) -> Composed:
    """Contract: see Composed; c is power_pruned(pmf.coeffs, steps) (certdp.enclose.lattice:
    coefficient-wise <= the exact power, with the dropped mass bounded)."""
    if steps < 1:
        raise invalid("steps", steps, "must be >= 1")
    h, lo = pmf.lattice.h, pmf.lattice.lo
    length = (len(pmf.coeffs) - 1) * steps + 1
    offset, c, dropped = power_pruned(pmf.coeffs, steps, length, to_ball(PRUNE_FLOOR))
    base = lo * steps + offset
    s0, s1 = [to_ball(0)] * (len(c) + 1), [to_ball(0)] * (len(c) + 1)
    step = to_ball(-h).exp()
    weight = (to_ball(-h) * (base + len(c) - 1)).exp()
    for i in range(len(c) - 1, -1, -1):
        s0[i] = s0[i + 1] + c[i]
        s1[i] = s1[i + 1] + c[i] * weight
        weight = weight / step
    extra = dropped + 1 - (1 - pmf.p_inf) ** steps
    return Composed(pmf, steps, base, s0[:-1], s1[:-1], extra)


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


#: default lattice spacing of the command line (2^-11: eps within about 1e-3 relative for
#: DP-SGD settings such as q = 0.01, sigma = 0.8, 500 steps; docs/math.md §10)
DEFAULT_H = Fraction(1, 2**11)


@dataclass(frozen=True)
class PldResult:
    """A two-sided enclosure from the lattice bounds with the grid that recomputes it: ``enclosure``
    is [lower, upper] of eps (or delta); its upper end is the sound value; ``grid`` holds the
    lattice of each direction, the steps and the pruning floor."""

    quantity: str
    enclosure: Enclosure
    grid: dict[str, object]


def _steps_and_pairs(pair: PrivacyPair) -> tuple[list[PrivacyPair], int]:
    """(pairs of each direction, steps) for a pair or a composition of one pair."""
    steps = 1
    if isinstance(pair, Composition):
        if len(pair.parts) != 1:
            raise Unsupported("via=pld: compositions of different pairs are not supported yet (use rdp)")
        pair, steps = pair.parts[0]
    if isinstance(pair, SubsampledGaussian) and pair.direction == "both":
        return [SubsampledGaussian(pair.q, pair.sigma, d) for d in ("remove", "add")], steps
    return [pair], steps


def pld_bounds(
    pair: PrivacyPair, *, delta: Fraction | None = None, eps: Fraction | None = None, h: Fraction = DEFAULT_H
) -> PldResult:
    """Two-sided certified eps at ``delta`` (or delta at ``eps``) of a pair or an n-fold composition
    of one pair, by the lattice bounds; ``both`` directions take the larger value of each end.

    Contract: lower <= the exact eps(delta) (resp. delta(eps)) <= upper, and upper is a sound
    value (module docstring; docs/math.md §10); Unsupported for pairs without ``loss_tail``.
    """
    if (delta is None) == (eps is None):
        raise InvalidArgument("give exactly one of delta and eps")
    pairs, steps = _steps_and_pairs(pair)
    lows, ups, grid = [], [], {}
    for p in pairs:
        lattice = lattice_for(p, h)
        up, low = compose(upper_lattice_pmf(p, lattice), steps), compose(lower_lattice_pmf(p, lattice), steps)
        name = getattr(p, "direction", "pair")
        grid[name] = {"h": str(h), "lo": lattice.lo, "hi": lattice.hi}
        # exact ends (balls of radius 0): the larger of each end over the directions
        if delta is not None:
            ups.append(to_ball(eps_upper(up, delta)))
            lows.append(to_ball(eps_lower(low, delta)))
        else:
            e = to_ball(eps)
            ups.append(up.delta_upper(e).upper())
            lows.append(low.delta_lower(e).lower().max(to_ball(0)))
    grid.update(steps=steps, prune_floor=str(PRUNE_FLOOR))
    low, up = lows[0], ups[0]
    for lo_i, up_i in zip(lows[1:], ups[1:], strict=True):
        low, up = low.max(lo_i), up.max(up_i)
    if low > up:  # both are proved, so this cannot happen unless a bound is wrong: refuse loudly
        raise AssertionError(f"lattice bounds cross: {low} > {up}")
    enc = Enclosure.from_ball(low.union(up), current_prec())
    return PldResult("epsilon" if delta is not None else "delta", enc, grid)
