"""Numerical (uncertified) total variation of random allocation: float code, named approx_*.

These values choose brackets and starting points and serve as independent checks; they never
produce a certified number. Two methods:

* :func:`approx_tv_monte_carlo`: E_Q (1 - Lambda)_+ = TV over n draws, with its standard error.
* :func:`approx_tv_lattice`: each Y = exp(tX - t^2/2) is rounded to the lattice hZ by mean-keeping
  mass splitting (seed 003 Lemma C.5), the epoch sum is an M-fold convolution (FFT, truncated at
  8M), each epoch value S/M is split onto the grid e^{j eta}, and the E epochs are an E-fold
  convolution. Each rounding only raises TV (Lemma C.5), by O(h^2) + O(eta^2), so the value at
  (h, eta) and at (h/2, eta/2) are combined by Richardson extrapolation. Self-checks: total mass,
  negative mass from FFT round-off, and the extrapolation step size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

from certdp.errors import PrecisionExhausted
from certdp.pairs.params import Number, integer, real


@dataclass(frozen=True)
class ApproxTV:
    """An uncertified TV value with its error indicators."""

    value: float
    error_estimate: float
    coarse: float
    fine: float
    lost_mass: float
    negative_mass: float
    grid: dict[str, float]


def approx_tv_monte_carlo(
    steps: Number, epochs: Number, sigma: Number, n: int = 200_000, seed: int = 0
) -> tuple[float, float]:
    """(estimate, standard error) of TV = E_Q (1 - Lambda)_+ from n draws under Q = N(0, I). Not certified.

    Contract: none (approx_*): an unbiased estimate and its standard error.
    """
    m, e = integer("steps", steps, ge=1), integer("epochs", epochs, ge=1)
    t = 1 / float(real("sigma", sigma, gt=0))
    n = integer("n", n, ge=2)
    rng = np.random.default_rng(seed)
    chunk = max(1, 4_000_000 // (m * e))
    total = total_sq = 0.0
    done = 0
    while done < n:
        b = min(chunk, n - done)
        x = rng.standard_normal((b, e, m))
        log_l = np.logaddexp.reduce(t * x - t * t / 2, axis=2) - math.log(m)
        v = np.maximum(0.0, -np.expm1(log_l.sum(axis=1)))
        total += v.sum()
        total_sq += (v * v).sum()
        done += b
    mean = total / n
    var = max(total_sq / n - mean * mean, 0.0) * n / (n - 1)
    return mean, math.sqrt(var / n)


def _phi_diff(a_hi: np.ndarray, a_lo: np.ndarray) -> np.ndarray:
    """Phi(a_hi) - Phi(a_lo) without cancellation in the upper tail."""
    upper = a_lo > 0
    return np.where(upper, ndtr(-a_lo) - ndtr(-a_hi), ndtr(a_hi) - ndtr(a_lo))


def _step_masses(t: float, h: float, cap: float) -> tuple[np.ndarray, float]:
    """Masses at 0, h, 2h, ... of the mean-keeping rounding of Y; and the mass above cap (dropped)."""
    k = math.ceil(cap / h)
    y = h * np.arange(k + 1)
    with np.errstate(divide="ignore"):
        ly = np.log(y)
    a_f = (ly + t * t / 2) / t  # P(Y <= y) = Phi(a_f)
    a_g = (ly - t * t / 2) / t  # E[Y; Y <= y] = Phi(a_g)
    mass = _phi_diff(a_f[1:], a_f[:-1])
    mean = _phi_diff(a_g[1:], a_g[:-1])
    up = np.clip((mean - y[:-1] * mass) / h, 0.0, None)
    down = np.clip((y[1:] * mass - mean) / h, 0.0, None)
    p = np.zeros(k + 1)
    p[1:] += up
    p[:-1] += down
    return p, float(ndtr(-a_f[-1]))


def _conv_power(p: np.ndarray, n: int, length: int) -> np.ndarray:
    """First ``length`` coefficients of p^n (linear convolutions by FFT, truncated each time)."""
    size = 1 << (2 * length - 1).bit_length()
    result: np.ndarray | None = None
    base = np.zeros(length)
    base[: min(length, len(p))] = p[:length]
    while n:
        if n & 1:
            result = (
                base.copy()
                if result is None
                else np.fft.irfft(np.fft.rfft(result, size) * np.fft.rfft(base, size), size)[:length]
            )
        n >>= 1
        if n:
            base = np.fft.irfft(np.fft.rfft(base, size) ** 2, size)[:length]
    assert result is not None
    return result


def _tv_upper_scheme(t: float, m: int, e: int, h: float, eta: float, cap: float) -> tuple[float, float, float]:
    """1 - E min(1, Lambda) after the two mean-keeping roundings (an upper bound up to FFT error)."""
    b, k, lost, neg = _log_lr_distribution(t, m, e, h, eta, cap)
    expect_min = float((b * np.minimum(1.0, np.exp(k * eta))).sum())
    return 1.0 - expect_min, lost, neg


def _log_lr_distribution(
    t: float, m: int, e: int, h: float, eta: float, cap: float
) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Masses b under Q at Lambda = e^{k eta} after the two roundings, the indices k, lost and negative mass."""
    p, lost = _step_masses(t, h, cap)
    # keep epoch values L = S/M up to 1 + 9 sd + cap/M (the tail of a sum of lognormals is its
    # largest term); what is dropped is counted as lost by the self-check
    sd = math.sqrt(math.expm1(t * t) / m)
    smax = math.ceil((1 + 9 * sd + cap / m) * m / h)
    s = _conv_power(p, m, smax + 1)
    neg = float(-s[s < 0].sum())
    s = np.clip(s, 0.0, None)
    # drop the left tail up to a cumulative mass of 1e-15 (counted as lost); atom 0 always
    i_min = max(1, int(np.searchsorted(np.cumsum(s), 1e-15)))
    lost += max(0.0, 1.0 - lost - float(s[i_min:].sum()))
    values = h * np.arange(i_min, smax + 1) / m  # epoch likelihood ratios kept
    w = s[i_min:]
    j_lo = math.floor(math.log(values[0]) / eta)
    pos = np.log(values) / eta - j_lo
    j = np.floor(pos).astype(np.int64)
    g_lo = np.exp((j + j_lo) * eta)
    g_hi = np.exp((j + 1 + j_lo) * eta)
    frac_up = (values - g_lo) / (g_hi - g_lo)
    r = np.zeros(int(j.max()) + 2)
    np.add.at(r, j, w * (1 - frac_up))
    np.add.at(r, j + 1, w * frac_up)
    b = _conv_power(r, e, e * (len(r) - 1) + 1)
    neg += float(-b[b < 0].sum())
    b = np.clip(b, 0.0, None)
    k = np.arange(len(b)) + e * j_lo
    return b, k, lost, neg


def default_grid(steps: int, epochs: int, sigma: float) -> dict[str, float]:
    """Heuristic lattice for the numeric TV: h ~ 2e-3 (coarser for heavy tails, so that at most
    2^20 step-lattice points are used), eta ~ 1e-4, cap where P(Y > cap) < 1e-13.

    Contract: none: a heuristic grid for the float code.
    """
    t = 1 / sigma
    cap = max(math.exp(t * 7.5 - t * t / 2), 8.0)
    return {"h": max(2e-3, cap / 2**20), "eta": 1e-4, "cap": cap}


def approx_tv_lattice(steps: Number, epochs: Number, sigma: Number, grid: dict[str, float] | None = None) -> ApproxTV:
    """Numerical TV(P^E, Q^E) of random allocation (Richardson-extrapolated lattice; not certified).

    Raises PrecisionExhausted when a self-check fails: lost mass > 1e-9, negative mass > 1e-9,
    or extrapolation step |fine - coarse| > 1e-5 (grid too coarse).

    Contract: none (approx_*): float value with self-checks; never certified.
    """
    m, e = integer("steps", steps, ge=1), integer("epochs", epochs, ge=1)
    s = float(real("sigma", sigma, gt=0))
    g = grid or default_grid(m, e, s)
    t = 1 / s
    coarse, lost_c, neg_c = _tv_upper_scheme(t, m, e, g["h"], g["eta"], g["cap"])
    fine, lost_f, neg_f = _tv_upper_scheme(t, m, e, g["h"] / 2, g["eta"] / 2, g["cap"])
    value = (4 * fine - coarse) / 3
    lost, neg = max(lost_c, lost_f), max(neg_c, neg_f)
    if lost > 1e-9 or neg > 1e-9 or abs(fine - coarse) > 1e-5:
        raise PrecisionExhausted(
            f"numeric TV self-check failed: lost mass {lost:.2e}, negative mass {neg:.2e}, "
            f"step {abs(fine - coarse):.2e}"
        )
    return ApproxTV(value, abs(fine - coarse) / 3, coarse, fine, lost, neg, dict(g))


@dataclass(frozen=True)
class ApproxSigma:
    """Numerical exact sigma (root of TV(sigma) = lambda) and its rounding up to ``step``. Not certified."""

    sigma: float
    sigma_rounded: float
    tv_at_rounded: float
    evaluations: int


def approx_exact_sigma(steps: Number, epochs: Number, lam: Number, step: float = 1e-6) -> ApproxSigma:
    """Root of the numeric TV(sigma) = lambda by bracketing (TV is non-increasing in sigma, seed 003
    App. C.4), coarse grid first, then the extrapolated lattice. Not certified.

    Contract: none (approx_*): a float root; calibrate_tv certifies around it.
    """
    from scipy.optimize import brentq

    from certdp.notions.tv_closed_form import sigma_closed_form

    m, e = integer("steps", steps, ge=1), integer("epochs", epochs, ge=1)
    target = float(real("tv", lam, gt=0, lt=1))
    hi = float(sigma_closed_form(m, e, lam).upper) * 1.0001  # U(c_E) >= TV, so TV(hi) < lambda
    count = 0

    def coarse(s: float) -> float:
        nonlocal count
        count += 1
        g = default_grid(m, e, s)
        return _tv_upper_scheme(1 / s, m, e, 2 * g["h"], 2 * g["eta"], g["cap"])[0] - target

    lo = hi
    while coarse(lo) <= 0:
        lo *= 0.8
    s_coarse = brentq(coarse, lo, hi, xtol=1e-5)

    def fine(s: float) -> float:
        nonlocal count
        count += 1
        return approx_tv_lattice(m, e, s).value - target

    # secant from the coarse root: the fine function is smooth and the roots are close
    x0, x1 = s_coarse, s_coarse * (1 + 1e-5)
    f0, f1 = fine(x0), fine(x1)
    root = x1
    for _ in range(8):
        if f1 == f0:
            break
        x2 = x1 - f1 * (x1 - x0) / (f1 - f0)
        x0, f0, x1 = x1, f1, x2
        f1 = fine(x1)
        root = x1
        if abs(x1 - x0) < step / 50:
            break
    rounded = math.ceil(root / step - 1e-9) * step
    tv_rounded = fine(rounded) + target
    return ApproxSigma(root, rounded, tv_rounded, count)


def approx_tpr_at_fpr(steps: Number, epochs: Number, sigma: Number, fpr: Number) -> float:
    """TPR of the optimal (Neyman-Pearson) test on the pair at false-positive rate ``fpr``, from the
    fine lattice distribution of Lambda under Q (under P the mass at Lambda is Lambda times it).
    The test thresholds Lambda and randomizes at the threshold. Not certified.

    Contract: none (approx_*): float value on the lattice distribution.
    """
    m, e = integer("steps", steps, ge=1), integer("epochs", epochs, ge=1)
    s = float(real("sigma", sigma, gt=0))
    a = float(real("fpr", fpr, gt=0, lt=1))
    g = default_grid(m, e, s)
    b, k, _, _ = _log_lr_distribution(1 / s, m, e, g["h"] / 2, g["eta"] / 2, g["cap"])
    q_mass = b[::-1]
    p_mass = (b * np.exp(k * g["eta"] / 2))[::-1]
    fpr_cum = np.cumsum(q_mass)
    i = int(np.searchsorted(fpr_cum, a))
    before = fpr_cum[i - 1] if i > 0 else 0.0
    frac = (a - before) / q_mass[i] if q_mass[i] > 0 else 0.0
    return float(p_mass[:i].sum() + frac * p_mass[i])
