"""Soundness of the certified (eps, delta) of random allocation (certdp.notions.allocation_dp).

Independent references:
* M = 1: the pair is N(0, I_E) against N(1/sigma 1, I_E), i.e. one Gaussian of mu = sqrt(E)/sigma,
  whose hockey-stick divergence is Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (both directions);
* M = 2 and 3, E = 1: mpmath quadrature of the M-dimensional hockey-stick integral, reduced by one
  dimension in closed form: given the other steps, with a = (their sum)/M and y0 the level of the
  last step Y (lognormal, E[Y; Y > y] = Phi((t^2/2 - ln y)/t)),
      remove: E (a + Y/M - c)_+ = a - c + 1/M if y0 = M (c - a) <= 0,
              else (Phi((t^2/2 - ln y0)/t) - y0 Phi((-t^2/2 - ln y0)/t)) / M;
      add:    c E (1/c - a - Y/M)_+ = 0 if y0 = M (1/c - a) <= 0,
              else c (y0 Phi((ln y0 + t^2/2)/t) - Phi((ln y0 - t^2/2)/t)) / M;
  the remaining 1 (M = 2) or 2 (M = 3) Gaussian integrals are split at their kinks;
* larger M: Monte Carlo of bounded integrands (remove: E_P (1 - c/Lambda)_+, drawing the shifted
  step under P; add: E_Q (1 - c Lambda)_+), with 5 standard errors of slack;
* pld-accounting (Feldman and Shenfeld, arXiv:2602.17284): its two float bounds on eps as a band.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from certdp.errors import InvalidArgument
from certdp.notions.allocation_dp import allocation_delta_bounds, allocation_eps_bounds

DIRS = st.sampled_from(["remove", "add", "both"])


def dec(lo: str, hi: str, places: int = 2) -> st.SearchStrategy[Fraction]:
    return st.decimals(Decimal(lo), Decimal(hi), places=places).map(lambda d: Fraction(str(d)))


def mpq(x: Fraction) -> mp.mpf:
    return mp.mpf(x.numerator) / x.denominator


def inside(enc, ref: mp.mpf, tol: mp.mpf | float = 0) -> bool:
    return mpq(enc.lower) - tol <= ref <= mpq(enc.upper) + tol


def gaussian_delta(mu: mp.mpf, eps: mp.mpf) -> mp.mpf:
    return mp.ncdf(-eps / mu + mu / 2) - mp.e**eps * mp.ncdf(-eps / mu - mu / 2)


def _inner(a, m: int, t, c, direction: str):
    h = t * t / 2
    if direction == "remove":
        y0 = m * (c - a)
        if y0 <= 0:
            return a - c + mp.mpf(1) / m
        ly = mp.log(y0)
        return (mp.ncdf((h - ly) / t) - y0 * mp.ncdf((-h - ly) / t)) / m
    y0 = m * (1 / c - a)
    if y0 <= 0:
        return mp.mpf(0)
    ly = mp.log(y0)
    return c * (y0 * mp.ncdf((ly + h) / t) - mp.ncdf((ly - h) / t)) / m


def bisect_decreasing(f, a: mp.mpf, b: mp.mpf) -> mp.mpf:
    """Root of a decreasing f on [a, b] with f(a) > 0 > f(b), to the working precision."""
    assert f(a) > 0 > f(b)
    for _ in range(mp.mp.prec + 10):
        mid = (a + b) / 2
        a, b = (mid, b) if f(mid) > 0 else (a, mid)
    return (a + b) / 2


def delta_quadrature(m: int, sigma: Fraction, eps: Fraction, direction: str, dps: int = 50) -> mp.mpf:
    """delta of one epoch of M <= 3 steps by quadrature (module docstring)."""
    if direction == "both":
        return max(delta_quadrature(m, sigma, eps, d, dps) for d in ("remove", "add"))
    with mp.workdps(dps):
        t = 1 / mpq(sigma)
        c = mp.e ** mpq(eps)
        thr = m * c if direction == "remove" else m / c

        def y(x):
            return mp.e ** (t * x - t * t / 2)

        def cut(total) -> list:
            """Integration points: the kink where one step's Y equals ``total``."""
            return [-mp.inf] + ([(mp.log(total) + t * t / 2) / t] if total > 0 else []) + [mp.inf]

        if m == 2:
            return mp.quad(lambda x: mp.npdf(x) * _inner(y(x) / 2, 2, t, c, direction), cut(thr))

        def outer(x1):
            y1 = y(x1)
            inner = mp.quad(lambda x2: mp.npdf(x2) * _inner((y1 + y(x2)) / 3, 3, t, c, direction), cut(thr - y1))
            return mp.npdf(x1) * inner

        return mp.quad(outer, cut(thr))


def delta_monte_carlo(
    m: int, e: int, sigma: float, eps: float, direction: str, n: int, seed: int
) -> tuple[float, float]:
    """(mean, standard error) of a bounded estimator of delta (module docstring)."""
    rng = np.random.default_rng(seed)
    t = 1 / sigma
    x = rng.standard_normal((n, e, m))
    if direction == "remove":
        x[:, :, 0] += t  # under P one step per epoch is shifted; by symmetry, the first
    log_l = np.logaddexp.reduce(t * x - t * t / 2, axis=2) - math.log(m)
    log_lam = log_l.sum(axis=1)
    if direction == "remove":
        v = np.maximum(0.0, -np.expm1(eps - log_lam))
    else:
        v = np.maximum(0.0, -np.expm1(eps + log_lam))
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(n))


@settings(max_examples=3, deadline=None)
@given(st.integers(1, 3), dec("0.8", "2.5"), dec("0", "2.5"), DIRS)
@example(3, Fraction(3, 2), Fraction(2), "both")
def test_one_step_is_the_gaussian_closed_form(epochs: int, sigma: Fraction, eps: Fraction, direction: str) -> None:
    enc = allocation_delta_bounds(sigma, 1, epochs, eps, direction=direction, rel_width=None, slack=1e-4)
    with mp.workdps(50):
        ref = gaussian_delta(mp.sqrt(epochs) / mpq(sigma), mpq(eps))
        assert inside(enc, ref), (enc, ref)
    assert enc.upper - enc.lower < Fraction(1, 10**3)


@settings(max_examples=3, deadline=None)
@given(dec("0.6", "2"), dec("0", "2.5"), DIRS)
@example(Fraction(1), Fraction(1), "add")
def test_two_steps_match_quadrature(sigma: Fraction, eps: Fraction, direction: str) -> None:
    enc = allocation_delta_bounds(sigma, 2, 1, eps, direction=direction, rel_width=None, slack=1e-4)
    ref = delta_quadrature(2, sigma, eps, direction)
    with mp.workdps(50):
        assert inside(enc, ref), (enc, ref)
    assert enc.upper - enc.lower < Fraction(1, 10**3)


@pytest.mark.slow
@settings(max_examples=2, deadline=None)
@given(dec("0.5", "1.5"), dec("0.5", "3"), st.sampled_from(["remove", "add"]))
@example(Fraction(1, 2), Fraction(3), "remove")
def test_three_steps_match_quadrature(sigma: Fraction, eps: Fraction, direction: str) -> None:
    # nested quadrature at 15 digits (50 took over 10 minutes per point): the reference's error is
    # far below the enclosure's width (about 1e-8), which the assertion's tolerance does not use
    enc = allocation_delta_bounds(sigma, 3, 1, eps, direction=direction, rel_width=None, slack=1e-5)
    ref = delta_quadrature(3, sigma, eps, direction, dps=15)
    with mp.workdps(15):
        assert inside(enc, ref, mp.mpf(10) ** -13), (enc, ref)


@settings(max_examples=3, deadline=None)
@given(st.integers(4, 40), st.integers(1, 3), dec("0.8", "2"), dec("0.1", "1.5"), st.sampled_from(["remove", "add"]))
@example(30, 2, Fraction(9, 10), Fraction(1), "remove")
@example(32, 1, Fraction(4, 5), Fraction(31, 25), "add")
def test_larger_steps_match_monte_carlo(m: int, e: int, sigma: Fraction, eps: Fraction, direction: str) -> None:
    enc = allocation_delta_bounds(sigma, m, e, eps, direction=direction, rel_width=None, slack=1e-4)
    n = max(20_000, 4_000_000 // (m * e))
    mean, se = delta_monte_carlo(m, e, float(sigma), float(eps), direction, n, seed=m * 1000 + e)
    # a sound enclosure holds the true value mu; the estimate is within 5 standard deviations of
    # it except with probability ~6e-7 (the seed is fixed, so the test is deterministic). The
    # integrand lies in [0, 1], so its variance is at most mu <= upper: a rare event (few nonzero
    # draws, whose sample standard error means nothing) is judged by sqrt(upper / n) instead
    sd = max(se, math.sqrt(float(enc.upper) / n))
    assert float(enc.lower) - 5 * sd - 10 / n <= mean <= float(enc.upper) + 5 * sd, (enc, mean, se)


def test_default_eps_width_is_reached_and_inside_the_pld_accounting_band() -> None:
    pytest.importorskip("PLD_accounting")
    from PLD_accounting import gaussian_allocation_epsilon_range

    enc = allocation_eps_bounds(1, 10, 1, Fraction(1, 10**5))
    assert enc.upper - enc.lower <= Fraction(1, 1000) * enc.upper
    upper, lower = gaussian_allocation_epsilon_range(delta=1e-5, sigma=1.0, num_steps=10, num_epochs=1)
    assert lower <= float(enc.lower) and float(enc.upper) <= upper, (enc, lower, upper)


@settings(max_examples=2, deadline=None)
@given(st.integers(1, 3), dec("1", "2.5"), st.sampled_from(["1e-3", "1e-5"]))
@example(3, Fraction(1), "1e-3")
def test_eps_of_one_step_brackets_the_gaussian_root(epochs: int, sigma: Fraction, delta: str) -> None:
    enc = allocation_eps_bounds(sigma, 1, epochs, Fraction(delta))
    with mp.workdps(50):
        mu = mp.sqrt(epochs) / mpq(sigma)
        root = bisect_decreasing(lambda x: gaussian_delta(mu, x) - mp.mpf(delta), mp.mpf(0), mp.mpf(40))
        assert inside(enc, root), (enc, root)
    assert enc.upper - enc.lower <= Fraction(1, 1000) * enc.upper


@pytest.mark.slow
@pytest.mark.parametrize(("m", "e", "sigma"), [(100, 10, "1.426215"), (250, 10, "1.024495")])
def test_default_eps_width_on_paper_cells(m: int, e: int, sigma: str) -> None:
    enc = allocation_eps_bounds(Fraction(sigma), m, e, Fraction(1, 10**5))
    assert enc.upper - enc.lower <= Fraction(1, 1000) * enc.upper
    assert Fraction(1, 2) < enc.lower  # arXiv:2610.09651 Table 6 reports eps near 1 at these cells


def test_bad_inputs_are_named() -> None:
    with pytest.raises(InvalidArgument, match="k=11 must be <= steps=10"):
        allocation_eps_bounds(1, 10, 1, Fraction(1, 10**5), k=11)
    with pytest.raises(InvalidArgument, match="direction=sideways"):
        allocation_delta_bounds(1, 10, 1, 1, direction="sideways")
    with pytest.raises(InvalidArgument, match="eps=-1 must be >= 0"):
        allocation_delta_bounds(1, 10, 1, -1)
    with pytest.raises(InvalidArgument, match="delta=0 must be > 0"):
        allocation_eps_bounds(1, 10, 1, 0)
    with pytest.raises(InvalidArgument, match="sigma=0 must be > 0"):
        allocation_eps_bounds(0, 10, 1, Fraction(1, 10**5))
    with pytest.raises(InvalidArgument, match="steps=0 must be >= 1"):
        allocation_delta_bounds(1, 0, 1, 1)


def test_a_run_beyond_the_default_sizing_grid_is_answered() -> None:
    """M = 1000, E = 100 was refused because the float lattice that sizes the grids needed 6.3e6
    points at its default grid (sigma = 1); its grid is now doubled until it fits."""
    from certdp.notions import allocation_dp as adp
    from certdp.notions import tv_numeric as tn
    from certdp.notions.accountant import epsilon
    from certdp.pairs import RandomAllocation

    pair = RandomAllocation(1000, 2, 100)
    # sized on a coarser grid, stated at the default one (auto_grid reads its bias, second order)
    for big in (RandomAllocation(1000, 1, 100), RandomAllocation(196, 2, 1000)):
        m, e, s = big.steps, big.epochs, float(big.sigma)
        assert tn.lattice_points(m, e, s, None) > tn.MAX_LATTICE_POINTS
        ref = adp._numeric_ref(big)
        assert ref.grid["h"] == tn.default_grid(m, e, s)["h"] and ref.coarse > ref.value
    d = Fraction(1, 10**5)
    enc = allocation_eps_bounds(2, 1000, 100, d)
    assert enc.upper - enc.lower <= Fraction(1, 1000) * enc.upper
    # random allocation is dominated by its RDP bound (an independent certified upper end)
    rdp = epsilon(pair, d, via="rdp").enclosure.upper
    assert 0 < enc.lower <= enc.upper <= rdp, (enc, rdp)


@pytest.mark.slow
def test_a_large_eps_beyond_the_first_grid_is_answered() -> None:
    """M = 196, E = 100, sigma = 0.7 (eps near 9.3 at delta = 1e-5): the first grid at the RDP
    range (10.2) is beyond the atom limit; the search used to shorten the range below eps and
    stop with exit 3. A coarser first grid now answers (about 30 s)."""
    from certdp.notions.accountant import epsilon
    from certdp.pairs import RandomAllocation

    d = Fraction(1, 10**5)
    enc = allocation_eps_bounds(Fraction(7, 10), 196, 100, d)
    assert enc.upper - enc.lower <= Fraction(1, 1000) * enc.upper
    rdp = epsilon(RandomAllocation(196, Fraction(7, 10), 100), d, via="rdp").enclosure.upper
    assert 8 < enc.lower <= enc.upper <= rdp, (enc, rdp)


def test_the_sizing_lattice_never_overflows_to_nan() -> None:
    """min(1, e^{k eta}) overflowed at 1000 epochs: 0 * inf gave a NaN numeric TV, which sized a
    grid beyond the memory limit (M = 1000, E = 1000, sigma = 1 was refused after 16 s)."""
    import warnings

    from certdp.notions import tv_numeric as tn

    g = tn.default_grid(1000, 1000, 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value = tn._tv_upper_scheme(1.0, 1000, 1000, 32 * g["h"], 32 * g["eta"], g["cap"], g["l_max"])[0]
    assert 0 < value < 1


@pytest.mark.parametrize(("m", "e", "sigma"), [(100, 10, 1.0), (196, 20, 1.1), (10, 1, 1.0)])
def test_the_coarser_sizing_lattice_sizes_the_same_grid(m: int, e: int, sigma: float) -> None:
    """_numeric_ref runs the float lattice one doubling coarser and states its bias at the
    default grid: auto_grid then sizes the grid the default lattice itself would."""
    from certdp.notions import allocation_dp as adp
    from certdp.notions import tv_numeric as tn
    from certdp.notions.tv_certified import auto_grid
    from certdp.pairs import RandomAllocation

    pair = RandomAllocation(m, sigma, e)
    full = tn.approx_tv_lattice(m, e, sigma)
    for slack in (1e-6, 1e-9):
        assert auto_grid(pair, slack, ref=adp._numeric_ref(pair)) == auto_grid(pair, slack, ref=full)
