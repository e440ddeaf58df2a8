"""Regenerating the committed certificates is one certdp sweep: certificates/certificates.toml has
exactly one cell per committed file, each with the inputs that file records, and the script runs it."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

from certdp.cli.run_sweep import JOBS, _Planner
from certdp.sweep.spec import parse_spec

ROOT = Path(__file__).resolve().parents[2] / "certificates"


def test_the_spec_has_one_cell_per_committed_certificate_with_its_inputs():
    spec = parse_spec(ROOT / "certificates.toml", tuple(JOBS))
    committed = {p.stem for p in ROOT.glob("*.json")}
    assert spec.job == "calibrate" and {c.name for c in spec.cells} == committed and len(spec.cells) == 17
    planner = _Planner(spec)
    for cell in spec.cells:
        planner.task(cell)  # every cell passes the checks a run makes first
        body = json.loads((ROOT / f"{cell.name}.json").read_text())["body"]
        claim, p = body["claim"], dict(cell.params)
        assert claim["mechanism"]["name"] == p["mechanism"]
        assert Fraction(claim["threshold"]) == Fraction(p.get("epsilon", p.get("tv")))
        if p["mechanism"] == "random-allocation":
            assert claim["mechanism"]["params"]["steps"] == p["steps"]
            assert claim["mechanism"]["params"]["epochs"] == p["epochs"]
            continue
        assert claim["mechanism"]["steps"] == int(p["steps"])
        assert Fraction(claim["mechanism"]["params"]["q"]) == Fraction(p["q"])
        assert Fraction(claim["delta"]) == Fraction(p["delta"])
        assert claim["method"]["name"] == ("rdp-orders" if p.get("via") == "rdp" else "pld-upper")


def test_the_script_regenerates_them_with_one_sweep():
    script = (ROOT / "make_certificates.sh").read_text()
    commands = [line.strip() for line in script.splitlines() if line.strip().startswith("certdp ")]
    assert commands == ['certdp sweep certificates.toml --out .sweep --sign "$key" "$@"']
