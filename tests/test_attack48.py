"""Regression tests of attack review 48 (2026-12-06, long random-allocation runs): refusals say
what their epsilon range means and name a flag that works for the command that refused."""

from __future__ import annotations

import pytest

from certdp.cli import main


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_an_eps_refusal_says_epsilon_may_lie_above_its_range(capsys: pytest.CaptureFixture[str]) -> None:
    # M = 1, E = 100, sigma = 0.3: eps is about 697; the search range shrank to 9.49 and the message
    # read as if the range were fixed
    argv = ["eps", "random-allocation", "--steps", "1", "--epochs", "100", "--sigma", "0.3", "--delta", "1e-5"]
    code, _, err = run(argv, capsys)
    assert code == 2 and err.count("\n") == 1
    assert "epsilon near or above it" in err and "--via rdp gives a sound upper bound" in err
    code, out, _ = run([*argv, "--via", "rdp", "--json"], capsys)
    assert code == 0  # the flag it names answers


def test_a_calibration_refusal_names_no_via(capsys: pytest.CaptureFixture[str]) -> None:
    # calibrate random-allocation takes no --via: its refusals must not suggest one
    argv = ["calibrate", "random-allocation", "--steps", "1", "--epochs", "100", "--epsilon", "20", "--delta", "1e-5"]
    code, _, err = run(argv, capsys)
    assert code == 2 and err.count("\n") == 1 and "--via" not in err and "above the limit" in err
    code, _, err = run([*argv, "--via", "rdp"], capsys)
    assert code == 2 and "drop --via" in err
