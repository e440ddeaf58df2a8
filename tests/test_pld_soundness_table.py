"""The PLD accountant against independent float references at 12 drawn settings (issue 15).

For n = 1 the reference is exact (mpmath: Gaussian tails of the subsampled Gaussian's loss). For
n >= 2 it is a float connect-the-dots computation written here from the definition (numpy and
scipy, nothing from certdp): the loss tails in closed form with scipy's ndtr, the dominating
lattice pair by splitting each cell's (P, Q)-mass onto its ends (Doroshenko et al.'s
connect-the-dots), and the n-fold power by FFT. Two properties are asserted:

- connect-the-dots on a grid 4x finer (h/4) is an upper bound of the truth that the certified upper
  bound on h dominates EXACTLY (splitting onto h/4 and then onto h is splitting onto h, so the
  h-lattice pair is a post-processing-dominating refinement of the h/4 one): certified
  delta_lower(h) <= ctd(h/4) <= certified delta_upper(h), up to float error;
- the certified enclosure contains the Richardson extrapolation R = (4 ctd(h/8) - ctd(h/4))/3 of
  the second-order ctd error, widened by its estimate |ctd(h/8) - R|.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from scipy.special import ndtr

from certdp.enclose import workprec
from certdp.notions.pld import LatticeBounds, tuned_lattice
from certdp.pairs.subsampled import SubsampledGaussian

H = Fraction(1, 2**8)


def _draw() -> list[tuple[str, str, int, Fraction, str]]:
    rng = random.Random(15)
    out = []
    for i in range(12):
        q = rng.choice(["0.01", "0.05", "0.1", "0.3", "1"])
        sigma = rng.choice(["0.8", "1", "1.5", "2", "3"])
        steps = 1 if i < 3 else rng.choice([2, 5, 20, 60])
        eps = Fraction(rng.choice([0, 1, 2, 4, 8]), 8)
        out.append((q, sigma, steps, eps, rng.choice(["remove", "add"])))
    return out


def _tails(q: float, s: float, ell: np.ndarray, direction: str) -> tuple[np.ndarray, np.ndarray]:
    """(P(L > ell), Q(L > ell)) in floats from the definition (the loss is monotone in x)."""
    y = ell if direction == "remove" else -ell
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.where(np.exp(y) > 1 - q, s * s * np.log((np.exp(y) - 1 + q) / q) + 0.5, -np.inf)
    mix_above = (1 - q) * ndtr(-x / s) + q * ndtr(-(x - 1) / s)
    if direction == "remove":
        return mix_above, ndtr(-x / s)
    return ndtr(x / s), 1 - mix_above


def _ctd_delta(q: str, sigma: str, steps: int, eps: Fraction, direction: str, g: float) -> float:
    qf, s = float(q), float(sigma)
    lo, hi = -40 / g, 40 / g  # then trimmed to where the tails move
    k = np.arange(math.floor(-12 / g), math.ceil(14 / g) + 1)
    ell = k * g
    tp, tq = _tails(qf, s, ell, direction)
    keep = np.nonzero((tp > 1e-30) & (tp < 1 - 1e-30))[0]
    a, b = max(keep[0] - 1, 0), min(keep[-1] + 2, len(k) - 1)
    ell, tp, tq = ell[a : b + 1], tp[a : b + 1], tq[a : b + 1]
    del lo, hi
    p, w = tp[:-1] - tp[1:], tq[:-1] - tq[1:]  # cell (ell_i, ell_{i+1}]
    ea, eb = np.exp(-ell[:-1]), np.exp(-ell[1:])
    alpha_a = np.clip((w - p * eb) / (ea - eb), 0, p)
    c = np.zeros(len(ell))
    c[0] += 1 - tp[0]
    c[:-1] += alpha_a
    c[1:] += p - alpha_a
    p_inf = tp[-1]
    size = (len(c) - 1) * steps + 1
    n_fft = 1 << (size - 1).bit_length()
    cn = np.fft.irfft(np.fft.rfft(c, n_fft) ** steps, n_fft)[:size]
    losses = ell[0] * steps + g * np.arange(size)
    e = float(eps)
    mask = losses > e
    return float(np.sum(cn[mask] * (1 - np.exp(e - losses[mask])))) + 1 - (1 - p_inf) ** steps


def _exact_one_step(q: str, sigma: str, eps: Fraction, direction: str) -> mp.mpf:
    qq, s, e = mp.mpf(q), mp.mpf(sigma), mp.mpf(eps.numerator) / eps.denominator
    y = e if direction == "remove" else -e
    if mp.e**y <= 1 - qq:
        tp, tq = (mp.mpf(1), mp.mpf(1)) if direction == "remove" else (mp.mpf(0), mp.mpf(0))
    else:
        x = s * s * mp.log((mp.e**y - 1 + qq) / qq) + mp.mpf(1) / 2
        mix_above = (1 - qq) * mp.ncdf(-x / s) + qq * mp.ncdf(-(x - 1) / s)
        tp, tq = (mix_above, mp.ncdf(-x / s)) if direction == "remove" else (mp.ncdf(x / s), 1 - mix_above)
    return tp - mp.e**e * tq


@pytest.mark.parametrize(("q", "sigma", "steps", "eps", "direction"), _draw())
def test_certified_delta_contains_the_independent_reference(
    q: str, sigma: str, steps: int, eps: Fraction, direction: str
) -> None:
    pair = SubsampledGaussian(q, sigma, direction)
    with workprec(128):
        bounds = LatticeBounds(pair, steps, tuned_lattice(pair, H))
        low, up = bounds.delta("lower", eps), bounds.delta("upper", eps)
    with workprec(200):
        lo_f, up_f = float(low.lower().str(30, radius=False)), float(up.upper().str(30, radius=False))
    if steps == 1:
        with mp.workdps(50):
            exact = float(_exact_one_step(q, sigma, eps, direction))
        assert lo_f <= exact * (1 + 1e-12) + 1e-300 and exact <= up_f * (1 + 1e-12) + 1e-300, (lo_f, exact, up_f)
        return
    g = float(H)
    ctd4, ctd8 = _ctd_delta(q, sigma, steps, eps, direction, g / 4), _ctd_delta(q, sigma, steps, eps, direction, g / 8)
    tol = 1e-9 * max(ctd4, 1e-12) + 1e-13  # float error of the FFT power
    assert lo_f <= ctd4 + tol and ctd4 <= up_f + tol, (lo_f, ctd4, up_f)
    richardson = (4 * ctd8 - ctd4) / 3
    err = abs(ctd8 - richardson) + tol
    assert lo_f <= richardson + err and richardson - err <= up_f, (lo_f, richardson, err, up_f)
