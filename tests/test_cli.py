"""The command line, checked from outside: JSON fields, exit codes, one-line errors."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
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
    lines = out.strip().splitlines()
    assert len(lines) == 1
    return json.loads(lines[0])


def test_rho_laplace_done_criterion(capsys: pytest.CaptureFixture[str]) -> None:
    rec = run_json(["rho", "laplace", "--shift", "0.7"], capsys)
    lo, hi = Fraction(rec["lower"]), Fraction(rec["upper"])
    assert rec["quantity"] == "rho" and hi - lo <= Fraction(1, 10**15)
    assert Fraction("0.19658530379140951") <= lo <= hi <= Fraction("0.19658530379140952")
    assert rec["params"] == {"scale": "1", "shift": "0.7"} and rec["prec_bits"] >= 64
    assert len(rec["lower"].replace("0.", "", 1).lstrip("0")) >= 17
    man, exp = rec["lower_dyadic"]
    assert Fraction(int(man)) * Fraction(2) ** exp >= lo  # decimal rendering rounds the dyadic down


def test_rdp_subsampled_done_criterion(capsys: pytest.CaptureFixture[str]) -> None:
    rec = run_json(["rdp", "subsampled-gaussian", "--q", "0.01", "--sigma", "0.8", "--order", "3"], capsys)
    with mp.workdps(60):
        z = mp.mpf("0.8")
        ref = (
            mp.log(
                1
                + 3 * mp.mpf("0.01") ** 2 * (mp.exp(1 / z**2) - 1)
                + mp.mpf("0.01") ** 3 * (mp.exp(3 / z**2) - 3 * mp.exp(1 / z**2) + 2)
            )
            / 2
        )
        assert mp.nstr(mp.exp(2 * ref), 20).startswith("1.00122748914178516")
    assert Fraction(rec["lower"]) <= Fraction(mp.nstr(ref, 50)) <= Fraction(rec["upper"])
    assert rec["order"] == "3" and rec["t"] == "2"


def test_eps_main_job(capsys: pytest.CaptureFixture[str]) -> None:
    # a composed subsampled Gaussian: the two-sided lattice (PLD) bounds by default
    argv = ["eps", "subsampled-gaussian", "--q", "0.01", "--sigma", "1.0", "--steps", "500", "--delta", "1e-5"]
    rec = run_json(argv, capsys)
    assert rec["quantity"] == "epsilon" and rec["epsilon"] == rec["upper"] and rec["via"] == "pld"
    assert Fraction(rec["lower"]) <= Fraction(rec["upper"]) and {"remove", "add"} <= set(rec["grid"])
    assert rec["params"]["direction"] == "both" and rec["delta"] == "1e-5" and rec["steps"] == 500
    # the RDP accountant on request
    rec = run_json([*argv, "--via", "rdp"], capsys)
    bound = rec["rdp_bound"]
    assert bound["grid"].startswith("integer:") and len(bound["orders"]) == 75 and rec["steps"] == 500
    # the conversion bounds epsilon from above only: the lower end is the lattice's proved one
    assert Fraction(bound["upper"]) <= Fraction(rec["upper"]) <= Fraction(bound["upper"]) * (1 + Fraction(1, 10**15))
    assert Fraction(rec["lower"]) < Fraction(bound["lower"])
    assert rec["lower_from"].startswith("pld lattice lower bound")
    code, out, _ = run([*argv, "--via", "rdp"], capsys)
    assert code == 0 and "sound epsilon" in out and "width" in out


def test_human_output_shows_ball_and_width(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["gap", "laplace", "--shift", "0.5", "--t", "1"], capsys)
    assert code == 0 and "enclosure [" in out and "width" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["rho", "gaussian", "--sigma", "0", "--shift", "1"], "sigma=0 must be > 0"),
        (["rho", "gaussian", "--sigma", "-1"], "sigma=-1 must be > 0"),
        (["rho", "gaussian", "--sigma", "nan"], "sigma=nan must be a finite number"),
        (["rho", "gaussian", "--sigma", "abc"], "sigma=abc must be a number (ASCII digits, e.g. 0.01, 1e-5 or 1/3)"),
        (["rho", "gaussian", "--sigma", "1", "--shift", "0"], "shift=0 must be != 0"),
        (["rho", "laplace", "--scale", "-2"], "scale=-2 must be > 0"),
        (["rho", "discrete-laplace", "--a", "0"], "a=0 must be > 0"),
        (["rho", "discrete-laplace", "--a", "1", "--shift", "1.5"], "shift=1.5 must be an integer"),
        (["rho", "discrete-gaussian", "--sigma", "1", "--shift", "0"], "shift=0 must be >= 1"),
        (["rho", "subsampled-gaussian", "--q", "0", "--sigma", "1"], "q=0 must be > 0"),
        (["rho", "subsampled-gaussian", "--q", "1.5", "--sigma", "1"], "q=1.5 must be <= 1"),
        (
            ["rho", "subsampled-gaussian", "--q", "0.1", "--sigma", "1", "--direction", "up"],
            "direction=up must be one of remove, add, both",
        ),
        (["rho", "gaussian", "--sigma", "1", "--q", "0.1"], "q=0.1 is not a parameter of gaussian"),
        (["rho", "gaussian"], "sigma is required for gaussian (--sigma)"),
        (["rho", "gaussian", "--sigma", "1", "--steps", "0"], "steps=0 must be >= 1"),
        (["rho", "gaussian", "--sigma", "1", "--steps", "2.5"], "steps=2.5 must be an integer"),
        (["rdp", "gaussian", "--sigma", "1", "--order", "1"], "order=1 must be > 1"),
        (["cgf", "gaussian", "--sigma", "1", "--t", "-1"], "t=-1 must be > 0"),
        (["cgf", "gaussian", "--sigma", "1"], "exactly one of --order and --t is required"),
        (["eps", "gaussian", "--sigma", "1", "--delta", "0"], "delta=0 must be > 0"),
        (["eps", "gaussian", "--sigma", "1", "--delta", "1"], "delta=1 must be < 1"),
        (["delta", "gaussian", "--sigma", "1", "--eps", "-1"], "eps=-1 must be >= 0"),
        (["eps", "gaussian", "--sigma", "1", "--delta", "1e-5", "--orders", "1,2"], "order=1 must be > 1"),
        (
            ["eps", "gaussian", "--sigma", "1", "--delta", "1e-5", "--orders", ","],
            "orders=, must list at least one order",
        ),
        (["rho", "gaussian", "--sigma", "1", "--prec", "8"], "prec=8 must be >= 16"),
        (["rho", "gaussian", "--sigma", "1", "--prec", "128", "--max-prec", "64"], "max-prec=64 must be >= prec=128"),
        (
            ["rho", "uniform"],
            "mechanism=uniform must be one of gaussian, laplace, gaussian-mixture, student-t, "
            "generalized-gaussian, discrete-laplace, discrete-gaussian, subsampled-gaussian, random-allocation",
        ),
        (["rho", "student-t", "--nu", "0.5"], "nu=0.5 must be >= 1"),
        (["rho", "generalized-gaussian", "--beta", "nan"], "beta=nan must be a finite number"),
        (
            ["rdp", "random-allocation", "--steps", "10", "--sigma", "1", "--order", "10.5"],
            "random-allocation is supported at integer orders only: order=10.5",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(argv, capsys)
    assert code == 2 and out == ""
    assert err == f"certdp: error: {message}\n"


def test_usage_errors_exit_2_on_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (
        ["rho"],
        ["frobnicate", "gaussian"],
        ["eps", "gaussian", "--sigma", "1"],
        ["eps", "gaussian", "--sigma", "1", "--delta", "1e-5", "--via", "gdp"],
    ):
        assert main(argv) == 2  # argparse's exit is turned into a return code
        err = capsys.readouterr().err
        assert err.startswith("certdp: error:") and err.count("\n") == 1


def test_precision_exhausted_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["rho", "laplace", "--shift", "0.7", "--prec", "16", "--max-prec", "16"], capsys)
    assert code == 3 and "above the target" in err and err.count("\n") == 1


def test_every_subcommand_has_help_with_example(capsys: pytest.CaptureFixture[str]) -> None:
    for cmd in ("cgf", "rdp", "kl", "rho", "gap", "eps", "delta"):
        assert main([cmd, "--help"]) == 0
        out = capsys.readouterr().out
        assert "example:" in out and f"certdp {cmd} " in out


@pytest.mark.skipif(shutil.which("certdp") is None, reason="console script not installed")
def test_console_script_version_and_exit_code() -> None:
    done = subprocess.run(["certdp", "--version"], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout.startswith("certdp ")
    done = subprocess.run(
        ["certdp", "rho", "gaussian", "--sigma", "0", "--shift", "1"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2 and done.stderr.strip() == "certdp: error: sigma=0 must be > 0"


def test_module_entry_point() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "certdp", "kl", "gaussian", "--sigma", "2", "--json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0
    rec = json.loads(done.stdout)
    assert Fraction(rec["lower"]) <= Fraction(1, 8) <= Fraction(rec["upper"])


def test_tv_closed_form_json(capsys: pytest.CaptureFixture[str]) -> None:
    rec = run_json(["tv", "random-allocation", "--steps", "100", "--epochs", "10", "--sigma", "1.737"], capsys)
    assert rec["quantity"] == "tv_upper" and rec["certified"] is True
    assert Fraction(rec["lower"]) <= Fraction(rec["upper"]) <= Fraction(1, 10)
    assert Fraction(rec["accuracy_upper"]) <= Fraction("0.55") and rec["epochs"] == 10


def test_tv_monte_carlo_json(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "tv",
        "random-allocation",
        "--steps",
        "5",
        "--epochs",
        "2",
        "--sigma",
        "1",
        "--method",
        "monte-carlo",
        "--samples",
        "20000",
    ]
    rec = run_json(argv, capsys)
    assert rec["certified"] is False and rec["quantity"] == "tv_estimate" and "lower" not in rec
    band = rec["estimate_interval"]
    assert float(band["lower"]) < float(rec["value"]) < float(band["upper"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["tv", "random-allocation", "--epochs", "2", "--sigma", "1"],
            "steps is required for random-allocation (--steps M)",
        ),
        (["tv", "random-allocation", "--steps", "0", "--sigma", "1"], "steps=0 must be >= 1"),
        (["tv", "random-allocation", "--steps", "5", "--epochs", "0", "--sigma", "1"], "epochs=0 must be >= 1"),
        (["tv", "random-allocation", "--steps", "5", "--sigma", "-1"], "sigma=-1 must be > 0"),
        (["tv", "gaussian", "--sigma", "1"], "tv is implemented for random-allocation only, not mechanism=gaussian"),
        (["rho", "gaussian", "--sigma", "1", "--epochs", "3"], "epochs=3 is not a parameter of gaussian"),
        (
            ["tv", "random-allocation", "--steps", "5", "--sigma", "1", "--method", "monte-carlo", "--samples", "1"],
            "samples=1 must be >= 2",
        ),
    ],
)
def test_tv_bad_input(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(argv, capsys)
    assert code == 2 and out == "" and err == f"certdp: error: {message}\n"
