"""One step of the certified PLD accountant: a pair's loss lattice, its dominating lattice pmf
(mass splitting) and its dominated one (balancing), and the choice of the lattice's offset and
ends (docs/math.md §10). certdp.notions.pld composes them and turns them into eps and delta.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from certdp.enclose import Ball, to_ball, workprec
from certdp.enclose.ball import readable_repr
from certdp.enclose.work import spend
from certdp.errors import InvalidArgument, LimitExceeded, PrecisionExhausted, Unsupported, invalid
from certdp.pairs import PrivacyPair

#: most cells of one step's lattice (one Arb tail evaluation each, ~0.1 ms; the powers grow with
#: it); the certificate verifier's limit (certdp.cert.limits.MAX_PLD_CELLS) is the same
MAX_CELLS = 1 << 18


@dataclass(frozen=True)
class LossLattice:
    """The lattice of one step: points ``offset + k h`` (exact), and the index range (lo, hi] of the
    finite cells (point(k-1), point(k)]; losses <= point(lo) sit at point(lo) (upper bound) or are
    dropped (lower bound), losses > point(hi) go to +inf (upper) or to point(hi) (lower)."""

    h: Fraction
    lo: int
    hi: int
    offset: Fraction = Fraction(0)

    __repr__ = readable_repr

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
    spend(lattice.hi - lattice.lo + 1, f"{lattice.hi - lattice.lo} lattice cells of {pair.mechanism}")
    tails = pair.loss_tails(_point_balls(lattice))  # one call: pairs evaluate runs of points faster
    if any(t is None for t in tails):
        raise Unsupported(f"{pair.mechanism}: no loss distribution, so no lattice accountant (use rdp)")
    zero = to_ball(0)
    p = [zero] + [tails[i - 1][0] - tails[i][0] for i in range(1, len(tails))]
    w = [zero] + [tails[i - 1][1] - tails[i][1] for i in range(1, len(tails))]
    return tails, p, w


def upper_lattice_pmf(
    pair: PrivacyPair, lattice: LossLattice, cells: Cells | None = None, ends: bool = True
) -> LatticePmf:
    """The dominating lattice pair of ``pair`` by mass splitting (certdp.notions.pld, module docstring).

    Contract: the returned masses contain those of a pair that dominates (P, Q) (the original is
    a post-processing of it), provided ``pair.loss_tail`` encloses the tails of its loss
    (docs/math.md §10; proofs_checks ``lattice_mass_splitting``). ``ends`` False: without the
    mass below point(lo) and above point(hi) (p_inf 0), for a bulk whose tails are cells of
    their own (certdp.notions.pld_split).
    """
    tails, p, w = cells if cells is not None else _cell_masses(pair, lattice)
    # the cell (-inf, point(lo)]: its P-mass at point(lo)
    coeffs = [1 - tails[0][0] if ends else to_ball(0)]
    exps = [(-x).exp() for x in _point_balls(lattice)]
    for i in range(1, len(tails)):
        ea, eb = exps[i - 1], exps[i]
        alpha_a = ((w[i] - p[i] * eb) / (ea - eb)).intersection(to_ball(0).union(p[i].upper()))
        coeffs[-1] = coeffs[-1] + alpha_a
        coeffs.append(p[i] - alpha_a)
    return LatticePmf(lattice, coeffs, tails[-1][0] if ends else to_ball(0))


def lower_lattice_pmf(
    pair: PrivacyPair, lattice: LossLattice, cells: Cells | None = None, ends: bool = True
) -> LatticePmf:
    """P-masses of a lattice sub-measure whose delta under composition is <= the pair's (balancing;
    certdp.notions.pld module docstring). ``p_inf`` is 0.

    The coefficient at point l is the total P-mass of the groups of :func:`_lower_groups` placed at
    l, each a post-processing group of (P, Q) whose loss log(P_g/Q_g) is >= l (certified). Lowering
    each group's loss to its point (keeping P-masses) lowers every delta of a composition, since
    g_eps is nondecreasing; the mass below point(lo) is dropped, which lowers it too.

    Contract: coefficient i is <= (enclosed) the P-mass that a pair dominated by (P, Q) puts at a
    loss >= point(lo+i), for fractions checked in ball arithmetic (docs/math.md §10). ``ends``
    False: without the group of the losses above point(hi) (a bulk whose tails are cells of their
    own, certdp.notions.pld_split).
    """
    groups = _lower_groups(pair, lattice, cells if cells is not None else _cell_masses(pair, lattice))
    if not ends:
        groups = groups[:-1]  # the last group is the one above point(hi)
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


#: the meeting cell is searched from this many cells below the mode of the cell masses
MEETING_BELOW_MODE = 64

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


#: the offset search's window reaches up to where the P-tail of the loss is below this
WINDOW_TOP_MASS = 2.0**-9

#: and spans at most this many cells above the P-median
WINDOW_MAX_CELLS = 4096


def choose_offset(
    pair: PrivacyPair, h: Fraction, tries: int = 8, refine: int = 4, base: LossLattice | None = None
) -> Fraction:
    """The offset of :func:`tuned_offset` (its imbalance dropped).

    Contract: a dyadic Fraction in [0, h); no enclosure.
    """
    return tuned_offset(pair, h, tries, refine, base)[0]


def tuned_offset(
    pair: PrivacyPair, h: Fraction, tries: int = 8, refine: int = 4, base: LossLattice | None = None
) -> tuple[Fraction, float]:
    """The lattice offset in [0, h) whose lower-bound construction gives away the least, measured
    in floats (:func:`_imbalance`) on a window from 160 cells below the P-median of the loss up to
    where its P-tail drops below WINDOW_TOP_MASS (at least 160, at most WINDOW_MAX_CELLS cells above
    the median): a scan of ``tries`` offsets, then ``refine`` halvings of a pattern search around the best.

    Why: the balancing sweeps arrive at the mode with a phase that the offset moves continuously,
    and what they cannot balance there is lost at first order in the cell's mass. Where the loss
    has a hard edge with much mass near it (the subsampled Gaussian: L >= log(1 - q)), that loss
    varies with the offset from nearly 0 to over 100 h^2 per step (q = 0.004, sigma = 0.52), and n
    steps multiply it. The choice only steers tightness: every offset gives sound bounds.

    Contract: (offset, imbalance): a dyadic Fraction in [0, h) and the float imbalance of the
    window at that offset, per step (it steers the lower side's spacing); no enclosure.
    """
    with workprec(64):
        base = base if base is not None else lattice_for(pair, h)
        k_lo, k_hi = base.lo, base.hi  # P(L > point(k_lo)) > 1/2 >= P(L > point(k_hi))
        while k_hi - k_lo > 1:
            mid = (k_lo + k_hi) // 2
            t = pair.loss_tail(to_ball(base.point(mid)))
            k_lo, k_hi = (mid, k_hi) if t is not None and t[0] > 0.5 else (k_lo, mid)

        # the window's top: where the P-tail drops below WINDOW_TOP_MASS (at least 160 cells above
        # the median, at most WINDOW_MAX_CELLS): the top-down sweep starts there, and a start
        # nearer the mode does not forget its phase by the time it meets the bottom-up sweep
        # (measured, q = 0.01, sigma = 0.81, h = 2^-12: the imbalance of the chosen offset was
        # 2.1e-9 on 160 cells above the median and 2.3e-8 on the full lattice; 600 cells, where
        # the tail is 2.5e-3, gave 2.29e-8)
        top_lo, top_hi = k_lo + 160, min(base.hi, k_lo + WINDOW_MAX_CELLS)
        top = min(base.hi, top_lo)
        if top_lo < top_hi:
            t = pair.loss_tail(to_ball(base.point(top_lo)))
            if t is not None and t[0] > WINDOW_TOP_MASS:  # P(L > point(top_lo)) > mass >= at top_hi
                while top_hi - top_lo > 1:
                    mid = (top_lo + top_hi) // 2
                    t = pair.loss_tail(to_ball(base.point(mid)))
                    top_lo, top_hi = (mid, top_hi) if t is not None and t[0] > WINDOW_TOP_MASS else (top_lo, mid)
                top = top_hi

        # where the pair has float tails, the whole construction runs on float arrays
        # (certdp.notions.pld_steer: the balls of float tails were 0.4 s of a 2 s CIFAR-10 eps,
        # profiled 2026-12-05); else on the certified tails
        from certdp.notions.pld_steer import float_imbalance  # it imports this module

        floats = pair.loss_tail_float(0.0) is not None

        def cost(offset: Fraction) -> float:
            # the window lies inside the base lattice (an offset moves points by less than h); a
            # lattice of its own per offset (140 tail bits) once exceeded the cell limit at a fine h
            window = LossLattice(h, max(base.lo, k_lo - 160), top, offset)
            below = window.hi - window.lo - 8  # not the cut top
            if floats:
                got = float_imbalance(pair, window, below)
                if got is not None:
                    return got
            groups = _lower_groups(pair, window, _cell_masses(pair, window))
            return _imbalance(groups, window, below=below)

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
    return best, costs[best]


def float_sweeps(a: list[float], b: list[float]) -> tuple[list[float], list[float]]:
    """The balancing's two sweeps in floats, for choosing the meeting cell: (u of the sweep down
    from the top, v of the sweep up from the bottom), from A_i (``a``) and -B_i (``b``) at each
    boundary (0 where a cell pair does not balance). Shared by :func:`_meeting_cell` and the
    float construction of the offset search (certdp.notions.pld_steer).

    Contract: float lists of the cells' fractions; no enclosure (steering only).
    """
    n = len(a)

    def sweep(order: range, down: bool) -> tuple[list[float], list[float]]:
        used, u, v = [0.0] * (n + 1), [0.0] * n, [0.0] * n
        for i in order:
            r = a[i] / b[i] if a[i] > 0 and b[i] > 0 else 0.0
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

    return sweep(range(n - 2, 0, -1), True)[0], sweep(range(1, n - 1), False)[1]


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

    u_top, v_bottom = float_sweeps(af, bf)

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
            candidates = range(max(2, mode - MEETING_BELOW_MODE), min(n - 2, mode + 1) + 1)
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
    point(lo) or at +inf, as in certdp.notions.pld's module docstring), so it is made at 64 bits.

    LimitExceeded when more than ``max_cells`` (0: MAX_CELLS) cells would be needed.

    Contract: a valid LossLattice (lo < hi); no enclosure.
    """
    limit = max_cells or MAX_CELLS

    def small(k: int, upper: bool) -> bool:
        spend(1, f"placing the lattice ends of {pair.mechanism} at h={h}")
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
        k = sign * min(max(1, math.ceil(1 / h)), limit)
        while not small(k, sign > 0):
            # double, but probe the limit itself before refusing (a range of 1.2 x 2^16 cells
            # once jumped from 2^16 to 2^17 + ... and was refused)
            if abs(k) >= limit:
                raise LimitExceeded(
                    f"h={h}: the loss range of {pair.mechanism} needs more than {limit} lattice cells per step "
                    "(a tiny noise scale?): use a larger h, or --via rdp"
                )
            k = sign * min(2 * abs(k), limit)
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
