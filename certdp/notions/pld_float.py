"""A float PLD accountant that only steers: where a calibration's certified probes should go.

Why: a calibration used about ten coarse certified lattices to find the root of eps(sigma) =
target, then both certified ends at two spacings to estimate eps(sigma) and each end's error
(Richardson) before its two decisive probes. Those estimates need no proof, only accuracy: this
module computes the merged-cells construction of docs/math.md §10 ("The lower bound by merged
cells", in its tilted form) in floats, composes it by one FFT power (as dp_accounting does), and
extrapolates two spacings. At CIFAR-10 scale one estimate takes tens of milliseconds, a certified
lattice end about a second.

Nothing here is certified: every number is a float estimate (no enclosure, no error bound), and
every decision a calibration records is made by certified lattice bounds afterwards. A poor
estimate can only cost probes (the calibration falls back to its certified search).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

import numpy as np

from certdp.errors import LimitExceeded
from certdp.notions.pld_lattice import lattice_for
from certdp.pairs import PrivacyPair

__all__ = ["FloatEstimate", "float_eps", "float_eps_merged"]

#: composed standard deviations the FFT window spans on each side of the mean (the wrapped mass
#: beyond is below any delta a calibration resolves)
WINDOW_SDS = 16

#: beyond the Chernoff reach log(1/delta) the window keeps e^-WINDOW_MARGIN of delta's scale
WINDOW_MARGIN = 16

#: the largest FFT window (points): beyond it the estimate is refused (None)
MAX_WINDOW = 1 << 22


@lru_cache(maxsize=64)
def float_eps_merged(pair: PrivacyPair, steps: int, delta: float, h: Fraction, tail_bits: int) -> float | None:
    """eps(delta) of the merged cells of ``pair`` on the lattice of spacing h (offset 0, the ends of
    certdp.notions.pld_lattice.lattice_for), composed ``steps`` times in floats by one FFT power:
    about the certified merged lower end at h (below the true eps by about a h^2). None where the
    pair has no float tails, the lattice cannot be formed or the window would be too large.

    Kept for reuse (an LRU cache of 64): a calibration asks the same spacing again.

    Contract: a float estimate (no enclosure); only steers.
    """
    try:
        lattice = lattice_for(pair, h, tail_bits)
    except LimitExceeded:  # too many cells at this spacing: no estimate
        return None
    hf = float(h)
    ells = hf * np.arange(lattice.lo, lattice.hi + 1, dtype=float)
    tails = pair.loss_tails_float(ells)
    if tails is None:
        return None
    tp, tq = (np.asarray(t, dtype=float) for t in tails)
    # cell i: (ell[i-1], ell[i]] for i >= 1, cell 0 the losses <= ell[0]; above the top: p_inf
    p = np.concatenate(([1.0 - tp[0]], tp[:-1] - tp[1:])).clip(min=0.0)
    w = np.concatenate(([1.0 - tq[0]], tq[:-1] - tq[1:])).clip(min=0.0)
    p_inf = max(0.0, float(tp[-1]))
    with np.errstate(over="ignore", invalid="ignore"):
        # Q tilted by e^x, x = (k - 1/2) h at index k: about P in every cell (docs/math.md §10)
        wt = w * np.exp(np.minimum(ells - hf / 2, 700.0))
    # a cell tilted far past its P-mass (only the bottom cell, whose losses reach far below its
    # point) is dropped from both arrays: a restriction, as in the certified constructions
    bad = ~np.isfinite(wt) | (wt > 2.0)
    p, wt = np.where(bad, 0.0, p), np.where(bad, 0.0, wt)
    total = p.sum()
    if not total > 0:
        return None
    idx = np.arange(lattice.lo, lattice.hi + 1, dtype=float)
    mean = float((p * idx).sum() / total)
    sd = math.sqrt(max(float((p * (idx - mean) ** 2).sum() / total), 0.0) * steps)
    # the window must hold the composed loss where delta lives, and the mass beyond it (which
    # wraps around) must be far below delta: a heavy right tail (rare large losses at small q
    # and sigma) reaches past 16 standard deviations. Chernoff at lambda = 1: P(S > t) <=
    # e^-t E[e^L]^n; at lambda = -1, P(S < -t) <= e^-t E_P[e^-L]^n <= e^-t
    reach = math.log(1 / delta) + WINDOW_MARGIN
    with np.errstate(over="ignore"):
        log_m1 = math.log(max(float((p * np.exp(np.minimum(ells, 700.0))).sum()), 1e-300))
    top_loss = min(steps * log_m1 + reach, steps * float(ells[-1]))
    bottom_loss = max(-reach, steps * float(ells[0]))
    centre = round(mean)
    half = max(WINDOW_SDS * sd, abs(top_loss / hf - steps * centre), abs(steps * centre - bottom_loss / hf)) + 64
    size = 1 << max(10, math.ceil(math.log2(2 * half)))
    if not math.isfinite(half) or size > MAX_WINDOW:
        return None
    # one step on the window around its mean: index k at position (k - centre) mod size; mass
    # above the window counts at +inf, mass below joins the window's bottom (a merge)
    rel = np.arange(lattice.lo, lattice.hi + 1) - centre
    top, bottom = size // 2 - 1, -(size // 2)
    p_inf += float(p[rel > top].sum())
    keep = rel <= top
    p, wt, rel = p[keep], wt[keep], np.maximum(rel[keep], bottom)
    step_p, step_w = np.zeros(size), np.zeros(size)
    np.add.at(step_p, rel % size, p)
    np.add.at(step_w, rel % size, wt)
    comp_p = np.fft.irfft(np.fft.rfft(step_p) ** steps, size)
    comp_w = np.fft.irfft(np.fft.rfft(step_w) ** steps, size)
    # position r holds composed index steps * centre + r, r in [-size/2, size/2)
    order = np.concatenate((np.arange(size // 2, size), np.arange(0, size // 2)))
    pk, wk = comp_p[order].clip(min=0.0), comp_w[order].clip(min=0.0)
    kk = steps * centre + np.arange(-(size // 2), size // 2, dtype=float)
    # e^eps Q_K = tilted Q_K e^(eps - x_K), x_K = -steps h / 2 + K h
    xk = -steps * hf / 2 + kk * hf
    inf_part = -math.expm1(steps * math.log1p(-min(p_inf, 1.0 - 1e-16)))
    return _eps_of(pk, wk, xk, delta - inf_part)


def _eps_of(pk: np.ndarray, wk: np.ndarray, xk: np.ndarray, delta: float) -> float | None:
    """The eps where sum_K (P_K - e^eps Q_K)_+ = delta, Q_K = wk e^-xk, from the indices sorted by
    their loss log(P_K / Q_K) (the sum over those above eps is the positive part). None when
    delta <= 0 (the mass at +inf alone exceeds it: no finite eps)."""
    if not delta > 0:
        return None
    live = (pk > 0) & (wk > 0)
    with np.errstate(divide="ignore"):
        loss = np.where(live, np.log(np.where(live, pk, 1.0)) - np.log(np.where(live, wk, 1.0)) + xk, -np.inf)
    only_p = (pk > 0) & ~(wk > 0)
    loss[only_p] = np.inf
    order = np.argsort(-loss)
    ls, ps = loss[order], pk[order]
    # Q_K scaled by e^-(loss_K): the e^eps-weighted part, summed from the top
    with np.errstate(over="ignore", invalid="ignore"):
        qs = np.where(np.isfinite(ls), ps * np.exp(-np.where(np.isfinite(ls), ls, 0.0)), 0.0)
    cp, cq = np.cumsum(ps), np.cumsum(qs)
    # delta(eps) for eps in [ls[j+1], ls[j]] is cp[j] - e^eps cq[j]; find the piece holding delta
    with np.errstate(over="ignore", invalid="ignore"):
        at_next = cp[:-1] - np.exp(np.minimum(ls[1:], 700.0)) * cq[:-1]
    hits = np.nonzero(np.isfinite(ls[1:]) & (at_next >= delta))[0]
    if len(hits) == 0:
        return 0.0
    j = int(hits[0])
    if not cq[j] > 0:
        return float(ls[j + 1])
    eps = math.log(max(cp[j] - delta, 1e-300) / cq[j])
    return max(eps, 0.0)


@dataclass(frozen=True)
class FloatEstimate:
    """A float estimate of eps(delta) (``eps``) and of the merged lower end's error coefficient
    (``lower_coeff``: the merged end at spacing h lies about lower_coeff h^2 below eps)."""

    eps: float
    lower_coeff: float


def float_eps(
    pair: PrivacyPair,
    steps: int,
    delta: float,
    h: Fraction,
    tail_bits: int,
    tol: float | None = None,
    finest: Fraction = Fraction(1, 2**20),
) -> FloatEstimate | None:
    """eps(delta) of the composition, estimated by Richardson extrapolation of
    :func:`float_eps_merged` on spacings h and h/2 (second order in h). With ``tol``, the spacings
    are halved (not below ``finest``) until two successive extrapolations agree within tol (at
    coarse spacings the h^2 term is not yet dominant: at q = 0.005, sigma = 0.9393, 1000 steps the
    extrapolation on 2^-9 and 2^-10 was 3.4e-5 off, on 2^-10 and 2^-11 2e-6). None where a
    spacing fails, the finer value is below the coarser (not second order) or tol is not met.

    Contract: a float estimate (no enclosure); only steers.
    """
    prev: FloatEstimate | None = None
    while True:
        coarse = float_eps_merged(pair, steps, delta, h, tail_bits)
        fine = float_eps_merged(pair, steps, delta, h / 2, tail_bits)
        if coarse is None or fine is None or fine < coarse or not fine > 0:
            return None
        est = fine + (fine - coarse) / 3
        now = FloatEstimate(est, (est - coarse) / float(h) ** 2)
        if tol is None or (prev is not None and abs(now.eps - prev.eps) <= tol):
            return now
        if h / 4 < finest:
            return None
        prev, h = now, h / 2
