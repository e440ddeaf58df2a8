"""The committed certificates in certificates/: integrity of all, full recomputation of the fast ones.

The random-allocation cells take 15-95 s each to recompute; CI recomputes every DP-SGD file and
three random-allocation cells (each M in {100, 250}, each E in {10, 20, 40}) and checks the
integrity (schema, digest, project signature) of all. Recompute all twenty-one with one sweep:
    certdp sweep certificates/verify.toml --out /tmp/verified
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from certdp.cert.crypto import load_public_key_b64
from certdp.cert.verify import check_integrity, verify_document

ROOT = Path(__file__).resolve().parent.parent / "certificates"
FILES = sorted(ROOT.glob("*.json"))
PUB = load_public_key_b64(ROOT / "certdp-project.pub")
#: recomputed in CI: every DP-SGD file and three random-allocation cells that verify in 15-40 s
#: (certificates/README.md lists every file's verify time; the others take 30-95 s each)
FAST = [f for f in FILES if f.name.startswith("dpsgd_")] + [
    ROOT / f"random_allocation_{cell}_tv0.1.json" for cell in ("M100_E10", "M100_E40", "M250_E20")
]
#: the random-allocation (epsilon, delta) certificate (hockey-upper claim, hockey-lower refutation)
EPS = ROOT / "random_allocation_M10_E10_eps1_delta1e-5.json"
#: k = 2 of 20 steps: a hockey-upper claim recording k (the reduction's upper end), no refutation
EPS_K = ROOT / "random_allocation_M20_E5_k2_eps2_delta1e-5.json"
FAST += [EPS, EPS_K]


def test_all_twenty_one_are_committed() -> None:
    """DP-SGD through PLD (the first family) and RDP (the second), random allocation's TV and its
    (epsilon, delta) certificates (k = 1 and k = 2); the CIFAR-10 PLD file records split lattices."""
    cifar = json.loads((ROOT / "dpsgd_pld_q0.00512_n9766_eps3.json").read_text())["body"]
    for check in (cifar["claim"], cifar["refutation"]):
        assert any("stride" in lat for lat in check["method"]["lattices"].values())
    names = {f.name for f in FILES}
    assert len([n for n in names if n.startswith("dpsgd_pld_")]) == 5
    assert len([n for n in names if n.startswith("dpsgd_q")]) == 5
    assert len([n for n in names if n.startswith("random_allocation_") and n.endswith("_tv0.1.json")]) == 9
    assert sorted(n for n in names if "_eps" in n and n.startswith("random_allocation_")) == [EPS.name, EPS_K.name]
    k_body = json.loads(EPS_K.read_text())["body"]
    assert k_body["claim"]["mechanism"]["params"]["k"] == "2" and k_body["refutation"] is None
    assert k_body["refutation_missing_reason"]


def test_the_pld_family_needs_less_noise_and_proves_its_refutation() -> None:
    """Each PLD sigma is below the RDP sigma of the same setting; where a refutation is recorded it
    is a pld-lower check (a proved violation), and where it is not, the file says why."""
    for pld in ROOT.glob("dpsgd_pld_*.json"):
        body = json.loads(pld.read_text())["body"]
        rdp = json.loads((ROOT / pld.name.replace("dpsgd_pld_", "dpsgd_")).read_text())["body"]
        sigma = Fraction(body["claim"]["mechanism"]["params"]["sigma"])
        assert sigma < Fraction(rdp["claim"]["mechanism"]["params"]["sigma"]), pld.name
        if body["refutation"] is None:
            assert "not tight enough" in body["refutation_missing_reason"]
        else:
            assert body["refutation"]["method"]["name"] == "pld-lower"


@pytest.mark.parametrize("path", FILES, ids=[f.name for f in FILES])
def test_integrity_and_project_signature(path: Path) -> None:
    doc = json.loads(path.read_text())
    assert check_integrity(doc, PUB) == PUB
    claim = doc["body"]["claim"]
    assert Fraction(claim["result"]["upper"]) <= Fraction(claim["threshold"])


@pytest.mark.parametrize("path", [f for f in FAST if f.exists()], ids=[f.name for f in FAST if f.exists()])
def test_recomputation_of_the_fast_ones(path: Path) -> None:
    report = verify_document(json.loads(path.read_text()), PUB)
    assert report.status == "valid" and report.signed_by == PUB


def test_a_false_lambda_at_the_committed_sigma_is_refuted() -> None:
    """lambda = 0.09 claimed at the lambda = 0.10 sigma (re-digested, unsigned): verify refutes it."""
    from certdp.cert.write import finalize
    from certdp.errors import CertificateInvalid

    path = ROOT / "random_allocation_M100_E10_tv0.1.json"  # the fastest cell to recompute
    if not path.exists():
        pytest.skip("certificate not generated yet")
    doc = json.loads(path.read_text())
    body = doc["body"]
    body["claim"]["threshold"] = "0.09"
    body["refutation"] = None
    with pytest.raises(CertificateInvalid, match="refuted"):
        verify_document(finalize(body))


def test_the_eps_delta_certificate_proves_both_sides() -> None:
    """Its claim is proved in both directions at sigma and its refutation one step (0.01) below is
    a proved violation; the recorded ends bracket the target."""
    doc = json.loads(EPS.read_text())
    report = verify_document(doc, PUB)
    claim, ref = doc["body"]["claim"], doc["body"]["refutation"]
    assert [c["method"] for c in report.checks] == ["hockey-upper", "hockey-lower"]
    assert "(remove)" in report.checks[0]["recomputed"] and "(add)" in report.checks[0]["recomputed"]
    assert Fraction(claim["result"]["upper"]) <= 1 < Fraction(ref["result"]["lower"])
    assert claim["mechanism"]["params"]["direction"] == "both" and doc["body"]["step"] == "0.01"
