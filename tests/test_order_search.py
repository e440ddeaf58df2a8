"""The order searches find the optimum wherever it lies: t* from 1e-3 to 1e9.

Reference: F(t) = (K(t) + log c_t + log(1/delta)) / t minimised by golden-section search in
log t at 60 digits (mpmath). K is the Laplace CGF written from its definition by three
elementary integrals (checked against quadrature below) or the Gaussian t(t+1)/(2 sigma^2).
"""

from __future__ import annotations

from fractions import Fraction

import mpmath as mp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import certdp
from certdp.pairs import DiscreteLaplace, Gaussian, Laplace, SubsampledGaussian, compose
from tests import refs

DPS = 60


def laplace_cgf(s: mp.mpf, t: mp.mpf) -> mp.mpf:
    """log E_Q[(p/q)^(t+1)] for Laplace(s, 1) vs Laplace(0, 1), s > 0: the integral of
    e^{-(t+1)|x-s| + t|x|}/2 over x < 0, 0 < x < s and x > s."""
    left = mp.exp(-(t + 1) * s) / 2
    middle = mp.exp(-(t + 1) * s) * mp.expm1((2 * t + 1) * s) / (2 * (2 * t + 1))
    right = mp.exp(t * s) / 2
    return mp.log(left + middle + right)


def golden_min(f, lo: mp.mpf, hi: mp.mpf, steps: int = 260) -> mp.mpf:
    """min of a unimodal f on [lo, hi] (bracket shrinks by 0.618 per step: 1e-54 after 260)."""
    (_, fc), (_, fd), (a, b) = refs.golden(f, lo, hi, steps, maximize=False)
    return min(fc, fd, f(a), f(b))


def eps_reference(K, delta: str, t_guess: float) -> mp.mpf:
    with mp.workdps(DPS):
        A = -mp.log(mp.mpf(delta))

        def F(u: mp.mpf) -> mp.mpf:  # u = log t
            t = mp.exp(u)
            log_ct = t * mp.log(t) - (1 + t) * mp.log1p(t)
            return (K(t) + log_ct + A) / t

        u = mp.log(t_guess)
        return golden_min(F, u - 6, u + 6)


def discrete_laplace_cgf(a: str, r: int, t: mp.mpf) -> mp.mpf:
    """log sum_z p(z)^(t+1) q(z)^(-t) for mass lambda^|z - r| (P) and lambda^|z| (Q), summed
    region by region in z (z <= 0, 0 < z < r, z >= r: geometric series), not over the loss
    values certdp uses."""
    lam = mp.exp(-mp.mpf(a))
    norm = (1 + lam) / (1 - lam)
    low = lam ** ((t + 1) * r) / (1 - lam)  # z <= 0: lambda^((t+1) r - z)
    high = lam ** (-t * r) / (1 - lam)  # z >= r: lambda^(z - (t+1) r)
    mid = mp.fsum(lam ** ((t + 1) * r - (2 * t + 1) * z) for z in range(1, r))
    return mp.log((low + mid + high) / norm)


def test_the_discrete_laplace_cgf_reference_matches_the_brute_force_sum() -> None:
    for a, r, t in (("0.3", 3, "2.5"), ("1", 1, "0.01"), ("2", 2, "40")):
        with mp.workdps(DPS):
            closed = discrete_laplace_cgf(a, r, mp.mpf(t))
        assert abs(closed - refs.discrete_laplace_cgf(a, r, t)) < mp.mpf(10) ** -40


def test_the_laplace_cgf_reference_matches_quadrature() -> None:
    for s, t in (("0.1", "3"), ("1", "0.5"), ("0.7", "20")):
        with mp.workdps(DPS):
            closed = laplace_cgf(mp.mpf(s), mp.mpf(t))
        assert abs(closed - refs.laplace_cgf(1, s, t)) < mp.mpf(10) ** -40


@settings(max_examples=12, deadline=None)
@given(shift=st.sampled_from(["0.05", "0.1", "0.7", "1", "3"]), log10_delta=st.integers(-10, -2))
def test_laplace_epsilon_at_any_optimal_order(shift: str, log10_delta: int) -> None:
    # t* ~ 1/(2 delta) for the Laplace pair: 50 .. 5e9 here
    delta = f"1e{log10_delta}"
    res = certdp.notions.conversion_epsilon(Laplace(shift=shift), delta)
    t_star = res.order - 1
    assert 10 <= t_star
    ref = eps_reference(lambda t: laplace_cgf(mp.mpf(shift), t), delta, t_star)
    enc = res.signed_infimum if res.signed_infimum is not None else res.enclosure
    assert refs.contains(enc, ref, slack=1e-40), (shift, delta, ref, enc)
    assert enc.width <= 1e-9 * max(1, abs(float(ref)))


@settings(max_examples=12, deadline=None)
@given(log10_sigma=st.floats(-4, 1), log10_delta=st.integers(-12, -2))
def test_gaussian_epsilon_at_small_optimal_orders(log10_sigma: float, log10_delta: int) -> None:
    # t* ~ sigma sqrt(2 log(1/delta)): 1e-4 .. 1e2
    sigma = f"{10**log10_sigma:.6g}"
    delta = f"1e{log10_delta}"
    res = certdp.notions.conversion_epsilon(Gaussian(sigma=sigma), delta)
    t_star = res.order - 1
    with mp.workdps(DPS):
        s2 = 2 * mp.mpf(sigma) ** 2
    ref = eps_reference(lambda t: t * (t + 1) / s2, delta, t_star)
    enc = res.signed_infimum if res.signed_infimum is not None else res.enclosure
    assert refs.contains(enc, ref, slack=1e-40), (sigma, delta, ref, enc)


def _composite_ratio(t: mp.mpf, q: str, sigma: str, n: int, shift: str) -> mp.mpf:
    """(n K_SG(t) + K_Laplace(t)) / (t(t+1)) from the quadrature and closed-form references."""
    with mp.workdps(DPS):
        k_sg = refs.subsampled_cgf(q, sigma, t + 1, "remove")
        return (n * k_sg + laplace_cgf(mp.mpf(shift), t)) / (t * (t + 1))


@pytest.mark.parametrize(("q", "sigma", "n", "shift"), [("0.5", "2", 100, "0.1"), ("0.05", "1", 20, "0.5")])
def test_rho_of_a_subsampled_gaussian_with_a_laplace_is_certified_at_the_limit(
    q: str, sigma: str, n: int, shift: str
) -> None:
    # The defect: sup_cgf_ratio had no tail witness for this composition, and the sum of the
    # parts' tail sups (1/(2 sigma^2) + D_inf/(T+1)) needed orders T ~ D_inf/tol.
    pair = compose([(SubsampledGaussian(q, sigma, "remove"), n), (Laplace(shift=shift), 1)])
    res = certdp.notions.zcdp.rho_detail(pair)
    with mp.workdps(DPS):
        limit = n / (2 * mp.mpf(sigma) ** 2)  # the ratio's limit as t -> inf
        grid = [_composite_ratio(mp.mpf(2) ** k, q, sigma, n, shift) for k in range(-6, 12)]
    ref = max([limit, *grid])  # rho >= every value; the certified search says nothing exceeds it
    assert refs.contains(res.enclosure, ref, slack=1e-40), (ref, res)
    assert all(v <= res.enclosure.upper for v in map(lambda v: Fraction(mp.nstr(v, 50)), grid))
    assert res.enclosure.width <= Fraction(1, 10**12) * max(1, abs(Fraction(mp.nstr(ref, 50))))


@settings(max_examples=10, deadline=None)
@given(
    a=st.sampled_from(["0.3", "1", "2"]),
    r=st.integers(1, 3),
    n=st.sampled_from([1, 1000, 10**5]),
    log10_delta=st.floats(-12, -0.05),
)
def test_discrete_laplace_epsilon_at_any_optimal_order(a: str, r: int, n: int, log10_delta: float) -> None:
    """(pair, delta) drawn so that t* spreads over 1e-3 .. 1e11 (one pair near pure DP: t* ~ 1/delta;
    10^5 compositions at delta near 1: t* ~ 1e-3); reference: the golden-section minimum of F over
    the CGF summed over z by regions (checked against the brute-force sum below), independent of
    certdp's loss atoms."""
    delta = f"{10**log10_delta:.3g}"
    pair = DiscreteLaplace(a, r) if n == 1 else compose(DiscreteLaplace(a, r), n)
    res = certdp.notions.conversion_epsilon(pair, delta)
    t_star = float(res.order) - 1
    ref = eps_reference(lambda t: n * discrete_laplace_cgf(a, r, t), delta, t_star)
    enc = res.signed_infimum if res.signed_infimum is not None else res.enclosure
    assert refs.contains(enc, ref, slack=1e-30), (a, r, n, delta, t_star, ref, enc)
    assert enc.width <= 1e-9 * max(1, abs(float(ref)))


def test_rho_of_a_near_gaussian_ratio_is_settled_by_the_global_bound() -> None:
    """Subsampled Gaussian, add, q = 1 - 1e-20: the ratio stays within 1e-20 of 1/(2 sigma^2) for
    t up to ~40, so chords alone would need ~1e9 points (the search ran for minutes). The pair's
    bound K(t)/(t(t+1)) <= 1/(2 sigma^2) caps every interval. References: that bound, and the
    ratio at t = 1 and t = 20 by mpmath quadrature."""
    from certdp.notions.zcdp import rho_detail

    q = "0.99999999999999999999"
    res = rho_detail(SubsampledGaussian(q, 1, "add"))
    enc = res.enclosure
    assert enc.lower <= Fraction(1, 2)
    for t in ("1", "20"):
        with mp.workdps(DPS):
            tt = mp.mpf(t)
            ratio = refs.subsampled_cgf(q, 1, tt + 1, "add") / (tt * (tt + 1))
        assert enc.upper >= Fraction(mp.nstr(ratio, 40)) - Fraction(1, 10**35), (t, ratio, enc)
    assert enc.width <= 1e-18
    assert res.evaluations < 400
