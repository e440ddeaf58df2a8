"""Every input gets an answer: flags that would be ignored, missing counts, number syntax, work
limits and output paths. Each test is a regression test of a defect found by fuzzing the CLI."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import pytest

from certdp.cli import main
from certdp.notions import conversion_epsilon as epsilon
from certdp.pairs import SubsampledGaussian, compose
from tests.counters import ticking_budget


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def usage_error(argv: list[str], capsys: pytest.CaptureFixture[str], names: str) -> str:
    """Exit 2 with one line on stderr that names ``names``; returns the line."""
    code, out, err = run(argv, capsys)
    assert code == 2, (code, err)
    assert out == "" and err.count("\n") == 1 and err.startswith("certdp: error: "), err
    assert names in err, err
    return err


CALIB_SG = ["calibrate", "subsampled-gaussian", "--q", "0.05", "--epsilon", "2", "--delta", "1e-5"]


def test_epochs_of_subsampled_gaussian_mean_ceil_epochs_over_q(capsys: pytest.CaptureFixture[str]) -> None:
    # The defect: --epochs was dropped and one step calibrated (sigma far too small).
    code, out, err = run([*CALIB_SG, "--epochs", "2", "--step", "1e-3", "--via", "rdp", "--json"], capsys)
    assert code == 0, err
    rec = json.loads(out)
    assert rec["steps"] == 40 and rec["epochs"] == "2" and rec["steps_rule"] == "ceil(epochs/q)"
    sigma = Fraction(rec["sigma"])
    one_step = epsilon(SubsampledGaussian("0.05", sigma), "1e-5").enclosure
    composed = epsilon(compose(SubsampledGaussian("0.05", sigma), 40), "1e-5").enclosure
    assert composed.upper <= 2 < Fraction(rec["rdp_bound_lower_at_miss"])
    assert one_step.upper < Fraction(3, 2)  # far below the target: a one-step calibration would stop much lower
    rec3 = json.loads(run(["eps", "subsampled-gaussian", "--q", "0.3", "--sigma", "2", "--epochs", "1", "--delta",
                            "1e-5", "--json"], capsys)[1])  # fmt: skip
    assert rec3["steps"] == math.ceil(Fraction(1) / Fraction("0.3")) == 4


@pytest.mark.parametrize(
    ("extra", "name"),
    [
        ([], "steps"),  # no count: never a silent single step
        (["--steps", "10", "--epochs", "1"], "epochs"),
        (["--steps", ""], "steps"),
        (["--epochs", ""], "epochs"),
        (["--steps", "10", "--out", ""], "out"),
        (["--steps", "10", "--tv", "0.1"], "tv"),
        (["--steps", "10", "--sigma", "1"], "sigma"),
        (["--steps", "10", "--shift", "1"], "shift"),
        (["--steps", "2.5"], "steps"),
    ],
)
def test_calibrate_subsampled_refuses(extra: list[str], name: str, capsys: pytest.CaptureFixture[str]) -> None:
    usage_error([*CALIB_SG, *extra], capsys, name)


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        (["eps", "gaussian", "--sigma", "1", "--delta", "1e-5", "--epochs", "3"], "epochs"),
        (["rdp", "gaussian", "--sigma", "1", "--order", "2", "--delta", "0.1"], "delta"),
        (["convert", "--from", "zcdp", "--to", "gdp", "--value", "1", "--delta", "0.1"], "delta"),
        (["convert", "--from", "gdp", "--to", "tv", "--value", "1", "--eps", "1"], "eps"),
        (["tv", "random-allocation", "--steps", "10", "--sigma", "1", "--seed", "3"], "seed"),
        (["tv", "random-allocation", "--steps", "10", "--sigma", "1", "--samples", "10"], "samples"),
        (["tv", "random-allocation", "--steps", "10", "--sigma", "1", "--method", "exact", "--width", "1e-3"], "width"),
        (["tv", "random-allocation", "--steps", "10", "--sigma", "1", "--method", "exact", "--prec", "80"], "prec"),
        (["calibrate", "random-allocation", "--steps", "10", "--tv", "0.1", "--delta", "1e-5"], "delta"),
        (["calibrate", "random-allocation", "--steps", "10", "--tv", "0.1", "--epsilon", "1"], "epsilon"),
        (["kl", "laplace", "--direction", "add"], "direction"),
        (["kl", "subsampled-gaussian", "--q", "0.1", "--sigma", "1", "--shift", "2"], "shift"),
    ],
)
def test_a_flag_the_command_ignores_is_an_error(argv: list[str], name: str, capsys: pytest.CaptureFixture[str]) -> None:
    usage_error(argv, capsys, name)


@pytest.mark.parametrize(
    "text",
    ["1_0", "١", "１", "0x10", "1e999999999", "-1e999999999", "1e-999999999", "9" * 5000, "", " ", "Infinity", "1/0"],
)
def test_number_syntax(text: str, capsys: pytest.CaptureFixture[str]) -> None:
    err = usage_error(["kl", "gaussian", f"--sigma={text}"], capsys, "sigma=")
    assert len(err) < 250  # the value is echoed in at most ~80 characters


def test_exact_decimal_and_ratio_inputs_are_read_exactly(capsys: pytest.CaptureFixture[str]) -> None:
    rec = json.loads(run(["kl", "gaussian", "--sigma", "1/3", "--shift", ".5", "--json"], capsys)[1])
    assert rec["params"] == {"sigma": "1/3", "shift": "0.5"}
    # KL = shift^2 / (2 sigma^2) = 9/8 exactly
    assert Fraction(rec["lower"]) <= Fraction(9, 8) <= Fraction(rec["upper"])


def test_integer_counts_written_as_decimals(capsys: pytest.CaptureFixture[str]) -> None:
    rec = json.loads(run(["rho", "gaussian", "--sigma", "2", "--steps", "2.0", "--json"], capsys)[1])
    assert rec["steps"] == 2 and Fraction(rec["lower"]) <= Fraction(1, 4) <= Fraction(rec["upper"])
    rec = json.loads(run(["rho", "gaussian", "--sigma", "2", "--steps", "1e12", "--json"], capsys)[1])
    assert rec["steps"] == 10**12 and Fraction(rec["lower"]) <= Fraction(10**12, 8) <= Fraction(rec["upper"])
    usage_error(["rho", "gaussian", "--sigma", "2", "--steps", "1e13"], capsys, "steps")


def test_order_echoes_the_users_decimal(capsys: pytest.CaptureFixture[str]) -> None:
    rec = json.loads(run(["eps", "gaussian", "--sigma", "1", "--delta", "1e-5", "--orders", "2.8,3.7", "--json"],
                         capsys)[1])  # fmt: skip
    assert rec["rdp_bound"]["orders"] == ["2.8", "3.7"] and rec["rdp_bound"]["order"] in ("2.8", "3.7")
    rec = json.loads(run(["convert", "--from", "zcdp", "--to", "eps-delta", "--value", "0.5", "--delta", "1e-5",
                          "--json"], capsys)[1])  # fmt: skip
    assert isinstance(rec["order"], str) and float(rec["order"]) > 1


@pytest.mark.parametrize("where", ["dir", "missing"])
def test_out_is_checked_before_any_work(where: str, tmp_path, capsys, monkeypatch) -> None:
    import certdp.cli.run_certs as rc

    def boom(*args: object, **kwargs: object) -> None:
        raise AssertionError("calibration ran before --out was checked")

    monkeypatch.setattr(rc, "calibrate_epsilon", boom)
    out = tmp_path if where == "dir" else tmp_path / "missing" / "cert.json"
    usage_error([*CALIB_SG, "--steps", "10", "--out", str(out)], capsys, "out=")


def test_step_as_large_as_the_first_probe(capsys: pytest.CaptureFixture[str]) -> None:
    # the defect: "sigma=0 must be > 0", a value the user never passed
    code, out, err = run(
        ["calibrate", "subsampled-gaussian", "--q", "0.01", "--steps", "10", "--epsilon", "1000", "--delta", "1e-5",
         "--step", "0.1", "--json"], capsys)  # fmt: skip
    assert code == 0 and "sigma=0" not in err, err
    rec = json.loads(out)
    assert rec["sigma"] == "0.1" and rec["epsilon_lower_at_miss"] is None and "no noise" in rec["miss_reason"]


@pytest.mark.parametrize(
    ("command", "name"),
    [
        ("tv random-allocation --method exact --steps 1e9 --sigma 1", "steps"),
        ("tv random-allocation --method exact --steps 100 --epochs 10 --sigma 0.1", "sigma"),
        ("tv random-allocation --method exact --steps 10 --sigma 1e5", "sigma"),
        ("tv random-allocation --steps 10 --sigma 1 --method certified --width 1e-300", "width"),
        ("tv random-allocation --method monte-carlo --steps 100000 --epochs 100 --sigma 1", "samples"),
        ("calibrate random-allocation --steps 10 --tv 1e-9", "tv"),
        ("calibrate random-allocation --steps 3000 --tv 0.1", "steps"),
        ("calibrate subsampled-gaussian --q 0.01 --steps 10 --epsilon 1e-300 --delta 1e-5", "epsilon"),
        ("calibrate subsampled-gaussian --q 0.01 --steps 1e12 --epsilon 1 --delta 1e-5", "steps"),
        # found by the attack round: a step below 1e-12 hung (subsampled) or divided by 0.0 (random allocation)
        ("calibrate subsampled-gaussian --q 0.01 --epochs 3 --epsilon 1 --delta 1e-5 --step 1e-1000", "step"),
        ("calibrate random-allocation --steps 1 --epochs 1 --tv 0.1 --step 1e-1000", "step"),
        ("calibrate random-allocation --steps 100 --epochs 10 --tv 1e-1000", "tv"),
    ],
)
def test_work_beyond_the_limits_is_refused_up_front(
    command: str, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    usage_error(command.split(), capsys, name)


def test_an_epsilon_that_any_noise_meets_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    # The defect: the search went below the pair's smallest sigma and named sigma=9.7e-05, a value
    # the user never passed.
    argv = "calibrate subsampled-gaussian --q 0.01 --steps 100 --epsilon 1e100 --delta 1e-5".split()
    err = usage_error(argv, capsys, "epsilon=1e100")
    assert "sigma=0.001" in err and "9.7e-05" not in err


#: budget checks (clock reads) of the subsampled-Gaussian calibration below until its refusal: a
#: fixed count, whatever the machine's load
READS_TO_REFUSAL = 11


def test_max_seconds_stops_a_long_search_with_exit_3_and_no_file(
    tmp_path: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The defect: a TV target near 1 searched for a minute (each evaluation affordable, the search not).
    # The budget's clock advances 1/64 s per read: the stop is at a fixed check, under any load.
    clock = ticking_budget(monkeypatch, 1 / 64)
    out = tmp_path / "c.json"  # type: ignore[operator]
    argv = "calibrate random-allocation --steps 100 --epochs 10 --tv 0.999999999 --max-seconds 0.25".split()
    code, stdout, err = run([*argv, "--out", str(out)], capsys)
    assert code == 3 and stdout == "" and err.count("\n") == 1, err
    assert "max-seconds=0.25 ran out after 0.2 s" in err and not out.exists()
    assert clock.reads == 1 + 16 + 1  # the start, 16 checks (the search makes over 100), the message
    clock.reads = 0
    code, stdout, err = run(  # 199 checks without a budget
        "calibrate subsampled-gaussian --q 0.01 --steps 1000 --epsilon 1 --delta 1e-5 --max-seconds 0.2".split(), capsys
    )
    # the float plan's estimates fit the budget; the first certified probe (at 2^-16) is refused
    # before it starts, by the work estimate against the time left
    assert code == 3 and "stopped before probing sigma=1.41462 at h=2^-16" in err and "max-seconds" in err, err
    assert clock.reads == READS_TO_REFUSAL, clock.reads


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "1e8", "abc"])
def test_max_seconds_must_be_a_positive_budget(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    usage_error(["calibrate", "random-allocation", "--steps", "10", "--tv", "0.1", f"--max-seconds={value}"], capsys,
                f"max-seconds={value}")  # fmt: skip


def test_max_seconds_bounds_every_computing_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The slow-but-bounded searches (rho of the add direction: seconds to minutes) get a budget too.
    # The budget's clock advances 1/64 s per read: its verdicts do not depend on the machine's load.
    clock = ticking_budget(monkeypatch, 1 / 64)
    code, out, err = run("tv random-allocation --steps 10 --sigma 1 --max-seconds 60 --json".split(), capsys)
    assert code == 0 and json.loads(out)["quantity"] == "tv_upper", err
    assert clock.reads < 60 * 64  # its budget was started and never near spent (it is never checked)
    clock.reads = 0
    argv = "rho subsampled-gaussian --q 0.01 --sigma 1 --direction add --max-seconds 0.05".split()
    code, out, err = run(argv, capsys)  # about 100 checks without a budget
    assert code == 3 and out == "" and err.startswith("certdp: error: max-seconds=0.05 ran out after"), err
    assert clock.reads == 1 + 4 + 1  # 4/64 >= 0.05: the fourth check stops it
    # every command takes the budgets now (issue 39): verify reads the flag and goes on to its own checks
    code, _, err = run("verify x.json --max-seconds 5 --max-memory 1GiB".split(), capsys)
    assert code == 2 and "--max-seconds" not in err and "pubkey is required" in err, err
