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
from certdp.errors import InvalidArgument, LimitExceeded, PrecisionExhausted, Unsupported, invalid
from certdp.pairs import Composition, PrivacyPair, SubsampledGaussian
from certdp.pairs.base import LossGrid
from certdp.pairs.params import exact_str, real

#: most cells of one step's lattice (one Arb tail evaluation each, ~0.1 ms; the powers grow with
#: it); the certificate verifier's limit (certdp.cert.limits.MAX_PLD_CELLS) is the same
MAX_CELLS = 1 << 17

#: most composed steps of the lattice accountant (the powers' lengths grow about as their square
#: root; beyond, RDP is the accountant to use)
MAX_STEPS = 10**5

#: coefficients below this are pruned during the powers (their mass is counted in the bound) when
#: no delta sets the scale (delta(eps) queries); see :func:`resolution`
PRUNE_FLOOR = Fraction(1, 10**40)


def resolution(delta: Fraction | None, steps: int) -> tuple[Fraction, int]:
    """(prune floor, tail bits) for an eps(delta) query: mass that can only move delta by a
    fraction of about 2^-24 of delta is not resolved. The pruned mass is at most (coefficients
    pruned) x floor x steps and the tails beyond the lattice hold steps x 2^-tail_bits, each
    counted at full weight in the upper bound and lost in the lower. floor = 2^-(log2(1/delta) + 40)
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
    return Fraction(1, 2 ** (scale + 40)), scale + math.ceil(math.log2(max(steps, 1))) + 24


@dataclass(frozen=True)
class LossLattice:
    """The lattice of one step: points ``offset + k h`` (exact), and the index range (lo, hi] of the
    finite cells (point(k-1), point(k)]; losses <= point(lo) sit at point(lo) (upper bound) or are
    dropped (lower bound), losses > point(hi) go to +inf (upper) or to point(hi) (lower)."""

    h: Fraction
    lo: int
    hi: int
    offset: Fraction = Fraction(0)

    def __post_init__(self) -> None:
        if not self.h > 0:
            raise invalid("h", self.h, "must be > 0")
        if not self.lo < self.hi:
            raise InvalidArgument(f"lattice=({self.lo}, {self.hi}) must have lo < hi")
        if not 0 <= self.offset < self.h:
            raise invalid("offset", self.offset, "must be in [0, h)")

    def point(self, k: int) -> Fraction:
        """Contract: the loss offset + k h at index k, exact."""
        return self.offset + self.h * k


@dataclass(frozen=True)
class LatticePmf:
    """P-masses of the dominating lattice pair of one step: ``coeffs[i]`` at loss point(lo + i),
    ``p_inf`` at +inf (Q-only atoms carry no P-mass and never count in delta)."""

    lattice: LossLattice
    coeffs: list[Ball]
    p_inf: Ball


#: (tails, p, w) of a lattice: see _cell_masses
Cells = tuple[list[tuple[Ball, Ball]], list[Ball], list[Ball]]


def _cell_masses(pair: PrivacyPair, lattice: LossLattice) -> Cells:
    """(tails, p, w): tails[i] = (P(L > l), Q(L > l)) at l = point(lo+i); p[i], w[i] the P- and
    Q-mass of cell i = (point(lo+i-1), point(lo+i)] for i >= 1 (p[0] = w[0] = 0: no cell)."""
    tails = []
    for point in _point_balls(lattice):
        t = pair.loss_tail(point)
        if t is None:
            raise Unsupported(f"{pair.mechanism}: no loss distribution, so no lattice accountant (use rdp)")
        tails.append(t)
    zero = to_ball(0)
    p = [zero] + [tails[i - 1][0] - tails[i][0] for i in range(1, len(tails))]
    w = [zero] + [tails[i - 1][1] - tails[i][1] for i in range(1, len(tails))]
    return tails, p, w


def upper_lattice_pmf(pair: PrivacyPair, lattice: LossLattice, cells: Cells | None = None) -> LatticePmf:
    """The dominating lattice pair of ``pair`` by mass splitting (module docstring).

    Contract: the returned masses contain those of a pair that dominates (P, Q) (the original is
    a post-processing of it), provided ``pair.loss_tail`` encloses the tails of its loss
    (docs/math.md §10; proofs_checks ``lattice_mass_splitting``).
    """
    tails, p, w = cells if cells is not None else _cell_masses(pair, lattice)
    coeffs = [1 - tails[0][0]]  # the cell (-inf, point(lo)]: its P-mass at point(lo)
    exps = [(-x).exp() for x in _point_balls(lattice)]
    for i in range(1, len(tails)):
        ea, eb = exps[i - 1], exps[i]
        alpha_a = ((w[i] - p[i] * eb) / (ea - eb)).intersection(to_ball(0).union(p[i].upper()))
        coeffs[-1] = coeffs[-1] + alpha_a
        coeffs.append(p[i] - alpha_a)
    return LatticePmf(lattice, coeffs, tails[-1][0])


def lower_lattice_pmf(pair: PrivacyPair, lattice: LossLattice, cells: Cells | None = None) -> LatticePmf:
    """P-masses of a lattice sub-measure whose delta under composition is <= the pair's (balancing;
    module docstring). ``p_inf`` is 0.

    The coefficient at point l is the total P-mass of the groups of :func:`_lower_groups` placed at
    l, each a post-processing group of (P, Q) whose loss log(P_g/Q_g) is >= l (certified). Lowering
    each group's loss to its point (keeping P-masses) lowers every delta of a composition, since
    g_eps is nondecreasing; the mass below point(lo) is dropped, which lowers it too.

    Contract: coefficient i is <= (enclosed) the P-mass that a pair dominated by (P, Q) puts at a
    loss >= point(lo+i), for fractions checked in ball arithmetic (docs/math.md §10).
    """
    groups = _lower_groups(pair, lattice, cells if cells is not None else _cell_masses(pair, lattice))
    zero = to_ball(0)
    coeffs = [zero] * (lattice.hi - lattice.lo + 1)
    for i, mass_p, _ in groups:
        coeffs[i] += mass_p
    return LatticePmf(lattice, [c.max(zero) if c.lower() < 0 else c for c in coeffs], zero)


#: a group of the lower bound: (index i, P-mass, Q-mass), with loss log(P/Q) >= point(lo + i)
Group = tuple[int, Ball, Ball]


def _lower_groups(pair: PrivacyPair, lattice: LossLattice, cells: Cells) -> list[Group]:
    """The groups of the balancing construction (docs/math.md §10).

    Group i (at l_i = point(lo+i)) takes the fraction u_i of cell i (losses just below l_i) and v_i
    of cell i+1 (just above), exact dyadic numbers with u_i |B_i| <= v_i A_i certified, where
    B_i = p_i - e^{l_i} w_i <= 0 and A_i = p_{i+1} - e^{l_i} w_{i+1} >= 0: its loss is then >= l_i.
    Floats choose the fractions along the stable direction of the recursion: down from the top to
    the meeting cell m near the mode, up from the bottom to m - 1. Cell m is cut at a loss c into
    contiguous pieces (:func:`_split_meeting_cell`): (c, b] joins group m and (a, c] group m - 1.
    What a cell keeps, 1 - u_k - v_{k-1} >= 0, is a group at the cell's left edge (its loss is
    above it); the mass above point(hi) is a group at point(hi).
    """
    tails, p, w = cells
    n = len(tails)
    zero = to_ball(0)
    A, B = [zero] * n, [zero] * n  # at the boundary l_i, i = 1..n-2 (cells i and i+1 both exist)
    points = _point_balls(lattice)
    for i in range(1, n - 1):
        e = points[i].exp()
        B[i] = p[i] - e * w[i]
        A[i] = p[i + 1] - e * w[i + 1]
    # fractions are integers over ONE (exact dyadics; Python ints keep the bookkeeping exact and fast)
    used = [0] * (n + 1)  # of cell k given away so far
    u, v = [0] * n, [0] * n

    def settle(i: int, below_first: bool) -> None:
        """Choose u_i (of cell i) and v_i (of cell i+1) with u_i |B_i| <= v_i A_i certified."""
        a_lo, b_hi = A[i].lower(), (-B[i]).upper()
        if not (a_lo > 0 and b_hi > 0):
            return
        room_below, room_above = ONE - used[i], ONE - used[i + 1]
        if room_below <= 0 or room_above <= 0:
            return
        ratio = float(a_lo / b_hi)  # u/v at balance (a float: only steers)
        if not 0 < ratio < math.inf:  # underflow or overflow of the float: leave the cells alone
            return
        if below_first:  # take all the room below, as much above as balance needs
            ui = room_below
            vi = min(room_above, _ceil(ui / ratio))
            ui = min(ui, _floor(vi * ratio))
        else:
            vi = room_above
            ui = min(room_below, _floor(vi * ratio))
            vi = min(vi, _ceil(ui / ratio))
        shrink = 2.0**-30  # floats rounded the balance the wrong way (or the balls are wide): back off
        while ui > 0 and not _frac(ui) * b_hi <= _frac(vi) * a_lo:
            ui, shrink = _floor(ui * (1 - shrink)), min(2 * shrink, 1.0)
        u[i], v[i] = ui, vi
        used[i] += ui
        used[i + 1] += vi

    groups: list[Group] = []
    m = _meeting_cell(pair, lattice, tails, p, A, B)
    for i in range(n - 2, m if m is not None else 0, -1):  # down from the top to m + 1
        settle(i, below_first=False)
    if m is not None:
        # group m: what is left of cell m + 1 and the upper piece of cell m
        vm = ONE - used[m + 1] if A[m].lower() > 0 else 0
        upper, lower = _split_meeting_cell(pair, lattice, m, tails, _frac(vm) * A[m].lower())
        groups.append((m, upper[0] + _frac(vm) * p[m + 1], upper[1] + _frac(vm) * w[m + 1]))
        used[m + 1] += vm
        used[m] = ONE
        for i in range(1, m - 1):  # up from the bottom to m - 2
            settle(i, below_first=True)
        # group m - 1: its share of cell m - 1, balanced by the lower piece of cell m
        ui = ONE - used[m - 1]
        avail = (lower[0] - points[m - 1].exp() * lower[1]).lower()  # its A
        need = (-B[m - 1]).upper()
        shrink = 2.0**-30
        while ui > 0 and not _frac(ui) * need <= avail:
            ui = _floor(min(ui, ONE * float(avail / need) if need > 0 else ONE) * (1 - shrink))
            shrink = min(2 * shrink, 1.0)
        used[m - 1] += ui
        groups.append((m - 1, _frac(ui) * p[m - 1] + lower[0], _frac(ui) * w[m - 1] + lower[1]))
    for i in range(1, n - 1):
        if u[i] or v[i]:
            ui, vi = _frac(u[i]), _frac(v[i])
            groups.append((i, ui * p[i] + vi * p[i + 1], ui * w[i] + vi * w[i + 1]))
    for k in range(1, n):  # what cell k keeps: its loss is > point(lo+k-1)
        keep = ONE - used[k]
        if keep < 0:
            raise AssertionError("cell fractions exceed 1")  # construction invariant
        if keep > 0:
            groups.append((k - 1, _frac(keep) * p[k], _frac(keep) * w[k]))
    groups.append((n - 1, tails[-1][0], tails[-1][1]))  # losses above point(hi)
    return groups


#: the unit of the balancing fractions: a fraction is an int k, meaning k / ONE
ONE = 2**50


def _frac(k: int) -> Ball:
    """The exact ball k / ONE (k <= ONE < 2^53, so the float is exact)."""
    return to_ball(k * 2.0**-50)


def _floor(x: float) -> int:
    """An int <= x, >= 0 (0 for nan); x a float in units of 1/ONE."""
    return max(math.floor(x), 0) if math.isfinite(x) else 0


def _ceil(x: float) -> int:
    """An int >= x (ONE for inf or nan: the callers cap it by the room left)."""
    return math.ceil(x) if math.isfinite(x) else ONE


def _point_balls(lattice: LossLattice) -> list[Ball]:
    """Balls of point(lo + i), i = 0..hi - lo: exact for a dyadic h and offset (sums of dyadics
    are exact at any precision that holds their bits), else balls that contain them (an aligned
    lattice's h may be a rational such as 2/3)."""
    if lattice.h.denominator & (lattice.h.denominator - 1) == 0 and (
        lattice.offset.denominator & (lattice.offset.denominator - 1) == 0
    ):
        off, h = to_ball(lattice.offset), to_ball(lattice.h)
        return [off + h * k for k in range(lattice.lo, lattice.hi + 1)]
    return [to_ball(lattice.point(k)) for k in range(lattice.lo, lattice.hi + 1)]


def _imbalance(groups: list[Group], lattice: LossLattice, below: int) -> float:
    """sum of P_g (log(P_g/Q_g) - l_g) over the groups with index < ``below``, in floats: the
    first-order loss of the lower bound (what lowering the groups to their points gives away)."""
    total = 0.0
    for i, mass_p, mass_q in groups:
        pf, qf = float(mass_p.mid()), float(mass_q.mid())
        if i < below and pf > 0 and qf > 0:
            total += pf * (math.log(pf / qf) - float(lattice.point(lattice.lo + i)))
    return total


def choose_offset(
    pair: PrivacyPair, h: Fraction, tries: int = 16, refine: int = 8, base: LossLattice | None = None
) -> Fraction:
    """The lattice offset in [0, h) whose lower-bound construction gives away the least, measured
    in floats (:func:`_imbalance`) on a window of 2 x 160 cells around the P-median of the loss: a
    scan of ``tries`` offsets, then ``refine`` halvings of a pattern search around the best.

    Why: the balancing sweeps arrive at the mode with a phase that the offset moves continuously,
    and what they cannot balance there is lost at first order in the cell's mass. Where the loss
    has a hard edge with much mass near it (the subsampled Gaussian: L >= log(1 - q)), that loss
    varies with the offset from nearly 0 to over 100 h^2 per step (q = 0.004, sigma = 0.52), and n
    steps multiply it. The choice only steers tightness: every offset gives sound bounds.

    Contract: a dyadic Fraction in [0, h); no enclosure.
    """
    with workprec(64):
        base = base if base is not None else lattice_for(pair, h)
        k_lo, k_hi = base.lo, base.hi  # P(L > point(k_lo)) > 1/2 >= P(L > point(k_hi))
        while k_hi - k_lo > 1:
            mid = (k_lo + k_hi) // 2
            t = pair.loss_tail(to_ball(base.point(mid)))
            k_lo, k_hi = (mid, k_hi) if t is not None and t[0] > 0.5 else (k_lo, mid)

        def cost(offset: Fraction) -> float:
            # the window lies inside the base lattice (an offset moves points by less than h); a
            # lattice of its own per offset (140 tail bits) once exceeded the cell limit at a fine h
            window = LossLattice(h, max(base.lo, k_lo - 160), min(base.hi, k_lo + 160), offset)
            groups = _lower_groups(pair, window, _cell_masses(pair, window))
            return _imbalance(groups, window, below=window.hi - window.lo - 8)  # not the cut top

        costs = {h * Fraction(j, tries): 0.0 for j in range(tries)}
        for offset in costs:
            costs[offset] = cost(offset)
        best = min(costs, key=costs.__getitem__)
        step = h / tries
        for _ in range(refine):
            step /= 2
            for cand in (best - step, best + step):
                cand %= h
                if cand not in costs:
                    costs[cand] = cost(cand)
            best = min(costs, key=costs.__getitem__)
    return best


def _meeting_cell(
    pair: PrivacyPair, lattice: LossLattice, tails: list[tuple[Ball, Ball]], p: list[Ball], A: list[Ball], B: list[Ball]
) -> int | None:
    """The cell m (2 <= m <= n - 2) where the balancing sweep down from the top (groups > m) and the
    sweep up from the bottom (groups < m - 1) meet, among the cells from 64 below the mode of the
    cell masses to 1 above it, chosen so that the pieces of cell m balance groups m and m - 1 best
    (what stays unbalanced costs its A-content; the sweeps alternate, so the mismatch depends on
    the parity of m). The bottom-up sweep is not used above the mode, where it is unstable and
    pairs whole cells. Floats only steer: every fraction and cut is certified afterwards. None if
    there are fewer than 4 cells."""
    n = len(p)
    if n < 4:
        return None
    lo = lattice.lo
    pf = [float(x.mid()) for x in p]
    af = [float(x.mid()) for x in A]
    bf = [float(-x.mid()) for x in B]
    mode = max(range(n), key=lambda k: pf[k])

    def sweep(order: range, down: bool) -> tuple[list[float], list[float]]:
        used, u, v = [0.0] * (n + 1), [0.0] * n, [0.0] * n
        for i in order:
            r = af[i] / bf[i] if af[i] > 0 and bf[i] > 0 else 0.0
            if not 0 < r < math.inf:
                continue
            if down:
                vi = 1 - used[i + 1]
                ui = min(1 - used[i], vi * r)
                vi = min(vi, ui / r)
            else:
                ui = 1 - used[i]
                vi = min(1 - used[i + 1], ui / r)
                ui = min(ui, vi * r)
            u[i], v[i] = ui, vi
            used[i] += ui
            used[i + 1] += vi
        return u, v

    u_top, _ = sweep(range(n - 2, 0, -1), True)
    _, v_bottom = sweep(range(1, n - 1), False)

    def mismatch(m: int, k: int) -> float:
        """The float cost of meeting at cell m, its cut resolved to h/k."""
        a = lattice.point(lo + m - 1)
        ea, eb = math.exp(float(a)), math.exp(float(lattice.point(lo + m)))
        credit = (1 - u_top[m + 1]) * af[m]
        cuts = [tails[m - 1]]
        for j in range(1, k):
            t = pair.loss_tail(to_ball(a + lattice.h * Fraction(j, k)))
            assert t is not None  # the caller has the tails of this pair
            cuts.append(t)
        cf = [(float(t[0].mid()), float(t[1].mid())) for t in [*cuts, tails[m]]]
        j = k  # the lowest cut at which group m is still balanced
        while j > 0 and (cf[j - 1][0] - cf[k][0]) - eb * (cf[j - 1][1] - cf[k][1]) + credit >= 0:
            j -= 1
        slack = (cf[j][0] - cf[k][0]) - eb * (cf[j][1] - cf[k][1]) + credit  # > 0 only at j = 0
        avail = (cf[0][0] - cf[j][0]) - ea * (cf[0][1] - cf[j][1])
        need = (1 - v_bottom[m - 2]) * bf[m - 1]
        return slack + abs(need - avail)

    # every cell from 64 below the mode to 1 above: the best meeting can lie far below the mode
    # when the density rises over many cells (measured: 17 h^2 per step at 8 below, 0.75 h^2 at the
    # bottom); a coarse cut first, then the three best at h/32
    try:
        with workprec(64):
            candidates = range(max(2, mode - 64), min(n - 2, mode + 1) + 1)
            rough = sorted(candidates, key=lambda m: mismatch(m, 8))[:3]
            best = min(rough, key=lambda m: mismatch(m, 32)) if rough else None
    except (OverflowError, ZeroDivisionError, PrecisionExhausted):
        return None  # floats cannot steer here (extreme losses): the plain sweeps, no cut
    return best


def _split_meeting_cell(
    pair: PrivacyPair, lattice: LossLattice, m: int, tails: list[tuple[Ball, Ball]], credit: Ball
) -> tuple[tuple[Ball, Ball], tuple[Ball, Ball]]:
    """Cut the cell m = (a, b] where the two balancing sweeps meet at a dyadic loss c into the
    upper piece (c, b], which joins group m (at b; ``credit`` = v_m A_m >= 0 is what its share of
    cell m + 1 brings), and the lower piece (a, c], which goes to group m - 1 (at a). Returns the
    (P, Q)-masses of the upper and the lower piece. c is the smallest point found by bisection at
    which P - e^b Q of the upper piece plus ``credit`` is certified >= 0 (group m's loss >= b);
    c = b (no upper piece) always qualifies.

    Why: random fractions of this cell leave a share that neither group can balance (the sweeps
    arrive with fractions that need not add up to 1), and that share, lowered to a, costs first
    order in h (measured: 12% of the largest cell at q = 0.01, sigma = 0.8). Contiguous pieces give
    group m the highest losses, which balance best, and the rest, at losses >= a, goes to m - 1."""
    a, b = lattice.point(lattice.lo + m - 1), lattice.point(lattice.lo + m)
    eb = to_ball(b).exp()

    def pieces(c: Fraction) -> tuple[tuple[Ball, Ball], tuple[Ball, Ball]]:
        t_c = tails[m] if c == b else pair.loss_tail(to_ball(c))
        if t_c is None:  # the caller has the tails of this pair already
            raise Unsupported(f"{pair.mechanism}: no loss distribution")
        up = (t_c[0] - tails[m][0], t_c[1] - tails[m][1])
        return up, (tails[m - 1][0] - t_c[0], tails[m - 1][1] - t_c[1])

    def balanced(c: Fraction) -> bool:
        up = pieces(c)[0]
        return bool(up[0] - eb * up[1] + credit >= 0)

    if not balanced(b):
        return pieces(b)  # credit not proved >= 0: the whole cell goes to m - 1
    low, high = a, b  # balanced(high); the answer lies in [low, high]
    for _ in range(40):
        mid = (low + high) / 2
        low, high = (low, mid) if balanced(mid) else (mid, high)
    return pieces(high)


def lattice_for(
    pair: PrivacyPair, h: Fraction, tail_bits: int = 140, offset: Fraction = Fraction(0), max_cells: int = 0
) -> LossLattice:
    """The smallest lattice of points offset + kh (by doubling, then bisection of each end) whose
    ends hold P-mass below 2^-tail_bits: P(L > point(hi)) and P(L <= point(lo)). The choice only
    steers tightness (the bound holds for any lattice: mass beyond the ends is placed at
    point(lo) or at +inf, as in the module docstring), so it is made at 64 bits.

    LimitExceeded when more than ``max_cells`` (0: MAX_CELLS) cells would be needed.

    Contract: a valid LossLattice (lo < hi); no enclosure.
    """
    limit = max_cells or MAX_CELLS

    def small(k: int, upper: bool) -> bool:
        # 64 bits settle most ends; a mass 1 - P(L > l) below 2^-64 needs more bits to be seen
        # as small (a sum such as the discrete Gaussian's does not keep 1 - tiny to tiny's accuracy)
        for prec in (64, tail_bits + 64):
            with workprec(prec):
                tails = pair.loss_tail(to_ball(offset + h * k))
                if tails is None:
                    raise Unsupported(f"{pair.mechanism}: no loss distribution, so no lattice accountant (use rdp)")
                mass = tails[0] if upper else 1 - tails[0]
                bound = to_ball(2) ** -tail_bits
                if mass < bound or mass >= bound:
                    return bool(mass < bound)
        return False

    def end(sign: int) -> int:
        k = sign * max(1, math.ceil(1 / h))
        while not small(k, sign > 0):
            k *= 2
            if abs(k) > limit:
                raise LimitExceeded(
                    f"h={h}: the loss range of {pair.mechanism} needs more than {limit} lattice cells per step "
                    "(a tiny noise scale?): use a larger h, or --via rdp"
                )
        inner = 0  # the bisection keeps small(k) and moves toward 0, where the end test may fail
        while abs(k - inner) > 1:
            mid = (k + inner) // 2
            k, inner = (mid, inner) if small(mid, sign > 0) else (k, mid)
        return k

    # one more cell below: the balancing of the lower bound starts from an empty cell, so that
    # its bottom sweep never begins with a cell that holds the lowest losses (measured: that can
    # cost 20x more at some offsets)
    lo, hi = end(-1) - 1, end(1)
    if hi - lo > limit:
        raise LimitExceeded(
            f"h={h}: the loss range of {pair.mechanism} needs {hi - lo} lattice cells per step, more than {limit}: "
            "use a larger h, or --via rdp"
        )
    return LossLattice(h, lo, hi, offset)


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

    def delta_upper(self, eps: Ball) -> Ball:
        """Contract: the upper end bounds delta_n(eps) of every pair the lattice pair dominates
        (module docstring; exact eps: a ball eps uses its lower end, delta being decreasing)."""
        e = to_ball(eps.lower()) if not eps.is_exact() else eps
        j = self._first_index(e)
        if j >= len(self.s0):
            return self.extra
        return self.s0[j] - e.exp() * self.s1[j] + self.extra

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


#: default lattice spacing (2^-11: the two-sided eps enclosure of DP-SGD settings such as q = 0.01,
#: sigma = 0.8, 500 steps is within 1e-4 relative; docs/math.md §10)
DEFAULT_H = Fraction(1, 2**11)

#: the factor by which a direction that only has to be shown dominated is coarsened
COARSE_FACTOR = 8

#: the default spacing is halved while one step's lattice has fewer cells than this (and h > MIN_AUTO_H)
AUTO_MIN_CELLS = 2048

#: the finest spacing the default chooses by itself
MIN_AUTO_H = Fraction(1, 2**20)


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


def auto_h(parts: list[tuple[PrivacyPair, int]], tail_bits: int) -> Fraction:
    """The default spacing: DEFAULT_H, halved while the widest part's lattice has fewer than
    AUTO_MIN_CELLS cells (down to MIN_AUTO_H). Why: the error of both bounds scales with h^2
    against the spread of one step's loss; where the losses are tiny (q = 0.001, sigma = 2: 149
    cells at 2^-11) a fixed h resolves eps to 16% only, and a finer lattice there is still small.
    Pairs whose loss is purely atomic choose their own spacing (:func:`aligned_spacing`) and are
    left out.

    Contract: a power of two in [MIN_AUTO_H, DEFAULT_H]; only steers tightness (no enclosure).
    """
    free = [p for p, _ in parts if (g := p.loss_grid()) is None or not g.atomic]
    h = DEFAULT_H
    while free and h > MIN_AUTO_H:
        widest = 0
        for p in free:
            try:
                lat = lattice_for(p, h, tail_bits)
            except LimitExceeded:  # wide enough (the lattice itself will say what it needs)
                return h
            widest = max(widest, lat.hi - lat.lo)
        if widest >= AUTO_MIN_CELLS:
            break
        h /= 2
    return h


@dataclass(frozen=True)
class PldResult:
    """A two-sided enclosure from the lattice bounds with the grid that recomputes it: ``enclosure``
    is [lower, upper] of eps (or delta); its upper end is the sound value; ``grid`` holds, per
    direction, the lattice (h, offset, lo, hi) and the two ends it gave, plus the steps and the
    pruning floor."""

    quantity: str
    enclosure: Enclosure
    grid: dict[str, object]


def directions(pair: PrivacyPair) -> dict[str, list[tuple[PrivacyPair, int]]]:
    """The compositions whose delta curves the lattice bounds compare, by name: a subsampled
    Gaussian with direction ``both`` (alone or as a part) gives a "remove" and an "add"
    composition (the neighbouring relation is one for the whole run, so every such part takes
    the same direction); otherwise one composition, named after the direction of a single
    subsampled-Gaussian part, else "pair".

    Contract: lists of (pair, steps) whose compositions' largest delta curve is that of ``pair``.
    """
    parts = list(pair.parts) if isinstance(pair, Composition) else [(pair, 1)]
    both = any(isinstance(p, SubsampledGaussian) and p.direction == "both" for p, _ in parts)
    if not both:
        single = parts[0][0] if len(parts) == 1 else None
        return {getattr(single, "direction", "pair"): parts}

    def turned(d: str) -> list[tuple[PrivacyPair, int]]:
        def one(p: PrivacyPair) -> PrivacyPair:
            return SubsampledGaussian(p.q, p.sigma, d) if isinstance(p, SubsampledGaussian) else p

        return [(one(p) if getattr(p, "direction", None) == "both" else p, n) for p, n in parts]

    return {d: turned(d) for d in ("remove", "add")}


def _gcd(a: Fraction, b: Fraction) -> Fraction:
    """gcd of two rationals (>= 0, not both 0): gcd(a/b, c/d) = gcd(ad, cb)/(bd)."""
    return Fraction(math.gcd(a.numerator * b.denominator, b.numerator * a.denominator), a.denominator * b.denominator)


def common_grid(pairs: list[PrivacyPair]) -> LossGrid | None:
    """The coarsest grid that holds the atoms of every pair in ``pairs``: anchor that of the first,
    spacing the gcd of their spacings and of their anchors' differences (rationals, so it exists);
    None when some pair has no grid.

    Contract: None, or a LossGrid holding every atom of every pair (atomic iff all are).
    """
    grids = [p.loss_grid() for p in pairs]
    found = [g for g in grids if g is not None]
    if not found or len(found) < len(grids):
        return None
    anchor, spacing = found[0].anchor, Fraction(0)
    for g in found:
        spacing = _gcd(_gcd(spacing, g.spacing), abs(g.anchor - anchor))
    return LossGrid(spacing, anchor, atomic=all(g.atomic for g in found))


def _span(pair: PrivacyPair, h: Fraction, tail_bits: int) -> Fraction:
    """The loss range of one step's lattice at spacing h (an estimate that only steers)."""
    lat = lattice_for(pair, h, tail_bits)
    return (lat.hi - lat.lo) * h


def part_lattices(parts: list[tuple[PrivacyPair, int]], h: Fraction, tail_bits: int) -> list[Part]:
    """One lattice per part, all of one spacing (a product needs it). Without atoms: spacing h,
    each part with its own tuned offset (:func:`offset_lattice`; the offsets add). With atoms:
    the parts' common grid (:func:`common_grid` of the parts with atoms) sets the spacing and
    offset (:func:`aligned_spacing`; a part without atoms makes it a grid with a continuous part,
    so the spacing stays <= h, and takes a tuned offset on it). If that spacing needs more cells
    than MAX_CELLS (grids of very different scales), every part falls back to spacing h with a
    tuned offset, where atoms cost first order.

    Contract: (pair, steps, lattice) with a common spacing; only steers tightness (no enclosure).
    """
    gridded = [p for p, _ in parts if p.loss_grid() is not None]
    if gridded:
        grid = common_grid(gridded)
        assert grid is not None
        free = len(gridded) < len(parts)
        if free:
            grid = LossGrid(grid.spacing, grid.anchor, atomic=False)
        try:
            probe = max(h, min(grid.spacing, 2**20 * h))
            span = max(_span(p, probe, tail_bits) for p, _ in parts)
            spacing, offset = aligned_spacing(grid, h, span)
            return [
                (
                    p,
                    n,
                    lattice_for(p, spacing, tail_bits, offset=offset)
                    if p.loss_grid() is not None
                    else offset_lattice(p, spacing, tail_bits),
                )
                for p, n in parts
            ]
        except LimitExceeded:
            pass  # the fallback below
    return [(p, n, offset_lattice(p, h, tail_bits)) for p, n in parts]


def atom_gap() -> Fraction:
    """How far below an atom of the loss an aligned lattice puts its point, in units of its spacing:
    2^-(prec/2) at the working precision (2^-64 at 128 bits, at least 2^-32), far above the balls'
    radii, so that an atom and its point compare decidedly. The lower bound lowers the atom by
    this much per step, and the upper bound moves about this fraction of its mass one cell up.

    Contract: a power of two in (0, 2^-32]; no enclosure.
    """
    return Fraction(1, 2 ** max(32, current_prec() // 2))


#: with atoms closer than h, an atomic loss is still put on its own grid up to this many cells
ATOMIC_CELLS = 1 << 14


def aligned_spacing(grid: LossGrid, h: Fraction, span: Fraction) -> tuple[Fraction, Fraction]:
    """(spacing, offset) of a lattice whose points sit :func:`atom_gap` spacings below the atoms of
    a loss whose atoms lie on ``grid`` (anchor + d Z), with spacing near h; ``span`` estimates the
    loss range (it only sets how many cells the lattice takes).

    A purely atomic loss takes the grid itself (both bounds are then exact up to the gap and the
    pruning: every cell holds one atom just above its left edge) while that needs at most
    MAX_CELLS cells when d >= h, or ATOMIC_CELLS cells when d < h; beyond, a multiple of d (every
    such atom is then a point, the others sit inside cells). A loss with a continuous part
    (Laplace) takes d / k <= h, with k = ceil(d/h), so every atom is a point, but at most
    MAX_CELLS / 2 cells (a coarser spacing than h when d/h is huge).

    Contract: spacing > 0 and offset in [0, spacing); no enclosure (any lattice is sound).
    """
    d = grid.spacing
    cells = span / d  # cells at spacing d
    if grid.atomic:
        if d >= h:
            m = math.ceil(cells / MAX_CELLS)
        else:  # at most max(ATOMIC_CELLS, the cells at h) cells, and a spacing <= h
            m = min(math.ceil(cells / max(ATOMIC_CELLS, math.floor(span / h))), math.floor(h / d))
        spacing = d * max(1, m)
    else:
        k = min(math.ceil(d / h), max(1, math.floor(MAX_CELLS // 2 / max(cells, Fraction(1)))))
        spacing = d / k
    return spacing, (grid.anchor - spacing * atom_gap()) % spacing


def tuned_lattice(pair: PrivacyPair, h: Fraction, tail_bits: int = 140, max_cells: int = 0) -> LossLattice:
    """The lattice of spacing h that certdp uses for ``pair``'s lower bounds: offset by
    :func:`choose_offset`, ends by :func:`lattice_for`. A pair whose loss has atoms
    (``loss_grid``) gets the lattice of :func:`part_lattices` instead (its spacing may differ
    from h).

    Contract: a valid LossLattice; its choice only steers tightness (no enclosure).
    """
    if pair.loss_grid() is not None:
        return part_lattices([(pair, 1)], h, tail_bits)[0][2]
    return offset_lattice(pair, h, tail_bits, max_cells)


def offset_lattice(pair: PrivacyPair, h: Fraction, tail_bits: int = 140, max_cells: int = 0) -> LossLattice:
    """The lattice of spacing exactly h with a tuned offset (:func:`choose_offset`), for parts of a
    composition that must share one spacing.

    Contract: a valid LossLattice of spacing h; its choice only steers tightness (no enclosure).
    """
    base = lattice_for(pair, h, tail_bits, max_cells=max_cells)  # refuses a huge range before the search
    return lattice_for(pair, h, tail_bits, offset=choose_offset(pair, h, base=base), max_cells=max_cells)


#: one part of a composition on its lattice: (pair, steps, lattice)
Part = tuple[PrivacyPair, int, LossLattice]


class LatticeBounds:
    """The two sides of a composition on lattices of one spacing, computed lazily and kept: each
    part's cell masses are shared by the sides, and each side's product by its queries. The
    composition is ``steps`` runs of ``pair`` on ``lattice``, then those of ``others``.

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
    ) -> None:
        for _, n, _ in ((pair, steps, lattice), *others):
            if n < 1:
                raise invalid("steps", n, "must be >= 1")
        if not 0 < floor < 1:
            raise invalid("prune_floor", floor, "must be in (0, 1)")
        self.pair, self.steps, self.lattice, self.floor = pair, steps, lattice, floor
        self.parts: tuple[Part, ...] = ((pair, steps, lattice), *others)
        self.max_product = max_product
        self._cells: dict[int, Cells] = {}
        self._composed: dict[str, Composed] = {}

    def composed(self, side: str) -> Composed:
        """Contract: the pruned product of the parts' powers of the ``side`` ("upper" or "lower")
        lattice pmfs."""
        if side not in self._composed:
            if side not in ("upper", "lower"):
                raise invalid("side", side, "must be lower or upper")
            build = upper_lattice_pmf if side == "upper" else lower_lattice_pmf
            pmfs = []
            for i, (pair, steps, lattice) in enumerate(self.parts):
                if i not in self._cells:
                    self._cells[i] = _cell_masses(pair, lattice)
                pmfs.append((build(pair, lattice, self._cells[i]), steps))
            self._composed[side] = compose_parts(pmfs, self.floor, self.max_product)
        return self._composed[side]

    def eps(self, side: str, delta: Fraction) -> Fraction:
        """Contract: "upper": delta_n(eps) <= delta is proved at the returned eps (:func:`eps_upper`);
        "lower": delta_n(eps) > delta is proved there (:func:`eps_lower`)."""
        fn = eps_upper if side == "upper" else eps_lower
        return fn(self.composed(side), delta)

    def delta(self, side: str, eps: Fraction) -> Ball:
        """Contract: an exact ball >= delta_n(eps) ("upper") or <= it and >= 0 ("lower")."""
        if side == "upper":
            return self.composed(side).delta_upper(to_ball(eps)).upper()
        return self.composed(side).delta_lower(to_ball(eps)).lower().max(to_ball(0))


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


def lattice_record(lattice: LossLattice) -> dict[str, object]:
    """Contract: the exact fields that rebuild ``lattice`` (exact decimal strings and integers)."""
    return {
        "h": exact_str(lattice.h),
        "offset": exact_str(lattice.offset),
        "lo": lattice.lo,
        "hi": lattice.hi,
    }


def pld_bounds(
    pair: PrivacyPair, *, delta: Fraction | None = None, eps: Fraction | None = None, h: Fraction | None = None
) -> PldResult:
    """Two-sided certified eps at ``delta`` (or delta at ``eps``) of a pair or a composition (of
    one pair, or of several: the product of their lattice pmfs), by the lattice bounds; a
    subsampled Gaussian with direction ``both`` takes the larger value of each end over the
    remove and add compositions (:func:`directions`). Pairs whose loss has atoms are put on a
    lattice just below them (:func:`aligned_spacing`), so their spacing may differ from h. ``h``
    None: :func:`auto_h` (DEFAULT_H, finer where one step's losses are tiny).

    With two directions, both are first bounded on lattices COARSE_FACTOR times coarser; the one
    with the larger coarse upper end is computed at h, and the other only when its coarse upper
    end exceeds that lower end (else it cannot change either end of the max: its upper is below
    the max's lower, and the max's lower is at least the computed direction's). The grid records
    which lattices each direction used.

    Contract: lower <= the exact eps(delta) (resp. delta(eps)) <= upper, and upper is a sound
    value (module docstring; docs/math.md §10); Unsupported for pairs without ``loss_tail``.
    """
    if (delta is None) == (eps is None):
        raise InvalidArgument("give exactly one of delta and eps")
    # validated up front, as exact rationals (strings and floats too; nan and inf are refused)
    delta = None if delta is None else real("delta", delta, gt=0, lt=1)
    eps = None if eps is None else real("eps", eps, ge=0)
    h = None if h is None else real("h", h, gt=0, le=1)
    comps = directions(pair)
    steps = sum(n for _, n in next(iter(comps.values())))
    if steps > MAX_STEPS:
        raise LimitExceeded(
            f"steps={steps} exceeds {MAX_STEPS}, the most the lattice accountant composes: use --via rdp"
        )
    floor, tail_bits = resolution(delta, steps)
    if h is None:
        h = auto_h([part for parts in comps.values() for part in parts], tail_bits)
    Result = tuple[dict[str, Ball], list[Part]]

    def run(parts: list[tuple[PrivacyPair, int]], hh: Fraction) -> Result:
        # one tuned lattice per part for both sides (the upper bound is second order at any offset)
        lats = part_lattices(parts, hh, tail_bits)
        reach = sum(n * max(abs(lat.point(lat.lo)), abs(lat.point(lat.hi))) for _, n, lat in lats)
        if reach > MAX_LOSS:
            raise LimitExceeded(
                f"the composed loss reaches {float(reach):.3g}, beyond {MAX_LOSS} (the lattice sums overflow there): "
                "use --via rdp"
            )
        (p0, n0, lat0), others = lats[0], tuple(lats[1:])
        bounds = LatticeBounds(p0, n0, lat0, floor, others=others)
        cap = _pure_dp_cap(parts)
        if delta is not None:
            ends = {side: bounds.eps(side, delta) for side in ("lower", "upper")}
            if cap is not None:  # eps = the largest loss gives delta = 0: pure DP (class docstrings)
                ends = {side: min(value, cap) for side, value in ends.items()}
            return {side: to_ball(value) for side, value in ends.items()}, lats
        assert eps is not None
        if cap is not None and eps >= cap:
            return {"lower": to_ball(0), "upper": to_ball(0)}, lats
        return {side: bounds.delta(side, eps) for side in ("lower", "upper")}, lats

    results: dict[str, Result] = {}
    names = list(comps)
    if len(names) == 1:
        results[names[0]] = run(comps[names[0]], h)
    else:
        coarse = {name: run(comps[name], h * COARSE_FACTOR) for name in names}
        order = sorted(names, key=lambda k: -float(coarse[k][0]["upper"].mid()))
        main = order[0]
        results[main] = run(comps[main], h)
        for name in order[1:]:
            dominated = coarse[name][0]["upper"] <= results[main][0]["lower"]
            results[name] = coarse[name] if dominated else run(comps[name], h)
    grid: dict[str, object] = {}
    prec = current_prec()
    for name, (ends, lats) in results.items():
        low_s = Enclosure.from_ball(ends["lower"], prec).lower_str()
        up_s = Enclosure.from_ball(ends["upper"], prec).upper_str()
        record: dict[str, object] = dict(lattice_record(lats[0][2]))
        if len(lats) > 1:
            record = {"parts": [{"mechanism": p.mechanism, "steps": n, **lattice_record(lat)} for p, n, lat in lats]}
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
