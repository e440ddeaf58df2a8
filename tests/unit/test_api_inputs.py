"""Issue 13 (Python API side): wrong inputs raise CertdpError, extreme values render and convert,
conversions are clamped and explained, work limits refuse before working, results read well.

Each test failed on the code before issue 13 (a non-certdp exception, a hang, a traceback or a
missing attribute), unless marked as a guard.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from fractions import Fraction

import pytest
from flint import arb
from hypothesis import given
from hypothesis import strategies as st

import certdp
from certdp.enclose import Enclosure, Target, upper_float, workprec
from certdp.errors import CertdpError, InvalidArgument, LimitExceeded, Unsupported
from certdp.notions import conversion_delta as delta
from certdp.notions import conversion_epsilon as epsilon
from certdp.notions.bounded_range import mu_from_bounded_range
from certdp.notions.eps_delta import ConversionResult
from certdp.notions.expansion import local_expansion
from certdp.notions.gdp import zcdp_delta, zcdp_epsilon
from certdp.notions.zcdp_gdp import mu_from_rho
from certdp.pairs import RandomAllocation
from tests.counters import peak_traced_bytes, python_calls

G = certdp.Gaussian(1)
WEIRD: list[object] = [
    None,
    True,
    float("nan"),
    float("inf"),
    -1,
    0,
    1e-320,
    1e308,
    "abc",
    "64",
    [1],
    Fraction(10) ** 400,
    Fraction(1, 10**400),
    Decimal("NaN"),
    object(),
]


# ---------------------------------------------------------------- 1. inputs raise CertdpError


def test_tiny_and_huge_parameters_are_refused_up_front() -> None:
    with pytest.raises(InvalidArgument, match=r"^sigma=1e-320 must have magnitude in \[1e-100, 1e\+100\]"):
        certdp.Gaussian(sigma=1e-320)
    with pytest.raises(InvalidArgument, match=r"^shift="):
        certdp.Laplace(1, Fraction(10) ** 400)
    with pytest.raises(InvalidArgument, match=r"^sigma=.* must have magnitude in \[1e-4"):
        certdp.SubsampledGaussian("0.1", Fraction(1, 10**17))  # was a ZeroDivisionError in _cgf_add


@pytest.mark.parametrize("orders", [5, "64", 2.5, None.__class__, b"64"])
def test_orders_must_be_an_iterable_of_numbers(orders: object) -> None:
    with pytest.raises(InvalidArgument, match=r"^orders=.* must be an iterable of orders"):
        epsilon(G, "1e-5", orders=orders)  # type: ignore[arg-type]


def test_too_many_orders_are_refused() -> None:
    with pytest.raises(LimitExceeded, match="orders has more than 4096 entries"):
        epsilon(G, "1e-5", orders=range(2, 10**7))


@pytest.mark.parametrize("bad", ["gauss", 3, None, object()])
def test_a_non_pair_is_refused(bad: object) -> None:
    for call in (
        lambda: epsilon(bad, "1e-5"),  # type: ignore[arg-type]
        lambda: delta(bad, 1),  # type: ignore[arg-type]
        lambda: certdp.rdp(bad, 2),  # type: ignore[arg-type]
        lambda: certdp.cgf(bad, 1),  # type: ignore[arg-type]
        lambda: certdp.gap(bad, 1),  # type: ignore[arg-type]
        lambda: certdp.kl(bad),  # type: ignore[arg-type]
        lambda: certdp.rho(bad),  # type: ignore[arg-type]
    ):
        with pytest.raises(InvalidArgument, match=r"^pair=.* must be a certdp privacy pair"):
            call()


def test_target_none_and_malformed_targets_are_refused() -> None:
    with pytest.raises(InvalidArgument, match=r"^target=None must be a certdp.Target"):
        epsilon(G, "1e-5", target=None)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match=r"^target=None"):
        certdp.rdp(G, 2, None)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match=r"^rel_tol=None"):
        Target(rel_tol=None)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match=r"^start_prec=64.5 must be an integer"):
        Target(start_prec=64.5)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "nan", "x", None, True, Decimal("NaN")])
def test_enclosure_contains_refuses_non_numbers(value: object) -> None:
    enc = certdp.rdp(G, 2)
    with pytest.raises(InvalidArgument, match=r"^value=.* must be a finite number"):
        enc.contains(value)  # type: ignore[arg-type]


def test_lattice_grid_cap_inf_is_refused() -> None:  # guard (fixed in issue 12 already)
    from certdp.notions.tv_certified import LatticeGrid

    with pytest.raises(InvalidArgument, match=r"^cap=inf must be a finite number"):
        LatticeGrid(h=2.0**-10, cap=math.inf, l_min=0.5, l_max=2.0, eta=2.0**-4)


@pytest.mark.parametrize("pairs", [5, None, "ab", [5], [(G,)], Fraction(1, 3)])
def test_compose_refuses_non_pairs(pairs: object) -> None:
    with pytest.raises(InvalidArgument, match=r"^pairs="):
        certdp.compose(pairs)  # type: ignore[arg-type]


def test_composition_refuses_malformed_parts_and_normalises_counts() -> None:
    with pytest.raises(InvalidArgument, match=r"^parts=5"):
        certdp.Composition(5)  # type: ignore[arg-type]
    comp = certdp.Composition(((G, "2"),))  # type: ignore[arg-type]
    assert comp.parts == ((G, 2),)


def test_other_argument_errors_are_certdp_errors() -> None:
    with pytest.raises(InvalidArgument, match=r"^method=x must be auto, closed-form or search"):
        certdp.rho_detail(G, method="x")
    with pytest.raises(InvalidArgument, match=r"^t=1e-400 must lie in \[1e-100, 1e100\]"):
        certdp.gap(G, "1e-400")  # was a ZeroDivisionError (t(t+1) underflowed to 0.0)
    with pytest.raises(InvalidArgument, match=r"^t="):
        certdp.cgf(G, 1e308)  # was an OverflowError
    with pytest.raises(InvalidArgument, match=r"^t="):
        local_expansion(G, 1e308)  # was an OverflowError
    with pytest.raises(InvalidArgument, match=r"^mus="):
        certdp.notions.gdp.compose_gdp(5)  # type: ignore[arg-type]
    with pytest.raises(LimitExceeded, match=r"^eta=.* is below the limit 0.01"):
        mu_from_bounded_range(Fraction(1, 10**17))  # was a ZeroDivisionError


def test_classic_zcdp_epsilon_takes_a_number() -> None:
    enc = certdp.classic_zcdp_epsilon("0.5", "1e-5")  # was an AttributeError (float has no .lower)
    assert abs(float(enc.mid) - (0.5 + 2 * math.sqrt(0.5 * math.log(1e5)))) < 1e-12


def test_gap_takes_a_numeric_rho() -> None:
    # Gamma(t) = rho t(t+1) - K(t); K(1) = 1 for the unit Gaussian
    assert certdp.gap(G, 1, rho="0.5").contains(0)


_CONSTRUCTORS = [
    certdp.Gaussian,
    lambda w: certdp.Gaussian(1, w),
    certdp.Laplace,
    lambda w: certdp.Laplace(1, w),
    certdp.DiscreteLaplace,
    lambda w: certdp.DiscreteLaplace(1, w),
    certdp.DiscreteGaussian,
    lambda w: certdp.DiscreteGaussian(1, w),
    lambda w: certdp.SubsampledGaussian(w, 1),
    lambda w: certdp.SubsampledGaussian("0.1", w),
    lambda w: certdp.SubsampledGaussian("0.1", 1, w),
    certdp.GaussianMixture,
    lambda w: certdp.GaussianMixture(1, w),
    certdp.StudentT,
    lambda w: certdp.StudentT(3, w),
    certdp.GeneralizedGaussian,
    lambda w: certdp.GeneralizedGaussian("1.5", w),
    lambda w: RandomAllocation(w, 1),
    lambda w: RandomAllocation(2, w),
    lambda w: RandomAllocation(2, 1, w),
]


@given(st.sampled_from(_CONSTRUCTORS), st.sampled_from(WEIRD))
def test_fuzz_constructors_raise_only_certdp_errors(make, value: object) -> None:
    """Guard: the constructors already raised only CertdpError; the evaluations did not (below)."""
    try:
        make(value)
    except CertdpError:
        pass


_CHEAP_CALLS = [
    lambda w: certdp.rdp(G, w),
    lambda w: certdp.cgf(G, w),
    lambda w: certdp.gap(G, w),
    lambda w: epsilon(G, w),
    lambda w: delta(G, w),
    lambda w: epsilon(G, "1e-5", via=w),
    lambda w: epsilon(G, "1e-5", orders=w),
    lambda w: certdp.gap(G, 1, rho=w),
    lambda w: certdp.classic_zcdp_epsilon(w, "1e-5"),
    lambda w: certdp.compose(G, w),
    lambda w: certdp.le(w, 1),
    lambda w: Target(rel_tol=w),
    lambda w: certdp.notions.gdp.gdp_epsilon(w, "1e-5"),
    lambda w: certdp.notions.gdp.gdp_delta(1, w),
    lambda w: zcdp_epsilon(w, "1e-5"),
    lambda w: zcdp_delta(w, 1),
    lambda w: mu_from_rho(w),
]


@given(st.sampled_from(_CHEAP_CALLS), st.sampled_from(WEIRD))
def test_fuzz_notions_raise_only_certdp_errors(call, value: object) -> None:
    try:
        call(value)
    except CertdpError:
        pass


# ---------------------------------------------------------------- 2. floats and decimals at any magnitude


def test_enclosure_beyond_the_float_range_converts_safely() -> None:
    huge = Enclosure.from_ball(arb((3, 10**5)))  # 3 * 2^100000
    assert huge.upper_float() == math.inf and huge.lower_float() == 1.7976931348623157e308
    assert upper_float(arb((3, 10**5))) == math.inf  # was an OverflowError
    assert Fraction(huge.upper_str()) >= huge.upper and Fraction(huge.lower_str()) <= huge.lower
    assert huge.digits() >= 17 and huge.rel_width() == 0.0
    tiny = Enclosure.from_ball(arb((3, -(10**5))))
    assert tiny.upper_float() == 5e-324 and tiny.lower_float() == 0.0
    assert Fraction(tiny.upper_str()) >= tiny.upper and Fraction(tiny.lower_str()) <= tiny.lower
    neg = Enclosure.from_ball(-arb((3, 10**5)))
    assert neg.lower_float() == -math.inf and neg.upper_float() == -1.7976931348623157e308


def test_decimal_ends_stay_outward_with_17_digits_for_huge_exponents() -> None:
    for exp in (5000, -5000, 200_000, -700_000):
        enc = Enclosure.from_bounds(Fraction(12345678901234567891) * Fraction(2) ** exp, Fraction(2) ** (exp + 70), 64)
        lo, hi = enc.lower_str(), enc.upper_str()
        assert Fraction(lo) <= enc.lower and Fraction(hi) >= enc.upper
        assert len(re.sub(r"[^0-9]", "", lo.split("e")[0]).lstrip("0")) >= 17
        assert set(enc.to_dict()) == {"lower", "upper", "width", "lower_dyadic", "upper_dyadic", "prec_bits"}


def test_ends_below_the_range_round_outward_and_beyond_it_are_refused() -> None:
    tiny = Enclosure.from_ball(arb((1, -(10**7))))
    assert tiny.lower == 0 and 0 < tiny.upper <= Fraction(1, 2 ** (2**20))
    with pytest.raises(Unsupported, match="exceeds the range of certdp enclosures"):
        Enclosure.from_ball(arb((1, 10**7)))


def test_mu_from_rho_of_a_huge_rho_names_rho_and_the_range() -> None:
    with pytest.raises(InvalidArgument, match=r"^rho=.* must lie in \[1e-100, 1e20\]"):
        mu_from_rho(Fraction(10) ** 999)  # was an OverflowError traceback


def test_subsampled_q1_add_is_the_gaussian_pair() -> None:
    pair = certdp.SubsampledGaussian(1, 1, direction="add")  # P = N(1, 1), Q = N(0, 1)
    assert certdp.rho(pair).contains(Fraction(1, 2))  # was an OverflowError (and KL claimed inf)
    assert certdp.kl(pair).contains(Fraction(1, 2))
    assert certdp.rdp(pair, "2.5").contains(Fraction(5, 4))


def test_tiny_delta_neither_hangs_nor_underflows() -> None:
    # delta ~ e^{-5e7}: the exact Fraction arithmetic on it used to take minutes; its integers alone
    # (a denominator near 2^(7e7)) are 9 MB each. Measured peak now: 0.8 MB of Python memory.
    found: list[ConversionResult] = []
    error, peak = peak_traced_bytes(lambda: found.append(delta(G, 10000)))
    assert error is None and peak < 4 << 20, (error, peak)
    res = found[0]
    assert res.enclosure.lower == 0 and 0 < res.sound <= Fraction(1, 2 ** (2**20))


# ---------------------------------------------------------------- 3. zero divisions at the root


def test_subsampled_q_near_one_keeps_its_exact_complement() -> None:
    pair = certdp.SubsampledGaussian(1 - Fraction(1, 10**20), 1, "add")
    assert abs(certdp.kl(pair).mid - Fraction(1, 2)) < Fraction(1, 10**15)
    with workprec(128):
        kappas = pair.loss_cumulants()  # was ValueError: math domain error (float q rounded to 1.0)
    assert all(k.is_finite() for k in kappas)


# ---------------------------------------------------------------- 4-5. clamps and warnings


def test_negative_epsilon_is_clamped_with_the_signed_infimum_and_a_warning() -> None:
    res = epsilon(certdp.Gaussian(10), "0.5")
    assert res.enclosure.lower == 0 and res.enclosure.upper == 0 and res.sound == 0
    assert res.signed_infimum is not None and res.signed_infimum.upper < 0
    assert len(res.warnings) == 1 and "negative at delta=0.5" in res.warnings[0] and "epsilon = 0" in res.warnings[0]
    plain = epsilon(G, "1e-5")
    assert plain.signed_infimum is None and plain.warnings == ()


def test_zcdp_epsilon_is_clamped_too() -> None:
    res = zcdp_epsilon("1e-12", "1e-5")
    assert res.sound == 0 and res.signed_infimum is not None


def test_delta_above_one_is_clamped_to_one() -> None:
    res = delta(certdp.Gaussian("0.1"), 0, orders=[2, 3])
    assert res.sound == 1 and res.signed_infimum is not None and res.signed_infimum.lower > 1
    assert "delta = 1" in res.warnings[0]


def test_grid_edge_warning() -> None:
    res = epsilon(certdp.SubsampledGaussian("0.01", 20), "1e-5")
    assert res.order == 1024
    assert any("largest order searched" in w and "--orders" in w for w in res.warnings)


def test_zcdp_on_subsampled_warns_and_rdp_is_much_tighter() -> None:
    pair = certdp.compose(certdp.SubsampledGaussian("0.01", 1), 500)
    loose = epsilon(pair, "1e-5", via="zcdp")
    assert any("via=rdp" in w and "subsampl" in w for w in loose.warnings)
    assert 350 < float(loose) < 360  # rho = 500/2: the un-subsampled Gaussian's
    assert float(epsilon(pair, "1e-5")) < 2


# ---------------------------------------------------------------- 6. work limits and fast paths


def test_subsampled_remove_at_order_1e6_is_fast(monkeypatch: pytest.MonkeyPatch) -> None:
    # It hung before: the exact binomial sum has O(alpha) terms. Counted, not timed: the sum is
    # never run past MAX_SUM_ORDER terms (the integrals cost about the same at any order).
    from certdp.pairs import subsampled

    orders: list[int] = []
    real_sum = subsampled.SubsampledGaussian._cgf_remove

    def counted(self: subsampled.SubsampledGaussian, alpha: int) -> arb:
        orders.append(alpha)
        return real_sum(self, alpha)

    monkeypatch.setattr(subsampled.SubsampledGaussian, "_cgf_remove", counted)
    enc = certdp.rdp(certdp.SubsampledGaussian("0.01", 1, "remove"), 10**6)  # hung before
    assert all(alpha <= subsampled.MAX_SUM_ORDER for alpha in orders), orders
    # K(t)/t -> t/(2 sigma^2) + log q for large t: D_alpha ~ (alpha - 1)/2 - 4.6
    assert 499_990 < float(enc.upper) < 500_000


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: certdp.DiscreteLaplace("0.5", 10**12), r"^shift=1000000000000 exceeds the limit 100000 for discrete"),
        (lambda: certdp.StudentT(10**6), r"^nu=1000000 exceeds the limit 100000 for student-t"),
        (lambda: certdp.StudentT(3, 100), r"^shift=100 exceeds the limit 10 for student-t"),
        (lambda: certdp.GaussianMixture(64), r"^m=64 exceeds the limit 8 for gaussian-mixture"),
        (lambda: certdp.GeneralizedGaussian("1.5", 100), r"^shift=100 exceeds the limit 30"),
        (lambda: certdp.rdp(RandomAllocation(10, 1), 4096), r"^order=4096 exceeds the limit 1024 for random"),
        (lambda: certdp.rdp(certdp.StudentT(3, 1), 10**5), r"^order=100000 exceeds the limit 10001 for student-t"),
        (lambda: certdp.rdp(certdp.GeneralizedGaussian("1.5", 10), 2000), r"^order=2000 exceeds the limit"),
        (lambda: certdp.DiscreteGaussian(10**5).loss_cumulants(), r"^sigma=100000 exceeds the limit 10000"),
        (lambda: certdp.rdp(certdp.SubsampledGaussian("0.01", 1), 10**12), r"^order=1000000000000 exceeds"),
    ],
)
def test_work_limits_refuse_before_working(make, message: str) -> None:
    with pytest.raises(LimitExceeded, match=message):
        make()  # also imports what the call needs: the count below is of the call alone
    # Counted, not timed: the refusal takes a few hundred calls (52 to 231 measured); the work it
    # refuses (sums of 10^12 terms, quadratures at order 10^5, ...) takes millions.
    error, calls = python_calls(make)
    assert isinstance(error, LimitExceeded) and re.search(message, str(error)), error
    assert calls < 5000, calls


# ---------------------------------------------------------------- 7. zCDP -> GDP range


def test_mu_from_rho_1e20_works() -> None:
    enc = mu_from_rho("1e20")  # was "root bracket hi=1e+20: f(hi) > 0 is not certified"
    assert enc.lower < Fraction(math.isqrt(8 * 10**20)) + 1 < enc.upper + 2  # mu ~ sqrt(8 rho)
    with pytest.raises(InvalidArgument, match=r"^rho=1e21 must lie in \[1e-100, 1e20\]"):
        mu_from_rho("1e21")


def test_zcdp_delta_for_a_large_rho_is_one() -> None:
    assert zcdp_delta("1e4", 1).sound == 1  # the head bound failed before


# ---------------------------------------------------------------- 8. results read well


def test_enclosure_repr_and_no_implicit_float() -> None:
    enc = certdp.rdp(G, 2)
    assert re.fullmatch(r"Enclosure\(\[[0-9.]+, [0-9.]+\], prec=\d+\)", repr(enc))
    with pytest.raises(Unsupported, match="upper_float"):
        float(enc)


def test_conversion_result_repr_and_float_round_up() -> None:
    res = epsilon(G, "1e-5")
    assert re.fullmatch(r"ConversionResult\(epsilon <= [0-9.]+, order=[0-9.]+, via=rdp\)", repr(res))
    assert float(res) >= res.sound and Fraction(float(res)) - res.sound < Fraction(1, 10**14)
    rho = certdp.rho_detail(G)
    assert repr(rho) == "RhoResult(rho <= 0.50000000000000000, method=closed-form, argmax=inf)"
    assert float(rho) == 0.5
