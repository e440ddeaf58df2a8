"""The PLD calibration on targets the attack review of issue 39 found refused with false reasons:
a small epsilon (the lattice spacing now follows the target), a walk down to sigmas whose lattice
cannot be formed (not proved, instead of the end of the calibration), and a first probe the
budget cannot afford (the search starts higher)."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

from certdp.calibrate.pld import _affordable_start, _gallop, _spacing_for, calibrate_pld, default_h
from certdp.cert.limits import MIN_PLD_H
from certdp.enclose import workprec
from certdp.enclose.work import metered
from certdp.errors import BudgetExhausted, LimitExceeded, PrecisionExhausted

pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")


def optimistic_eps(sigma: float, steps: int, q: float, delta: float) -> float:
    """dp_accounting's optimistic PLD (privacy buckets rounding down): at or below the true eps."""
    one = pld.from_gaussian_mechanism(
        sigma, sampling_prob=q, value_discretization_interval=1e-6, pessimistic_estimate=False, use_connect_dots=False
    )
    return one.self_compose(steps).get_epsilon_for_delta(delta)


def test_small_epsilon_is_calibrated_not_refused() -> None:
    # was: "epsilon=0.001 is not met even at sigma=10000" (a 2^-9 lattice cannot resolve it)
    with workprec(128):
        res = calibrate_pld("0.01", 1000, "0.001", "1e-10")
    assert all(side.upper is not None and side.upper <= Fraction(1, 1000) for side in res.claim)
    # an independent check of the claim: dp_accounting's optimistic PLD (at or below the true eps)
    # must not exceed the target at the claimed sigma
    assert optimistic_eps(float(res.sigma), 1000, 0.01, 1e-10) <= 0.001
    assert 100 <= res.sigma <= 10_000
    assert res.refutation is not None or res.miss_reason  # the step below: proved, or why not


@pytest.mark.slow
def test_walk_down_past_formable_lattices_is_not_the_end() -> None:
    # was: "needs more than 262144 lattice cells per step" from the gallop's probe at sigma = 0.001
    with workprec(128):
        res = calibrate_pld("0.01", 1000, "0.01", "1e-5")
    assert all(side.upper is not None and side.upper <= Fraction(1, 100) for side in res.claim)
    assert optimistic_eps(float(res.sigma), 1000, 0.01, 1e-5) <= 0.01
    # RDP calibrates 88.08; RDP's eps is above the true one, so the least sigma is below that
    assert 10 <= res.sigma <= Fraction("88.09")


def test_gallop_counts_an_unformable_lattice_as_not_proved() -> None:
    def meets(k: int) -> bool:
        if k < 40:
            raise LimitExceeded("lattice too large")
        return k >= 50

    assert _gallop(meets, 100, 1, 1000) == 50
    assert _gallop(meets, 45, 1, 1000) == 50


def test_spacing_follows_the_target_and_refuses_below_the_finest() -> None:
    base = default_h(Fraction(1, 10**5))
    assert _spacing_for(Fraction(3), base) == base  # the usual targets keep the step's spacing
    assert _spacing_for(Fraction(1, 100), base) <= Fraction(1, 100) / 1024
    assert _spacing_for(Fraction(2, 10**4), base) == MIN_PLD_H  # clamped to the finest recordable
    with pytest.raises(PrecisionExhausted, match="cannot resolve"):
        _spacing_for(Fraction(1, 10**6), base)


def test_start_moves_up_when_the_first_probe_does_not_fit_the_budget() -> None:
    q, n, d, h = Fraction(1, 2), 100_000, Fraction(1, 10**5), Fraction(1, 2**9)
    assert _affordable_start(q, n, d, ["remove", "add"], h) == 1  # no budget active: sigma = 1
    with metered(limit=2_000_000):
        start = _affordable_start(q, n, d, ["remove", "add"], h)
    assert start > 1


@pytest.mark.slow  # about 20 s
def test_tiny_target_at_the_finest_recordable_lattice_is_calibrated(capsys: pytest.CaptureFixture[str]) -> None:
    # second attack review: "not proved even at sigma=10000 ... a finer --h" (exit 2); the CLI
    # passed the step's spacing and bypassed the one that follows the target
    from certdp.cli import main

    argv = ["calibrate", "subsampled-gaussian", "--q", "0.01", "--steps", "1000", "--epsilon", "2e-4"]
    assert main([*argv, "--delta", "1e-10", "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    sigma = Fraction(rec["sigma"])
    assert Fraction(rec["epsilon_upper"]) <= Fraction(2, 10**4)
    assert optimistic_eps(float(sigma), 1000, 0.01, 1e-10) <= 2e-4


def test_a_budget_refusal_inside_the_search_is_exit_3_not_bad_input(monkeypatch: pytest.MonkeyPatch) -> None:
    # second attack review: calibrate exited 2 when a probe's estimate passed the time left
    import certdp.calibrate.pld as cal

    calls = {"n": 0}

    def refuse_after_three(*args: object, **kwargs: object) -> None:
        calls["n"] += 1
        if calls["n"] > 3:
            raise LimitExceeded("budget: more than the 2 s left")

    monkeypatch.setattr(cal, "afford_round", refuse_after_three)
    with workprec(128), pytest.raises(BudgetExhausted, match="stopped before probing"):
        calibrate_pld("0.01", 500, "3", "1e-5")


def test_a_calibration_budget_refusal_names_flags_calibrate_has() -> None:
    """Attack review (session 3): calibrate's budget refusal advised "a larger --rel-width or a
    coarser --h"; calibrate has no --rel-width and its refutation refines below any --h. It names
    --step (and --via rdp) instead."""
    with workprec(128), metered(limit=300_000), pytest.raises((BudgetExhausted, LimitExceeded)) as info:
        calibrate_pld("0.01", 10_000, "1", "1e-5")
    text = str(info.value)
    assert "--rel-width" not in text and "--step" in text and "--via rdp" in text, text


def test_a_suggested_width_is_never_below_the_width_reached() -> None:
    """Attack review (session 3): the refinement's refusal suggested the width reached rounded to
    two digits to the NEAREST (1.23e-7 -> 1.2e-7), and that suggestion failed again."""
    from certdp.notions.pld import _two_digits_up

    for x in (1.2423e-7, 3.87e-4 * 1.01, 0.5, 9.99e-4, 1.2e-7, 2.0000001e-3):
        up = _two_digits_up(x)
        assert up >= x and len(f"{up:.15g}".replace("0.", "").lstrip("0").split("e")[0].replace(".", "")) <= 2
