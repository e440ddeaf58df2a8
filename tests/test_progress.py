"""Progress lines and readable results: a status line on a terminal, nothing under --json or in a
pipe, and reprs that show decimals rather than huge fractions."""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from certdp.calibrate.pld import PldCalibration, calibrate_pld
from certdp.calibrate.subsampled import calibrate_epsilon
from certdp.cli import main
from certdp.cli.progress import status_line
from certdp.enclose.ball import readable_repr, short_decimal
from certdp.notions import conversion_epsilon as epsilon
from certdp.notions.pld import LossLattice, pld_bounds
from certdp.pairs import SubsampledGaussian, compose

ROOT = Path(__file__).resolve().parent.parent / "certificates"
#: the fastest committed certificate to recompute (about 1 s)
CERT = ROOT / "dpsgd_q0.01_n2000_eps3.json"
VERIFY = ["verify", str(CERT), "--pubkey", str(ROOT / "certdp-project.pub")]
#: an RDP calibration that runs in about 0.3 s (the add direction alone takes seconds)
RDP = ["calibrate", "subsampled-gaussian", "--via", "rdp", "--q", "0.5", "--steps", "2"]
RDP += ["--epsilon", "2", "--delta", "1e-5", "--direction", "remove"]
#: a PLD calibration of about 2 s: long enough for several refreshes of the status line
PLD = ["calibrate", "subsampled-gaussian", "--via", "pld", "--q", "0.5", "--steps", "2"]
PLD += ["--epsilon", "2", "--delta", "1e-5", "--step", "0.01", "--direction", "remove"]


class FakeTerminal(io.StringIO):
    """A stderr that says it is a terminal, so that rich draws on it."""

    def isatty(self) -> bool:
        return True


def _run(argv: list[str], stderr: io.StringIO, monkeypatch: pytest.MonkeyPatch) -> tuple[int, list[str]]:
    """Run the CLI in-process with ``stderr`` as sys.stderr; the lines it would print on stdout."""
    printed: list[str] = []
    monkeypatch.setattr(sys, "stderr", stderr)
    try:
        code = main(argv, out=printed.append)
    finally:
        monkeypatch.undo()
    return code, printed


@pytest.mark.parametrize("argv", [RDP, VERIFY], ids=["calibrate-rdp", "verify"])
def test_json_writes_one_object_and_nothing_on_stderr_even_on_a_terminal(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    err = FakeTerminal()
    code, printed = _run([*argv, "--json"], err, monkeypatch)
    assert code == 0
    assert err.getvalue() == ""
    assert len(printed) == 1 and isinstance(json.loads(printed[0]), dict)
    assert capsys.readouterr().out == ""  # nothing else reached the real stdout either


@pytest.mark.parametrize("argv", [RDP, VERIFY], ids=["calibrate-rdp", "verify"])
def test_a_terminal_gets_a_status_line_and_stdout_stays_the_same(
    argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    piped = io.StringIO()  # not a terminal: silent
    code, plain = _run(argv, piped, monkeypatch)
    assert code == 0 and piped.getvalue() == ""
    tty = FakeTerminal()
    code, shown = _run(argv, tty, monkeypatch)
    assert code == 0
    what = "s  calibrating sigma (RDP)" if argv is RDP else "s  verifying "
    assert what in tty.getvalue()
    # the record is the same up to the measured seconds; the live line never reaches stdout
    assert [re.sub(r"\d+(\.\d+)? s\b|seconds.*", "", s) for s in shown] == [
        re.sub(r"\d+(\.\d+)? s\b|seconds.*", "", s) for s in plain
    ]
    assert "\x1b" not in "".join(shown) and capsys.readouterr().out == ""


def test_the_pld_calibration_line_shows_its_probes(monkeypatch: pytest.MonkeyPatch) -> None:
    tty = FakeTerminal()
    code, shown = _run(PLD, tty, monkeypatch)
    assert code == 0 and "sigma = 1.88" in shown[0]
    assert re.search(r"\d+ s  calibrating sigma \(PLD\): remove direction, sigma=1\.8\d*, h=2\^-\d+", tty.getvalue())
    assert "calibrating" not in shown[0]


def test_status_line_is_a_no_op_off_a_terminal_or_under_json(monkeypatch: pytest.MonkeyPatch) -> None:
    for stderr, as_json in ((io.StringIO(), False), (FakeTerminal(), True)):
        monkeypatch.setattr(sys, "stderr", stderr)
        with status_line(argparse.Namespace(json=as_json), "working") as update:
            update("step one")
        assert stderr.getvalue() == ""
    tty = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", tty)
    with status_line(argparse.Namespace(json=False), "working") as update:
        update("step one")
    assert "working" in tty.getvalue()


def test_short_decimal() -> None:
    assert short_decimal(Fraction(141469, 100000)) == "1.41469"
    assert short_decimal(Fraction(1, 100000)) == "0.00001"
    assert short_decimal(Fraction(1, 128)) == "0.0078125"
    assert short_decimal(500) == "500"
    assert short_decimal(Fraction(1, 3)) == "~0.333333333333"
    assert short_decimal(Fraction(-1, 3)) == "~-0.333333333333"
    assert short_decimal(Fraction(544838226407, 549755813888)) == "~0.991054960481"
    assert short_decimal(Fraction(3, 2**200)) == "~1.86690458335e-60"


def test_readable_repr_summarises_long_parts() -> None:
    lattice = LossLattice(Fraction(1, 128), -88, 419, Fraction(99, 16384))
    assert repr(lattice) == "LossLattice(h=0.0078125, lo=-88, hi=419, offset=0.00604248046875)"
    assert repr(LossLattice(Fraction(1, 8), -8, 8)) == "LossLattice(h=0.125, lo=-8, hi=8, offset=0)"
    calib = PldCalibration(
        *(Fraction(1, 2), 2, Fraction(2), Fraction(1, 10**5), "remove", Fraction(1, 100), Fraction(1, 8), 128),
        *(Fraction(1, 2**57), Fraction(47, 25), [], Fraction(187, 100), None, "x" * 300, 1.5),
        probes={str(i): i for i in range(20)},
    )
    text = readable_repr(calib)
    assert "sigma=1.88" in text and "probes={... 20 items}" in text and "x" * 61 not in text


def test_results_repr_as_short_decimals() -> None:
    seen: list[str] = []
    res = calibrate_pld("0.5", 2, "2", "1e-5", step="0.01", direction="remove", progress=seen.append)
    assert seen and all(
        re.fullmatch(r"remove direction, sigma=[\d.]+, h=2\^-\d+: (upper|lower) bound", s) for s in seen
    )
    assert len(seen) == len(set(seen))  # a cached probe is not announced again
    text = repr(res)
    assert "Fraction(" not in text and len(text) < 600
    assert res.sigma == Fraction(188, 100) and "sigma=1.88," in text and "claim=[... 1 item]" in text
    side = repr(res.claim[0])
    assert "Fraction(" not in side and side.startswith("SideResult(direction='remove', lattice=LossLattice(h=")

    eps = calibrate_epsilon("0.5", 2, "2", "1e-5", step="0.1", direction="remove")
    text = repr(eps)
    assert "Fraction(" not in text and "orders=(... 75 items)" in text
    assert f"sigma={short_decimal(eps.sigma)}," in text and "~" not in short_decimal(eps.sigma)

    pair = compose(SubsampledGaussian("0.5", "2", "remove"), 2)
    pld = pld_bounds(pair, delta=Fraction(1, 10**5))
    text = repr(pld)
    assert "Fraction(" not in text and len(text) < 600 and "enclosure=[" in text
    assert pld.enclosure.upper_str(12) in text

    conv = epsilon(pair, "1e-5")
    text = repr(conv)
    assert "Fraction(" not in text and len(text) < 600 and text.startswith("ConversionResult(epsilon <= ")
