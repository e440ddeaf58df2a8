"""Regression tests of attack review 48 (2026-12-06, long random-allocation runs): refusals say
what their epsilon range means and name a flag that works for the command that refused."""

from __future__ import annotations

import pytest

from certdp.cli import main


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_an_eps_refusal_says_epsilon_may_lie_above_its_range(capsys: pytest.CaptureFixture[str]) -> None:
    # M = 50, E = 100, sigma = 0.5 (about 20 s): the search range shrank to 9.49 and the message
    # read as if the range were fixed (the review's case, M = 1, E = 100, sigma = 0.3 at eps 697,
    # is now answered by the Gaussian closed form)
    argv = ["eps", "random-allocation", "--steps", "50", "--epochs", "100", "--sigma", "0.5", "--delta", "1e-5"]
    code, _, err = run(argv, capsys)
    assert code == 2 and err.count("\n") == 1
    assert "epsilon may lie above the range" in err and "--via rdp gives a sound upper bound" in err
    code, _, _ = run([*argv, "--via", "rdp", "--json"], capsys)
    assert code == 0  # the flag it names answers


def test_a_calibration_refusal_names_no_via(capsys: pytest.CaptureFixture[str]) -> None:
    # calibrate random-allocation takes no --via: its refusals must not suggest one
    # (M = 1 is now calibrated by the Gaussian closed form and answers: M = 2 keeps the refusal)
    argv = ["calibrate", "random-allocation", "--steps", "2", "--epochs", "100", "--epsilon", "20", "--delta", "1e-5"]
    code, _, err = run(argv, capsys)
    assert code == 2 and err.count("\n") == 1 and "--via" not in err and "above the limit" in err
    code, _, err = run([*argv, "--via", "rdp"], capsys)
    assert code == 2 and "drop --via" in err


def test_one_step_is_answered_by_the_gaussian_closed_form_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    # M = 1 is the Gaussian of mu = sqrt(E)/sigma: E = 100, sigma = 0.3 was refused (eps = 696.78)
    import json

    import mpmath as mp

    argv = ["eps", "random-allocation", "--steps", "1", "--epochs", "100", "--sigma", "0.3", "--delta", "1e-5"]
    code, out, _ = run([*argv, "--json"], capsys)
    rec = json.loads(out)
    assert code == 0 and rec["via"] == "exact" and "closed form" in rec["lower_from"] + rec["upper_from"]
    with mp.workdps(60):
        mu = mp.sqrt(100) / mp.mpf("0.3")

        def delta(e: mp.mpf) -> mp.mpf:
            return mp.ncdf(-e / mu + mu / 2) - mp.e**e * mp.ncdf(-e / mu - mu / 2)

        root = mp.findroot(lambda e: delta(e) - mp.mpf("1e-5"), mp.mpf(696.7))
        assert mp.mpf(rec["lower"]) <= root <= mp.mpf(rec["upper"])
    # k > 1 whose reduced run has one step: the upper end's label names the closed form, and via
    # says "reduction" (it said "pld", though no lattice was built; "exact" would hide the width)
    code, out, _ = run(
        [
            "eps",
            "random-allocation",
            "--steps",
            "3",
            "--epochs",
            "3",
            "--sigma",
            "1",
            "--k",
            "2",
            "--delta",
            "1e-5",
            "--json",
        ],
        capsys,
    )
    rec = json.loads(out)
    assert code == 0 and rec["via"] == "reduction" and rec["upper_from"].startswith("closed form (a Gaussian)")
    assert "1 step and 6 epochs" in rec["upper_from"] and rec["lower_from"].startswith("laws of an additive")
    assert "floor(M/k)=1 step and" in rec["via_note"]


def test_one_step_edges_of_the_closed_form(capsys: pytest.CaptureFixture[str]) -> None:
    """Attack review 49: a sigma whose e^(1/sigma^2) overflows a float was a traceback; a delta query
    at eps above 30 was refused though the closed form answers it; --rel-width was not honoured; a
    delta's lower end could be negative."""
    import json
    from fractions import Fraction

    base = ["random-allocation", "--steps", "1", "--epochs", "1"]
    code, _, err = run(["eps", *base, "--sigma", "9.99999e-5", "--delta", "1e-5"], capsys)
    assert code == 2 and err.count("\n") == 1 and "overflows a float" in err and "--via rdp" in err
    code, out, _ = run(
        [
            "delta",
            "random-allocation",
            "--steps",
            "1",
            "--epochs",
            "100",
            "--sigma",
            "0.3",
            "--eps",
            "696.7777915417",
            "--json",
        ],
        capsys,
    )
    rec = json.loads(out)
    # eps a little below the root 696.77779154172747...: delta a little above 1e-5
    d = Fraction(1, 10**5)
    assert code == 0 and d <= Fraction(rec["lower"]) <= Fraction(rec["upper"]) <= d * (1 + Fraction(1, 10**9))
    code, _, err = run(["delta", *base, "--sigma", "1e4", "--eps", "30"], capsys)
    assert code == 3 and "rel_width=0.01 not reached for delta" in err
    code, out, _ = run(["delta", *base, "--sigma", "1e100", "--eps", "0", "--json"], capsys)
    rec = json.loads(out)
    assert code == 0 and Fraction(rec["lower"]) >= 0 and Fraction(rec["upper"]) <= 2 * Fraction(rec["lower"])
