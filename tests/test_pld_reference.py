"""Soundness of the certified PLD accountant against independent references (issue 34).

certdp's ``pld_bounds`` claims lower <= eps(delta) <= upper (and the same for delta(eps)). It is
checked here, over hypothesis-drawn subsampled-Gaussian settings (q log-uniform in [1e-3, 1],
sigma in [0.5, 5], steps in [1, 2000], delta log-uniform in [1e-10, 1e-3], remove/add/both),
against references that share no code with certdp (tests/pld_reference.py):

- exact mpmath values (50 digits) where a closed form exists: q = 1 (n Gaussian steps are one
  Gaussian with mu = sqrt(n)/sigma) and steps = 1 (Gaussian tails at the loss threshold); the
  certified interval must contain them (slack 1e-12 relative, for the float conversion only);
- a float PLD accountant written from scratch (numpy FFT): its pessimistic/optimistic bracket
  [ref_lo, ref_hi] is an honest bracket of the truth up to float error, so two honest intervals
  must overlap: ref_lo <= upper and lower <= ref_hi. A violation means a certdp end is wrong.
  The reference itself is first checked against the closed forms.
- dp_accounting's PLDAccountant (pessimistic by construction) must not fall below certdp's lower
  end on two DP-SGD settings.

PrecisionExhausted (the width target not reached) still carries a sound result (``exc.result``),
which is checked too; how often it happens is counted and must stay rare.
"""

from __future__ import annotations

import functools
import math
import os
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from certdp.enclose import workprec
from certdp.errors import LimitExceeded, PrecisionExhausted
from certdp.notions.pld import pld_bounds
from certdp.pairs import SubsampledGaussian, compose
from tests import pld_reference as ref

PREC = 128
REL_WIDTH = "1e-4"  # for eps(delta); delta(eps) asks for certdp's default DELTA width, 1e-3
DELTA_REL_WIDTH = "1e-3"
EXACT_SLACK = mp.mpf("1e-12")
DIRECTIONS = ("remove", "add", "both")
#: hypothesis examples per everyday test (about 3 s each); CERTDP_PLD_REF_EXAMPLES raises it locally
EXAMPLES = int(os.environ.get("CERTDP_PLD_REF_EXAMPLES", "8"))


# --------------------------------------------------------------------------------------------
# helpers


@functools.cache  # the DP-SGD settings are asked by two tests (one xdist group)
def certified(q: str, sigma: str, steps: int, direction: str, **query: object) -> tuple[Fraction, Fraction, bool]:
    """certdp's (lower, upper, exhausted) for eps(delta) or delta(eps); exhausted: the width target
    was not reached and the (sound) result of the finest round is returned."""
    with workprec(PREC):
        pair = compose(SubsampledGaussian(q, sigma, direction), steps)
        try:
            width = DELTA_REL_WIDTH if "eps" in query else REL_WIDTH
            r = pld_bounds(pair, rel_width=width, **query)  # type: ignore[arg-type]
        except PrecisionExhausted as exc:
            res = getattr(exc, "result", None)
            if res is None:
                raise
            return res.enclosure.lower, res.enclosure.upper, True
    return r.enclosure.lower, r.enclosure.upper, False


def _mpf(x: Fraction) -> mp.mpf:
    return mp.mpf(x.numerator) / x.denominator


def assert_contains(lo: Fraction, up: Fraction, exact: mp.mpf, what: str) -> None:
    with mp.workdps(ref.DPS):
        slack = EXACT_SLACK * abs(exact)
        assert _mpf(lo) - slack <= exact <= _mpf(up) + slack, (
            f"{what}: certdp [{float(lo)!r}, {float(up)!r}] misses the exact {mp.nstr(exact, 17)}"
        )


def assert_overlap(lo: Fraction, up: Fraction, r: ref.Reference, what: str) -> None:
    """Both intervals are honest: they must meet. (Fractions vs floats: exact comparison.)"""
    assert Fraction(r.lo) <= up, f"{what}: certdp upper {float(up)!r} < reference lower {r.lo!r} ({r.levels})"
    assert lo <= Fraction(r.hi), f"{what}: certdp lower {float(lo)!r} > reference upper {r.hi!r} ({r.levels})"


def _decimal(x: float, digits: int) -> str:
    return f"{x:.{digits}g}"


# hypothesis strategies: decimal strings (certdp reads them exactly; the reference takes their floats)
Q = st.floats(-3, 0).map(lambda e: _decimal(10**e, 3))
SIGMA = st.floats(0.5, 5).map(lambda s: _decimal(s, 3))
DELTA = st.floats(-10, -3).map(lambda e: _decimal(10**e, 2))
STEPS = st.floats(math.log10(2), math.log10(2000)).map(lambda e: round(10**e))  # log-uniform in [2, 2000]


# --------------------------------------------------------------------------------------------
# the reference against the closed forms (before it is relied on)


@pytest.mark.parametrize(
    ("sigma", "steps", "delta"),
    [(1.0, 1, 1e-5), (0.8, 1, 1e-10), (1.0, 10, 1e-5), (0.5, 100, 1e-10), (2.0, 300, 1e-3), (5.0, 2000, 1e-10)],
)
def test_reference_brackets_the_gaussian_closed_form(sigma: float, steps: int, delta: float) -> None:
    """q = 1: the float bracket contains the exact eps and is tight (so the overlap tests below
    have teeth); the Richardson centre is within its error bar of the exact value."""
    exact = float(ref.gaussian_eps_exact(mp.sqrt(steps) / mp.mpf(sigma), delta))
    for direction in ("remove", "add"):
        r = ref.reference_eps(1.0, sigma, steps, delta, direction)
        assert r.lo <= exact <= r.hi, (direction, r)
        assert r.rel_width < 3e-4, r
        assert abs(r.center - exact) <= r.err, r
        assert r.err < 1e-3 * exact


@pytest.mark.parametrize(
    ("q", "sigma", "delta"),
    [(0.01, 0.8, 1e-5), (0.001, 0.5, 1e-10), (0.001, 5.0, 1e-10), (0.3, 0.6, 1e-3), (0.5, 0.5, 1e-6)],
)
@pytest.mark.parametrize("direction", ["remove", "add"])
def test_reference_brackets_the_one_step_closed_form(q: float, sigma: float, delta: float, direction: str) -> None:
    exact = float(ref.subsampled_eps_exact(q, sigma, direction, delta))
    r = ref.reference_eps(q, sigma, 1, delta, direction)
    assert r.lo <= exact <= r.hi, r
    # add: eps sits just below the loss's hard top edge -log(1 - q), where the lattice brackets
    # converge slowly; elsewhere they are tight
    assert r.rel_width < (5e-2 if direction == "add" else 3e-4), r


def test_reference_delta_brackets_the_closed_forms() -> None:
    for sigma, steps, eps in [(1.0, 4, 1.0), (2.0, 50, 2.0), (0.7, 1, 3.0)]:
        exact = float(ref.gaussian_delta_exact(math.sqrt(steps) / sigma, eps))
        lo, hi = ref.reference_delta(1.0, sigma, steps, eps)
        assert lo <= exact <= hi and hi - lo < 1e-3 * exact, (sigma, steps, eps, lo, hi, exact)
    for q, sigma, eps, direction in [(0.05, 1.0, 0.5, "remove"), (0.2, 0.8, 0.1, "add")]:
        exact = float(ref.subsampled_delta_exact(q, sigma, direction, eps))
        lo, hi = ref.reference_delta(q, sigma, 1, eps, direction)
        assert lo <= exact <= hi and hi - lo < 1e-2 * exact, (q, sigma, eps, direction, lo, hi, exact)


def test_reference_sides_are_directional() -> None:
    """Coarse lattices give wider brackets around the same truth: both ends move monotonically
    towards the exact value as h halves (a sign error in a side would show here)."""
    exact = float(ref.gaussian_eps_exact(mp.sqrt(50) / mp.mpf(2), 1e-6))
    r = ref.reference_eps(1.0, 2.0, 50, 1e-6, rel_target=0.0, max_levels=4)
    los, his = [lv[1] for lv in r.levels], [lv[2] for lv in r.levels]
    assert los == sorted(los) and his == sorted(his, reverse=True)
    assert los[-1] <= exact <= his[-1]
    assert his[0] - exact > 4 * (his[-1] - exact)  # second order: about 4x per halving


def test_fft_noise_estimate_covers_the_measured_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reference's estimate of the FFT products' error (ref.compose) against the same
    composition with long-double direct convolutions; the relative error of the total mass
    (about 1e-16 a step) is the part counted in delta instead."""
    one = ref.pessimistic_step(0.01, 0.8, "remove", 2.0**-8)
    steps = 1024
    theta = ref.chernoff_theta(one, steps, delta=1e-8)
    fast = ref.compose(one, steps, 1e-20, True, theta)

    def direct(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.convolve(a.astype(np.longdouble), b.astype(np.longdouble)).astype(float)

    monkeypatch.setattr(ref, "fftconvolve", direct)
    slow = ref.compose(one, steps, 1e-20, True, theta)
    assert (fast.k0, len(fast.a)) == (slow.k0, len(slow.a))
    err = float(np.abs(fast.a - slow.a).max())
    assert 0 < err <= fast.noise + 1e-15 * steps * float(np.abs(slow.a).max()), (err, fast.noise)


# --------------------------------------------------------------------------------------------
# certdp against the exact values (q = 1 or one step)


@st.composite
def exact_settings(draw: st.DrawFn) -> tuple[str, str, int, str, str]:
    if draw(st.booleans()):  # mu = sqrt(steps)/sigma <= 20 (at mu = 89 certdp takes a minute: slow test)
        q, steps = "1", draw(st.integers(1, 100))
    else:
        q, steps = draw(Q), 1
    return q, draw(SIGMA), steps, draw(DELTA), draw(st.sampled_from(DIRECTIONS))


def _run(stats: dict[str, int], q: str, sigma: str, steps: int, direction: str, delta: str) -> tuple | None:
    """certified(), counting the runs, the exhausted width targets (a sound result all the same)
    and the refusals (LimitExceeded: no claim)."""
    stats["runs"] += 1
    try:
        lo, up, exhausted = certified(q, sigma, steps, direction, delta=Fraction(delta))
    except LimitExceeded:
        stats["refused"] += 1
        return None
    stats["exhausted"] += exhausted
    return lo, up, exhausted


def _rare(stats: dict[str, int]) -> None:
    assert stats["refused"] <= max(1, stats["runs"] // 8), stats
    assert stats["exhausted"] <= max(2, stats["runs"] // 4), stats


def test_certdp_contains_the_exact_eps() -> None:
    stats = {"runs": 0, "exhausted": 0, "refused": 0}

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(exact_settings())
    def check(setting: tuple[str, str, int, str, str]) -> None:
        q, sigma, steps, delta, direction = setting
        got = _run(stats, q, sigma, steps, direction, delta)
        if got is None:
            return
        lo, up, _ = got
        exact = ref.exact_eps(q, sigma, steps, direction, delta)
        assert exact is not None
        assert_contains(lo, up, exact, f"q={q} sigma={sigma} steps={steps} delta={delta} {direction}")

    check()
    _rare(stats)


# --------------------------------------------------------------------------------------------
# certdp against the float reference (compositions)


def test_certdp_overlaps_the_float_reference() -> None:
    stats = {"runs": 0, "exhausted": 0, "refused": 0}

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(Q, SIGMA, STEPS, DELTA, st.sampled_from(DIRECTIONS))
    def check(q: str, sigma: str, steps: int, delta: str, direction: str) -> None:
        # q = 1 at mu = sqrt(steps)/sigma > 20 costs certdp up to a minute (the slow test has one)
        assume(q != "1" or math.sqrt(steps) / float(sigma) <= 20)
        what = f"q={q} sigma={sigma} steps={steps} delta={delta} {direction}"
        got = _run(stats, q, sigma, steps, direction, delta)
        if got is None:
            return
        lo, up, exhausted = got
        if not exhausted:
            assert up - lo <= Fraction(REL_WIDTH) * up, what  # the width target that was asked for
        r = ref.reference_eps(
            float(q), float(sigma), steps, float(delta), direction, rel_target=5e-4, max_levels=3, max_cells=300_000
        )
        assert_overlap(lo, up, r, what)
        if q == "1":
            exact = ref.exact_eps(q, sigma, steps, direction, delta)
            assert exact is not None
            assert_contains(lo, up, exact, what)

    check()
    _rare(stats)


@pytest.mark.parametrize(
    ("q", "sigma", "steps", "eps", "direction"),
    [("0.01", "0.8", 300, "1.5", "remove"), ("0.1", "2", 40, "1", "both"), ("0.02", "1.2", 100, "0.5", "add")],
)
def test_certdp_delta_overlaps_the_float_reference(q: str, sigma: str, steps: int, eps: str, direction: str) -> None:
    lo, up, _ = certified(q, sigma, steps, direction, eps=Fraction(eps))
    r_lo, r_hi = ref.reference_delta(float(q), float(sigma), steps, float(eps), direction)
    assert r_hi - r_lo < 1e-2 * r_hi  # a meaningful bracket
    assert Fraction(r_lo) <= up and lo <= Fraction(r_hi), (float(lo), float(up), r_lo, r_hi)


# --------------------------------------------------------------------------------------------
# DP-SGD settings: the reference's Richardson centre, and dp_accounting's pessimistic estimate

DPSGD = [("0.01", "0.8", 500, "1e-5"), (str(Fraction(256, 60000)), "1.0", 1000, "1e-5")]


@pytest.mark.xdist_group("dpsgd")
@pytest.mark.parametrize(("q", "sigma", "steps", "delta"), DPSGD)
def test_dpsgd_settings_against_the_reference(q: str, sigma: str, steps: int, delta: str) -> None:
    lo, up, exhausted = certified(q, sigma, steps, "both", delta=Fraction(delta))
    assert not exhausted
    r = ref.reference_eps(float(Fraction(q)), float(sigma), steps, float(delta), "both", max_levels=3)
    assert_overlap(lo, up, r, f"q={q} sigma={sigma} steps={steps}")
    t_lo, t_hi = r.tight  # heuristic (Richardson): certdp should meet it too
    assert Fraction(t_lo) <= up and lo <= Fraction(t_hi), (float(lo), float(up), r.center, r.err)


@pytest.mark.xdist_group("dpsgd")
@pytest.mark.parametrize(("q", "sigma", "steps", "delta"), DPSGD)
def test_dp_accounting_pessimistic_estimate_is_above_certdp_lower(q: str, sigma: str, steps: int, delta: str) -> None:
    dp_accounting = pytest.importorskip("dp_accounting")
    from dp_accounting.pld import pld_privacy_accountant

    lo, up, _ = certified(q, sigma, steps, "both", delta=Fraction(delta))
    interval = 1e-5
    acc = pld_privacy_accountant.PLDAccountant(value_discretization_interval=interval)
    event = dp_accounting.PoissonSampledDpEvent(float(Fraction(q)), dp_accounting.GaussianDpEvent(float(sigma)))
    acc.compose(dp_accounting.SelfComposedDpEvent(event, steps))
    theirs = Fraction(acc.get_epsilon(float(delta)))
    assert theirs >= lo * (1 - Fraction(1, 10**9)), (float(theirs), float(lo))
    # and it is not far above either: rounding each step's loss up by the interval moves eps by
    # at most steps * interval
    assert theirs <= up + Fraction(steps) * Fraction(interval) + Fraction(1, 10**6), (float(theirs), float(up))


# --------------------------------------------------------------------------------------------
# long compositions


@pytest.mark.slow
@pytest.mark.parametrize("steps", [10**5, 10**6])
def test_long_runs_meet_the_width_and_overlap_the_reference(steps: int) -> None:
    lo, up, exhausted = certified("0.001", "0.8", steps, "remove", delta=Fraction("1e-8"))
    assert not exhausted, f"rel-width {REL_WIDTH} not reached at {steps} steps: [{float(lo)!r}, {float(up)!r}]"
    assert up - lo <= Fraction(REL_WIDTH) * up
    r = ref.reference_eps(0.001, 0.8, steps, 1e-8, "remove", max_levels=3)
    assert r.rel_width < 1e-3, r
    assert_overlap(lo, up, r, f"q=0.001 sigma=0.8 steps={steps} delta=1e-8")


@pytest.mark.slow
@pytest.mark.parametrize("direction", ["remove", "both"])
def test_certdp_contains_the_exact_eps_at_large_mu(direction: str) -> None:
    """q = 1, sigma = 0.5, 2000 steps: mu = 89.4, eps about 4568 (certdp takes about a minute)."""
    lo, up, _ = certified("1", "0.5", 2000, direction, delta=Fraction("1e-10"))
    exact = ref.exact_eps("1", "0.5", 2000, direction, "1e-10")
    assert exact is not None
    assert_contains(lo, up, exact, f"q=1 sigma=0.5 steps=2000 delta=1e-10 {direction}")


@pytest.mark.slow
def test_certdp_overlaps_the_float_reference_up_to_1e4_steps() -> None:
    stats = {"runs": 0, "exhausted": 0, "refused": 0}

    @settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(Q, SIGMA, st.floats(3, 4).map(lambda e: round(10**e)), DELTA, st.sampled_from(DIRECTIONS))
    def check(q: str, sigma: str, steps: int, delta: str, direction: str) -> None:
        assume(q != "1" or math.sqrt(steps) / float(sigma) <= 50)
        got = _run(stats, q, sigma, steps, direction, delta)
        if got is None:
            return
        lo, up, _ = got
        r = ref.reference_eps(float(q), float(sigma), steps, float(delta), direction, max_levels=3)
        assert_overlap(lo, up, r, f"q={q} sigma={sigma} steps={steps} delta={delta} {direction}")

    check()
    _rare(stats)
