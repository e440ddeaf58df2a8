"""Random allocation (arXiv:2610.09651): RDP partition sums, certified closed forms, numeric TV checks."""

from __future__ import annotations

import itertools
import math
from decimal import Decimal
from fractions import Fraction

import mpmath as mp
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import certdp
from certdp.errors import InvalidArgument, PrecisionExhausted
from certdp.notions import tv_closed_form as cf
from certdp.notions.tv_numeric import approx_tpr_at_fpr, approx_tv_lattice, approx_tv_monte_carlo
from certdp.pairs import RandomAllocation
from tests import refs


def dec(lo: str, hi: str, places: int = 3) -> st.SearchStrategy[str]:
    return st.decimals(Decimal(lo), Decimal(hi), places=places).map(str)


@given(st.integers(1, 4), st.integers(1, 3), dec("0.5", "3", 2), st.integers(2, 6))
def test_integer_order_renyi_matches_brute_force_over_compositions(m: int, e: int, sigma: str, k: int) -> None:
    enc = certdp.rdp(RandomAllocation(m, sigma, e), k)
    with mp.workdps(60):
        t2 = 1 / mp.mpf(sigma) ** 2
        total = mp.fsum(
            mp.factorial(k)
            / mp.fprod(mp.factorial(c) for c in comp)
            * mp.fprod(mp.exp(c * (c - 1) * t2 / 2) for c in comp)
            for comp in itertools.product(range(k + 1), repeat=m)
            if sum(comp) == k
        )
        ref = e * mp.log(total / mp.mpf(m) ** k) / (k - 1)
    assert refs.contains(enc, ref)


@given(st.integers(1, 500), st.integers(1, 50), dec("0.5", "5", 2))
def test_order_two_renyi_is_log_one_plus_chi2(m: int, e: int, sigma: str) -> None:
    pair = RandomAllocation(m, sigma, e)
    d2 = certdp.rdp(pair, 2)
    c = cf.chi2_epochs(pair)
    with mp.workdps(60):
        ref = e * mp.log(1 + mp.expm1(1 / mp.mpf(sigma) ** 2) / m)
        assert refs.contains(c, mp.expm1(ref))
    assert refs.contains(d2, ref)


def test_closed_form_sigma_of_math_md_and_its_inverses() -> None:
    s = cf.sigma_closed_form(100, 10, "0.1")
    assert abs(s.mid - Fraction("1.73698")) < Fraction(5, 10**6)
    # at that sigma U(c_E) = lambda, and the E and M solutions return 10 and 100
    sigma = s.mid
    u = cf.tv_upper_closed_form(RandomAllocation(100, sigma, 10))
    assert abs(u.mid - Fraction(1, 10)) < Fraction(1, 10**15)
    assert abs(cf.epochs_closed_form(100, sigma, "0.1").mid - 10) < Fraction(1, 10**12)
    assert abs(cf.steps_closed_form(10, sigma, "0.1").mid - 100) < Fraction(1, 10**12)


@given(dec("0.01", "0.99", 2))
def test_u_of_c_lambda_inverts(lam: str) -> None:
    c = cf.c_of_lambda(lam)
    from certdp.enclose import Enclosure, to_ball, workprec

    with workprec(128):
        u = Enclosure.from_ball(cf.u_of_c(to_ball(c)))
    assert u.contains(Fraction(lam)) and u.width < Fraction(1, 10**30)


def test_chi_square_tpr_bound_of_table_3() -> None:
    b = cf.tpr_upper(RandomAllocation(100, "1.4262", 10), "1e-3")
    assert abs(float(b.mid) - 0.0091) < 5e-5


def test_gdp_limit_and_pinsker_variants_are_labelled_and_ordered() -> None:
    sig_cf = cf.sigma_closed_form(100, 10, "0.1").mid
    sig_gdp = cf.sigma_gdp_limit(100, 10, "0.1").mid
    sig_pinsker = cf.sigma_pinsker_d2(100, 10, "0.1").mid
    assert sig_gdp < sig_cf < sig_pinsker  # the limit needs least noise; Pinsker-D2 the most
    assert 1.25 < float(sig_pinsker / sig_cf) < 1.39  # arXiv:2610.09651 App. B.2: 25.1% to 38.5% more noise
    assert "NO finite-M guarantee" in (cf.gdp_limit_mu.__doc__ or "")
    pair = RandomAllocation(100, sig_cf, 10)
    assert cf.gdp_limit_tv(pair).upper < cf.tv_upper_closed_form(pair).lower


def test_m_equals_one_identity() -> None:
    for e, sigma in [(1, "1.0"), (4, "1.5"), (10, "3.0")]:
        res = approx_tv_lattice(1, e, sigma)
        t = 1 / float(sigma)
        exact = math.erf(t * math.sqrt(e) / 2 / math.sqrt(2))  # 2 Phi(x) - 1 = erf(x / sqrt 2)
        assert abs(res.value - exact) < 1e-9, (e, sigma, res.value, exact)


@settings(max_examples=6)
@given(st.integers(2, 12), st.integers(1, 4), dec("1", "3", 2))
@example(2, 2, "1.00")  # error estimate 1.6e-6: within the method's self-check, above the old 1e-6
def test_numeric_tv_agrees_with_monte_carlo_and_the_closed_form_bound(m: int, e: int, sigma: str) -> None:
    """The numeric TV agrees with Monte Carlo (4 standard errors), stays below the closed-form
    bound, and its error estimate |fine - coarse|/3 is within its documented self-check (1e-5/3)."""
    res = approx_tv_lattice(m, e, sigma)
    est, se = approx_tv_monte_carlo(m, e, sigma, n=100_000, seed=m * 100 + e)
    assert abs(res.value - est) <= 4 * se + 1e-6
    assert res.value <= float(cf.tv_upper_closed_form(RandomAllocation(m, sigma, e)).upper)
    assert res.error_estimate <= 1e-5 / 3 and res.lost_mass < 1e-9


def test_closed_form_over_exact_ratio_decreases_toward_sqrt_pi_over_2() -> None:
    ratios = []
    for m in (16, 64, 256):
        exact = approx_tv_lattice(m, 1, "1.5").value
        bound = float(cf.tv_upper_closed_form(RandomAllocation(m, "1.5", 1)).upper)
        ratios.append(bound / exact)
    assert ratios[0] > ratios[1] > ratios[2] > math.sqrt(math.pi / 2)
    assert ratios[2] - math.sqrt(math.pi / 2) < 2e-3


def test_table_2_gaussian_pair_accuracy() -> None:
    acc = 0.5 + approx_tv_lattice(100, 10, "1.737").value / 2
    assert round(acc, 4) == 0.5394


def test_table_3_optimal_test_tpr() -> None:
    assert round(approx_tpr_at_fpr(100, 10, "1.4262", "1e-3"), 4) == 0.0023


def test_bad_input() -> None:
    with pytest.raises(InvalidArgument, match="steps=0 must be >= 1"):
        RandomAllocation(0, 1)
    with pytest.raises(InvalidArgument, match="epochs=0 must be >= 1"):
        RandomAllocation(10, 1, 0)
    with pytest.raises(InvalidArgument, match="sigma=0 must be > 0"):
        RandomAllocation(10, 0)
    with pytest.raises(InvalidArgument, match="tv=1 must be < 1"):
        cf.sigma_closed_form(10, 1, 1)
    with pytest.raises(InvalidArgument, match="tv=0 must be > 0"):
        cf.sigma_closed_form(10, 1, 0)
    with pytest.raises(InvalidArgument, match=r"fpr=0.6 must be <= 0.5"):
        cf.tpr_upper(RandomAllocation(10, 1), "0.6")


def test_numeric_self_check_rejects_a_coarse_grid() -> None:
    with pytest.raises(PrecisionExhausted, match="self-check"):
        approx_tv_lattice(10, 2, "1.0", grid={"h": 0.5, "eta": 0.05, "cap": 3.0})
