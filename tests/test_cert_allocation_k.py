"""Random-allocation (epsilon, delta) certificates with k > 1 (each record in k of the M steps of
an epoch): the claim is a hockey-upper check that records k, and certdp verify rebuilds it on the
reduction's k = 1 run of floor(M/k) steps and k E epochs (docs/math.md §9.8, "k > 1";
docs/certificates.md). The reduction bounds from above only, so a k > 1 file has no refutation
and a hockey-lower check with k is malformed.

The bodies here are derived from the committed k = 1 file (M = 10, E = 10, sigma 3.8): the run
M = 20, E = 5, k = 2 reduces to exactly that run, so its recorded claim is a true claim about the
k = 2 run, and changing M, E or k moves the reduced run. Each body is re-signed with the test key,
so that only the recomputation can accept or reject it.
"""

from __future__ import annotations

import argparse
import copy
import json
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest

from certdp.cert.crypto import load_private_key
from certdp.cert.write import finalize, hockey_check
from certdp.cli import main
from certdp.cli.sweep_checks import certificate_summary, check_certificate_is_for, expected_claim
from certdp.errors import CertificateInvalid, InvalidArgument
from certdp.notions.allocation_dp import allocation_eps_bounds, k_reduction

ROOT = Path(__file__).resolve().parent.parent
EPS_FILE = ROOT / "certificates" / "random_allocation_M10_E10_eps1_delta1e-5.json"
TV_FILE = ROOT / "certificates" / "random_allocation_M100_E10_tv0.1.json"


@pytest.fixture(scope="module")
def keypair(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    key = tmp_path_factory.mktemp("key") / "test.key"
    assert main(["keygen", "--out", str(key)]) == 0
    return key, Path(f"{key}.pub")


def k_body(steps: str, epochs: str, k: str | None) -> dict:
    """The committed file's claim about the run (steps, epochs, k), without its refutation."""
    body = copy.deepcopy(json.loads(EPS_FILE.read_text())["body"])
    params = body["claim"]["mechanism"]["params"]
    params.update(steps=steps, epochs=epochs)
    if k is not None:
        params["k"] = k
    body["refutation"] = None
    body["refutation_missing_reason"] = "k > 1: the reduction bounds from above only"
    return body


def verify(
    body: dict, keypair: tuple[Path, Path], tmp: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    path = tmp / "k.json"
    path.write_text(json.dumps(finalize(body, load_private_key(keypair[0]))))
    code = main(["verify", str(path), "--pubkey", str(keypair[1])])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("steps", ["20", "21"])
def test_a_true_k2_claim_verifies_on_the_reduced_run(steps, keypair, tmp_path, capsys) -> None:
    """M = 20 or 21 with k = 2 reduce to floor(M/2) = 10 steps and 2 E = 10 epochs: the committed
    claim is recomputed there and proved; the report names k and the decomposition."""
    assert k_reduction(int(steps), 5, 2).reduced_steps == 10
    code, out, err = verify(k_body(steps, "5", "2"), keypair, tmp_path, capsys)
    assert code == 0, err
    assert f"random-allocation(steps={steps}, epochs=5, k=2, sigma=3.8" in out
    assert "k=2 of the M steps per epoch" in out and "arXiv:2502.08202" in out


@pytest.mark.parametrize(
    ("steps", "epochs", "k"),
    [
        ("20", "6", "2"),  # reduced run 10 steps, 12 epochs
        ("30", "5", "3"),  # 10 steps, 15 epochs
        ("10", "10", "2"),  # 5 steps, 20 epochs
    ],
)
def test_a_claim_moved_to_a_costlier_reduced_run_is_refuted(steps, epochs, k, keypair, tmp_path, capsys) -> None:
    """The same recorded upper on a reduced run with more epochs (or fewer steps) is false there:
    the recomputation rejects it (exit 1). The reduced run's own certified eps confirms that the
    recorded end is below its lower end, so the test could not pass by a lenient verifier."""
    red = k_reduction(int(steps), int(epochs), int(k))
    body = k_body(steps, epochs, k)
    recorded = Fraction(body["claim"]["result"]["upper"])
    truth = allocation_eps_bounds(Fraction("3.8"), red.reduced_steps, red.reduced_epochs, Fraction(1, 10**5))
    assert truth.lower > recorded
    code, out, err = verify(body, keypair, tmp_path, capsys)
    assert code == 1, (out, err)


@pytest.mark.parametrize(
    ("k", "epochs", "message"),
    [
        ("1", "5", "k=1 is written by leaving k out"),
        ("25", "5", "k=25 must be <= steps=20"),
        ("2.5", "5", "must be a positive integer"),
        ("0", "5", "must be a positive integer"),
        ("2", "600", "k times epochs"),
    ],
)
def test_bad_k_is_refused_in_one_line(k, epochs, message, keypair, tmp_path, capsys) -> None:
    code, out, err = verify(k_body("20", epochs, k), keypair, tmp_path, capsys)
    assert code == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1, err


def test_a_refutation_with_k_is_malformed(keypair, tmp_path, capsys) -> None:
    """The reduction bounds k-of-M allocation from above only: a hockey-lower check of the reduced
    run proves no violation, so a refutation that carries k is refused before any recomputation."""
    body = copy.deepcopy(json.loads(EPS_FILE.read_text())["body"])
    for part in ("claim", "refutation"):
        body[part]["mechanism"]["params"].update(steps="20", epochs="5", k="2")
    code, _, err = verify(body, keypair, tmp_path, capsys)
    assert code == 2 and "hockey-lower cannot prove epsilon of 1 < k=2 < M" in err, err


def test_k_in_a_tv_check_is_malformed(keypair, tmp_path, capsys) -> None:
    body = copy.deepcopy(json.loads(TV_FILE.read_text())["body"])
    body["claim"]["mechanism"]["params"]["k"] = "2"
    code, _, err = verify(body, keypair, tmp_path, capsys)
    assert code == 2 and "keys" in err and "'k'" in err, err


def test_the_writer_refuses_a_k_refutation() -> None:
    from certdp.notions.tv_certified import LatticeGrid

    grid = LatticeGrid(h=2.0**-10, cap=16.0, l_min=0.5, l_max=2.0, eta=2.0**-12, prec=128)
    with pytest.raises(InvalidArgument, match="k=2: a check with 1 < k < M can only be a claim"):
        hockey_check(20, 5, Fraction(4), "both", Fraction(1, 10**5), ">", Fraction(1), grid, Fraction(1), k=2)


@pytest.mark.slow
def test_calibrate_k2_writes_a_claim_only_certificate_that_verifies(keypair, tmp_path) -> None:
    """End to end: certdp calibrate random-allocation --k 2 --out writes the claim (k recorded, no
    refutation, the reason said), and certdp verify proves it (about 50 s: the k > 1 violation
    search builds the statistic's laws at several sigma)."""
    out = tmp_path / "k2.json"
    argv = ["--steps", "3", "--epochs", "2", "--k", "2", "--epsilon", "1", "--delta", "1e-3", "--step", "0.001"]
    proc = subprocess.run(
        ["certdp", "calibrate", "random-allocation", *argv, "--out", str(out), "--sign", str(keypair[0]), "--json"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr
    rec = json.loads(proc.stdout)
    body = json.loads(out.read_text())["body"]
    assert body["claim"]["mechanism"]["params"]["k"] == "2" and body["refutation"] is None
    assert "k=2 > 1: no refutation check" in body["refutation_missing_reason"]
    assert Fraction(rec["certificate_epsilon_upper"]) <= 1 and rec["certificate_epsilon_lower_at_miss"] is None
    ver = subprocess.run(
        ["certdp", "verify", str(out), "--pubkey", str(keypair[1]), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ver.returncode == 0, ver.stderr
    assert json.loads(ver.stdout)["status"] == "valid"


@pytest.mark.slow
def test_calibrate_k_equal_m_writes_claim_and_refutation_that_verify(keypair, tmp_path, capsys) -> None:
    """k = M: the run is the 1-step run of M E epochs (a Gaussian), so the calibration proves the
    violation one step below and the certificate records it (a hockey-lower check carrying k = M),
    which certdp verify recomputes. Both recorded ends are checked against the Gaussian's delta at
    60 digits; moving the file to M = 4 (k = 3 < M) makes the refutation malformed."""
    import mpmath as mp

    out = tmp_path / "kM.json"
    argv = ["--steps", "3", "--epochs", "2", "--k", "3", "--epsilon", "1", "--delta", "1e-3", "--step", "0.001"]
    proc = subprocess.run(
        ["certdp", "calibrate", "random-allocation", *argv, "--out", str(out), "--sign", str(keypair[0]), "--json"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr
    rec = json.loads(proc.stdout)
    assert rec["one_sided"] is False and "k=M=3" in rec["note"]
    assert Fraction(rec["sigma_violated"]) == Fraction(rec["sigma"]) - Fraction("0.001")
    body = json.loads(out.read_text())["body"]
    assert body["claim"]["mechanism"]["params"]["k"] == "3" and body["refutation"]["mechanism"]["params"]["k"] == "3"
    mp.mp.dps = 60

    def gauss_delta(sigma: str, eps: str) -> mp.mpf:
        mu = mp.sqrt(6) / mp.mpf(sigma)
        e = mp.mpf(Fraction(eps).numerator) / Fraction(eps).denominator
        return mp.ncdf(-e / mu + mu / 2) - mp.e**e * mp.ncdf(-e / mu - mu / 2)

    assert gauss_delta(rec["sigma"], rec["certificate_epsilon_upper"]) <= mp.mpf("1e-3")
    assert gauss_delta(rec["sigma_miss"], rec["certificate_epsilon_lower_at_miss"]) > mp.mpf("1e-3")
    ver = subprocess.run(
        ["certdp", "verify", str(out), "--pubkey", str(keypair[1]), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ver.returncode == 0 and json.loads(ver.stdout)["status"] == "valid", ver.stderr
    for part in ("claim", "refutation"):
        body[part]["mechanism"]["params"]["steps"] = "4"
    code, _, err = verify(body, keypair, tmp_path, capsys)
    assert code == 2 and "hockey-lower cannot prove epsilon of 1 < k=3 < M" in err, err


def _calibrate_args(k: str | None) -> argparse.Namespace:
    return argparse.Namespace(
        mechanism="random-allocation",
        tv=None,
        steps="10",
        epochs="10",
        k=k,
        direction=None,
        epsilon="1",
        delta="1e-5",
        step="0.01",
    )


@pytest.mark.parametrize("k", ["2", "3"])
def test_a_sweep_does_not_file_a_k1_certificate_under_a_k_cell(k: str) -> None:
    """Attack review (helper-46): the sweep's cell check compared steps, epochs and the target but
    not k, so a k = 1 file (a smaller sigma) was kept as the result of a k = 2 cell."""
    doc = json.loads(EPS_FILE.read_text())
    check_certificate_is_for(doc, expected_claim(_calibrate_args(None)))  # its own cell
    check_certificate_is_for(doc, expected_claim(_calibrate_args("1")))
    with pytest.raises(CertificateInvalid, match="k"):
        check_certificate_is_for(doc, expected_claim(_calibrate_args(k)))


def test_a_sweep_does_not_file_a_k2_certificate_under_the_k1_cell() -> None:
    doc = {"body": k_body("10", "10", "2")}
    check_certificate_is_for(doc, expected_claim(_calibrate_args("2")))
    with pytest.raises(CertificateInvalid, match="k"):
        check_certificate_is_for(doc, expected_claim(_calibrate_args(None)))
    assert certificate_summary({"body": doc["body"], "signature": None})["k"] == "2"
    assert certificate_summary(json.loads(EPS_FILE.read_text()))["k"] == "1"


COMMITTED_K = ROOT / "certificates" / "random_allocation_M20_E5_k2_eps2_delta1e-5.json"


def test_the_committed_k2_file_is_the_kind_the_recheck_kernel_excuses() -> None:
    """The committed k = 2 certificate: the kernel checks its signature and says it did not recheck
    the hockey-upper claim (exit 2), exactly the text recheck/expect.sh wants for it; certdp verify
    recomputes it (tests/test_committed_certificates.py)."""
    want = subprocess.run(
        ["bash", "-c", f'. "{ROOT}/recheck/expect.sh" && expect_for "$1"', "_", COMMITTED_K.name],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.rstrip("\n")
    assert want == "2\tnot rechecked by this kernel (claim kind 'hockey-upper')"
    proc = subprocess.run(
        [
            "python",
            str(ROOT / "recheck" / "recheck.py"),
            str(COMMITTED_K),
            "--pubkey",
            str(ROOT / "certificates" / "certdp-project.pub"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and want.split("\t")[1] in proc.stderr, proc.stderr
