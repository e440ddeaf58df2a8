"""Issue 33: every printed [lower, upper] bounds the quantity it names, and route switches are
announced. The eps/delta routes against independent references are in tests/test_honest_ends.py;
this file covers convert, tv, calibrate and the human output."""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath as mp
import pytest

from tests import refs
from tests.test_cli import run, run_json


@pytest.mark.parametrize("rho", ["0.005", "0.5", "3"])
def test_convert_zcdp_to_eps_encloses_the_gaussian_with_that_rho(rho: str, capsys) -> None:
    # The quantity: the least eps that every rho-zCDP mechanism meets. The Gaussian with
    # mu^2 = 2 rho is one, so its exact eps (Balle and Wang; mpmath here) must be inside, and the
    # lower end is no longer the conversion ball's (which lies above the Gaussian's eps).
    rec = run_json(["convert", "--from", "zcdp", "--to", "eps-delta", "--value", rho, "--delta", "1e-5"], capsys)
    ref = refs.gaussian_eps(2 * Fraction(rho), "1e-5")
    assert refs.contains(_enc(rec), ref, slack=1e-15)
    assert Fraction(rec["lower"]) < Fraction(rec["zcdp_bound"]["lower"])  # the conversion is loose
    assert Fraction(rec["upper"]) >= Fraction(rec["zcdp_bound"]["upper"])
    assert rec["lower_from"].startswith("exact value of the Gaussian")


def test_convert_zcdp_to_delta_and_tv_enclose_the_gaussian(capsys) -> None:
    rec = run_json(["convert", "--from", "zcdp", "--to", "eps-delta", "--value", "0.5", "--eps", "1"], capsys)
    with mp.workdps(60):
        ref = refs.gaussian_delta(1, 1)  # mu^2 = 2 rho = 1
        tv = mp.erf(mp.mpf(1) / (2 * mp.sqrt(2)))
    assert refs.contains(_enc(rec), ref, slack=1e-15) and Fraction(rec["lower"]) < Fraction(rec["zcdp_bound"]["lower"])
    rec = run_json(["convert", "--from", "zcdp", "--to", "tv", "--value", "0.5"], capsys)
    assert refs.contains(_enc(rec), tv, slack=1e-15)
    bound = Fraction(rec["tv_bound"]["upper"])
    assert bound <= Fraction(rec["upper"]) < bound * (1 + Fraction(1, 10**15))


def test_tv_estimates_print_no_proved_ends(capsys) -> None:
    for method in ("exact", "monte-carlo"):
        argv = ["tv", "random-allocation", "--steps", "5", "--epochs", "2", "--sigma", "1", "--method", method]
        if method == "monte-carlo":
            argv += ["--samples", "2000"]
        rec = run_json(argv, capsys)
        assert rec["quantity"] == "tv_estimate" and rec["certified"] is False
        assert "lower" not in rec and "upper" not in rec and "estimate_interval" in rec
    rec = run_json(["tv", "random-allocation", "--steps", "5", "--epochs", "2", "--sigma", "1"], capsys)
    assert rec["quantity"] == "tv_upper" and "not an enclosure of TV" in rec["means"]


def test_epochs_human_output_shows_the_steps(capsys) -> None:
    argv = ["eps", "subsampled-gaussian", "--q", "0.05", "--sigma", "2", "--epochs", "2", "--delta", "1e-5"]
    code, out, err = run(argv, capsys)
    assert code == 0, err
    assert "composed 40 times (epochs=2, steps = ceil(epochs/q))" in out.splitlines()[0]


def test_calibrate_beyond_the_pld_step_limit_says_rdp_answered(capsys) -> None:
    argv = ["calibrate", "subsampled-gaussian", "--q", "0.01", "--steps", "100001", "--epsilon", "8"]
    argv += ["--delta", "1e-5", "--step", "1e-3"]
    code, out, err = run([*argv, "--json"], capsys)
    assert code == 0, err
    rec = json.loads(out)
    assert rec["via"] == "rdp" and rec["warnings"][0].startswith("RDP answered, not PLD: steps=100001")
    assert "certdp: warning: RDP answered, not PLD" in err
    # the RDP refutation is about the conversion, and is named so (not an epsilon lower end)
    assert "epsilon_lower_at_miss" not in rec and Fraction(rec["rdp_bound_lower_at_miss"]) > 8
    # asked for by name: no warning
    code, out, err = run([*argv, "--via", "rdp", "--json"], capsys)
    assert code == 0 and json.loads(out)["warnings"] == [] and "warning" not in err


def _enc(rec: dict):
    class E:
        lower = Fraction(rec["lower"])
        upper = Fraction(rec["upper"])

    return E
