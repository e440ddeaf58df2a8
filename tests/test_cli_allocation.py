"""certdp eps / delta random-allocation: the certified lattice route, driven in-process."""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath as mp
import pytest

from certdp.cli import main


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def run_json(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    code, out, err = run([*argv, "--json"], capsys)
    assert code == 0, err
    (line,) = out.strip().splitlines()
    return json.loads(line)


def gaussian_delta(mu: mp.mpf, eps: mp.mpf) -> mp.mpf:
    return mp.ncdf(-eps / mu + mu / 2) - mp.e**eps * mp.ncdf(-eps / mu - mu / 2)


def test_eps_one_step_encloses_the_gaussian_root(capsys: pytest.CaptureFixture[str]) -> None:
    # M = 1: E epochs are one Gaussian of mu = sqrt(E)/sigma (docs/math.md §9.8), answered by its closed form
    rec = run_json(
        ["eps", "random-allocation", "--steps", "1", "--epochs", "2", "--sigma", "1.5", "--delta", "1e-4"], capsys
    )
    lo, hi = Fraction(rec["lower"]), Fraction(rec["upper"])
    assert rec["quantity"] == "epsilon" and rec["via"] == "exact" and rec["prec_bits"] == 128
    assert rec["params"] == {"steps": "1", "epochs": "2", "sigma": "1.5", "direction": "both", "k": "1"}
    assert hi - lo <= Fraction(1, 1000) * hi and rec["epsilon"] == rec["upper"]
    with mp.workdps(50):
        mu = mp.sqrt(2) / mp.mpf("1.5")
        assert gaussian_delta(mu, mp.mpf(lo.numerator) / lo.denominator) > mp.mpf("1e-4")
        assert gaussian_delta(mu, mp.mpf(hi.numerator) / hi.denominator) <= mp.mpf("1e-4")
    man, exp = rec["upper_dyadic"]
    assert Fraction(int(man)) * Fraction(2) ** exp <= hi  # the decimal upper end is rounded up


def test_delta_directions_and_text(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["delta", "random-allocation", "--steps", "6", "--epochs", "2", "--sigma", "1.2", "--eps", "0.5"]
    both = run_json(base, capsys)
    add = run_json([*base, "--direction", "add"], capsys)
    remove = run_json([*base, "--direction", "remove"], capsys)
    assert both["quantity"] == "delta" and add["params"]["direction"] == "add"
    # both is the larger of the two: its enclosure meets the larger direction's
    top = max((add, remove), key=lambda r: Fraction(r["upper"]))
    assert Fraction(both["lower"]) <= Fraction(top["upper"]) and Fraction(top["lower"]) <= Fraction(both["upper"])
    for r in (both, add, remove):
        assert Fraction(r["upper"]) - Fraction(r["lower"]) <= Fraction(1, 100) * Fraction(r["upper"])
    code, out, _ = run(base, capsys)
    assert code == 0 and "delta of random-allocation(steps=6, epochs=2, sigma=1.2, direction=both, k=1)" in out
    assert "lower end: random-allocation lattice lower bound" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--k", "11"], "k=11 must be <= steps=10"),
        (["--k", "0"], "k=0 must be >= 1"),
        (["--direction", "up"], "direction=up must be one of remove, add, both"),
        (["--h", "0.001"], "h=0.001 is not used by certdp eps random-allocation; drop --h"),
        (["--max-prec", "256"], "max-prec=256 is not used by certdp eps random-allocation"),
        (["--via", "rdp", "--k", "1"], "k=1 is not used by certdp eps random-allocation; drop --k"),
        (["--rel-width", "2"], "rel-width=2 must be < 1"),
    ],
)
def test_bad_flags_exit_2_in_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        ["eps", "random-allocation", "--steps", "10", "--sigma", "1", "--delta", "1e-5", *argv], capsys
    )
    assert code == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1


def test_bad_delta_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["eps", "random-allocation", "--steps", "10", "--sigma", "1", "--delta", "0"], capsys)
    assert code == 2 and "delta=0 must be > 0" in err


def test_via_rdp_keeps_the_one_sided_conversion(capsys: pytest.CaptureFixture[str]) -> None:
    rec = run_json(
        ["eps", "random-allocation", "--steps", "10", "--sigma", "1", "--delta", "1e-5", "--via", "rdp"], capsys
    )
    assert rec["via"] == "rdp" and Fraction(rec["lower"]) == 0
    lattice = run_json(["eps", "random-allocation", "--steps", "10", "--sigma", "1", "--delta", "1e-5"], capsys)
    # the RDP conversion is an upper bound: it cannot lie below the proved lower end
    assert Fraction(lattice["lower"]) <= Fraction(rec["upper"])


@pytest.mark.slow
def test_unreachable_width_exits_3_naming_the_width(capsys: pytest.CaptureFixture[str]) -> None:
    # M = 2 at one epoch is cheap, so the refinements run into the work limits quickly (M = 1 is
    # answered by the Gaussian closed form, which reaches 1e-15)
    code, out, err = run(
        ["delta", "random-allocation", "--steps", "2", "--sigma", "2", "--eps", "0.3", "--rel-width", "1e-15"], capsys
    )
    assert code == 3 and out == ""
    assert "rel_width=1e-15 not reached for delta" in err and "accepts them" in err


def test_calibrate_one_step_brackets_the_gaussian_sigma(capsys: pytest.CaptureFixture[str]) -> None:
    # M = 1, E = 2: one Gaussian of mu = sqrt(2)/sigma; the exact sigma* solves delta(eps) = delta
    rec = run_json(
        ["calibrate", "random-allocation", "--steps", "1", "--epochs", "2", "--epsilon", "1", "--delta", "1e-3"],
        capsys,
    )
    assert rec["target"] == "eps-delta" and rec["step"] == "0.0001" and rec["direction"] == "both"
    sigma, miss = Fraction(rec["sigma"]), Fraction(rec["sigma_miss"])
    assert sigma - miss == Fraction(1, 10**4) and Fraction(rec["delta_upper"]) <= Fraction(1, 1000)
    assert rec["delta_lower_at_miss"] is not None and Fraction(rec["delta_lower_at_miss"]) > Fraction(1, 1000)
    with mp.workdps(50):
        lo, hi = mp.mpf(1), mp.mpf(20)  # delta(eps) decreases in sigma: bisect for sigma*
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if gaussian_delta(mp.sqrt(2) / mid, mp.mpf(1)) > mp.mpf("1e-3") else (lo, mid)
        star = (lo + hi) / 2
        assert mp.mpf(miss.numerator) / miss.denominator < star <= mp.mpf(sigma.numerator) / sigma.denominator


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--epsilon", "1"], "delta is required to calibrate random-allocation to (epsilon, delta)"),
        (["--epsilon", "1", "--delta", "1e-5", "--tv", "0.1"], "delta=1e-5 is not used by certdp calibrate"),
        (["--epsilon", "1", "--delta", "1e-5", "--out", "/nonexistent-dir/x.json"], "does not exist"),
        ([], "tv is required for random-allocation (--tv LAMBDA), or an (epsilon, delta) target"),
        (["--epsilon", "1", "--delta", "1e-5", "--k", "11"], "k=11 must be <= steps=10"),
        (["--tv", "0.1", "--k", "1"], "k=1 is not used by certdp calibrate random-allocation"),
    ],
)
def test_calibrate_bad_flags_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["calibrate", "random-allocation", "--steps", "10", *argv], capsys)
    assert code == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1
