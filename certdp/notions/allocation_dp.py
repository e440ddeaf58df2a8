"""Certified two-sided (eps, delta) of random allocation (docs/math.md §9.8).

The pair is that of docs/math.md §9.1 (Feldman and Shenfeld, arXiv:2502.08202 and
arXiv:2602.17284; arXiv:2610.09651 §2): Q = N(0, I_M) without the record, P = (1/M) sum_j
N(e_j / sigma, I_M) with it, E independent epochs, Lambda = dP/dQ = prod_e L_e. Directions follow
certdp's PLD code: ``remove`` is delta_{P||Q}, ``add`` is delta_{Q||P}, ``both`` the larger.

Every hockey-stick divergence here is an affine image of one functional of Lambda under Q,
F(tau) = E_Q (tau - Lambda)_+, because E_Q Lambda = 1:

    remove: delta_{P||Q}(eps) = E_Q (Lambda - c)_+ = 1 - c + F(c),       c = e^eps,
    add:    delta_{Q||P}(eps) = E_Q (1 - c Lambda)_+ = c F(1/c),
    (TV = F(1), certdp.notions.tv_certified.)

x -> (tau - x)_+ is convex and nonincreasing, so -(tau - Lambda)_+ is concave and nondecreasing
in each epoch ratio and each step value: the upper-side lattice of tv_certified (mean-keeping
spreads, clamping large values down, dropping mass) raises F, counting each lost unit of mass at
its worst value tau (Lambda = 0); its lower-side lattice is a post-processing whose outcome
likelihood ratios are rounded UP to grid points, which lowers F, and a dropped outcome's term is
>= 0. Both directions and both sides therefore reuse tv_certified.epoch_grid_masses; only the
E-fold product is kept up to the grid index of the largest threshold, and

    F_upper(tau) = sum_{k eta <= log tau} b_k (tau - e^{k eta}) + tau (1 - kept + dropped),
    F_lower(tau) = sum_{k eta <= log tau} b_k (tau - e^{k eta})       (lower-side b),

with ``kept`` = (sum r)^E the mass the lattice kept and ``dropped`` the pruned mass of the
product. The index comparison k eta <= log tau is exact (eta dyadic, eps rational), so each sum is
tau B_j - G_j with prefix sums B, G: one evaluation costs O(1) after the product.

eps(delta): delta is nonincreasing in eps. eps_upper is a dyadic eps with delta_upper(eps) <= delta
(so the pair is (eps_upper, delta)-DP); eps_lower is a dyadic eps with delta_lower(eps) > delta,
so every eps' <= eps_lower has delta(eps') >= delta(eps_lower) > delta: (eps', delta)-DP fails.

k > 1 (each record in k of the M steps of an epoch) is bounded from above only (docs/math.md §9.8,
"k > 1"): the E-epoch pair of k-of-M allocation is dominated, in both directions and at every eps,
by the k = 1 pair with floor(M/k) steps and k E epochs (the decomposition of Feldman and Shenfeld,
arXiv:2502.08202: a uniform k-subset is a uniform one-per-block choice over a random partition
into k blocks; joint convexity of the hockey-stick divergence, then a post-processing that turns
a block of floor(M/k) steps into a larger one). That reduced pair's UPPER end is therefore an
upper end for k > 1; its lower end is not a lower end (the reduction goes one way), so the
enclosures returned for k > 1 have lower end 0.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import Decimal, localcontext
from fractions import Fraction

from scipy.special import ndtr, ndtri

from certdp.enclose import Ball, Enclosure, power_multires, to_ball, workprec
from certdp.errors import (
    InvalidArgument,
    LimitExceeded,
    PrecisionExhausted,
    Unsupported,
    fmt_value,
    invalid,
    prefixed,
    reworded,
)
from certdp.notions.allocation_k_lower import K_LOWER_MAX_K, KLower
from certdp.notions.tv_certified import (
    MAX_POINTS,
    PRUNE_FLOOR,
    LatticeGrid,
    auto_grid,
    epoch_grid_masses,
    largest_product,
)
from certdp.pairs import RandomAllocation
from certdp.pairs.params import Number, integer, real

Progress = Callable[[str, float], None]
DIRECTIONS = ("remove", "add", "both")
#: refinements of the grid after the first (each costs about 2-4x the previous run)
MAX_REFINES = 3

#: halvings of auto_grid's spacing at the first attempt of an eps search (negative: coarser). At
#: 0 the first grid left widths of 2e-5-5e-5 for a target of 1e-3 (auto_grid sizes it by a TV
#: slack, not by eps's width); at -2 the benchmark's rows meet 1e-3 at once in a third to a half
#: of the time (T = 10, 100, E = 1, 10: 0.3-0.6 s against 1.0-1.6 s; 2026-12-05), and a wider
#: result is refined as before
FIRST_HALVINGS = -2
#: below this delta the first grid is coarser by one halving per factor 4 (first_halvings), by at
#: most FIRST_COARSER halvings (delta = 1e-5 / 4^12, about 6e-13)
FIRST_DELTA = Fraction(1, 10**5)
FIRST_COARSER = 12


def first_halvings(delta: Fraction) -> int:
    """Halvings of the first grid of an eps search: FIRST_HALVINGS, minus one per factor 4 that
    delta lies below FIRST_DELTA. Why: the grid's slack is delta/10, so auto_grid's spacing
    shrinks like sqrt(delta), while the bounds' errors are relative to delta (the down lattice)
    or to the slack: at delta = 1e-8 the first grid at FIRST_HALVINGS left widths of 2.6e-5 to
    6.5e-5 for a target of 1e-3 in 22-115 s; seven halvings coarser meet it in 0.6-14 s
    (M = 10, 100; E = 1, 10; 2026-12-05). A float heuristic: any grid is sound.

    Contract: an int in [FIRST_HALVINGS - FIRST_COARSER, FIRST_HALVINGS]."""
    if delta >= FIRST_DELTA:
        return FIRST_HALVINGS
    ratio = FIRST_DELTA / delta  # exact: math.log of the integers, no float of a delta below 1e-308
    coarser = max(0, round((math.log(ratio.numerator) - math.log(ratio.denominator)) / math.log(4)))
    # at most FIRST_COARSER halvings coarser: beyond, the grid's spacing passes its own limits
    # (delta = 1e-300 asked for eta ~ 1e143; attack review)
    return FIRST_HALVINGS - min(coarser, FIRST_COARSER)


#: halvings coarser than first_halvings that an eps search tries when its first grid is beyond the
#: work limits, before it shortens the range
FIRST_LIMIT_COARSER = 2

#: appended to a grid refusal: the range is where eps is searched (from the RDP bound, so eps may
#: lie far above it; attack review 48: "up to epsilon 9.492" read as a fixed range at eps = 697)
BEYOND = (
    " (the grid this range and spacing need is beyond the limits; in an epsilon search, epsilon may lie "
    "above the range); --via rdp gives a sound upper bound"
)

#: largest epsilon attempted: the remove side needs epoch ratios up to e^eps on the lattice
MAX_EPS = Fraction(30)
#: largest number of epoch-sum atoms l_max M / h a grid may ask for, and largest estimated memory
#: of a run (the same per-coefficient costs as certdp.cert.limits, measured on the TV lattice):
#: beyond them a grid is refused before any work (LimitExceeded), or a refinement stops with the
#: width reached (PrecisionExhausted)
MAX_SUM_ATOMS = 1 << 22
MAX_MEMORY = 3 << 29
MEMORY_BASE, MEMORY_PER_COEFF, MEMORY_PER_POINT = 64 << 20, 600, 80
#: Renyi orders of the RDP bound that starts the eps search (its value only sets the first range)
START_ORDERS = [2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 128, 256]
#: the down lattice (remove direction, lower side) reaches at most this many times beyond the
#: range the threshold needs: its top lowers the tail above it, which the remove direction's
#: E_Q (Lambda - c)_+ reads in full (M = 1, sigma = 1, delta = 1e-8: 4.0x restores the width)
DOWN_REACH = 8
#: smallest lower end of the log grid (the add direction at large eps reaches e^-eps)
MIN_L_MIN = 2.0**-40


@dataclass(frozen=True)
class HockeyLattice:
    """The E-fold log-grid law of Lambda from one side of tv_certified's lattice, reduced to
    prefix sums: b_k at Lambda = e^{k eta} for k = k0, k0 + 1, ...; ``prefix_b[i]`` and
    ``prefix_bg[i]`` enclose sum_{n<=i} b_{k0+n} and sum_{n<=i} b_{k0+n} e^{(k0+n) eta}."""

    side: str
    k0: int
    k_top: int
    prefix_b: list[Ball]
    prefix_bg: list[Ball]
    kept: Ball
    dropped: Ball
    grid: LatticeGrid
    seconds: float


def hockey_lattice(
    pair: RandomAllocation, grid: LatticeGrid, side: str, log_tau_max: Fraction, progress: Progress | None = None
) -> HockeyLattice:
    """The law of Lambda on ``grid`` (module docstring), kept up to threshold e^{log_tau_max}.

    Contract: for every tau <= e^{log_tau_max}, :func:`f_bound` on the result bounds
    F(tau) = E_Q (tau - Lambda)_+ from above (side="upper") or below (side="lower"); proof in the
    module docstring and docs/math.md §9.8 (built on §9.6-9.7).
    """
    start = time.perf_counter()
    with workprec(grid.prec):
        j_lo, r = epoch_grid_masses(pair, grid, side, progress)
        e = pair.epochs
        total = to_ball(0)
        for x in r:
            total += x
        kept = total**e
        eta = Fraction(grid.eta)
        j_need = math.floor(log_tau_max / eta)
        k_lo = e * j_lo
        top = j_need - k_lo
        if top < 0 or not r:
            return HockeyLattice(side, k_lo, j_need, [], [], kept, to_ball(0), grid, time.perf_counter() - start)
        off, b, dropped, _ = power_multires(r, e, top, PRUNE_FLOOR, lambda j: 0, spread=True)
        k0 = k_lo + off
        pb: list[Ball] = []
        pbg: list[Ball] = []
        acc_b, acc_bg = to_ball(0), to_ball(0)
        g, step = to_ball(k0 * eta).exp(), to_ball(eta).exp()  # e^{k eta} by products: Arb keeps the radius
        for mass in b[: max(0, j_need - k0 + 1)]:
            acc_b += mass
            acc_bg += mass * g
            g *= step
            pb.append(acc_b)
            pbg.append(acc_bg)
        return HockeyLattice(side, k0, j_need, pb, pbg, kept, dropped, grid, time.perf_counter() - start)


@dataclass(frozen=True)
class RemoveLowerLattice:
    """The E-fold log-grid law of Lambda from the ``down`` side of tv_certified's lattice (every
    value lowered to a point at or below a conditional mean), kept over its whole range:
    ``suffix_b[i]`` and ``suffix_bg[i]`` enclose sum_{n>=i} b_{k0+n} and
    sum_{n>=i} b_{k0+n} e^{(k0+n) eta}."""

    k0: int
    suffix_b: list[Ball]
    suffix_bg: list[Ball]
    grid: LatticeGrid
    seconds: float


def remove_lower_lattice(
    pair: RandomAllocation, grid: LatticeGrid, progress: Progress | None = None
) -> RemoveLowerLattice:
    """The lattice of the remove direction's lower bound (docs/math.md §9.8, "The remove
    direction's lower bound").

    Contract: for every eps >= 0, :func:`remove_delta_lower` on the result is <= delta_{P||Q}(eps)
    of ``pair``: the sum over the product of the down-side epoch masses of (e^{k eta} - e^eps)_+,
    a lower bound of E_Q (Lambda - e^eps)_+ because x -> (x - c)_+ is convex and nondecreasing in
    each epoch ratio (Jensen for each post-processing, monotonicity for each lowering, and every
    dropped term is >= 0).
    """
    start = time.perf_counter()
    with workprec(grid.prec):
        j_lo, r = epoch_grid_masses(pair, grid, "down", progress)
        e = pair.epochs
        if not r:
            return RemoveLowerLattice(0, [], [], grid, time.perf_counter() - start)
        # the whole product (indices add exactly; pruning drops mass, which lowers the bound)
        off, b, _, _ = power_multires(r, e, e * (len(r) - 1), PRUNE_FLOOR, lambda j: 0, spread=True)
        k0 = e * j_lo + off
        sb: list[Ball] = []
        sbg: list[Ball] = []
        acc_b, acc_bg = to_ball(0), to_ball(0)
        step = (-to_ball(grid.eta)).exp()
        g = to_ball((k0 + len(b) - 1) * Fraction(grid.eta)).exp()
        for mass in reversed(b):  # suffix sums from the top: no cancellation of large prefix sums
            acc_b += mass
            acc_bg += mass * g
            g *= step
            sb.append(acc_b)
            sbg.append(acc_bg)
        sb.reverse()
        sbg.reverse()
        return RemoveLowerLattice(k0, sb, sbg, grid, time.perf_counter() - start)


def remove_delta_lower(lat: RemoveLowerLattice, eps: Fraction) -> Ball:
    """Contract: a ball whose lower end is <= delta_{P||Q}(eps) (remove direction; docs/math.md
    §9.8): sum_{k eta > eps} b_k (e^{k eta} - e^eps) over the lattice, at least 0."""
    with workprec(lat.grid.prec):
        # k eta > eps exactly for k > floor(eps / eta) (eta dyadic, eps rational); other terms are 0
        first = math.floor(eps / Fraction(lat.grid.eta)) + 1
        idx = max(first - lat.k0, 0)
        if idx >= len(lat.suffix_b):
            return to_ball(0)
        c = to_ball(eps).exp()
        return (lat.suffix_bg[idx] - c * lat.suffix_b[idx]).max(to_ball(0))


def f_bound(lat: HockeyLattice, log_tau: Fraction) -> Ball:
    """Contract: a ball whose upper end (side upper) or lower end (side lower) bounds
    F(tau) = E_Q (tau - Lambda)_+ at tau = e^{log_tau} (module docstring); refuses a threshold
    beyond the one the lattice was built for (InvalidArgument)."""
    j = math.floor(log_tau / Fraction(lat.grid.eta))
    if j > lat.k_top:
        raise InvalidArgument(f"log_tau={float(log_tau):.6g} is beyond the lattice's threshold range")
    tau = to_ball(log_tau).exp()
    idx = min(j - lat.k0, len(lat.prefix_b) - 1)
    # every k <= j has k eta <= log tau exactly, so (tau - e^{k eta})_+ = tau - e^{k eta} there; k > j gives 0
    a = to_ball(0) if idx < 0 else tau * lat.prefix_b[idx] - lat.prefix_bg[idx]
    a = a.max(to_ball(0)) if lat.side == "lower" else a
    if lat.side == "upper":
        return a + tau * (1 - lat.kept + lat.dropped)
    return a


def delta_side(lat: HockeyLattice, eps: Fraction, direction: str) -> Ball:
    """Contract: a ball whose upper end (side upper) or lower end (side lower) bounds
    delta_{P||Q}(eps) (direction remove) or delta_{Q||P}(eps) (add); module docstring."""
    with workprec(lat.grid.prec):
        c = to_ball(eps).exp()
        if direction == "remove":
            return 1 - c + f_bound(lat, eps)
        if direction == "add":
            return c * f_bound(lat, -eps)
        raise invalid("direction", direction, "must be remove or add")


#: a certificate's lattice (certdp.cert.recompute) is kept up to threshold e^{eps + CERT_EPS_MARGIN}:
#: a refutation records an eps above the target, so the lattice must reach beyond it
CERT_EPS_MARGIN = 1


def certificate_lattice(pair: RandomAllocation, grid: LatticeGrid, side: str, threshold: Fraction) -> HockeyLattice:
    """The one lattice on which a hockey-upper / hockey-lower certificate check is written and
    recomputed: :func:`hockey_lattice` kept up to log tau = threshold + CERT_EPS_MARGIN, a rule
    of the recorded fields only, so that writer and verifier build the same lattice.

    Contract: as :func:`hockey_lattice` (docs/math.md §9.8): :func:`delta_side` on the result
    bounds delta(eps) of ``pair`` from the ``side`` asked for, for every eps in
    [0, threshold + CERT_EPS_MARGIN].
    """
    return hockey_lattice(pair, grid, side, threshold + CERT_EPS_MARGIN)


def hockey_decide(lat: HockeyLattice, eps: Fraction, delta: Fraction, directions: tuple[str, ...]) -> tuple[bool, str]:
    """Whether the lattice proves the (eps, delta) statement of its side, and what it computed.

    Contract: on an upper-side lattice, True only if delta_upper(eps) <= delta is proved in every
    direction (the pair is (eps, delta)-DP in each); on a lower-side lattice, True only if
    delta_lower(eps) > delta is proved in one direction (then eps(delta) > eps: delta is
    nonincreasing in eps). Ball comparisons, no tolerance; docs/math.md §9.8.
    """
    shown: list[str] = []
    with workprec(lat.grid.prec):
        d = to_ball(delta)
        for direction in directions:
            ball = delta_side(lat, eps, direction)
            enc = Enclosure.from_ball(ball, lat.grid.prec)
            if lat.side == "upper":
                shown.append(f"delta_upper {enc.upper_str()} ({direction})")
                if not bool(ball <= d):
                    return False, f"{shown[-1]} is not <= delta"
            else:
                shown.append(f"delta_lower {enc.lower_str()} ({direction})")
                if bool(ball > d):
                    return True, f"{shown[-1]} is > delta"
    if lat.side == "upper":
        return True, f"{', '.join(shown)}: <= delta"
    return False, f"{', '.join(shown)}: none is > delta"


class RefutationLattices:
    """The lower-side lattices on which a hockey-lower refutation at (``pair``, ``grid``,
    ``threshold``) is decided: the lower lattice of :func:`certificate_lattice` (what certificates
    written before the down lattice recorded) and :func:`remove_lower_lattice` on the same grid,
    each built once, on first use, and kept for every eps asked (a writer bisects on them). Writer
    and verifier both decide through :meth:`decide`, so they build the same lattices."""

    def __init__(self, pair: RandomAllocation, grid: LatticeGrid, threshold: Fraction) -> None:
        self.pair, self.grid, self.threshold = pair, grid, threshold
        self._lower: HockeyLattice | None = None
        self._down: RemoveLowerLattice | None = None

    def decide(self, eps: Fraction, delta: Fraction, directions: tuple[str, ...]) -> tuple[bool, str]:
        """Whether delta(eps) > delta is proved in one of ``directions``, and what was computed:
        first on the lower lattice in every direction, then, if the remove direction is asked for
        and nothing is proved yet, on the down lattice.

        Contract: True only if delta_lower(eps) > delta is proved in one direction by a certified
        lower bound (then eps(delta) > eps); docs/math.md §9.8.
        """
        if self._lower is None:
            self._lower = certificate_lattice(self.pair, self.grid, "lower", self.threshold)
        holds, shown = hockey_decide(self._lower, eps, delta, directions)
        if holds or "remove" not in directions:
            return holds, shown
        if self._down is None:
            self._down = remove_lower_lattice(self.pair, self.grid)
        with workprec(self.grid.prec):
            ball = remove_delta_lower(self._down, eps)
            enc = Enclosure.from_ball(ball, self.grid.prec)
            text = f"{shown}; down lattice: delta_lower {enc.lower_str()} (remove)"
            if bool(ball > to_ball(delta)):
                return True, f"{text} is > delta"
        return False, f"{text}: not > delta"


def _directions(direction: str) -> tuple[str, ...]:
    if direction not in DIRECTIONS:
        raise invalid("direction", direction, f"must be one of {', '.join(DIRECTIONS)}")
    return ("remove", "add") if direction == "both" else (direction,)


@dataclass(frozen=True)
class KReduction:
    """k-of-M random allocation over E epochs and the k = 1 run that bounds it from above:
    ``reduced_steps`` = floor(M/k) steps, ``reduced_epochs`` = k E epochs (docs/math.md §9.8)."""

    steps: int
    epochs: int
    k: int
    reduced_steps: int
    reduced_epochs: int

    @property
    def equal(self) -> bool:
        """Contract: True exactly for k = M > 1: every record is in every step, so the run is the
        Gaussian pair N(0, I) vs N(1/sigma, I) over M E coordinates, which is the reduced run of 1
        step and M E epochs itself (docs/math.md §9.8, "k = M"): both ends of the reduced run are
        proved ends of the run, and a calibration's violations are violations of it."""
        return 1 < self.k == self.steps

    @property
    def one_sided(self) -> bool:
        """Contract: True exactly for 1 < k < M, where the upper end is the reduction's and the lower
        end that of an additive statistic (docs/math.md §9.8): neither is refined to a width. False
        for k = 1 and for k = M (``equal``: the reduced run is the run)."""
        return self.k > 1 and not self.equal

    def names(self) -> str:
        """Contract: the user's setting and the reduced run, for messages about the reduced run."""
        if self.equal:
            return (
                f"k={self.k} of steps={self.steps}, epochs={self.epochs} (k = M: computed on the equal run "
                f"steps=1, epochs={self.reduced_epochs})"
            )
        return (
            f"k={self.k} of steps={self.steps}, epochs={self.epochs} (upper end on the reduced run "
            f"steps={self.reduced_steps}, epochs={self.reduced_epochs})"
        )

    def note(self, lower_proved: bool = False) -> str:
        """Contract: one line saying what a k > 1 answer proves (empty string for k = 1);
        ``lower_proved``: whether the statistic's lower end is above 0 (unused for k = M)."""
        if self.equal:
            return (
                f"k=M={self.k}: every record is in every step, so the run is exactly the Gaussian of "
                f"mu^2 = M*E/sigma^2, the k = 1 run of 1 step and M*E={self.reduced_epochs} epochs; both ends "
                "are proved for it, as for k = 1"
            )
        if not self.one_sided:
            return ""
        steps = f"{self.reduced_steps} step{'s' * (self.reduced_steps != 1)}"
        up = (
            f"k={self.k} > 1: upper end by the k = 1 pair with floor(M/k)={steps} and "
            f"k*E={self.reduced_epochs} epochs (decomposition of Feldman and Shenfeld, arXiv:2502.08202)"
        )
        if lower_proved:
            return (
                f"{up}; lower end by the laws of an additive statistic of the output (a post-processing; "
                "docs/math.md §9.8, k > 1: the lower end). Neither end is refined to --rel-width: the "
                "enclosure may be wide"
            )
        return (
            f"{up}; no violation proved (lower end 0: the statistic's laws prove none, or k > "
            f"{K_LOWER_MAX_K}, or they are beyond the work limits)"
        )


def k_reduction(steps: Number, epochs: Number, k: Number) -> KReduction:
    """The k = 1 run whose privacy profile bounds that of k-of-M random allocation from above.

    Contract: 1 <= k <= M, else InvalidArgument naming k; for every eps and both directions,
    delta of E epochs of k-of-M allocation at sigma <= delta of k E epochs of 1-of-floor(M/k)
    allocation at sigma (docs/math.md §9.8, "k > 1"; equality for k = 1).
    """
    m = integer("steps", steps, ge=1)
    e = integer("epochs", epochs, ge=1)
    kk = integer("k", k, ge=1)
    if kk > m:
        raise invalid("k", kk, f"must be <= steps={m} (each record is used in k of the M steps of an epoch)")
    return KReduction(m, e, kk, m // kk, kk * e)


def k_lower(
    sigma: Number, red: KReduction, eps_max: float, delta_hint: float, progress: Progress | None = None
) -> KLower | None:
    """The lower-end machinery of k-of-M allocation (certdp.notions.allocation_k_lower), or None
    when k > K_LOWER_MAX_K (the lower end is then 0, which :meth:`KReduction.note` says; a
    statistic past the product limit proves 0 itself).

    Contract: a KLower whose eps_lower / delta_lower are proved lower ends (any setting), or None;
    ``eps_max`` and ``delta_hint`` only steer."""
    try:
        low = KLower.build(sigma, red.steps, red.epochs, red.k, eps_max, delta_hint)
    except LimitExceeded:
        return None
    if progress is not None:
        progress("k > 1: the statistic's laws", 0.0)
    return low


def _with_k_lower(
    exc: LimitExceeded | PrecisionExhausted,
    red: KReduction,
    low: KLower | None,
    delta: Fraction | None,
    dirs: tuple[str, ...],
    eps: Fraction | None = None,
) -> LimitExceeded | PrecisionExhausted:
    """``exc`` (the reduction's upper end failed) prefixed with the user's setting and the reduced
    run (its message names the reduced run's steps and epochs), and what the statistic's lower end
    proves appended: eps(delta) >= it (``delta`` given) or delta(eps) >= it.

    Contract: an exception of exc's type; the value it names is a proved lower end."""
    what = "no lower end either (k beyond the statistic's limits)"
    if low is not None:
        if delta is not None:
            lo = max(low.eps_lower(delta, dn) for dn in dirs)
            what = f"the statistic's lower end proves eps >= {float(lo):.10g}" if lo > 0 else "no violation proved"
        else:
            assert eps is not None
            with workprec(128):
                value = max(Enclosure.from_ball(low.delta_lower(eps, dn), 128).lower for dn in dirs)
            what = f"the statistic's lower end proves delta >= {float(value):.10g}" if value > 0 else "no lower end"
    return reworded(exc, f"{red.names()}: {exc} (k > 1 upper end; {what})")


def _k_enclosure(
    red: KReduction,
    reduced: Callable[[], Enclosure],
    lower_end: Callable[[Enclosure], Fraction],
    failed: Callable[[LimitExceeded | PrecisionExhausted], LimitExceeded | PrecisionExhausted],
    prec: int,
) -> Enclosure:
    """The k > 1 enclosure of allocation_eps_bounds / allocation_delta_bounds: the upper end that
    of ``reduced()`` (the reduction's k = 1 run), the lower end ``lower_end(that enclosure)`` (the
    additive statistic's, 0 when none); when the reduced run fails, ``failed(exc)`` is raised (the
    error with what the lower end proves).

    Contract: [lower, upper] with both ends proved by their callers' arguments (docs/math.md §9.8);
    AssertionError when they cross (both are proved: a crossing is a wrong bound, refused loudly)."""
    try:
        enc = reduced()
    except (LimitExceeded, PrecisionExhausted) as exc:  # no upper end: say what the lower end proves
        raise failed(exc) from None
    lo = max(lower_end(enc), Fraction(0))
    if lo > enc.upper:
        raise AssertionError(f"random-allocation k={red.k} bounds cross: {lo} > {enc.upper}")
    return Enclosure.from_bounds(lo, enc.upper, prec)


def _pair(sigma: Number, steps: Number, epochs: Number, k: Number) -> RandomAllocation:
    """The k = 1 pair the bounds are computed on (for 1 < k < M the reduced one: its upper ends
    only; for k = M the reduced one, which is the run itself: both ends)."""
    red = k_reduction(steps, epochs, k)
    return RandomAllocation(red.reduced_steps, sigma, red.reduced_epochs)


def _spread(sd: float, e: int, eps: float, slack: float) -> float:
    """Margin x (log scale) beyond the threshold e^{+-eps} for l_max / l_min: one epoch beyond it
    matters only if the other E - 1 epochs bring Lambda back across the threshold. With log L
    taken as normal of sd ``sd`` (exact at M = 1), the cost is about
    E P(log L > eps + x) P(log rest < -x); x is the least multiple of sd/4 with cost <= slack/100.
    A float heuristic (the ranges never affect soundness)."""
    if e == 1 or sd <= 0:
        return 0.0
    rest = sd * math.sqrt(e - 1)
    x = 0.0
    while x < 40 * rest:
        cost = e * float(ndtr(-(eps + x) / sd)) * float(ndtr(-x / rest))
        if cost <= slack / 100:
            break
        x += sd / 4
    return x


def _quantiles(m: int, t: float, e: int, eps: float, slack: float) -> tuple[float, float]:
    """(q_low, q_high): one epoch's ratio L lies outside [q_low, q_high] with Q-probability about
    slack / (100 E e^eps) or less, so the log grid need not reach beyond them (many epochs keep
    each L near 1 even when the threshold e^{+-eps} of Lambda is far). log L is taken as normal
    for the lower end (the mean of M lognormals has a lighter lower tail than one), and
    P(L > x) as the normal part plus M P(Y > M (x - 1)) for the upper end, as in
    tv_numeric.clamp_plan. A float heuristic (the ranges never affect soundness)."""
    var = math.expm1(min(t * t, 700.0)) / m
    v = math.log1p(var)
    p = min(max(slack / (100 * e * math.exp(min(eps, 700.0))), 1e-300), 0.25)
    z = -float(ndtri(p))
    q_low = math.exp(-v / 2 - z * math.sqrt(v))
    sd = math.sqrt(var)

    def above(x: float) -> float:
        y = m * (x - 1)
        tail = float(ndtr(-(math.log(y) + t * t / 2) / t)) if y > 0 else 1.0
        return float(ndtr(-(x - 1) / sd)) + m * tail

    x = 1 + sd
    while above(x) > p and x < 1e300:
        x = 1 + (x - 1) * 1.25
    return q_low, x


def _first_moment_quantile(m: int, t: float, slack: float) -> float:
    """x with E_Q[L; L > x] about slack / 100 for one epoch's ratio L (one large step value
    dominates: E[L; L > x] ~ E[Y; Y > M (x - 1)] = Phi(-(log(M (x - 1)) - t^2/2)/t)). The down
    lattice lowers L above its top to the top, which loses E[L - top; L > top] of the remove
    direction's delta; a float heuristic (the range never affects soundness)."""
    z = -float(ndtri(min(max(slack / 100, 1e-300), 0.25)))
    return 1 + math.exp(min(t * t / 2 + t * z, 700.0)) / m


def hockey_grid(
    pair: RandomAllocation,
    slack: float,
    eps_max: float,
    directions: tuple[str, ...],
    side: str,
    prec: int = 128,
    ref: object = None,
    halvings: int = 0,
) -> LatticeGrid:
    """A grid for the hockey-stick bounds at thresholds up to eps_max (a float heuristic: every
    grid gives sound bounds, only their width depends on it).

    h, eta and the tail widths come from tv_certified.auto_grid at ``slack``, then h and eta are
    halved ``halvings`` times (the rounding bias is second order: each halving divides it by
    about 4; auto_grid never goes finer than its numeric reference grid by itself); the ranges are
    widened for the thresholds: remove needs epoch ratios up to about e^{eps_max} times the spread
    of the other epochs (l_max, and cap = M l_max so that the cap never binds first), add needs
    them down to about e^{-eps_max} over that spread (l_min).

    Contract: a valid LatticeGrid; LimitExceeded when its epoch sum would exceed MAX_SUM_ATOMS atoms
    or its run MAX_MEMORY bytes (estimates).
    """
    g = auto_grid(pair, slack, prec, ref=ref, side="upper" if side == "upper" else "lower")
    # a negative count coarsens (powers of two: exact in floats), but never past eta = 1/2, the
    # coarsest spacing a grid takes (attack review 51: M = 1, eps 1, delta 1e-12 made eta = 2 and
    # the calibration died on "eta=2 must be <= 1", exit 2)
    halvings = max(halvings, -math.floor(math.log2(0.5 / g.eta)))
    h2 = g.h / 2**halvings
    g = replace(g, h=h2, eta=g.eta / 2**halvings, cap=h2 * math.ceil(g.cap / h2))
    m, e = pair.steps, pair.epochs
    t = 1 / float(pair.sigma)
    spread = _spread(math.sqrt(math.log1p(math.expm1(min(t * t, 700.0)) / m)), e, eps_max, slack)
    l_max, l_min, cap = g.l_max, g.l_min, g.cap
    q_low, q_high = _quantiles(m, t, e, eps_max, slack)
    if "remove" in directions:
        l_max = max(l_max, min(math.exp(min(eps_max + spread, 700.0)) * 1.01, q_high))
        if side == "down":  # E_Q (Lambda - c)_+ reads the whole tail above c, not only its mass
            # (at most DOWN_REACH times the threshold's range, and within half the atom limit)
            reach = min(_first_moment_quantile(m, t, slack), DOWN_REACH * l_max, MAX_SUM_ATOMS * g.h / (2 * m))
            l_max = max(l_max, reach)
        cap = max(cap, m * l_max)
    if "add" in directions:
        l_min = min(l_min, math.exp(-eps_max - spread) * 0.99)
    # below q_low the mass is negligible: the split onto [0, g_0] (upper side) or the first group
    # (lower side) costs only on such outcomes (with E = 1 and remove, or tau below g_0, nothing)
    l_min = max(MIN_L_MIN, l_min, q_low)
    where = f"steps={m}, epochs={e}, sigma={float(pair.sigma):g}, lattice range up to epsilon {eps_max:.4g}"
    atoms = max(l_max * m, cap) / g.h
    if atoms > min(MAX_SUM_ATOMS, MAX_POINTS):  # before LatticeGrid's own check, which would name cap
        raise LimitExceeded(
            f"{where}: the lattice needs {atoms:.3g} epoch-sum atoms (l_max={l_max:.4g}, h={g.h:g}), "
            f"above the limit {MAX_SUM_ATOMS}{BEYOND}"
        )
    cap = g.h * math.ceil(max(cap, g.h) / g.h)
    grid = replace(g, l_max=l_max, l_min=l_min, cap=cap)
    _check_memory(pair, grid, side, eps_max, where)
    return grid


def _check_memory(pair: RandomAllocation, grid: LatticeGrid, side: str, eps_max: float, where: str) -> None:
    """LimitExceeded (one line naming the setting) when the run on ``grid`` would exceed
    MAX_MEMORY (float estimates that only choose what to refuse)."""
    m, e = pair.steps, pair.epochs
    power = 2 * (e * math.ceil(-math.log(grid.l_min) / grid.eta + 2) + math.ceil(eps_max / grid.eta) + 2)
    product = max(largest_product(m, float(pair.sigma), grid, side), power)
    memory = MEMORY_BASE + MEMORY_PER_COEFF * product + MEMORY_PER_POINT * (grid.cap + grid.l_max * m) / grid.h
    if memory > MAX_MEMORY:
        raise LimitExceeded(
            f"{where}: the lattice needs about {memory / 2**30:.2g} GiB (h={grid.h:g}, eta={grid.eta:g}), above "
            f"the limit {MAX_MEMORY / 2**30:.2g} GiB{BEYOND}"
        )


@dataclass
class _Side:
    """Lattices of one side for the directions asked for: one lattice serves both directions,
    except the lower side's remove direction, which has its own (``remove``)."""

    lat: HockeyLattice | None
    remove: RemoveLowerLattice | None = None

    @property
    def prec(self) -> int:
        """Contract: the working precision of the side's lattices (they share one grid)."""
        lat = self.lat if self.lat is not None else self.remove
        assert lat is not None
        return lat.grid.prec

    def delta(self, eps: Fraction, directions: tuple[str, ...]) -> Ball:
        vals = [
            remove_delta_lower(self.remove, eps) if (d == "remove" and self.remove is not None) else self._other(eps, d)
            for d in directions
        ]
        out = vals[0]
        for x in vals[1:]:
            out = out.max(x)
        return out

    def _other(self, eps: Fraction, direction: str) -> Ball:
        assert self.lat is not None
        return delta_side(self.lat, eps, direction)


def _lattices(
    pair: RandomAllocation,
    slack: float,
    eps_max: float,
    directions: tuple[str, ...],
    prec: int,
    ref: object,
    progress: Progress | None,
    halvings: int = 0,
) -> tuple[_Side, _Side]:
    run = _Run(pair, slack, eps_max, prec, ref, progress, halvings)
    return run.upper(directions), run.lower(directions)


@dataclass(frozen=True)
class _Run:
    """The sizing shared by the lattices of one round (hockey_grid's arguments)."""

    pair: RandomAllocation
    slack: float
    eps_max: float
    prec: int
    ref: object
    progress: Progress | None
    halvings: int = 0

    def grid(self, directions: tuple[str, ...], side: str) -> LatticeGrid:
        return hockey_grid(self.pair, self.slack, self.eps_max, directions, side, self.prec, self.ref, self.halvings)

    def upper(self, directions: tuple[str, ...]) -> _Side:
        log_max = Fraction(max(self.eps_max, 0.0))
        return _Side(hockey_lattice(self.pair, self.grid(directions, "upper"), "upper", log_max + 1, self.progress))

    def lower(self, directions: tuple[str, ...]) -> _Side:
        """The add direction on the lower lattice; the remove direction on the down lattice, whose
        error is relative to delta (the lower lattice's form 1 - c + F carries the absolute
        first-order bias of its rounding up: docs/math.md §9.8)."""
        log_max = Fraction(max(self.eps_max, 0.0))
        lat = remove = None
        if "add" in directions:
            lat = hockey_lattice(self.pair, self.grid(("add",), "lower"), "lower", log_max + 1, self.progress)
        if "remove" in directions:
            remove = remove_lower_lattice(self.pair, self.grid(("remove",), "down"), self.progress)
        return _Side(lat, remove)


#: doublings of the sizing lattice's default grid at the first try: auto_grid reads only its bias,
#: which is second order in h (4.0x per doubling measured at M = 196, E = 50, sigma = 1.1), so one
#: doubling gives the same grids at a third to a quarter of the float work (M = 1000, E = 50,
#: sigma = 0.7: 9.1 s -> 3.5 s; M = 196, E = 100, sigma = 1.1: 2.8 s -> 0.8 s)
SIZING_FIRST = 1
#: at most this many doublings where the grid is beyond the float lattice's point limit (M = 1000,
#: E = 100, sigma = 1 needs 6.3e6 points at the default grid, 3.0e6 at one doubling, and the
#: certified bounds then took 2.7 s; M = 196, E = 1000, sigma = 2 fits at four and took 4.4 s)
SIZING_COARSER = 5


def _numeric_ref(pair: RandomAllocation) -> object:
    """The float TV lattice that auto_grid scales its grid from, at the default grid of
    tv_numeric doubled SIZING_FIRST times, or more (up to SIZING_COARSER) where that is beyond
    the float lattice's point limit. auto_grid only reads the grid and the bias (coarse - value),
    so the result is stated at the default grid with the bias divided by 4 per doubling (the
    bias is second order in h and eta): the grids it sizes are those of the default grid's bias,
    and never coarser than the default grid (auto_grid's cap). No self-check: the two float
    lattices only choose h and eta, never a bound.

    Contract: none (float steering): an ApproxTV whose fields size a grid; LimitExceeded (one
    line naming the setting) when even the coarsest grid is beyond the point limit."""
    from certdp.notions import tv_numeric as tn

    m, e, s = pair.steps, pair.epochs, float(pair.sigma)
    try:
        g0 = tn.default_grid(m, e, s)
    except OverflowError:  # e^(1/sigma^2) past the float range (attack review 49: a traceback)
        raise LimitExceeded(
            f"steps={m}, epochs={e}, sigma={fmt_value(pair.sigma)}: e^(1/sigma^2) overflows a float, so the lattice "
            "bounds of random allocation cannot be sized here; --via rdp gives a sound upper bound"
        ) from None
    for doubling in range(SIZING_FIRST, SIZING_COARSER + 1):
        g = {**g0, "h": g0["h"] * 2**doubling, "eta": g0["eta"] * 2**doubling}
        try:
            tn.check_lattice_work(m, e, s, g)
            break
        except LimitExceeded as exc:
            if doubling < SIZING_COARSER:
                continue
            # the float lattice's own advice (--method) is the tv command's; eps and delta have --via rdp
            # (second attack review of issue 39: a flag that eps, delta and calibrate do not accept).
            # Named for what it is here (attack review 48: "numeric TV lattice" puzzled an eps query)
            why = (
                str(exc)
                .split("; use --method")[0]
                .replace(
                    "the numeric TV lattice needs",
                    f"the float lattice that sizes the grids needs, {2**doubling}x coarser,",
                )
            )
            raise LimitExceeded(
                f"{why}: the lattice bounds of random allocation cannot be sized here; --via rdp gives a sound "
                "upper bound"
            ) from None
    args = (1 / s, m, e)
    coarse = tn._tv_upper_scheme(*args, g["h"], g["eta"], g["cap"], g["l_max"])[0]
    fine = tn._tv_upper_scheme(*args, g["h"] / 2, g["eta"] / 2, g["cap"], g["l_max"])[0]
    value = (4 * fine - coarse) / 3
    bias = (coarse - value) / 4**doubling  # the same second-order law, stated at the default grid
    return tn.ApproxTV(value, abs(fine - coarse) / 3, value + bias, value + bias / 4, 0.0, 0.0, dict(g0))


def _check_eps(eps: Number) -> Fraction:
    e = real("eps", eps, ge=0)
    if e > MAX_EPS:
        raise LimitExceeded(
            f"eps={float(e):g} exceeds {MAX_EPS}, the largest epsilon the lattice bounds attempt here; --via rdp gives "
            "a sound upper bound"
        )
    return e


def one_step_closed_form(sigma: Number, steps: Number, epochs: Number, k: Number = 1) -> bool:
    """Whether allocation_eps_bounds / allocation_delta_bounds answer by the Gaussian closed form
    (the run, or for k > 1 its reduced run, has one step per epoch and mu^2 = E / sigma^2 lies in
    the closed form's range). Contract: True exactly when :func:`_one_step` answers."""
    from certdp.notions.zcdp_gdp import MU_MAX, MU_MIN

    pair = _pair(sigma, steps, epochs, k)
    return pair.steps == 1 and MU_MIN**2 <= Fraction(pair.epochs) / Fraction(pair.sigma) ** 2 <= MU_MAX**2


def _short(x: Fraction) -> str:
    """x > 0 in 3 significant digits, also below the least float (rel_width 1e-1000 printed 0)."""
    with localcontext() as ctx:
        ctx.prec = 30
        return f"{Decimal(x.numerator) / Decimal(x.denominator):.3g}"


def _one_step(
    pair: RandomAllocation, quantity: str, value: Fraction, rel_width: Fraction | None, prec: int
) -> Enclosure | None:
    """M = 1: every record is in the one step of each epoch, so the pair is exactly
    N(0, I_E) against N(1_E / sigma, I_E), that is N(0, 1) against N(mu, 1) with mu^2 = E / sigma^2,
    in both directions (docs/math.md §9.8, "One step"). Its closed form (certdp.notions.gdp) is
    exact and fast where the lattice is slow or refuses (attack review 48: M = 1, E = 100,
    sigma = 0.3 was refused; delta at sigma = 0.5, eps = 8 took 121 s to an upper end 5.5x the truth).

    Contract: the certified enclosure of eps(delta) (``quantity`` "epsilon") or delta(eps) of the
    one-step run, for every direction, of relative width <= ``rel_width`` (None: the closed form's
    default), from precision ``prec`` up, else PrecisionExhausted; a delta's lower end is at least
    0; None where mu^2 is outside the closed form's range (the lattice then answers or refuses)."""
    from certdp.enclose.refine import DEFAULT_TARGET, Target
    from certdp.notions.gdp import gaussian_delta, gaussian_epsilon

    # attack review 49: the default target is absolute near 0, so --rel-width was not honoured
    # the target is a float: a rel_width below 2e-300 asks for 1e-300 and is then refused below
    # with the bounds reached (attack review 50: 1e-1000 underflowed to a target of 0, refused as
    # "tolerance=(0.0, 0.0)", which names no flag)
    target = (
        replace(DEFAULT_TARGET, start_prec=max(prec, 16))
        if rel_width is None
        else Target(rel_tol=max(float(rel_width) / 2, 1e-300), abs_tol=0.0, start_prec=max(prec, 16))
    )
    mu_sq = Fraction(pair.epochs) / Fraction(pair.sigma) ** 2
    try:
        enc = (gaussian_epsilon if quantity == "epsilon" else gaussian_delta)(mu_sq, value, target)
    except InvalidArgument:
        return None
    except PrecisionExhausted as exc:  # say which width and which closed form (attack review 50)
        width = "the default width" if rel_width is None else f"rel_width={_short(rel_width)}"
        why = f"; a delta far below 2^-{target.max_prec} is beyond the largest precision" * (quantity == "delta")
        raise reworded(
            exc, f"{width} not reached for {quantity} (Gaussian closed form, mu^2={float(mu_sq):.6g}{why}): {exc}"
        ) from None
    lo, hi = max(enc.lower, Fraction(0)), enc.upper
    out = Enclosure.from_bounds(lo, hi, enc.prec_bits)
    if rel_width is not None and hi - lo > rel_width * hi:  # e.g. a delta far below 2^-(max precision)
        raise PrecisionExhausted(
            f"rel_width={_short(rel_width)} not reached for {quantity} (Gaussian closed form, "
            f"mu^2={float(mu_sq):.6g}): the certified bounds [{out.lower_str()}, {out.upper_str()}] are as far as "
            "the closed form reaches (its tolerances are floats: about 1e-300 relative, 2^-1052 for an epsilon)",
            achieved_width=float(hi - lo),
        )
    return out


def allocation_delta_bounds(
    sigma: Number,
    steps: Number,
    epochs: Number,
    eps: Number,
    *,
    direction: str = "both",
    k: Number = 1,
    rel_width: Number | None = Fraction(1, 100),
    slack: float = 1e-6,
    prec: int = 128,
    progress: Progress | None = None,
) -> Enclosure:
    """Certified enclosure of delta(eps) of random allocation (k = 1 and k = M tight; else wide).

    ``slack`` sets the first grid (tv_certified.auto_grid at that TV slack; any value is sound).

    Contract: lower <= delta(eps) <= upper, with delta the hockey-stick divergence of
    docs/math.md §9.8 in ``direction`` (remove: P||Q, add: Q||P, both: the larger) of E epochs of
    M steps at noise sigma (pair of Feldman and Shenfeld, arXiv:2502.08202). The grid is refined
    until (upper - lower)/upper <= rel_width (None: one grid), else PrecisionExhausted naming the
    width reached. 1 < k < M (k <= M, else InvalidArgument): upper that of the k = 1 pair of
    floor(M/k) steps and k E epochs (k_reduction), rel_width applying to that pair's enclosure, and
    lower that of an additive statistic (0: no proved lower end). k = M: both ends those of the
    1-step run of M E epochs, which is the run (KReduction.equal), refined to rel_width.
    """
    red = k_reduction(steps, epochs, k)
    if red.equal:  # k = M: the equal 1-step run of M E epochs, errors naming the user's setting
        try:
            return allocation_delta_bounds(
                sigma,
                1,
                red.reduced_epochs,
                eps,
                direction=direction,
                rel_width=rel_width,
                slack=slack,
                prec=prec,
                progress=progress,
            )
        except (LimitExceeded, PrecisionExhausted) as exc:
            raise prefixed(exc, red.names()) from None
    if red.one_sided:  # the reduction bounds from above only (docs/math.md §9.8, "k > 1")
        e = _check_eps(eps)
        dirs = _directions(direction)

        def reduced() -> Enclosure:
            return allocation_delta_bounds(
                sigma,
                red.reduced_steps,
                red.reduced_epochs,
                eps,
                direction=direction,
                rel_width=rel_width,
                slack=slack,
                prec=prec,
                progress=progress,
            )

        def lower_end(up: Enclosure) -> Fraction:
            low = k_lower(sigma, red, float(e), max(float(up.upper), 1e-300), progress)
            if low is None:
                return Fraction(0)
            with workprec(prec):
                return max(Enclosure.from_ball(low.delta_lower(e, dn), prec).lower for dn in dirs)

        def failed(exc: LimitExceeded | PrecisionExhausted) -> LimitExceeded | PrecisionExhausted:
            return _with_k_lower(exc, red, k_lower(sigma, red, float(e), 1e-12, progress), None, dirs, e)

        return _k_enclosure(red, reduced, lower_end, failed, prec)
    pair = _pair(sigma, steps, epochs, k)
    dirs = _directions(direction)
    rw = None if rel_width is None else real("rel_width", rel_width, gt=0, lt=1)
    if not (isinstance(slack, (int, float)) and 0 < slack < 1):
        raise invalid("slack", slack, "must be a number in (0, 1)")
    # the closed form has no epsilon limit (attack review 49: eps 696.78 was refused here while the
    # eps query answered it)
    if pair.steps == 1 and (closed := _one_step(pair, "delta", real("eps", eps, ge=0), rw, prec)) is not None:
        return closed
    e = _check_eps(eps)
    ref = _numeric_ref(pair)
    best: tuple[Fraction, Fraction] | None = None
    halvings = 0
    for _ in range(MAX_REFINES + 1):
        try:
            up, low = _lattices(pair, slack, float(e), dirs, prec, ref, progress, halvings)
        except LimitExceeded as exc:
            if best is None:
                raise
            raise _not_reached("delta", rw, best, f"the next grid is beyond the work limits ({exc})") from None
        with workprec(prec):
            hi = Enclosure.from_ball(up.delta(e, dirs), prec).upper
            lo = Enclosure.from_ball(low.delta(e, dirs), prec).lower
        lo, hi = max(lo, Fraction(0)), min(hi, Fraction(1))
        best = (lo, hi) if best is None else (max(best[0], lo), min(best[1], hi))
        width = best[1] - best[0]
        if rw is None or best[1] == 0 or width <= rw * best[1]:
            return Enclosure.from_bounds(best[0], best[1], prec)
        halvings += _more_halvings(float(width / (rw * best[1])))
    assert best is not None and rw is not None
    raise _not_reached("delta", rw, best, f"after {MAX_REFINES} refinements")


def _not_reached(what: str, rw: Fraction, best: tuple[Fraction, Fraction], why: str) -> PrecisionExhausted:
    """The PrecisionExhausted of a width target out of reach: the proved bounds, their relative
    width and the rel_width that would accept them (3 digits, rounded up)."""
    lo, hi = best
    w = (hi - lo) / hi
    exp = math.floor(math.log10(w)) - 2
    accept = Fraction(math.ceil(w / Fraction(10) ** exp)) * Fraction(10) ** exp
    # rel_width must be < 1: bounds of relative width 1 (no lower end) are accepted by none
    advice = (
        f"a rel_width of {float(accept):.3g} accepts them"
        if accept < 1
        else "no rel_width below 1 accepts them (no lower end is proved); the upper end is a sound value"
    )
    return PrecisionExhausted(
        f"rel_width={float(rw):g} not reached for {what} ({why}): the certified bounds [{float(lo):.8g}, "
        f"{float(hi):.8g}] have relative width {float(w):.3g}; {advice}",
        achieved_width=float(hi - lo),
    )


def _more_halvings(ratio: float) -> int:
    """Halvings of h and eta that should bring a width ``ratio`` times the target to 2/3 of it,
    one to four at a time. The width is about second order in h, but measured it shrinks by about
    3 per halving, not 4 (M = 100, E = 1, delta = 1e-8: 37x the target, three halvings left 1.24x
    and cost a fourth round); a float heuristic, any grid is sound."""
    return max(1, min(4, math.ceil(math.log(max(1.5 * ratio, 1.0), 3))))


def _search_eps(side: _Side, delta: Fraction, dirs: tuple[str, ...], lo: float, hi: float, want: str) -> Fraction:
    """Bisection on dyadic eps in [lo, hi]: want="upper": the least found with delta_upper <= delta
    (hi must satisfy it); want="lower": the largest found with delta_lower > delta (lo must)."""
    a, b = Fraction(lo), Fraction(hi)
    for _ in range(60):
        if b - a <= max(b, Fraction(1, 1 << 20)) * Fraction(1, 1 << 24):
            break
        mid = (a + b) / 2
        mid = Fraction(float(mid))  # dyadic, exact
        d = side.delta(mid, dirs)
        ok = d.upper() <= to_ball(delta) if want == "upper" else d.lower() > to_ball(delta)
        if want == "upper":
            a, b = (a, mid) if ok else (mid, b)
        else:
            a, b = (mid, b) if ok else (a, mid)
    return b if want == "upper" else a


def _upper_mid(side: _Side, eps: Fraction, direction: str) -> float:
    """A float of delta_upper(eps) in one direction: only chooses which lower lattice to build."""
    with workprec(side.prec):
        return float(side.delta(eps, (direction,)).mid())


def _certified_upper(side: _Side, delta: Fraction, dirs: tuple[str, ...], eps: Fraction) -> bool:
    with workprec(side.prec):
        return bool(side.delta(eps, dirs).upper() <= to_ball(delta))


def _certified_lower(side: _Side, delta: Fraction, dirs: tuple[str, ...], eps: Fraction) -> bool:
    with workprec(side.prec):
        return bool(side.delta(eps, dirs).lower() > to_ball(delta))


def _rdp_eps_upper(pair: RandomAllocation, delta: Fraction) -> float:
    """A float start for the search range: the RDP conversion's eps (remove direction)."""
    from certdp.notions.accountant import epsilon

    try:  # a few orders suffice for a start (the default grid's 75 cost a second)
        return float(epsilon(pair, delta, via="rdp", orders=START_ORDERS).enclosure.upper)
    except (PrecisionExhausted, LimitExceeded, Unsupported):  # only a start: fall back to a short range
        return 2.0


def allocation_eps_bounds(
    sigma: Number,
    steps: Number,
    epochs: Number,
    delta: Number,
    *,
    direction: str = "both",
    k: Number = 1,
    rel_width: Number = Fraction(1, 1000),
    prec: int = 128,
    progress: Progress | None = None,
) -> Enclosure:
    """Certified enclosure of eps(delta) of random allocation (k = 1 and k = M tight; else wide).

    Contract: upper is a dyadic eps at which delta_upper(eps) <= delta is proved (the run is
    (upper, delta)-DP in ``direction``; both: in each direction), and at lower delta_lower > delta
    is proved, so every eps below lower is a proved violation (lower = 0 when none is proved);
    docs/math.md §9.8. Refined until (upper - lower)/upper <= rel_width, else PrecisionExhausted
    naming the width reached. 1 < k < M (k <= M, else InvalidArgument): upper that of the k = 1
    pair of floor(M/k) steps and k E epochs (k_reduction; the run is (upper, delta)-DP), rel_width
    applying to that pair's enclosure, and lower that of an additive statistic (0: no proved lower
    end). k = M: both ends those of the 1-step run of M E epochs, which is the run
    (KReduction.equal), refined to rel_width.
    """
    red = k_reduction(steps, epochs, k)
    if red.equal:  # k = M: the equal 1-step run of M E epochs, errors naming the user's setting
        try:
            return allocation_eps_bounds(
                sigma,
                1,
                red.reduced_epochs,
                delta,
                direction=direction,
                rel_width=rel_width,
                prec=prec,
                progress=progress,
            )
        except (LimitExceeded, PrecisionExhausted) as exc:
            raise prefixed(exc, red.names()) from None
    if red.one_sided:  # the reduction bounds from above only (docs/math.md §9.8, "k > 1")
        d = real("delta", delta, gt=0, lt=1)
        dirs = _directions(direction)

        def reduced() -> Enclosure:
            return allocation_eps_bounds(
                sigma,
                red.reduced_steps,
                red.reduced_epochs,
                delta,
                direction=direction,
                rel_width=rel_width,
                prec=prec,
                progress=progress,
            )

        def lower_end(up: Enclosure) -> Fraction:
            low = k_lower(sigma, red, float(up.upper), float(d), progress)
            return Fraction(0) if low is None else max(low.eps_lower(d, dn) for dn in dirs)

        def failed(exc: LimitExceeded | PrecisionExhausted) -> LimitExceeded | PrecisionExhausted:
            # the statistic's bins reach eps_max + 8: take the largest eps the lattices attempt
            return _with_k_lower(exc, red, k_lower(sigma, red, float(MAX_EPS), float(d), progress), d, dirs)

        return _k_enclosure(red, reduced, lower_end, failed, prec)
    pair = _pair(sigma, steps, epochs, k)
    dirs = _directions(direction)
    d = real("delta", delta, gt=0, lt=1)
    rw = real("rel_width", rel_width, gt=0, lt=1)
    if pair.steps == 1 and (closed := _one_step(pair, "epsilon", d, rw, prec)) is not None:
        return closed
    ref = _numeric_ref(pair)
    eps_max = min(_rdp_eps_upper(pair, d), float(MAX_EPS))
    best_lo, best_hi = Fraction(0), Fraction(-1)
    slack = max(float(d) / 10, 1e-9)
    attempt = shrinks = coarsened = 0
    halvings = first_halvings(d)
    while attempt <= MAX_REFINES:
        run = _Run(pair, slack, eps_max, prec, ref, progress, halvings)
        try:
            up = run.upper(dirs)
        except LimitExceeded as exc:
            if best_hi >= 0:  # a refinement beyond the limits: the bounds proved so far
                raise _not_reached(
                    "epsilon", rw, (best_lo, best_hi), f"the next grid is beyond the work limits ({exc})"
                ) from None
            if coarsened < FIRST_LIMIT_COARSER and not shrinks:
                # a large eps (the remove side's range grows like e^eps): a coarser first grid
                # before a shorter range, which cannot help when eps lies near the RDP bound (M =
                # 196, E = 100, sigma = 0.7: eps near 9.3, refused at 10.2 and then searched below 7.6)
                coarsened += 1
                halvings -= 1
                continue
            if shrinks >= 4:
                raise
            # the first range came from the RDP bound, which may be far above eps: try a shorter one
            shrinks += 1
            eps_max *= 0.75
            continue
        top = Fraction(float(eps_max))
        if not _certified_upper(up, d, dirs, top):
            if halvings < 0:  # the coarse first grid proves nothing up to eps_max: finer, up to auto_grid's
                halvings = min(0, halvings + 4)  # own (measured: one step, E = 3, sigma = 1, delta = 1e-3)
                continue
            if eps_max >= float(MAX_EPS) or shrinks:
                raise PrecisionExhausted(
                    f"delta={float(d):g}: no epsilon up to {eps_max:.4g} is certified on a grid within the work "
                    "limits (epsilon may lie above it, or these grids are too coarse at this sigma); --via rdp "
                    "gives a sound upper bound"
                )
            eps_max = min(2 * eps_max + 1, float(MAX_EPS))  # the range was too short: widen it, same slack
            continue
        hi = _search_eps(up, d, dirs, 0.0, float(top), "upper")
        # the lower end of "both" is that of either direction (a violation in one is a violation):
        # only the direction whose upper bound decides at hi gets its lower lattice
        decisive = max(dirs, key=lambda dn: _upper_mid(up, hi, dn))
        try:
            low = run.lower((decisive,))
        except LimitExceeded as exc:  # the upper end is proved: say how far the bounds got
            best_hi = hi if best_hi < 0 else min(best_hi, hi)
            raise _not_reached(
                "epsilon", rw, (best_lo, best_hi), f"the lower side's grid is beyond the work limits ({exc})"
            ) from None
        lo = Fraction(0)
        if _certified_lower(low, d, (decisive,), Fraction(0)):
            lo = _search_eps(low, d, (decisive,), 0.0, float(hi), "lower")
        best_lo = max(best_lo, lo)
        best_hi = hi if best_hi < 0 else min(best_hi, hi)
        width = best_hi - best_lo
        if best_hi == 0 or width <= rw * best_hi:
            return Enclosure.from_bounds(best_lo, best_hi, prec)
        halvings += _more_halvings(float(width / (rw * best_hi)))
        eps_max = float(best_hi)
        attempt += 1
    raise _not_reached("epsilon", rw, (best_lo, best_hi), f"after {MAX_REFINES} refinements")
