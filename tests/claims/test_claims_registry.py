"""The shipped registry: it parses, covers the required papers, cites its sources, and the committed
report (claims_report/, made by claims_report/make_report.py) is current: it holds every shipped
claim. The claims whose computations are quick are re-checked live against that report."""

import importlib.util
import json
from pathlib import Path

import pytest

from certdp.claims import check_claims, shipped_claims
from certdp.claims.model import STATUSES
from certdp.claims.quantities import QUANTITIES
from certdp.cli import main

ROOT = Path(__file__).resolve().parents[2]
REPORT = ROOT / "claims_report" / "report.json"
#: Computations quick enough to re-run in the test suite (each well under a few seconds).
QUICK = {
    "sigma_closed_form", "sigma_gdp_limit", "sigma_pinsker_d2", "ra_chi2", "ra_accuracy_bound", "ra_linear_accuracy",
    "allocation_gap", "student_t_argmax", "ggauss_chi", "gap_loglog_slope", "example23", "mu_from_rho", "mu_bound",
    "mu_composed", "subsampled_rdp", "gdp_clt_mu", "gdp_eps", "gaussian_delta", "gaussian_sigma_exact",
    "classical_gaussian_sigma", "gaussian_eps_rdp", "ratio", "constant", "zcdp_rho_for", "acs_shift_zcdp",
}  # fmt: skip


def _quick(claim) -> bool:
    def ok(ref) -> bool:
        return ref.name in QUICK and all(ok(d) for d in ref.deps())

    return claim.kind in ("identity", "out-of-scope") or all(ok(r) for r in claim.refs)


def test_registry_coverage():
    claims = shipped_claims()
    assert len(claims) >= 80
    by_paper = {}
    for c in claims:
        by_paper.setdefault(c.paper.id, []).append(c)
    for seed in ("2610.09651", "2610.02414", "2611.01218"):
        assert seed in by_paper
    outside = [c for c in claims if c.paper.id not in ("2610.09651", "2610.02414", "2611.01218")]
    assert len(outside) >= 15
    for c in claims:
        assert c.paper.arxiv or c.paper.url
        assert c.where and c.printed and c.statement
        if c.kind == "out-of-scope":
            assert c.reason
        for r in c.refs:
            assert QUANTITIES[r.name].uses  # the certdp function behind every number is named


def test_identity_claims_cite_existing_symbolic_checks():
    from proofs_checks import CHECKS

    methods = {c.id: c.method for c in CHECKS}
    for c in shipped_claims():
        if c.kind == "identity":
            assert c.check in methods, c.uid
            assert methods[c.check].startswith("symbolic"), c.uid


def test_paper_filter_and_list(capsys):
    assert {c.paper.id for c in shipped_claims("2611.01218")} == {"2611.01218"}
    assert main(["claims", "list", "--paper", "2611.01218"]) == 0
    assert "2611.01218:" in capsys.readouterr().out
    assert main(["claims", "list", "--paper", "nope"]) == 2
    assert "paper=nope is not in the registry" in capsys.readouterr().err


def test_committed_report_holds_every_shipped_claim():
    rec = json.loads(REPORT.read_text())
    uids = [c.uid for c in shipped_claims()]
    assert [c["id"] for c in rec["claims"]] == uids, "regenerate: python claims_report/make_report.py"
    assert all(c["status"] in STATUSES for c in rec["claims"])
    assert rec["total"] == len(uids) and sum(rec["counts"].values()) == len(uids)
    for c in rec["claims"]:
        if c["status"] == "refuted":  # a refuted claim comes with its certified enclosure and a cause
            assert c.get("certified") or c.get("certified_right"), c["id"]
            assert c.get("note"), c["id"]
        if c["status"] == "confirmed" and c["kind"] == "value":  # inside a rounding interval: both ends
            assert c["certified"]["lower"] is not None and c["certified"]["upper"] is not None, c["id"]
        if c["status"] == "confirmed" and c["kind"] == "bound":  # the end on the bound's side is certified
            side = "upper" if c["op"] in ("<=", "<") else "lower"
            assert c["certified"][side] is not None, c["id"]


def test_committed_report_shows_each_claims_current_place_and_quote():
    """The report shows where each claim is and the source's words: they are the registry's own (a text
    edit needs no recomputation: python claims_report/make_report.py --refresh)."""
    rows = {c["id"]: c for c in json.loads(REPORT.read_text())["claims"]}
    stale = [
        c.uid for c in shipped_claims() if (rows[c.uid]["where"], rows[c.uid].get("quote", "")) != (c.where, c.quote)
    ]
    assert not stale, ("regenerate: python claims_report/make_report.py --refresh", stale)


def test_refresh_reads_back_every_committed_enclosure():
    """--refresh rebuilds the committed run from report.json: every enclosure it reads back writes out as
    the same record (exact ends, open ends, detail), so refreshing changes texts only."""
    spec = importlib.util.spec_from_file_location("make_report", ROOT / "claims_report" / "make_report.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    n = 0
    for c in json.loads(REPORT.read_text())["claims"]:
        for key in ("certified", "certified_right", "claimed"):
            if c.get(key):
                assert mod._interval(c[key]).to_dict() == c[key], (c["id"], key)
                n += 1
    assert n > 300


@pytest.mark.slow
def test_quick_claims_match_the_committed_report():
    """Re-check live every claim whose computations are quick: the status must match the report."""
    committed = {c["id"]: c["status"] for c in json.loads(REPORT.read_text())["claims"]}
    quick = [c for c in shipped_claims() if _quick(c)]
    assert len(quick) >= 60
    report = check_claims(quick, workers=2)
    mismatched = [
        (r.claim.uid, r.status, committed[r.claim.uid]) for r in report.results if r.status != committed[r.claim.uid]
    ]
    assert not mismatched


def test_each_claim_file_names_the_certdp_functions_it_uses():
    """The header of every claim file lists each computation its claims use with the certdp function
    behind it, exactly as the registry states it (so the file and the code cannot drift apart)."""
    from certdp.claims.model import parse_claims
    from certdp.claims.quantities import all_deps

    for path in sorted((ROOT / "certdp" / "claims").glob("*.toml")):
        text = path.read_text(encoding="utf-8")
        used: set[str] = set()

        def visit(ref, used=used) -> None:
            used.add(ref.name)
            for d in all_deps(ref):
                visit(d)

        for c in parse_claims(text, path.name):
            for r in c.refs:
                visit(r)
        listed = {}
        for line in text.splitlines():
            if line.startswith("#   ") and ": " in line and not line.startswith("#   ("):
                name, uses = line[4:].split(": ", 1)
                listed[name] = uses
        assert set(listed) == used, path.name
        for name, uses in listed.items():
            assert QUANTITIES[name].uses == uses, (path.name, name)
