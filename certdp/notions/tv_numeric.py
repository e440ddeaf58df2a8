"""Numerical (uncertified) total variation of random allocation: float code, named approx_*.

These values choose brackets and starting points and serve as independent checks; they never
produce a certified number. Two methods:

* :func:`approx_tv_monte_carlo`: E_Q (1 - Lambda)_+ = TV over n draws, with its standard error.
* :func:`approx_tv_lattice`: each Y = exp(tX - t^2/2) is rounded to the lattice hZ by mean-keeping
  mass splitting (arXiv:2610.09651 Lemma C.5), the epoch sum is an M-fold convolution (FFT, truncated at
  8M), each epoch value S/M is split onto the grid e^{j eta}, and the E epochs are an E-fold
  convolution. Each rounding only raises TV (Lemma C.5), by O(h^2) + O(eta^2), so the value at
  (h, eta) and at (h/2, eta/2) are combined by Richardson extrapolation. Self-checks: total mass,
  negative mass from FFT round-off, and the extrapolation step size.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from scipy.special import ndtr

from certdp.enclose.checkpoint import checkpoint
from certdp.errors import LimitExceeded, PrecisionExhausted, fmt_value
from certdp.pairs.params import Number, integer, real

#: sigma range of the numeric methods: below 1e-3 the ratio's variance e^{1/sigma^2} overflows a
#: float, above 1e4 it underflows to 0 (and TV is below 1e-8 anyway: the closed-form bound says so).
MIN_SIGMA, MAX_SIGMA = 1e-3, 1e4
_MIN_SIGMA_EXACT, _MAX_SIGMA_EXACT = Fraction(1, 1000), Fraction(10**4)
#: Longest array the lattice method builds (float64 entries; its FFTs hold a few arrays of twice
#: this length, about 0.5 GiB at the limit).
MAX_LATTICE_POINTS = 1 << 22
#: Most normal draws (n M E) of one Monte Carlo run (about 10 minutes), and the most per draw (one
#: draw of M E normals is held in memory at once).
MAX_MC_NORMALS = 10**10
MAX_MC_DRAW = 4_000_000


def _sigma_in_range(sigma: Number) -> float:
    s = real("sigma", sigma, gt=0)
    # compared exactly with the decimal ends: the float 1e-3 is slightly above 1/1000, which
    # excluded the documented end sigma = 0.001 itself
    if not _MIN_SIGMA_EXACT <= s <= _MAX_SIGMA_EXACT:
        raise LimitExceeded(
            f"sigma={fmt_value(sigma)} is outside [{MIN_SIGMA:g}, {MAX_SIGMA:g}], the range of the numeric TV "
            "methods (use the closed-form bound)"
        )
    return float(s)


def lattice_points(steps: int, epochs: int, sigma: float, grid: dict[str, float] | None = None) -> int:
    """Length of the longest array :func:`approx_tv_lattice` builds on ``grid`` (default grid if
    None), at its finer level (h/2, eta/2): the step lattice cap/h, the epoch sum l_max M/h and the
    E-fold log-grid power E log(l_max M/h)/eta. A float work estimate, not a certified quantity.

    Contract: an upper estimate of the array lengths (hence of memory; time grows like n log n).
    """
    g = {**default_grid(steps, epochs, sigma), **(grid or {})}
    h, eta = g["h"] / 2, g["eta"] / 2
    step_points = g["cap"] / h + 1
    sum_points = g["l_max"] * steps / h + 2
    power_points = epochs * ((math.log(g["l_max"]) + math.log(steps / h)) / eta + 2)
    return math.ceil(max(step_points, sum_points, power_points))


def check_lattice_work(steps: int, epochs: int, sigma: Number, grid: dict[str, float] | None = None) -> float:
    """Refuse (LimitExceeded, naming the parameters) a lattice run whose arrays would exceed
    MAX_LATTICE_POINTS, before anything is allocated. Returns sigma as a float.

    Contract: returns only if sigma is in [MIN_SIGMA, MAX_SIGMA] and lattice_points <= MAX_LATTICE_POINTS.
    """
    s = _sigma_in_range(sigma)
    try:
        points: float = lattice_points(steps, epochs, s, grid)
    except OverflowError:  # e^{1/sigma^2} past the float range (sigma below about 0.0375)
        points = math.inf
    if points > MAX_LATTICE_POINTS:
        needs = f"{points:.3g}" if math.isfinite(points) else "more than 1e308 (e^(1/sigma^2) overflows a float)"
        raise LimitExceeded(
            f"steps={steps}, epochs={epochs}, sigma={fmt_value(sigma)}: the numeric TV lattice needs {needs} "
            f"points, above the limit {MAX_LATTICE_POINTS} (about 0.5 GiB); use --method closed-form or monte-carlo"
        )
    return s


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
    t = 1 / _sigma_in_range(sigma)
    n = integer("n", n, ge=2)
    if m * e > MAX_MC_DRAW or n * m * e > MAX_MC_NORMALS:
        raise LimitExceeded(
            f"samples={n}, steps={m}, epochs={e}: Monte Carlo needs {n * m * e:.3g} normal draws "
            f"({m * e} per sample); the limits are {MAX_MC_NORMALS:.0e} and {MAX_MC_DRAW} per sample"
        )
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
    """Masses at 0, h, 2h, ... of the mean-keeping rounding of Y, with the mass above ``cap``
    moved down to cap (a pointwise lowering of Y, which only raises the TV upper scheme); returns
    (masses, 0.0) so that callers keep their lost-mass bookkeeping."""
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
    p[-1] += float(ndtr(-a_f[-1]))
    return p, 0.0


def clamp_plan(steps: int, epochs: int, sigma: float, slack: float) -> tuple[float, float]:
    """(cap, l_max): where the certified and numeric schemes may stop resolving Y and L = S/M.

    Values above are clamped (upper scheme) or dropped (lower scheme). Either changes
    E min(1, Lambda) only on outcomes where a large value still leaves Lambda < 1, so the cost is
    about P(Y > cap) M E P(rest < M / cap) (and the same for L > l_max), with log L under Q taken
    as normal with variance v = (e^{t^2} - 1)/M. Both costs are kept below slack / 400 with a
    safety factor of 10. A heuristic: soundness never depends on it.
    Contract: none (a float heuristic that chooses a grid).
    """
    t = 1 / sigma
    m, e = steps, epochs
    v = math.expm1(t * t) / m
    sd = math.sqrt(v)
    budget = slack / 4000

    def rest_below(x: float) -> float:  # P(Lambda < 1 given one epoch's ratio is >= x)
        return float(ndtr((-math.log(x) + (e - 1) * v / 2) / math.sqrt(e * v)))

    def y_above(y: float) -> float:
        return float(ndtr(-(math.log(y) + t * t / 2) / t)) if y > 0 else 1.0

    l_max = 1 + sd
    while True:
        p_l = float(ndtr(-(l_max - 1) / sd)) + m * y_above(m * (l_max - 1))
        if e * p_l * rest_below(l_max) <= budget or l_max > 1 + 40 * sd + 64:
            break
        l_max += sd / 4
    cap = max(8.0, math.exp(t - t * t / 2))
    while cap < m * l_max:
        if m * e * y_above(cap) * rest_below(1 + (cap - 1) / m) <= budget:
            break
        cap *= 1.1
    return min(cap, m * l_max), l_max


def _conv_power(p: np.ndarray, n: int, length: int) -> np.ndarray:
    """First ``length`` coefficients of p^n (linear convolutions by FFT, truncated each time)."""
    size = 1 << (2 * length - 1).bit_length()
    result: np.ndarray | None = None
    base = np.zeros(length)
    base[: min(length, len(p))] = p[:length]
    while n:
        checkpoint()  # a caller's budget may stop here (certdp.enclose.checkpoint)
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


def _tv_upper_scheme(
    t: float, m: int, e: int, h: float, eta: float, cap: float, l_max: float
) -> tuple[float, float, float]:
    """1 - E min(1, Lambda) after the two mean-keeping roundings (an upper bound up to FFT error)."""
    b, k, lost, neg = _log_lr_distribution(t, m, e, h, eta, cap, l_max)
    # min(1, e^x) = e^{min(x, 0)}: no overflow of e^x at large epoch counts (a RuntimeWarning leaked)
    expect_min = float((b * np.exp(np.minimum(k * eta, 0.0))).sum())
    return 1.0 - expect_min, lost, neg


def _log_lr_distribution(
    t: float, m: int, e: int, h: float, eta: float, cap: float, l_max: float
) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Masses b under Q at Lambda = e^{k eta} after the two roundings, the indices k, lost and negative mass."""
    p, lost = _step_masses(t, h, cap)
    # epoch values L = S/M above l_max are clamped to l_max (a pointwise lowering, like the cap)
    smax = math.ceil(l_max * m / h)
    s = _conv_power(p, m, smax + 1)
    neg = float(-s[s < 0].sum())
    s = np.clip(s, 0.0, None)
    s[-1] += max(0.0, float(p.sum()) ** m - float(s.sum()))
    # drop the left tail up to a cumulative mass of 1e-15 (counted as lost). Atom 0 (L = 0, so
    # Lambda = 0) is always dropped, and that is exact: such outcomes add nothing to E min(1, Lambda)
    i_min = max(1, int(np.searchsorted(np.cumsum(s), 1e-15)))
    lost += max(0.0, 1.0 - lost - float(s[0]) - float(s[i_min:].sum()))
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
    """Heuristic lattice for the numeric TV, scaled to the spread of one epoch's ratio L (variance
    v = (e^{t^2} - 1)/M): h = 9e-3 sqrt(e^{t^2} - 1) (the step rounding adds about h^2/(6M) to
    Var L) and eta = 0.01 sqrt(v), capped at 0.0162 and 8e-4 (small M: the kink of min(1, Lambda)
    needs the absolute resolution); (cap, l_max) from :func:`clamp_plan` at a slack of 1e-9. On
    the nine cells of arXiv:2610.09651 (Table 4) the Richardson value agrees with a 4x finer grid to ~1e-11.
    Contract: none: a heuristic grid for the float code.
    """
    t = 1 / sigma
    cap, l_max = clamp_plan(steps, epochs, sigma, 1e-9)
    h = min(9e-3 * math.sqrt(math.expm1(t * t)), 0.0162)
    h = 1 / math.ceil(1 / h)  # 1 on the lattice (for h and h/2): the kink of min(1, Lambda) at L = 1
    eta = min(0.01 * math.sqrt(math.expm1(t * t) / steps), 8e-4)
    return {"h": max(h, cap / 2**20), "eta": eta, "cap": cap, "l_max": l_max}


def approx_tv_lattice(steps: Number, epochs: Number, sigma: Number, grid: dict[str, float] | None = None) -> ApproxTV:
    """Numerical TV(P^E, Q^E) of random allocation (Richardson-extrapolated lattice; not certified).

    Raises PrecisionExhausted when a self-check fails: lost mass > 1e-9, negative mass > 1e-9,
    or extrapolation step |fine - coarse| > 1e-5 (grid too coarse).

    Contract: none (approx_*): float value with self-checks; never certified.
    """
    m, e = integer("steps", steps, ge=1), integer("epochs", epochs, ge=1)
    s = check_lattice_work(m, e, sigma, grid)
    g = {**default_grid(m, e, s), **(grid or {})}
    t = 1 / s
    coarse, lost_c, neg_c = _tv_upper_scheme(t, m, e, g["h"], g["eta"], g["cap"], g["l_max"])
    fine, lost_f, neg_f = _tv_upper_scheme(t, m, e, g["h"] / 2, g["eta"] / 2, g["cap"], g["l_max"])
    value = (4 * fine - coarse) / 3
    lost, neg = max(lost_c, lost_f), max(neg_c, neg_f)
    if lost > 1e-9 or neg > 1e-9 or abs(fine - coarse) > 1e-5:
        raise PrecisionExhausted(
            f"steps={m}, epochs={e}, sigma={fmt_value(sigma)}: the numeric TV self-check failed (lost mass {lost:.2e}, "
            f"negative mass {neg:.2e}, extrapolation step {abs(fine - coarse):.2e}; the lattice is too coarse here)"
        )
    return ApproxTV(value, abs(fine - coarse) / 3, coarse, fine, lost, neg, dict(g))


@dataclass(frozen=True)
class ApproxSigma:
    """Numerical exact sigma (root of TV(sigma) = lambda) and its rounding up to ``step``. Not certified."""

    sigma: float
    sigma_rounded: float
    tv_at_rounded: float
    evaluations: int


def approx_exact_sigma(
    steps: Number, epochs: Number, lam: Number, step: float = 1e-6, tick: Callable[[str], None] | None = None
) -> ApproxSigma:
    """Root of the numeric TV(sigma) = lambda by bracketing (TV is non-increasing in sigma,
    docs/math.md §9.5), coarse grid first, then the extrapolated lattice. Not certified.
    ``tick(doing)`` is called before each evaluation (a budget check may raise there). The
    bracket walks down from the closed-form sigma; LimitExceeded names ``tv`` when the lattice at
    the next bracket point is beyond the work limit (a smaller sigma costs more).

    Contract: none (approx_*): a float root; calibrate_tv certifies around it.
    """
    from scipy.optimize import brentq

    from certdp.notions.tv_closed_form import sigma_closed_form

    m, e = integer("steps", steps, ge=1), integer("epochs", epochs, ge=1)
    target = float(real("tv", lam, gt=0, lt=1))
    hi = float(sigma_closed_form(m, e, lam).upper) * 1.0001  # U(c_E) >= TV, so TV(hi) < lambda
    try:
        check_lattice_work(m, e, hi)
    except LimitExceeded as exc:
        raise LimitExceeded(f"tv={fmt_value(lam)} needs sigma near {hi:.4g}: {exc}") from None
    count = 0

    def coarse(s: float) -> float:
        nonlocal count
        count += 1
        if tick is not None:
            tick(f"searching sigma near {s:.6g} (numeric TV, coarse lattice)")
        check_lattice_work(m, e, s)
        g = default_grid(m, e, s)
        return _tv_upper_scheme(1 / s, m, e, 2 * g["h"], 2 * g["eta"], g["cap"], g["l_max"])[0] - target

    lo = hi
    while coarse(lo) <= 0:
        try:  # the root is below lo; a lattice too large at 0.8 lo is refused in terms of tv
            check_lattice_work(m, e, 0.8 * lo)
        except LimitExceeded as exc:
            raise LimitExceeded(
                f"tv={fmt_value(lam)} needs sigma below {lo:.4g}, where the numeric TV is beyond its work limit ({exc})"
            ) from None
        lo *= 0.8
    s_coarse = brentq(coarse, lo, hi, xtol=1e-6)
    # slope of the coarse function (smooth, close to the fine one's) for a Newton start
    d = 1e-4 * s_coarse
    slope = (coarse(s_coarse + d) - coarse(s_coarse - d)) / (2 * d)

    def fine(s: float) -> float:
        nonlocal count
        count += 1
        if tick is not None:
            tick(f"searching sigma near {s:.8g} (numeric TV, extrapolated lattice)")
        return approx_tv_lattice(m, e, s).value - target

    x0, f0 = s_coarse, fine(s_coarse)
    x1 = x0 - f0 / slope if slope < 0 else x0 * (1 + 1e-5)
    f1 = fine(x1)
    for _ in range(8):
        if abs(x1 - x0) < step / 100 or f1 == f0:
            break
        x2 = x1 - f1 * (x1 - x0) / (f1 - f0)
        x0, f0 = x1, f1
        x1, f1 = x2, fine(x2)
    root = x1
    rounded = math.ceil(root / step - 1e-9) * step
    # TV at the rounded sigma from the coarse slope (the distance is below one step; a secant over
    # the last tiny step would amplify the ~1e-11 noise of the fine values)
    tv_rounded = target + f1 + (rounded - x1) * slope
    return ApproxSigma(root, rounded, tv_rounded, count)


def approx_tpr_at_fpr(steps: Number, epochs: Number, sigma: Number, fpr: Number) -> float:
    """TPR of the optimal (Neyman-Pearson) test on the pair at false-positive rate ``fpr``, from the
    fine lattice distribution of Lambda under Q (under P the mass at Lambda is Lambda times it).
    The test thresholds Lambda and randomizes at the threshold. Not certified.

    Contract: none (approx_*): float value on the lattice distribution.
    """
    m, e = integer("steps", steps, ge=1), integer("epochs", epochs, ge=1)
    s = check_lattice_work(m, e, sigma)
    a = float(real("fpr", fpr, gt=0, lt=1))
    g = default_grid(m, e, s)
    b, k, _, _ = _log_lr_distribution(1 / s, m, e, g["h"] / 2, g["eta"] / 2, g["cap"], g["l_max"])
    q_mass = b[::-1]
    p_mass = (b * np.exp(k * g["eta"] / 2))[::-1]
    fpr_cum = np.cumsum(q_mass)
    i = int(np.searchsorted(fpr_cum, a))
    before = fpr_cum[i - 1] if i > 0 else 0.0
    frac = (a - before) / q_mass[i] if q_mass[i] > 0 else 0.0
    return float(p_mass[:i].sum() + frac * p_mass[i])
