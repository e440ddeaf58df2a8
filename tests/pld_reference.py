"""An independent float PLD accountant for the Poisson-subsampled Gaussian (issue 34), and exact
mpmath references for one step and for q = 1. Nothing here comes from certdp or dp_accounting.

The pair (sigma = s): remove is P = (1-q) N(0, s^2) + q N(1, s^2) against Q = N(0, s^2), with the
loss L(x) = log(1 - q + q exp((2x - 1)/(2 s^2))), increasing in x, bounded below by log(1 - q);
add is P = N(0, s^2) against the mixture, with the loss -L(x), bounded above by -log(1 - q);
both is the max of the two. For eps >= 0, delta(eps) = E_P[(1 - e^{eps - L})_+] (plus the P-mass
at L = +inf), and under composition the steps' losses add under P x ... x P.

Two lattice pairs bracket the truth (points l_k = offset + k h; the P- and Q-masses of loss cells
come from the Gaussian CDFs at the x where the loss crosses the cell edges):

- pessimistic, "connect the dots": each cell [l_k, l_{k+1}] puts its P-mass on its two ends so
  that both its P- and its Q-mass are kept. The cell is a post-processing of that two-point pair,
  so the lattice pair dominates and its composition's delta is an upper bound (for every eps).
  The bottom tail goes to the bottom point (its Q excess to a P-free atom at -inf, which never
  counts), the top tail to the top point and +inf in the same way. A point sits on the loss's
  hard edge (remove: log(1 - q) at the bottom; add: -log(1 - q) at the top).
- optimistic, "merging": the cell (l_k - h/2, l_k + h/2] keeps its P-mass at l_k. Groups of
  (fractions of) cells are post-processings, and putting a group whose loss log(P_g/Q_g) is
  >= l at l with its P-mass (more Q-mass than it has) can only lower delta (P' <= K P and
  Q' >= K Q as measures), so the composition's delta is a lower bound. A cell whose loss is below
  its point takes the fraction (e^{l_k} Q_k - P_k)/(P_{k+1} - e^{l_k} Q_{k+1}) of the next cell
  (whose losses all exceed l_k); a cell whose loss is above its point lets the cell below send
  a fraction of itself up, as much as that excess pays for; a group that cannot be balanced goes
  down to l_{k-1}. Second order in h then, but the mass piled against a hard edge of the loss
  is only balanced at the right offset: the offset is chosen among 8 in [0, h), the edge-aligned
  one and the one that balances the edge cell, by the largest mean loss.

The n-fold power is taken by repeated squaring with FFT products (scipy's fftconvolve, which
pads to the full product: nothing wraps around) of the exponentially tilted masses
p_k e^{theta l_k}/M(theta), theta the Chernoff theta of the query, so that the FFT's absolute
error is small next to the masses near the eps that matters (for delta = 1e-10 untilted masses
would drown in it). After every product the lattice is cut to the Chernoff ends of the m-fold
power (P-mass below tau = 1e-10 delta outside, on each side): the optimistic side drops what is
outside, the pessimistic side drops it and puts its Chernoff bound at +inf, so cutting never
breaks either bound. What is estimated rather than bounded is float rounding: the FFT products'
error per coefficient is tracked (:func:`compose`) and added to (pessimistic) or taken from
(optimistic) delta; the CDF differences' relative error and the FFT's relative error of the
total mass (about 1e-16 a step) are in _delta_slack, and REL_MARGIN widens the eps bracket.
Up to these, [optimistic eps, pessimistic eps] is an honest bracket of eps(delta).

Richardson: the error of each side is O(h^2), so R = (4 f(h/2) - f(h))/3 per side; the two
sides' extrapolations estimate the same number, so the centre is their mean and the error bar is
SAFETY times half their difference plus SAFETY times the change of the centre between the last
two level pairs. The bracket is what the soundness tests use; the centre (``tight``) is a
heuristic for tightness.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath as mp
import numpy as np
from scipy.signal import fftconvolve, lfilter
from scipy.special import ndtr

#: relative widening of the float eps bracket (float rounding of the bisection-free solve, CDFs)
REL_MARGIN = 1e-9
#: absolute allowance for float error in a composed delta (CDF differences, FFT noise)
FLOAT_DELTA_SLACK = 1e-15
#: Richardson error-bar safety factor
SAFETY = 4.0
#: z-score where the single-step x-range ends (Gaussian tails of 1e-33 beyond; they are still
#: accounted for exactly by the end cells)
Z_RANGE = 12.0


# --------------------------------------------------------------------------------------------
# the loss and its tails


def remove_loss(q: float, s: float, x: np.ndarray) -> np.ndarray:
    """L(x) = log(1 - q + q exp((2x - 1)/(2 s^2))), the remove direction's loss."""
    y = (2 * np.asarray(x, dtype=float) - 1) / (2 * s * s)
    if q >= 1:
        return y
    return np.logaddexp(math.log1p(-q), math.log(q) + y)


def _x_of_remove_loss(q: float, s: float, ell: np.ndarray) -> np.ndarray:
    """The x with remove_loss(x) = ell (-inf where ell <= log(1 - q))."""
    ell = np.asarray(ell, dtype=float)
    if q >= 1:
        return s * s * ell + 0.5
    a = np.expm1(ell) + q
    with np.errstate(divide="ignore", invalid="ignore"):
        x = s * s * np.log(np.where(a > 0, a, 1.0) / q) + 0.5
    return np.where(a > 0, x, -np.inf)


def loss_tails(q: float, s: float, direction: str, ell: np.ndarray) -> tuple[np.ndarray, ...]:
    """(P(L > ell), P(L <= ell), Q(L > ell), Q(L <= ell)) from the Gaussian CDFs, each accurate in
    relative terms (no 1 - F cancellation)."""
    if direction == "remove":
        x = _x_of_remove_loss(q, s, ell)
        a, b = x / s, (x - 1) / s
        q_sf, q_cdf = ndtr(-a), ndtr(a)
        p_sf = (1 - q) * ndtr(-a) + q * ndtr(-b)
        p_cdf = (1 - q) * ndtr(a) + q * ndtr(b)
    elif direction == "add":
        x = _x_of_remove_loss(q, s, -np.asarray(ell, dtype=float))  # L_add > ell  iff  x < x
        a, b = x / s, (x - 1) / s
        p_sf, p_cdf = ndtr(a), ndtr(-a)
        q_sf = (1 - q) * ndtr(a) + q * ndtr(b)
        q_cdf = (1 - q) * ndtr(-a) + q * ndtr(-b)
    else:
        raise ValueError(direction)
    return p_sf, p_cdf, q_sf, q_cdf


def _cell_masses(sf: np.ndarray, cdf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Masses of the cells between consecutive edges (from whichever of sf and cdf is small), and
    an estimate of their absolute float error."""
    use_sf = sf[:-1] <= 0.5
    m = np.where(use_sf, sf[:-1] - sf[1:], cdf[1:] - cdf[:-1])
    err = 4e-16 * np.where(use_sf, sf[:-1] + sf[1:], cdf[1:] + cdf[:-1])
    return np.maximum(m, 0.0), err


def loss_range(q: float, s: float, direction: str) -> tuple[float, float]:
    """Loss values at x = -Z s and 1 + Z s (where the Gaussian tails are negligible)."""
    lo, hi = remove_loss(q, s, np.array([-Z_RANGE * s, 1 + Z_RANGE * s]))
    return (float(lo), float(hi)) if direction == "remove" else (float(-hi), float(-lo))


def loss_std(q: float, s: float, direction: str) -> float:
    """Standard deviation of the one-step loss under P (trapezoid quadrature on x), for the scale."""
    x = np.linspace(-Z_RANGE * s, 1 + Z_RANGE * s, 40001)
    ell = remove_loss(q, s, x)
    dens0 = np.exp(-0.5 * (x / s) ** 2)
    if direction == "remove":
        dens = (1 - q) * dens0 + q * np.exp(-0.5 * ((x - 1) / s) ** 2)
    else:
        dens, ell = dens0, -ell
    w = dens / np.trapezoid(dens, x)
    m1 = np.trapezoid(w * ell, x)
    return float(math.sqrt(max(np.trapezoid(w * (ell - m1) ** 2, x), 1e-300)))


# --------------------------------------------------------------------------------------------
# one step on the lattice


@dataclass
class LatticePmf:
    """P-masses ``p`` at the losses offset + (k0 + i) h, plus ``inf`` at +inf."""

    p: np.ndarray
    k0: int
    h: float
    offset: float
    inf: float = 0.0

    def losses(self) -> np.ndarray:
        return self.offset + (self.k0 + np.arange(len(self.p))) * self.h


def _edge_offset(q: float, direction: str, h: float, side: str) -> float:
    """Lattice offset in [0, h): a point on the loss's hard edge where there is one (remove: the
    bottom log(1 - q); add: the top -log(1 - q), for the optimistic side half a cell below it, so
    that the top cell (edge - h, edge] keeps its mass near the edge on its point)."""
    if q >= 1:
        return 0.0
    edge = math.log1p(-q) if direction == "remove" else -math.log1p(-q)
    if direction == "add" and side == "optimistic":
        edge -= h / 2
    return edge - math.floor(edge / h) * h


def pessimistic_step(q: float, s: float, direction: str, h: float, offset: float | None = None) -> LatticePmf:
    """Connect-the-dots lattice pair of one step (module docstring)."""
    off = _edge_offset(q, direction, h, "pessimistic") if offset is None else offset
    lo, hi = loss_range(q, s, direction)
    k_lo = math.floor((lo - off) / h)
    k_hi = math.ceil((hi - off) / h)
    if direction == "add" and q < 1:  # no loss above the edge
        k_hi = min(k_hi, math.ceil((-math.log1p(-q) - off) / h))
    pts = off + np.arange(k_lo, k_hi + 1) * h
    p_sf, p_cdf, q_sf, q_cdf = loss_tails(q, s, direction, pts)
    pm, _ = _cell_masses(p_sf, p_cdf)  # cell [l_k, l_{k+1}]
    qm, _ = _cell_masses(q_sf, q_cdf)
    # alpha e^{-l_k} + (pm - alpha) e^{-l_k - h} = qm
    alpha = (qm * np.exp(pts[:-1]) - pm * math.exp(-h)) / -math.expm1(-h)
    alpha = np.clip(alpha, 0.0, pm)
    out = np.zeros(len(pts))
    out[:-1] += alpha
    out[1:] += pm - alpha
    out[0] += p_cdf[0]  # bottom tail to the bottom point
    top_p, top_q = p_sf[-1], q_sf[-1]
    at_top = min(top_p, top_q * math.exp(pts[-1]))
    out[-1] += at_top
    return LatticePmf(out, k_lo, h, off, inf=max(top_p - at_top, 0.0))


def optimistic_step(q: float, s: float, direction: str, h: float, offset: float | None = None) -> LatticePmf:
    """Merging lattice pair of one step (module docstring): a lower bound on delta."""
    off = _edge_offset(q, direction, h, "optimistic") if offset is None else offset
    lo, hi = loss_range(q, s, direction)
    j_lo = math.floor((lo - off) / h)  # the bottom cell reaches below the loss range
    j_hi = math.ceil((hi - off) / h)
    pts = off + np.arange(j_lo, j_hi + 1) * h
    edges = np.append(pts - h / 2, pts[-1] + h / 2)
    p_sf, p_cdf, q_sf, q_cdf = loss_tails(q, s, direction, edges)
    pm, pe = _cell_masses(p_sf, p_cdf)
    qm, qe = _cell_masses(q_sf, q_cdf)
    # the top tail is one more cell (its losses exceed the top point + h/2); the bottom is dropped
    pm, pe = np.append(pm, p_sf[-1]), np.append(pe, 4e-16 * p_sf[-1])
    qm, qe = np.append(qm, q_sf[-1]), np.append(qe, 4e-16 * q_sf[-1])
    lk = np.append(pts, pts[-1] + h)
    e_l = np.exp(lk)
    margin = 4 * (pe + qe * e_l)  # float error of P_k - e^{l_k} Q_k
    deficit = qm * e_l - pm + margin  # > 0: the cell's loss may be below its point
    excess = pm - qm * e_l - margin  # > 0: the cell's loss is surely above its point
    # downwards: a cell in deficit takes g of the next cell (whose losses all exceed its point)
    supply = np.zeros(len(pm))  # P_{k+1} - e^{l_k} Q_{k+1} (a lower bound)
    supply[:-1] = pm[1:] - qm[1:] * e_l[:-1] - 4 * (pe[1:] + qe[1:] * e_l[:-1])
    with np.errstate(divide="ignore", invalid="ignore"):
        g_next = np.where(deficit > 0, deficit * (1 + 1e-9) / supply, 0.0)
    bad = (deficit > 0) & ~((supply > 0) & (g_next <= 1))  # cannot be balanced: down one point
    g_next = np.where(bad, 0.0, g_next)
    g = np.zeros(len(pm))  # fraction of cell k given to group k-1
    g[1:] = g_next[:-1]
    # upwards: a cell not in deficit below a cell with excess sends u of itself up, spending that
    # excess (D_k = e^{l_{k+1}} Q_k - P_k, an upper bound, is what a unit of cell k costs there).
    # u_k <= ubar_k = min(1 - g_k, E_{k+1}/D_k) without the chain, and u_k uses what the next
    # cell keeps after its own u_{k+1} <= ubar_{k+1}: every group stays balanced.
    cost = np.full(len(pm), np.inf)
    cost[:-1] = qm[:-1] * e_l[1:] - pm[:-1] + 4 * (pe[:-1] + qe[:-1] * e_l[1:])
    nxt = np.zeros(len(pm))  # the next cell's excess
    nxt[:-1] = np.maximum(excess[1:], 0.0)
    ok = (deficit <= 0) & (nxt > 0) & (cost > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(ok, nxt / cost, 0.0)
    ubar = np.minimum(1 - g, ratio)
    ubar_next = np.zeros(len(pm))
    ubar_next[:-1] = ubar[1:]
    u = np.clip(np.minimum(1 - g, (1 - ubar_next) * ratio) * (1 - 1e-9), 0.0, None)
    group = (1 - g - u) * pm
    group[:-1] += g[1:] * pm[1:]
    group[1:] += u[:-1] * pm[:-1]
    out = np.zeros(len(pm) + 1)  # index 0 is the point below the first
    out[1:] += np.where(bad, 0.0, group)
    out[:-1] += np.where(bad, group, 0.0)
    return LatticePmf(out, j_lo - 1, h, off)


def _balanced_edge_offset(q: float, s: float, direction: str, h: float) -> float | None:
    """The optimistic offset whose edge cell is exactly balanced (its merged loss on its point):
    the mass piled against a hard edge of the loss is then neither rounded down (the point on the
    edge) nor unbalanced (the point half a cell off). None without an edge."""
    if q >= 1:
        return None
    if direction == "remove":  # cell (edge, l + h/2] for the point l in [edge, edge + h)
        edge = math.log1p(-q)
        grid = edge + h * np.linspace(0, 1, 17)

        def excess(ell: float) -> float:
            _, p_cdf, _, q_cdf = loss_tails(q, s, direction, np.array([ell + h / 2]))
            return math.log(p_cdf[0] / q_cdf[0]) - ell if p_cdf[0] > 0 and q_cdf[0] > 0 else -1.0

    else:  # cell (l - h/2, edge] for the point l in (edge - h, edge]
        edge = -math.log1p(-q)
        grid = edge - h * np.linspace(1, 0, 17)

        def excess(ell: float) -> float:
            p_sf, _, q_sf, _ = loss_tails(q, s, direction, np.array([ell - h / 2]))
            return math.log(p_sf[0] / q_sf[0]) - ell if p_sf[0] > 0 and q_sf[0] > 0 else -1.0

    vals = [excess(float(x)) for x in grid]
    for i in range(len(grid) - 1):
        if vals[i] > 0 >= vals[i + 1]:  # the excess falls through 0: bisect
            lo, hi = float(grid[i]), float(grid[i + 1])
            for _ in range(50):
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if excess(mid) > 0 else (lo, mid)
            return lo - math.floor(lo / h) * h
    return None


def _mean_loss(pmf: LatticePmf) -> float:
    return float(np.dot(pmf.p, pmf.losses()))


def tuned_steps(q: float, s: float, direction: str, h: float, tries: int = 8) -> tuple[LatticePmf, LatticePmf]:
    """(pessimistic, optimistic) one-step lattices. The pessimistic one has a point on the loss's
    hard edge (_edge_offset); the optimistic one is the best of ``tries`` offsets in [0, h) and
    the edge-aligned one by its mean loss under P (every offset gives a sound lower bound; under
    composition the means add, and the eps error is mostly n times the mean's shortfall)."""
    offs = [None, _balanced_edge_offset(q, s, direction, h), *(k * h / tries for k in range(tries))]
    opt = max((optimistic_step(q, s, direction, h, o) for o in offs), key=_mean_loss)
    return pessimistic_step(q, s, direction, h), opt


# --------------------------------------------------------------------------------------------
# composition


_THETAS = np.concatenate(([0.0], np.geomspace(1e-3, 1e4, 96)))
#: per-level constant of the FFT's relative 2-norm error (a few ulps; numpy/scipy's pocketfft)
FFT_GAMMA = 1e-15


def cgf(pmf: LatticePmf, thetas: np.ndarray, group: int = 32) -> np.ndarray:
    """An upper bound on K(theta) = log sum_k p_k e^{theta l_k} (finite part): the masses are
    summed over runs of ``group`` points and put at the run's top point for theta > 0, at its
    bottom point for theta < 0 (both can only raise the sum), then log-sum-exp."""
    n = len(pmf.p)
    starts = np.arange(0, n, group)
    mass = np.add.reduceat(np.maximum(pmf.p, 0.0), starts)
    ell = pmf.losses()
    top, bottom = ell[np.minimum(starts + group - 1, n - 1)], ell[starts]
    keep = mass > 0
    logm, top, bottom = np.log(mass[keep]), top[keep], bottom[keep]
    out = np.empty(len(thetas))
    for i, t in enumerate(np.asarray(thetas, dtype=float)):
        z = logm + t * (top if t > 0 else bottom)
        zmax = z.max()
        out[i] = zmax + math.log(np.exp(z - zmax).sum())
    return out


def chernoff_theta(pmf: LatticePmf, n: int, *, delta: float | None = None, eps: float | None = None) -> float:
    """The tilt theta > 0 of the Chernoff bound of the n-fold composition at delta (the theta
    minimising (n K(theta) - log delta)/theta) or at eps (minimising n K(theta) - theta eps)."""
    th = _THETAS[1:]
    k = cgf(pmf, th, group=1)  # exact: a grouped bound is too coarse for small losses
    score = (n * k - math.log(delta)) / th if delta is not None else n * k - th * eps
    return float(th[int(np.argmin(score))])


@dataclass
class Composed:
    """The n-fold power, tilted: the P-mass at l_k = offset + (k0 + i) h is
    a_i exp(logscale - theta l_k), each a_i within ``noise`` of the exact product of the one-step
    lattice's tilted masses; ``inf`` is the P-mass at +inf (on the pessimistic side with the
    Chernoff bounds of the cut tails)."""

    a: np.ndarray
    k0: int
    h: float
    offset: float
    theta: float
    logscale: float
    inf: float
    noise: float
    pessimistic: bool

    def losses(self) -> np.ndarray:
        return self.offset + (self.k0 + np.arange(len(self.a))) * self.h


def compose(pmf: LatticePmf, n: int, tau: float, pessimistic: bool, theta: float) -> Composed:
    """The n-fold composition by repeated squaring of the theta-tilted pmf (FFT products; their
    float error is then relative to the tilted masses, i.e. to the region near the eps that the
    tilt is chosen for). After every product the lattice is cut to [t_lo(m), t_hi(m)], the
    Chernoff ends of the m-fold power outside which its P-mass is below tau on each side: the
    optimistic side drops what is outside (a sub-measure), the pessimistic side drops it and
    puts the Chernoff bound of its mass at +inf (so the cut can only raise its delta). The
    products' float error per coefficient is estimated (not bounded): each FFT product adds
    3 gamma log2(L) times the 2-norms (the standard bound on the 2-norm of the error, used per
    coefficient: about 1000x what is measured), and earlier errors pass through a product as white
    noise, scaled by the other factor's 2-norm (test_pld_reference checks the estimate against a
    long-double direct convolution)."""
    h, off = pmf.h, pmf.offset
    th = _THETAS[1:]
    ks, ks_neg, k0_mass = cgf(pmf, th, group=4), cgf(pmf, -th, group=4), math.log(max(float(pmf.p.sum()), 1e-300))
    log_tau = math.log(tau)
    k_theta = float(cgf(pmf, np.array([theta]), group=1)[0])  # the tilt's normaliser: exact

    def cut(a: np.ndarray, k0: int, inf: float, m: int, noise: float) -> tuple:
        t_hi = float(np.min((m * ks - log_tau) / th))
        t_lo = float(np.max((m * ks_neg - log_tau) / -th))
        lo_i = max(math.floor((t_lo - m * off) / h) - k0, 0)
        hi_i = min(math.ceil((t_hi - m * off) / h) - k0, len(a) - 1)
        if hi_i < lo_i:
            raise ValueError("empty lattice after the Chernoff cut")
        if pessimistic:
            ell_lo, ell_hi = m * off + (k0 + lo_i) * h, m * off + (k0 + hi_i) * h
            if lo_i > 0:  # P(S_m < ell_lo) <= exp(m K(-t) + t ell_lo), and <= the mass
                inf += math.exp(min(float(np.min(m * ks_neg + th * ell_lo)), m * k0_mass))
            if hi_i < len(a) - 1:  # P(S_m > ell_hi) <= exp(m K(t) - t ell_hi)
                inf += math.exp(min(float(np.min(m * ks - th * ell_hi)), m * k0_mass))
        return a[lo_i : hi_i + 1], k0 + lo_i, inf, m, noise

    def mul(x: tuple, y: tuple) -> tuple:
        c = fftconvolve(x[0], y[0])  # the float error is signed: clipping it would bias both sides up
        bits = math.log2(max(len(c), 2))
        norms = [math.sqrt(float(np.dot(v, v))) for v in (x[0], y[0], c)]
        fft_err = 3 * FFT_GAMMA * bits * sum(norms)
        # earlier errors propagate as white noise through a pmf (rms x its 2-norm); the part that
        # is correlated, a relative error of the total mass (about steps x 1e-16, measured), is
        # counted in _delta_slack
        noise = x[4] * norms[1] + y[4] * norms[0] + x[4] * y[4] * math.sqrt(len(c)) + fft_err
        return cut(c, x[1] + y[1], x[2] + y[2] - x[2] * y[2], x[3] + y[3], noise)

    keep = pmf.p > 0
    a0 = np.zeros(len(pmf.p))
    a0[keep] = np.exp(np.log(pmf.p[keep]) + theta * pmf.losses()[keep] - k_theta)
    base = cut(a0, pmf.k0, pmf.inf, 1, 0.0)
    acc = None
    while True:
        if n & 1:
            acc = base if acc is None else mul(acc, base)
        n >>= 1
        if not n:
            break
        base = mul(base, base)
    assert acc is not None
    a, k0, inf, m, noise = acc
    return Composed(a, k0, h, m * off, theta, m * k_theta, min(inf, 1.0), noise, pessimistic)


class TiltTooSteep(ArithmeticError):
    """The answer lies where the tilted masses are float noise (the tilt was chosen far off)."""


def _region(c: Composed) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """From the first point whose tilted mass is 1e3 x the noise: (losses, P-masses, the noise
    allowance nu * sum_{j > i} w_j with the untilting weights w = exp(logscale - theta l))."""
    ell = c.losses()
    big = np.nonzero((c.a > 1e3 * c.noise) & (c.logscale - c.theta * ell < 650))[0]
    if len(big) == 0:
        raise TiltTooSteep("all tilted masses are below the noise")
    i0 = int(big[0])
    ell = ell[i0:]
    w = np.exp(c.logscale - c.theta * ell)
    r = math.exp(-c.theta * c.h)
    above = w * r / (1 - r) if c.theta > 0 else np.arange(len(ell))[::-1].astype(float)
    return ell, c.a[i0:] * w, c.noise * above


def delta_of_eps(c: Composed, eps: float) -> float:
    """The side's bound on delta(eps): sum_{l > eps} p_l (1 - e^{eps - l}) + inf, plus (pessimistic)
    or minus (optimistic) the noise allowance."""
    ell, p, allow = _region(c)
    if eps < ell[0]:
        raise TiltTooSteep(f"eps = {eps} is below the region the tilt resolves ({ell[0]})")
    m = ell > eps
    d = c.inf + float(np.sum(p[m] * -np.expm1(eps - ell[m])))
    i = int(np.searchsorted(ell, eps, side="right")) - 1
    return d + allow[i] if c.pessimistic else d - allow[i]


def eps_of_delta(c: Composed, delta: float) -> float:
    """The side's bound on eps(delta): the eps >= 0 where the side's delta bound crosses delta,
    solved exactly between lattice points (for eps in [l_i, l_{i+1}], delta = inf + S_i -
    e^{eps - l_i} T_i with S_i = sum_{j > i} p_j, T_i = sum_{j > i} p_j e^{-(j - i) h}), with the
    noise allowance at l_i."""
    if c.pessimistic and c.inf >= delta:
        return math.inf
    ell, p, allow = _region(c)
    e = math.exp(-c.h)
    r = p[::-1]
    s_i = np.concatenate(([0.0], np.cumsum(r)[:-1]))[::-1]
    t_i = lfilter([0.0, e], [1.0, -e], r)[::-1]
    d = c.inf + s_i - t_i + (allow if c.pessimistic else -allow)  # the bound at l_i
    ok = np.nonzero(d >= delta)[0]
    if len(ok) == 0:
        if ell[0] <= 0:
            return 0.0
        raise TiltTooSteep(f"delta is reached below the region the tilt resolves ({ell[0]})")
    i = int(ok[-1])
    num = c.inf + s_i[i] + (allow[i] if c.pessimistic else -allow[i]) - delta
    x = math.log(num / t_i[i]) if t_i[i] > 0 and num > 0 else 0.0
    return max(float(ell[i] + min(max(x, 0.0), c.h)), 0.0)


# --------------------------------------------------------------------------------------------
# the reference interval


@dataclass(frozen=True)
class Reference:
    """``lo``/``hi``: the float bracket (optimistic and pessimistic at the finest h, widened);
    ``center``/``err``: Richardson estimate and error bar; ``levels``: (h, lo, hi) per level."""

    lo: float
    hi: float
    center: float
    err: float
    levels: tuple

    @property
    def tight(self) -> tuple[float, float]:
        return max(self.lo, self.center - self.err), min(self.hi, self.center + self.err)

    @property
    def rel_width(self) -> float:
        return (self.hi - self.lo) / max(abs(self.hi), 1e-300)


def _solve(
    q: float, s: float, steps: int, direction: str, h: float, tau: float, *, delta: float | None, eps: float | None
) -> tuple[float, float]:
    """(optimistic, pessimistic) bounds of eps(delta) or of delta(eps) at spacing h. The tilt
    starts at the Chernoff theta; when the answer falls where the tilted masses are float noise
    (a loss bounded above, where the Chernoff theta runs off to large values) it is divided by 8."""
    one_p, one_o = tuned_steps(q, s, direction, h)
    theta = chernoff_theta(one_p, steps, delta=delta, eps=eps)
    for _ in range(12):
        try:
            pess, opt = compose(one_p, steps, tau, True, theta), compose(one_o, steps, tau, False, theta)
            if delta is not None:
                slack = _delta_slack(delta, steps)
                return eps_of_delta(opt, delta + slack), eps_of_delta(pess, delta - slack)
            assert eps is not None
            return delta_of_eps(opt, eps), delta_of_eps(pess, eps)
        except TiltTooSteep:
            theta /= 8
    raise TiltTooSteep(f"no tilt resolves q={q} sigma={s} steps={steps} {direction} delta={delta} eps={eps}")


def default_h(q: float, s: float, direction: str) -> float:
    """A power of two near std(one-step loss)/8, no finer than 400k cells per step."""
    sd = loss_std(q, s, direction)
    h = 2.0 ** math.floor(math.log2(sd / 8))
    lo, hi = loss_range(q, s, direction)
    while (hi - lo) / h > 400_000:
        h *= 2
    return h


def _delta_slack(delta: float, steps: int) -> float:
    """Relative float error of the one-step masses (CDF differences, the tilt) and of the total mass
    of the FFT products (measured: about 1e-16 per step), carried through the steps."""
    return FLOAT_DELTA_SLACK + (1e-9 + 1e-15 * steps) * delta


def reference_eps(
    q: float,
    sigma: float,
    steps: int,
    delta: float,
    direction: str = "remove",
    *,
    rel_target: float = 2e-4,
    h: float | None = None,
    max_levels: int = 4,
    max_cells: int = 1_000_000,
) -> Reference:
    """Float bracket of eps(delta) of ``steps`` compositions (direction remove, add or both: the
    max of the two). Levels h, h/2, ... until the bracket's relative width is <= rel_target (at
    least two levels, at most max_levels, and no level with more than max_cells cells a step)."""
    if direction == "both":
        kw = {"rel_target": rel_target, "h": h, "max_levels": max_levels, "max_cells": max_cells}
        a = reference_eps(q, sigma, steps, delta, "remove", **kw)
        b = reference_eps(q, sigma, steps, delta, "add", **kw)
        top = a if a.center >= b.center else b
        return Reference(max(a.lo, b.lo), max(a.hi, b.hi), top.center, top.err, (a.levels, b.levels))
    hh = default_h(q, sigma, direction) if h is None else h
    tau = delta * 1e-10
    lo_l, hi_l = loss_range(q, sigma, direction)
    levels: list[tuple[float, float, float]] = []
    while True:
        e_lo, e_hi = _solve(q, sigma, steps, direction, hh, tau, delta=delta, eps=None)
        e_lo, e_hi = e_lo * (1 - REL_MARGIN), e_hi * (1 + REL_MARGIN)
        levels.append((hh, e_lo, e_hi))
        width = (e_hi - e_lo) / max(e_hi, 1e-300)
        if len(levels) >= 2 and (width <= rel_target or len(levels) >= max_levels):
            break
        if (hi_l - lo_l) / (hh / 2) > max_cells:
            break
        hh /= 2
    return _finish(levels)


def _finish(levels: list[tuple[float, float, float]]) -> Reference:
    """Bracket from the finest level; Richardson centre and error bar from the last two (three)."""
    _, lo, hi = levels[-1]
    if len(levels) < 2:
        return Reference(lo, hi, (lo + hi) / 2, (hi - lo) / 2, tuple(levels))

    def extrapolated(k: int) -> tuple[float, float]:
        (_, lo1, hi1), (_, lo2, hi2) = levels[k - 1], levels[k]
        return (4 * lo2 - lo1) / 3, (4 * hi2 - hi1) / 3

    r_lo, r_hi = extrapolated(len(levels) - 1)
    center = (r_lo + r_hi) / 2
    err = SAFETY * abs(r_hi - r_lo) / 2
    if len(levels) >= 3:
        p_lo, p_hi = extrapolated(len(levels) - 2)
        err += SAFETY * abs(center - (p_lo + p_hi) / 2)
    err = max(err, REL_MARGIN * abs(center))
    return Reference(lo, hi, center, err, tuple(levels))


def reference_delta(
    q: float,
    sigma: float,
    steps: int,
    eps: float,
    direction: str = "remove",
    *,
    rel_target: float = 1e-3,
    h: float | None = None,
    max_levels: int = 5,
    max_cells: int = 1_000_000,
) -> tuple[float, float]:
    """Float bracket [lo, hi] of delta(eps): levels h, h/2, ... until (hi - lo)/hi <= rel_target
    (at most max_levels, and no level with more than max_cells cells a step)."""
    if direction == "both":
        kw = {"rel_target": rel_target, "h": h, "max_levels": max_levels, "max_cells": max_cells}
        a = reference_delta(q, sigma, steps, eps, "remove", **kw)
        b = reference_delta(q, sigma, steps, eps, "add", **kw)
        return max(a[0], b[0]), max(a[1], b[1])
    hh = default_h(q, sigma, direction) if h is None else h
    lo_l, hi_l = loss_range(q, sigma, direction)
    for level in range(max_levels):
        d_lo, d_hi = _solve(q, sigma, steps, direction, hh, 1e-30, delta=None, eps=eps)
        d_lo, d_hi = max(d_lo - _delta_slack(d_lo, steps), 0.0), d_hi + _delta_slack(d_hi, steps)
        if d_hi - d_lo <= rel_target * d_hi or level == max_levels - 1 or (hi_l - lo_l) / (hh / 2) > max_cells:
            break
        hh /= 2
    return d_lo, d_hi


# --------------------------------------------------------------------------------------------
# exact references (mpmath)

DPS = 50


def _ncdf(x: mp.mpf) -> mp.mpf:
    return mp.ncdf(x)


def gaussian_delta_exact(mu: object, eps: object) -> mp.mpf:
    """delta(eps) of the Gaussian pair with shift/sigma = mu: Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)."""
    with mp.workdps(DPS):
        mu, eps = mp.mpf(mu), mp.mpf(eps)
        return _ncdf(-eps / mu + mu / 2) - mp.exp(eps) * _ncdf(-eps / mu - mu / 2)


def subsampled_delta_exact(q: object, s: object, direction: str, eps: object) -> mp.mpf:
    """delta(eps) of ONE subsampled-Gaussian step from the loss threshold x(eps) (eps >= 0)."""
    with mp.workdps(DPS):
        q, s, eps = mp.mpf(q), mp.mpf(s), mp.mpf(eps)
        if direction == "remove":
            # L > eps  iff  x > X = s^2 log((e^eps - 1 + q)/q) + 1/2
            x = s**2 * mp.log((mp.expm1(eps) + q) / q) + mp.mpf(1) / 2
            return q * _ncdf(-(x - 1) / s) - (mp.expm1(eps) + q) * _ncdf(-x / s)
        if direction == "add":
            a = mp.expm1(-eps) + q  # L_add > eps  iff  x < X = s^2 log(a/q) + 1/2, if a > 0
            if a <= 0:
                return mp.mpf(0)
            x = s**2 * mp.log(a / q) + mp.mpf(1) / 2
            return _ncdf(x / s) - mp.exp(eps) * ((1 - q) * _ncdf(x / s) + q * _ncdf((x - 1) / s))
        raise ValueError(direction)


def _invert(f: object, delta: object, hi: float = 1.0) -> mp.mpf:
    """The eps >= 0 with f(eps) = delta for a nonincreasing f (bisection at DPS digits)."""
    with mp.workdps(DPS):
        target = mp.mpf(delta)
        if f(mp.mpf(0)) <= target:
            return mp.mpf(0)
        lo, hi = mp.mpf(0), mp.mpf(hi)
        while f(hi) > target:
            lo, hi = hi, 2 * hi
        for _ in range(DPS * 4):
            mid = (lo + hi) / 2
            if f(mid) > target:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2


def gaussian_eps_exact(mu: object, delta: object) -> mp.mpf:
    """eps(delta) of the Gaussian pair with mu (composition of n steps at sigma: mu = sqrt(n)/sigma)."""
    return _invert(lambda e: gaussian_delta_exact(mu, e), delta)


def subsampled_eps_exact(q: object, s: object, direction: str, delta: object) -> mp.mpf:
    """eps(delta) of one step; ``both`` is the max of the two directions."""
    if direction == "both":
        return max(subsampled_eps_exact(q, s, d, delta) for d in ("remove", "add"))
    return _invert(lambda e: subsampled_delta_exact(q, s, direction, e), delta)


def exact_eps(q: object, s: object, steps: int, direction: str, delta: object) -> mp.mpf | None:
    """The exact eps(delta) where a closed form exists (q = 1: a Gaussian; steps = 1), else None."""
    with mp.workdps(DPS):
        if mp.mpf(q) == 1:
            return gaussian_eps_exact(mp.sqrt(steps) / mp.mpf(s), delta)
        if steps == 1:
            return subsampled_eps_exact(q, s, direction, delta)
    return None
