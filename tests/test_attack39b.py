"""Regression tests of the second attack review of issue 39 (2026-12-05): refusals name what
works, conventions are stated in the output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from certdp.cli import main

de = pytest.importorskip("dp_accounting.dp_event")


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_random_allocation_refusal_names_a_flag_that_works(capsys: pytest.CaptureFixture[str]) -> None:
    # two epochs: one at sigma = 10000 now fits the sizing lattice (up to five doublings)
    argv = ["eps", "random-allocation", "--steps", "10", "--epochs", "2", "--sigma", "10000", "--delta", "1e-5"]
    code, _, err = run(argv, capsys)
    assert code == 2 and "--via rdp" in err and "--method" not in err and err.count("\n") == 1
    # and the flag it names answers
    code, out, _ = run([*argv, "--via", "rdp", "--json"], capsys)
    assert code == 0 and float(json.loads(out)["upper"]) < 0.01


def test_no_accountant_gives_both_reasons(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Poisson-sampled Laplace past the lattice's 10^6 steps: RDP has no CGF for it either; the old
    # message suggested --via pld, the route that had just refused
    ev = tmp_path / "psl.json"
    ev.write_text(
        json.dumps(
            de.SelfComposedDpEvent(de.PoissonSampledDpEvent(0.001, de.LaplaceDpEvent(1.0)), 2_000_000).to_named_tuple()
        )
    )
    code, _, err = run(["eps", "--event", str(ev), "--delta", "1e-5"], capsys)
    assert code == 2 and "no accountant certifies this" in err and "exceeds" in err and "CGF" in err
    assert "(--via pld)" not in err


def test_swor_output_states_the_replacement_convention(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ev = tmp_path / "swor.json"
    ev.write_text(json.dumps(de.SampledWithoutReplacementDpEvent(1000, 10, de.GaussianDpEvent(1.0)).to_named_tuple()))
    code, out, _ = run(["eps", "--event", str(ev), "--relation", "replace_one", "--delta", "1e-5"], capsys)
    assert code == 0 and "note:" in out and "2C" in out


def _event(tmp_path: Path, name: str, doc: object) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc))
    return str(path)


def test_zero_noise_and_zero_count_are_answered_as_account_event_reads_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a Gaussian event of noise 0 exited 2 while a mixture of noise 0 answered eps = inf; a count
    # of 0 exited 2 ("must be >= 1") while -3 said "must be >= 0"
    g0 = _event(tmp_path, "g0", de.GaussianDpEvent(0.0).to_named_tuple())
    code, out, _ = run(["eps", "--event", g0, "--delta", "1e-5", "--json"], capsys)
    assert code == 0 and json.loads(out)["upper"] == "inf"
    zero = de.SelfComposedDpEvent(de.GaussianDpEvent(1.0), 0).to_named_tuple()
    code, out, _ = run(["eps", "--event", _event(tmp_path, "c0", zero), "--delta", "1e-5", "--json"], capsys)
    rec = json.loads(out)
    assert code == 0 and rec["status"] == "nothing" and rec["upper"] == rec["lower"] == "0"


def test_one_sided_event_labels_its_upper_end_as_the_conversion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rr = de.SelfComposedDpEvent(de.RandomizedResponseDpEvent(0.5, 2), 10**9).to_named_tuple()
    argv = ["eps", "--event", _event(tmp_path, "rr", rr), "--delta", "1e-5", "--relation", "replace_one", "--json"]
    code, out, _ = run(argv, capsys)
    rec = json.loads(out)
    assert code == 0 and rec["sides"] == "upper"
    assert "trivial" not in rec["upper_from"] and "conversion" in rec["upper_from"]
