"""Regression tests of attack review 50 (2026-12-06, random allocation with k = M and one step per
epoch): high --prec and tiny --rel-width, refusals that name the user's setting and no flag that
refuses --k, the label of a wide k > 1 answer, and calibrations of one-step runs by the Gaussian's
closed form (the lattice left a step of 1e-9 undecided over 1000 steps)."""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath as mp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from certdp.calibrate.random_allocation_dp import calibrate_eps_delta
from certdp.cli import main
from certdp.errors import LimitExceeded


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def gauss_delta(mu_sq: Fraction, eps: Fraction) -> mp.mpf:
    mu = mp.sqrt(mp.mpf(mu_sq.numerator) / mu_sq.denominator)
    e = mp.mpf(eps.numerator) / eps.denominator
    return mp.ncdf(-e / mu + mu / 2) - mp.e**e * mp.ncdf(-e / mu - mu / 2)


@pytest.mark.parametrize("prec", ["416", "1000", "4096"])
def test_a_high_prec_is_honoured(prec: str, capsys: pytest.CaptureFixture[str]) -> None:
    """From --prec 416 up every k = M (and M = 1) eps query exited 3: the root finder's 400
    halvings could not reach its tolerance 2^-(prec - 8)."""
    argv = ["eps", "random-allocation", "--steps", "2", "--epochs", "2", "--k", "2", "--sigma", "1.7"]
    code, out, err = run([*argv, "--delta", "0.4", "--prec", prec, "--json"], capsys)
    assert code == 0, err
    rec = json.loads(out)
    mp.mp.dps = 80
    mu_sq = Fraction(4) / Fraction("1.7") ** 2
    assert gauss_delta(mu_sq, Fraction(rec["upper"])) <= mp.mpf("0.4") <= gauss_delta(mu_sq, Fraction(rec["lower"]))


def test_a_rel_width_below_the_float_range_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    """--rel-width 1e-1000 was refused as "tolerance=(0.0, 0.0)", a parameter the user never gave."""
    argv = ["eps", "random-allocation", "--steps", "2", "--epochs", "2", "--k", "2", "--sigma", "1.7"]
    code, _, err = run([*argv, "--delta", "0.4", "--rel-width", "1e-1000"], capsys)
    assert code == 3 and err.count("\n") == 1 and "rel_width=1e-1000 not reached" in err and "bounds [" in err
    assert "tolerance=(" not in err


def test_a_delta_beyond_the_precision_names_the_closed_form(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["delta", "random-allocation", "--steps", "2", "--epochs", "1", "--k", "2", "--sigma", "1e3"]
    code, _, err = run([*argv, "--eps", "1e4"], capsys)
    assert code == 3 and err.count("\n") == 1
    assert err.startswith("certdp: error: k=2 of steps=2, epochs=1 (k = M") and "Gaussian closed form" in err


@pytest.mark.parametrize(("k", "lead"), [("1000", "k = M: computed on the equal run"), ("999", "upper end on the")])
def test_a_k_refusal_names_the_setting_and_no_flag_that_refuses_k(
    k: str, lead: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The refusal named only the reduced run (steps=1) and advised --via rdp, which refuses --k
    (and dropping --k answers k = 1, no bound for k > 1)."""
    argv = ["eps", "random-allocation", "--steps", "1000", "--epochs", "1", "--k", k, "--sigma", "1e-3"]
    code, _, err = run([*argv, "--delta", "1e-5"], capsys)
    assert code == 2 and err.count("\n") == 1 and f"k={k} of steps=1000" in err and lead in err
    assert "--via" not in err
    code, _, err = run([*argv, "--delta", "1e-5", "--via", "rdp"], capsys)
    assert code == 2 and "not read by --via rdp" in err and "drop --via" in err  # why the advice had to go


def test_via_pld_on_a_one_step_run_is_warned(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["eps", "random-allocation", "--steps", "2", "--k", "2", "--sigma", "3", "--delta", "1e-5"]
    code, out, _ = run([*argv, "--via", "pld", "--json"], capsys)
    rec = json.loads(out)
    assert code == 0 and rec["via"] == "exact" and "--via pld asked" in rec["warnings"][0]
    code, out, _ = run([*argv, "--json"], capsys)
    assert code == 0 and json.loads(out)["warnings"] == []


@settings(max_examples=30, deadline=None)
@given(
    epochs=st.integers(1, 200),
    k_equal=st.integers(1, 5),
    eps=st.fractions(Fraction(0), Fraction(12), max_denominator=100),
    log10_delta=st.integers(-12, -1),
    step_exp=st.integers(2, 9),
)
def test_one_step_calibration_is_proved_one_step_below(epochs, k_equal, eps, log10_delta, step_exp) -> None:
    """M = k (one step per epoch after the k = M identity, or M = 1): the closed-form calibration
    proves the claim at sigma and the violation at sigma - step; both checked against 60-digit
    mpmath of the Gaussian with mu^2 = M E / sigma^2."""
    delta, step = Fraction(1, 10**-log10_delta), Fraction(1, 10**step_exp)
    res = calibrate_eps_delta(k_equal, epochs, eps, delta, step, k=k_equal)
    assert res.bounds == "closed form" and res.delta_lower_at_miss is not None and res.miss_reason is None
    assert res.sigma_miss == res.sigma - step and res.sigma_violated == res.sigma_miss
    assert res.delta_upper.upper <= delta < res.delta_lower_at_miss.lower
    mp.mp.dps = 60
    m_e = Fraction(k_equal * epochs)
    assert gauss_delta(m_e / res.sigma**2, eps) <= mp.mpf(delta.numerator) / delta.denominator
    assert gauss_delta(m_e / res.sigma_miss**2, eps) > mp.mpf(delta.numerator) / delta.denominator


def test_a_certificate_calibration_keeps_the_lattice(capsys: pytest.CaptureFixture[str]) -> None:
    """closed_form=False (what --out asks: a certificate records lattice grids) keeps the lattice;
    its sigma is within a few steps of the closed form's least sigma, never below it."""
    exact = calibrate_eps_delta(1, 2, 1, Fraction(1, 10**3), Fraction(1, 1000))
    lattice = calibrate_eps_delta(1, 2, 1, Fraction(1, 10**3), Fraction(1, 1000), closed_form=False)
    assert lattice.bounds == "lattice" and lattice.grid is not None and exact.grid is None
    assert exact.sigma <= lattice.sigma <= exact.sigma + Fraction(5, 1000)


# attack review 51 (the closed-form calibration and the lattice fallback)


def test_a_small_delta_certificate_calibration_does_not_coarsen_eta_past_a_grid() -> None:
    """M = 1, eps 1, delta 1e-12 on the lattice (as --out asks) coarsened eta to 2 and died on
    "eta=2 must be <= 1" (exit 2 for a valid input). Now a sound, looser claim."""
    res = calibrate_eps_delta(1, 1, 1, Fraction(1, 10**12), Fraction(1, 100), closed_form=False)
    exact = calibrate_eps_delta(1, 1, 1, Fraction(1, 10**12), Fraction(1, 100))
    assert res.bounds == "lattice" and res.grid is not None and res.grid.eta <= 1
    assert res.sigma >= exact.sigma and res.delta_upper.upper <= Fraction(1, 10**12)


@pytest.mark.parametrize("sigma", ["1", "3.5"])
def test_a_tie_with_the_target_keeps_a_two_step_interval(sigma: str) -> None:
    """delta equal to delta(sigma) to 450 digits at the first probe (sigma 1) or at a midpoint
    (3.5): the points beside it decide, so the least sigma is proved within (sigma - step,
    sigma + step] (it fell back to 91 s of lattice, or stopped with 1000 steps undecided)."""
    mp.mp.dps = 450
    s = Fraction(sigma)
    tie = gauss_delta(Fraction(1) / s**2, Fraction(1))
    delta = Fraction(mp.nstr(tie, 440, min_fixed=-1000, max_fixed=1000))
    step = Fraction(1, 1000)
    res = calibrate_eps_delta(1, 1, 1, delta, step)
    assert res.bounds == "closed form" and res.sigma_violated is not None
    assert res.sigma_violated == s - step and res.sigma == s + step and "equals the target" in res.miss_reason
    mp.mp.dps = 500
    d = mp.mpf(delta.numerator) / delta.denominator
    assert gauss_delta(1 / res.sigma**2, Fraction(1)) <= d < gauss_delta(1 / res.sigma_violated**2, Fraction(1))


def test_the_first_lattice_point_and_a_huge_sigma(capsys: pytest.CaptureFixture[str]) -> None:
    """sigma = step (nothing below it to violate) said "violation not proved (None)" and "(None,
    0.1]"; sigma / step above 2^200 gave up on the closed form and the lattice then failed."""
    argv = ["calibrate", "random-allocation", "--steps", "1", "--epochs", "1", "--epsilon", "0"]
    code, out, _ = run([*argv, "--delta", "0.9999999", "--step", "0.1"], capsys)
    assert code == 0 and "None" not in out and "(0, 0.1]" in out and "first point of the step lattice" in out
    code, out, err = run([*argv, "--delta", "1e-49", "--step", "1e-12", "--json"], capsys)
    assert code == 0, err
    rec = json.loads(out)
    assert rec["bounds"] == "closed form" and rec["delta_lower_at_miss"] is not None
    mp.mp.dps = 120
    for key, holds in (("sigma", True), ("sigma_miss", False)):
        value = gauss_delta(Fraction(1) / Fraction(rec[key]) ** 2, Fraction(0))
        assert (value <= mp.mpf("1e-49")) is holds


def test_a_k_below_m_calibration_says_whose_claim_it_is(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["calibrate", "random-allocation", "--steps", "3", "--epochs", "2", "--k", "2", "--epsilon", "1"]
    code, out, _ = run([*argv, "--delta", "1e-5", "--step", "0.01", "--json"], capsys)
    rec = json.loads(out)
    assert code == 0 and rec["bounds"].startswith("reduction: closed form claim of the reduced run")


def test_a_one_step_calibration_has_no_lattice_epsilon_limit(capsys: pytest.CaptureFixture[str]) -> None:
    """eps 31 on the closed-form path was refused by the lattice's eps limit (30); the lattice
    (--out) keeps its limit."""
    argv = ["calibrate", "random-allocation", "--steps", "1", "--epochs", "1", "--epsilon", "31", "--delta", "1e-5"]
    code, out, err = run([*argv, "--json"], capsys)
    assert code == 0, err
    rec = json.loads(out)
    mp.mp.dps = 80
    assert gauss_delta(1 / Fraction(rec["sigma"]) ** 2, Fraction(31)) <= mp.mpf("1e-5")
    assert gauss_delta(1 / Fraction(rec["sigma_miss"]) ** 2, Fraction(31)) > mp.mpf("1e-5")
    with pytest.raises(LimitExceeded, match="eps=31 exceeds"):
        calibrate_eps_delta(1, 1, 31, Fraction(1, 10**5), closed_form=False)
