"""A deliberately broken certdp against the independent recheck kernel (issue 38).

certdp is patched at runtime (monkeypatch, in this process): its one-step dominating PLD lattice
drops 1% of the P-mass at positive losses (and at +inf), or its subsampled-Gaussian CGF is lowered
by 1%. The broken certdp calibrates sigma, writes and signs a certificate with a fresh key, and its
own `certdp verify` accepts the file, since it recomputes with the same broken code. The kernel,
which shares no code with certdp, must refuse it (exit 1): the claimed sigma is below the least
sigma that meets the target. The honest certdp's file for the same setting is the control: the
kernel accepts it, so the refusal is due to the broken mathematics alone.
"""

from __future__ import annotations

import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest

import certdp.calibrate.pld as calibrate_pld
import certdp.notions.pld as pld
from certdp.cli import main as certdp_main
from certdp.enclose import Ball, to_ball
from certdp.notions.pld_lattice import LatticePmf, LossLattice
from certdp.notions.pld_merged import MergedStep
from certdp.pairs import PrivacyPair
from certdp.pairs.subsampled import SubsampledGaussian

ROOT = Path(__file__).resolve().parent.parent
KERNEL = ROOT / "recheck" / "recheck.py"
KEEP = Fraction(99, 100)  # the broken code keeps 99% of what it should count
# a small setting (10 steps) so that calibration and both verifiers take seconds
TARGET = ["subsampled-gaussian", "--q", "0.1", "--steps", "10", "--epsilon", "2", "--delta", "1e-5", "--step", "0.001"]


def kernel(path: Path, pub: Path) -> subprocess.CompletedProcess:
    args = [sys.executable, "-I", str(KERNEL), str(path), "--pubkey", str(pub)]
    return subprocess.run(args, capture_output=True, text=True, timeout=600)


def calibrate(via: str, tmp_path: Path, name: str) -> tuple[Path, Path, float]:
    """certdp (as patched now) calibrates, writes and signs with a fresh key; returns (file, pub, sigma)."""
    key = tmp_path / f"{name}.key"
    if not key.exists():
        assert certdp_main(["keygen", "--out", str(key)], out=lambda s: None) == 0
    out = tmp_path / f"{name}.json"
    args = ["calibrate", *TARGET, "--via", via, "--out", str(out), "--sign", str(key)]
    assert certdp_main(args, out=lambda s: None) == 0
    sigma = json.loads(out.read_text())["body"]["claim"]["mechanism"]["params"]["sigma"]
    return out, Path(f"{key}.pub"), float(sigma)


def drop_upper_tail(monkeypatch: pytest.MonkeyPatch) -> None:
    """Break the one-step lattice pmfs: 1% of the P-mass at losses > 0 and at +inf is lost (and
    of the merged cells above loss 0).

    The upper pmf is the break that matters. The lower pmf loses the same 1% (which keeps it a sound
    lower bound), because a break of the upper side alone is caught by certdp itself: its lower
    bound at the claimed sigma would exceed the broken upper one, and it refuses to write the file.
    """
    for name in ("upper_lattice_pmf", "lower_lattice_pmf"):
        honest = getattr(pld, name)

        def broken(
            pair: PrivacyPair, lattice: LossLattice, cells: object = None, ends: bool = True, honest=honest
        ) -> LatticePmf:
            pmf = honest(pair, lattice, cells, ends)
            keep = to_ball(KEEP)
            coeffs = [c * keep if lattice.point(lattice.lo + i) > 0 else c for i, c in enumerate(pmf.coeffs)]
            return LatticePmf(pmf.lattice, coeffs, pmf.p_inf * keep)

        monkeypatch.setattr(pld, name, broken)
    for name in ("merged_step", "merged_tail_step"):  # the merged lower side (calibrations' refutations)
        honest_merged = getattr(pld, name)

        def broken_merged(lattice, cells, *rest, honest=honest_merged) -> MergedStep:
            step = honest(lattice, cells, *rest)
            keep = to_ball(KEEP)
            ps = [p * keep if lattice.offset + (step.offset + i) * lattice.h > 0 else p for i, p in enumerate(step.p)]
            return MergedStep(step.offset, ps, step.q)

        monkeypatch.setattr(pld, name, broken_merged)
    # the calibration's float plan (certdp.notions.pld_float) steers by unbroken float masses, so
    # it would lead the broken search back to the honest sigma: the broken bounds drive it alone
    monkeypatch.setattr(calibrate_pld, "_float_plan", lambda *args: None)


def lower_cgf(monkeypatch: pytest.MonkeyPatch) -> None:
    """Break the RDP evaluation: every CGF K(t) of the subsampled Gaussian is reported 1% lower."""
    honest = SubsampledGaussian.cgf_ball

    def broken(self: SubsampledGaussian, t: Ball) -> Ball:
        return honest(self, t) * to_ball(KEEP)

    monkeypatch.setattr(SubsampledGaussian, "cgf_ball", broken)


# the PLD case (two PLD calibrations with certificates and the kernel on each: about 45 s idle)
# is a slow test, still run by CI
@pytest.mark.parametrize(
    ("via", "brk"), [pytest.param("pld", drop_upper_tail, marks=pytest.mark.slow), ("rdp", lower_cgf)]
)
def test_certificate_of_a_broken_certdp_is_refused(via, brk, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    good, good_pub, good_sigma = calibrate(via, tmp_path, "honest")
    res = kernel(good, good_pub)
    assert res.returncode == 0, res.stderr  # control: the honest file is proved

    brk(monkeypatch)
    bad, pub, bad_sigma = calibrate(via, tmp_path, "broken")
    # the break matters: the broken certdp claims a sigma at or below the honest refutation's, where
    # the honest certdp proved the target missed (pld) or out of the accountant's reach (rdp)
    assert bad_sigma <= good_sigma - 0.001 + 1e-9
    # the broken certdp accepts its own file: its verifier recomputes with the same broken code
    assert certdp_main(["verify", str(bad), "--pubkey", str(pub)], out=lambda s: None) == 0

    res = kernel(bad, pub)
    assert res.returncode == 1, (res.returncode, res.stdout, res.stderr)
    assert res.stderr.startswith("NOT PROVED: claim") and len(res.stderr.strip().splitlines()) == 1
