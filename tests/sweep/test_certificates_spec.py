"""Regenerating the committed certificates is one certdp sweep: certificates/certificates.toml has
exactly one cell per committed file, each with the inputs that file records, and the script runs it."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from certdp.cli.run_sweep import FILE_KEYS, JOBS, _Planner
from certdp.cli.sweep_checks import check_certificate_is_for
from certdp.errors import CertificateInvalid
from certdp.sweep.spec import parse_spec

ROOT = Path(__file__).resolve().parents[2] / "certificates"


def test_the_spec_has_one_cell_per_committed_certificate_with_its_inputs():
    spec = parse_spec(ROOT / "certificates.toml", tuple(JOBS))
    committed = {p.stem for p in ROOT.glob("*.json")}
    assert spec.job == "calibrate" and {c.name for c in spec.cells} == committed and len(spec.cells) == 21
    planner = _Planner(spec)
    for cell in spec.cells:
        planner.task(cell)  # every cell passes the checks a run makes first
        doc = json.loads((ROOT / f"{cell.name}.json").read_text())
        check_certificate_is_for(doc, planner.expected[cell.name])  # what a resumed sweep would keep
        body = doc["body"]
        claim, p = body["claim"], dict(cell.params)
        assert claim["mechanism"]["name"] == p["mechanism"]
        assert Fraction(claim["threshold"]) == Fraction(p.get("epsilon", p.get("tv")))
        if p["mechanism"] == "random-allocation":
            assert claim["mechanism"]["params"]["steps"] == p["steps"]
            assert claim["mechanism"]["params"]["epochs"] == p["epochs"]
            assert claim["mechanism"]["params"].get("k") == p.get("k")  # k > 1 recorded, k = 1 left out
            # an (epsilon, delta) cell: the hockey-stick lattice bounds; a tv cell: the TV lattice
            assert claim["method"]["name"] == ("hockey-upper" if "epsilon" in p else "lattice-upper")
            assert ("delta" in claim) == ("epsilon" in p)
            continue
        assert claim["mechanism"]["steps"] == int(p["steps"])
        assert Fraction(claim["mechanism"]["params"]["q"]) == Fraction(p["q"])
        assert Fraction(claim["delta"]) == Fraction(p["delta"])
        assert claim["method"]["name"] == ("rdp-orders" if p.get("via") == "rdp" else "pld-upper")


def test_a_certificate_of_another_setting_is_not_this_cells():
    spec = parse_spec(ROOT / "certificates.toml", tuple(JOBS))
    planner = _Planner(spec)
    for cell in spec.cells:
        planner.task(cell)
    pld = json.loads((ROOT / "dpsgd_pld_q0.01_n500_eps3.json").read_text())
    for other, field in [("dpsgd_q0.01_n500_eps3", "method"), ("dpsgd_pld_q0.05_n500_eps3", "q")]:
        with pytest.raises(CertificateInvalid, match=f"its claim has {field}="):
            check_certificate_is_for(pld, planner.expected[other])


def test_the_script_regenerates_them_with_one_sweep():
    script = (ROOT / "make_certificates.sh").read_text()
    commands = [line.strip() for line in script.splitlines() if line.strip().startswith("certdp ")]
    assert commands == ['certdp sweep certificates.toml --out .sweep --sign "$key" "$@"']


def test_the_verify_spec_rechecks_each_committed_certificate(tmp_path):
    """certificates/verify.toml has one `certdp verify FILE --pubkey certdp-project.pub` cell per
    committed file; run (serially) on a copy holding one real and one tampered certificate, the
    real one is ok and the tampered one refuted (sweep exit 1)."""
    from certdp.cli import main

    spec = parse_spec(ROOT / "verify.toml", tuple(JOBS), FILE_KEYS)
    committed = sorted(p.stem for p in ROOT.glob("*.json"))
    assert spec.job == "verify" and sorted(c.name for c in spec.cells) == committed
    planner = _Planner(spec)
    for cell in spec.cells:
        task = planner.task(cell)
        assert task.argv[:2] == ("verify", f"{cell.name}.json") and "--pubkey" in task.argv
        assert task.files[0][2] == (ROOT / f"{cell.name}.json").read_bytes()
    copy = tmp_path / "certs"
    copy.mkdir()
    (copy / "verify.toml").write_text((ROOT / "verify.toml").read_text())
    (copy / "certdp-project.pub").write_text((ROOT / "certdp-project.pub").read_text())
    real = ROOT / "dpsgd_q0.05_n500_eps3.json"
    (copy / real.name).write_text(real.read_text())
    doc = json.loads(real.read_text())
    doc["body"]["claim"]["threshold"] = "2"  # not re-digested: the digest check fails
    (copy / "tampered.json").write_text(json.dumps(doc))
    lines: list[str] = []
    code = main(
        ["sweep", str(copy / "verify.toml"), "--out", str(tmp_path / "o"), "--scheduler", "serial", "--json"],
        lines.append,
    )
    assert code == 1
    m = json.loads((tmp_path / "o" / "manifest.json").read_text())
    status = {e["name"]: e["status"] for e in m["cells"]}
    assert status == {"dpsgd_q0.05_n500_eps3": "ok", "tampered": "refuted"}
