"""The enclosure core: outward rendering, precision scope, refine, comparisons, special functions."""

from __future__ import annotations

from fractions import Fraction

import mpmath as mp
import pytest
from flint import arb, ctx
from hypothesis import given
from hypothesis import strategies as st

from certdp.enclose import (
    Enclosure,
    Target,
    Verdict,
    certainly_le,
    le,
    logsumexp,
    lt,
    phi,
    phi_inv,
    phi_inv_upper,
    refine,
    root_increasing,
    theta,
    workprec,
)
from certdp.enclose.ball import _round_decimal
from certdp.errors import InvalidArgument, PrecisionExhausted, Undecided
from tests import refs

fractions = st.fractions(min_value=Fraction(-(10**40)), max_value=Fraction(10**40)).filter(lambda f: f != 0)


@given(fractions, st.integers(1, 40))
def test_decimal_rounding_is_outward(v: Fraction, digits: int) -> None:
    down, up = _round_decimal(v, digits, up=False), _round_decimal(v, digits, up=True)
    assert Fraction(down) <= v <= Fraction(up)
    # and tight: one unit in the last place at most
    assert Fraction(up) - Fraction(down) <= abs(v) * Fraction(10) ** (1 - digits) * 2


@given(st.integers(-(10**30), 10**30), st.integers(-300, 300), st.integers(0, 10**20), st.integers(-300, 300))
def test_enclosure_rendering_contains_exact_interval(m1: int, e1: int, dm: int, e2: int) -> None:
    lo = Fraction(m1) * Fraction(2) ** e1
    hi = lo + Fraction(dm) * Fraction(2) ** e2
    enc = Enclosure.from_bounds(lo, hi, 64)
    assert Fraction(enc.lower_str()) <= lo and Fraction(enc.upper_str()) >= hi
    assert enc.contains(lo) and enc.contains(hi)
    d = enc.to_dict()
    assert {"lower", "upper", "width", "lower_dyadic", "upper_dyadic", "prec_bits"} <= set(d)


def test_at_least_17_significant_digits() -> None:
    enc = Enclosure.from_ball(arb(1) / 3)
    digits = enc.lower_str().replace("0.", "", 1).lstrip("0")
    assert len(digits) >= 17


def test_enclosure_rejects_reversed_bounds() -> None:
    with pytest.raises(InvalidArgument):
        Enclosure.from_bounds(1, 0, 64)
    with pytest.raises(InvalidArgument):
        Enclosure.from_bounds(Fraction(1, 3), 1, 64)  # not dyadic


def test_workprec_restores_on_error() -> None:
    before = ctx.prec
    with pytest.raises(RuntimeError):
        with workprec(300):
            assert ctx.prec == 300
            raise RuntimeError
    assert ctx.prec == before
    with pytest.raises(InvalidArgument):
        with workprec(3):
            pass


def test_refine_raises_precision_until_met_and_reports_exhaustion() -> None:
    seen: list[int] = []

    def third() -> arb:
        seen.append(ctx.prec)
        return arb(1) / 3

    enc = refine(third, Target(rel_tol=1e-60, abs_tol=0, start_prec=64, max_prec=1024))
    assert enc.width <= Fraction(1, 10**60) and enc.contains(Fraction(1, 3))
    assert seen[0] == 64 and seen == sorted(seen) and len(seen) >= 3
    with pytest.raises(PrecisionExhausted) as info:
        refine(lambda: arb(1, 1e-3), Target(rel_tol=1e-10, abs_tol=0, start_prec=64, max_prec=256))
    assert info.value.max_prec == 256 and info.value.achieved_width > 1e-4


def test_comparisons_are_three_valued() -> None:
    a = Enclosure.from_bounds(Fraction(1), Fraction(2), 64)
    assert le(a, 2) is Verdict.TRUE and lt(a, 2) is Verdict.UNDECIDED
    assert le(a, "0.5") is Verdict.FALSE
    assert le(a, "1.5") is Verdict.UNDECIDED
    assert certainly_le(a, 3) and not certainly_le(a, "1.5")
    with pytest.raises(Undecided):
        bool(le(a, "1.5"))


@given(st.decimals("-30", "30", places=3).map(str))
def test_phi_contains_mpmath(x: str) -> None:
    with workprec(128):
        v = phi(arb(x))
    with mp.workdps(60):
        ref = mp.ncdf(mp.mpf(x))
    assert refs.contains(Enclosure.from_ball(v, 128), ref, slack=1e-35)


@given(st.integers(1, 300), st.integers(1, 9))
def test_phi_inverse_tails(k: int, m: int) -> None:
    p = f"{m}e-{k}"
    with workprec(128):
        lo = phi_inv(arb(p))
        hi = phi_inv_upper(arb(p))
    with mp.workdps(60 + k):  # enough digits that 1 - 2p keeps 60 significant digits of p
        ref = -mp.sqrt(2) * mp.erfinv(1 - 2 * mp.mpf(p))
        neg = -ref
    assert refs.contains(Enclosure.from_ball(lo, 128), ref, slack=1e-30)
    assert refs.contains(Enclosure.from_ball(hi, 128), neg, slack=1e-30)


@given(st.lists(st.integers(-2000, 2000), min_size=1, max_size=6))
def test_logsumexp_contains_mpmath(xs: list[int]) -> None:
    with workprec(128):
        v = logsumexp([arb(x) for x in xs])
    with mp.workdps(60):
        m = max(xs)
        ref = m + mp.log(mp.fsum(mp.exp(x - m) for x in xs))
    assert refs.contains(Enclosure.from_ball(v, 128), ref, slack=1e-35)


@given(st.decimals("0.2", "30", places=3).map(str), st.decimals("-5", "5", places=3).map(str))
def test_theta_sum_contains_brute_force(sigma: str, x: str) -> None:
    with workprec(128):
        v = theta(arb(x), arb(sigma))
    with mp.workdps(60):
        s, xx = mp.mpf(sigma), mp.mpf(x)
        n = int(30 * s) + 40
        ref = mp.fsum(mp.exp(-((z - xx) ** 2) / (2 * s * s)) for z in range(-n - 6, n + 7))
    assert refs.contains(Enclosure.from_ball(v, 128), ref, slack=1e-33)


@given(st.integers(-5, 5), st.decimals("0.2", "0.99", places=3).map(str))
def test_theta_at_an_inexact_integer_is_finite(n: int, sigma: str) -> None:
    """x = n +- 1e-30 (a ball straddling an integer, as (t+1) r is at an inexact order): the sum's
    square (z - y)^2 straddles 0 there, which Arb's power turns into nan; the enclosure is finite
    and contains the brute-force sum at x = n."""
    with workprec(128):
        v = theta(arb(n, 1e-30), arb(sigma))
    assert v.is_finite()
    with mp.workdps(60):
        s = mp.mpf(sigma)
        ref = mp.fsum(mp.exp(-((z - n) ** 2) / (2 * s * s)) for z in range(-80, 81))
    assert refs.contains(Enclosure.from_ball(v, 128), ref, slack=1e-25)


def test_root_bisection_encloses_sqrt2() -> None:
    with workprec(200):
        r = root_increasing(lambda x: x * x - 2, arb(1), arb(2), tol=1e-50)
        assert r.contains(arb(2).sqrt()) and float(r.rad()) < 1e-50
    with pytest.raises(InvalidArgument):
        with workprec(64):
            root_increasing(lambda x: x * x - 2, arb(2), arb(3), tol=1e-10)


@given(st.decimals("-3", "3", places=2).map(float), st.decimals("0.1", "6", places=2).map(float))
def test_sup_interval_of_sine_matches_mpmath(a: float, length: float) -> None:
    from certdp.enclose import inf_interval, sup_interval

    b = a + length
    with workprec(128):
        hi = sup_interval(lambda x: x.sin(), a, b, tol=1e-12)
        lo = inf_interval(lambda x: x.sin(), a, b, tol=1e-12)
    with mp.workdps(50):
        xs = [mp.mpf(a) + (mp.mpf(b) - mp.mpf(a)) * k / 2000 for k in range(2001)]
        cands = (
            xs + [mp.pi / 2 + 2 * mp.pi * k for k in range(-3, 4)] + [-mp.pi / 2 + 2 * mp.pi * k for k in range(-3, 4)]
        )
        inside = [x for x in cands if mp.mpf(a) <= x <= mp.mpf(b)]
        ref_hi = max(mp.sin(x) for x in inside)
        ref_lo = min(mp.sin(x) for x in inside)
    assert refs.contains(Enclosure.from_ball(hi.value), ref_hi, slack=1e-30)
    assert refs.contains(Enclosure.from_ball(lo.value), ref_lo, slack=1e-30)
    assert float(hi.value.rad()) <= 1e-12


def test_sup_over_half_line_needs_a_tail_bound() -> None:
    from certdp.enclose import sup_interval

    with workprec(128):
        # x e^{-x} on [0, inf): sup 1/e at x = 1; tail bound on [T, inf): T e^{-T} for T >= 1
        res = sup_interval(
            lambda x: x * (-x).exp(), 0.0, float("inf"), tol=1e-15, tail_bound=lambda T: arb(T) * (-arb(T)).exp()
        )
        assert res.value.contains((-arb(1)).exp()) and float(res.value.rad()) < 1e-15
        with pytest.raises(InvalidArgument):
            sup_interval(lambda x: x, 0.0, float("inf"), tol=1e-3)


@given(st.floats(0.05, 3.0), st.floats(0.1, 4.0))
def test_integral_up_to_a_branch_point_contains_the_beta_function(p: float, b: float) -> None:
    """int_0^b x^p dx = b^{p+1}/(p+1) with the branch point of x^p at the left end: abs_pow's
    non-analytic mode lets Arb bound the end directly; the enclosure contains the mpmath value."""
    from certdp.enclose import abs_pow, integrate_real, workprec

    with workprec(96):
        pb = arb(p)
        got = integrate_real(lambda x, analytic: abs_pow(x, pb, analytic), arb(0), arb(b))
    with mp.workdps(40):
        want = mp.mpf(b) ** (mp.mpf(p) + 1) / (mp.mpf(p) + 1)
        lo, hi = mp.mpf(got.lower().str(40, radius=False)), mp.mpf(got.upper().str(40, radius=False))
        assert lo - mp.mpf("1e-35") <= want <= hi + mp.mpf("1e-35")
    assert got.rad() < 1e-20


def test_integral_ends_must_be_exact() -> None:
    from certdp.enclose import integrate_real, pi

    with pytest.raises(InvalidArgument, match="must be exact numbers"):
        integrate_real(lambda x, analytic: x, arb(0), pi())
