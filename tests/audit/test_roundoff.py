"""Issue 35 (audit): roundoff versus UNSOUND, estimates, recorded peer calls and reruns.

Synthetic inputs (a fake peer only injects faults) check the classification; the real peers
(each test skips cleanly when its peer is missing) check the material findings of the default
suite: the delta = 1e-12 PLD rows stay UNSOUND, the RDP float noise is roundoff; and one recorded
row of the committed audits/report.json is rerun from its recorded call."""

from __future__ import annotations

import importlib.util
import json
import math
from fractions import Fraction
from pathlib import Path

import pytest

from certdp.audit.adapters import Adapter, PeerValue, environment, load_adapter
from certdp.audit.cases import Case, case_from_dict, default_suite
from certdp.audit.reference import Reference, eps_pld_reference, rdp_reference
from certdp.audit.report import headline, render_html, render_text
from certdp.audit.rerun import rejudge, rerun_report, rerun_row
from certdp.audit.run import run_audit
from certdp.audit.tolerance import SERIES_ULPS, ULP, tolerance
from certdp.audit.verdict import FLOAT_SLACK, judge
from certdp.cli import main
from certdp.errors import InvalidArgument

REPORT = Path(__file__).resolve().parents[2] / "audits" / "report.json"
PEER_MODULES = {"dp_accounting": "dp_accounting", "prv": "prv_accountant", "opacus": "opacus", "autodp": "autodp"}


def ref(lo: Fraction | None, hi: Fraction | None) -> Reference:
    return Reference("test quantity", lo, hi, 0.0)


def peer(name: str) -> Adapter:
    if importlib.util.find_spec(PEER_MODULES.get(name, name)) is None:
        pytest.skip(f"{name} is not installed")
    return load_adapter(name)


# --- the verdict on synthetic values -------------------------------------------------------------


@pytest.mark.parametrize("estimate", [False, True])
def test_roundoff_band_edges_are_exact(estimate):
    """Below the lower end by at most slack |v| + tolerance: roundoff; one ulp further: UNSOUND (or
    estimate for an estimate); exact rational comparisons at the very edge."""
    lo, tol = Fraction(1, 3), Fraction(1, 10**6)
    # v = lo - slack v - tol exactly: v (1 + slack) = lo - tol
    edge = (lo - tol) / (1 + FLOAT_SLACK)
    assert judge(edge, ref(lo, lo), roundoff=tol, estimate=estimate).verdict == "roundoff"
    past = edge - Fraction(1, 10**30)
    j = judge(past, ref(lo, lo), roundoff=tol, estimate=estimate)
    assert j.verdict == ("estimate" if estimate else "UNSOUND")
    assert abs(j.relative - float((lo - past) / lo)) < 1e-15
    # without a tolerance the same value is past the band
    assert judge(lo - tol / 2, ref(lo, lo), estimate=estimate).verdict == ("estimate" if estimate else "UNSOUND")
    assert judge(lo - tol / 2, ref(lo, lo), roundoff=tol, estimate=estimate).verdict == "roundoff"


def test_estimates_inside_or_above_keep_their_verdict_and_minus_inf_is_an_estimate():
    r = ref(Fraction(1), Fraction(2))
    assert judge(1.5, r, estimate=True).verdict == "exact"
    assert judge(2.5, r, estimate=True).verdict == "conservative"
    assert judge(-math.inf, r, estimate=True).verdict == "estimate"
    assert judge(-math.inf, r).verdict == "UNSOUND"
    # one side only: a value below an upper end says nothing, whatever the tolerance
    assert judge(0.5, ref(None, Fraction(1)), roundoff=Fraction(1)).verdict == "inconclusive"


def test_tolerance_rules():
    v = Fraction(1, 2)
    t = tolerance("rdp", v, 1000, Fraction(3, 2))
    assert t.bound == Fraction(SERIES_ULPS, 2**52) * (Fraction(1000) / Fraction(1, 2) + v)
    assert t.bound == Fraction(1, 2**40) * (2000 + v)
    # eps-rdp: the smallest order rules; a conversion over all real orders takes alpha - 1 = 1/10
    orders = (Fraction(4), Fraction(11, 10), Fraction(2))
    assert tolerance("eps-rdp", v, 10, None, orders).bound == Fraction(1, 2**40) * (100 + v)
    assert tolerance("eps-rdp", v, 10, None, ()).bound == Fraction(1, 2**40) * (100 + v)
    # FFT accountants: one ulp of the value per composition; calibrations: none
    assert tolerance("eps-pld", Fraction(4), 10**4, None).bound == 10**4 * ULP * 4
    assert tolerance("delta-pld", Fraction(1, 10**6), 1).bound == ULP / 10**6
    assert tolerance("sigma-pld", Fraction(1), 10**4).bound == 0
    assert tolerance("no-such-kind", Fraction(1), 10).bound == 0


class FakePeer(Adapter):
    """Reports the value the test injects, as a guarantee or (``estimate``) as an estimate."""

    name = "fake"
    package = "certdp"

    def __init__(self, kind: str, value: float, estimate: bool = False, order: Fraction | None = None) -> None:
        self.kind, self.injected, self.estimate, self.order = kind, value, estimate, order

    def evaluate(self, case: Case) -> list[PeerValue]:
        return [self.value("fake", self.kind, lambda: self.injected, estimate=self.estimate, order=self.order)]


def test_fake_rdp_peer_roundoff_versus_unsound():
    """An RDP value half its float tolerance below the certified lower end is roundoff (not
    counted), one four tolerances below is UNSOUND and fails the audit."""
    order = Fraction(3, 2)
    case = Case("r", Fraction(1, 100), 1000, ("rdp",), Fraction(1), orders=(order,))
    r = rdp_reference(case.q, case.sigma, case.steps, order)  # type: ignore[arg-type]
    assert r.lower is not None
    tol = tolerance("rdp", r.lower, case.steps, order).bound
    near = float(r.lower - tol / 2)
    far = float(r.lower - 4 * tol)
    res = run_audit([case], [FakePeer("rdp", near, order=order), FakePeer("rdp", far, order=order)])
    assert [row.judgement.verdict for row in res.rows] == ["roundoff", "UNSOUND"]
    assert res.unsound == 1
    f = res.findings()
    assert len(f["unsound"]) == 1 and f["unsound"][0]["value"] == repr(far)
    assert f["roundoff"]["count"] == 1 and f["counts"]["roundoff"] == 1
    rec = res.rows[0].to_dict()
    assert rec["verdict"] == "roundoff" and float(rec["roundoff_tolerance"]) == pytest.approx(float(tol), rel=1e-6)


def test_fake_pld_peer_past_fft_noise_is_unsound_and_estimate_is_not_counted():
    """On the exact epsilon at 1e4 steps, the FFT tolerance is 1e4 x 2^-52 relative: a value 1e-13
    relative below is roundoff, one 1e-4 below (the size of the delta = 1e-12 finding) is UNSOUND
    for a guarantee and estimate for an estimate."""
    case = Case("p", Fraction(1, 100), 10_000, ("eps-pld",), Fraction(2), Fraction(1, 10**5))
    r = eps_pld_reference(case.q, case.sigma, case.steps, case.delta)  # type: ignore[arg-type]
    assert r.lower is not None
    low = float(r.lower) * (1 - 1e-4)
    noise = float(r.lower * (1 - Fraction(1, 10**12) - Fraction(1, 10**13)))
    peers = [FakePeer("eps-pld", noise), FakePeer("eps-pld", low), FakePeer("eps-pld", low, estimate=True)]
    res = run_audit([case], peers)
    assert [row.judgement.verdict for row in res.rows] == ["roundoff", "UNSOUND", "estimate"]
    assert res.unsound == 1 and res.summary()["fake"]["unsound_guarantees"] == 1


def test_summary_leads_with_material_findings(tmp_path):
    pytest.importorskip("matplotlib")
    case = Case("r", Fraction(1, 100), 1000, ("rdp",), Fraction(1), orders=(Fraction(2),))
    r = rdp_reference(case.q, case.sigma, case.steps, Fraction(2))
    assert r.lower is not None
    res = run_audit([case], [FakePeer("rdp", float(r.lower) * 0.9, order=Fraction(2))])
    text = render_text(res).splitlines()
    assert text[1].startswith("UNSOUND: 1 value") and "0.1 relative" in text[2]
    assert text.index("Per peer:") > 2
    assert headline(res)[0] == text[1]
    html = render_html(res)
    assert html.index("<h2>Findings</h2>") < html.index("<h2>Peers</h2>")
    assert "numpy " + environment()["numpy"] in html


# --- recorded calls and reruns --------------------------------------------------------------------


def test_report_records_environment_and_every_peer_argument():
    a = peer("dp_accounting")
    case = case_from_dict(
        {"id": "c", "q": 0.5, "sigma": 5, "steps": 10, "delta": 1e-3, "orders": [1.5], "checks": ["rdp", "eps-pld"]},
        "c",
    )
    rec = run_audit([case], [a]).to_dict()
    env = rec["environment"]
    assert {"python", "numpy", "scipy", "numpy_cpu_features"} <= set(env) and env["numpy"][0].isdigit()
    assert list(rec)[:3] == ["quantity", "certdp_version", "findings"]
    for row in rec["rows"]:
        call = row["call"]
        assert call["function"] and call["api"] and call["args"]
        assert json.loads(json.dumps(call)) == call  # JSON as it is
        assert rerun_row(row, a) == float(row["value"])  # bit for bit, the same process
    rdp = next(r for r in rec["rows"] if r["kind"] == "rdp")
    assert rdp["call"]["args"]["alpha"] == 1.5 and "orders" not in rdp["call"]["defaults"]  # set by the call
    pld = next(r for r in rec["rows"] if r["method"] == "pld")
    assert pld["call"]["args"]["value_discretization_interval"] == 1e-4  # dp_accounting's default, made explicit


def test_prv_eps_error_and_peers_fields():
    case = case_from_dict(
        {"id": "x", "q": 0.01, "sigma": 2, "steps": 10, "delta": 1e-5, "prv_eps_error": 0.005, "peers": ["prv"]},
        "c",
    )
    assert case.prv_eps_error == Fraction(1, 200) and case.peers == ("prv",)
    assert case_from_dict(case.to_dict(), "c") == case
    with pytest.raises(InvalidArgument, match=r"x\.peers: tf must be one of"):
        case_from_dict({**case.to_dict(), "peers": ["tf"]}, "c")
    with pytest.raises(InvalidArgument, match=r"x\.prv_eps_error=0 must be > 0"):
        case_from_dict({**case.to_dict(), "prv_eps_error": 0}, "c")
    # a case that names peers is asked of those only
    res = run_audit([case], [FakePeer("eps-pld", 1.0)])
    assert res.rows == []


def _recorded_rows() -> tuple[dict, list[dict]]:
    if not REPORT.is_file():
        pytest.skip("audits/report.json is not in this checkout")
    report = json.loads(REPORT.read_text())
    return report, report["rows"]


def _same_environment(report: dict, adapter: Adapter) -> bool:
    env, now = report.get("environment") or {}, environment()
    keys = ("python", "numpy", "scipy", "machine", "numpy_cpu_features")
    return all(env.get(k) == now[k] for k in keys) and report["peers"][adapter.name]["version"] == adapter.version()


@pytest.mark.parametrize(
    ("case_id", "peer_name", "method", "order", "verdict"),
    [
        ("pld-q0.01-s2-n10000", "dp_accounting", "pld", None, "UNSOUND"),
        ("rdp-q0.001-s0.7-n100000", "opacus", "rdp", "1.5", "roundoff"),
    ],
)
def test_a_recorded_row_of_the_committed_report_reruns(case_id, peer_name, method, order, verdict):
    """The committed report's delta = 1e-12 PLD row (UNSOUND) and its largest RDP roundoff row,
    rerun from their recorded calls: the same verdict against the recorded ends, and the same float
    bit for bit when the recorded environment (python, numpy, scipy, CPU features, peer version) is
    this one (FFT roundoff depends on them)."""
    report, rows = _recorded_rows()
    row = next(
        r
        for r in rows
        if r["case"] == case_id and r["peer"] == peer_name and r["method"] == method and r.get("order") == order
    )
    assert row["verdict"] == verdict
    a = peer(peer_name)
    value = rerun_row(row, a)
    steps = next(c["steps"] for c in report["cases"] if c["id"] == case_id)
    assert rejudge(row, value, steps, getattr(a, "orders", ())).verdict == verdict
    if _same_environment(report, a):
        assert value == float(row["value"])
    else:
        assert value == pytest.approx(float(row["value"]), rel=1e-3)


def test_committed_report_classifies_the_issue_findings():
    """The delta = 1e-12 PLD rows are UNSOUND; the RDP values below the certified lower end are all
    roundoff; the Opacus GDP and dp_accounting optimistic values below it are estimates."""
    report, rows = _recorded_rows()
    unsound = [r for r in rows if r["verdict"] == "UNSOUND"]
    assert any(r["case"] == "pld-q0.01-s2-n10000" and r["method"] == "pld" for r in unsound)
    assert all(r["kind"] == "eps-pld" and r["case"].startswith("pld-q0.01-s2-n10000") for r in unsound)
    below_rdp = [r for r in rows if r["kind"] in ("rdp", "eps-rdp") and r["verdict"] in ("UNSOUND", "roundoff")]
    assert len(below_rdp) >= 40 and all(r["verdict"] == "roundoff" for r in below_rdp)
    gdp = [r for r in rows if r["method"] in ("gdp", "pld-optimistic")]
    assert gdp and all(r.get("estimate") and r["verdict"] != "UNSOUND" for r in gdp)
    assert report["findings"]["counts"]["UNSOUND"] == len(unsound)
    assert all("call" in r for r in rows)


def test_default_suite_subset_pld_unsound_rdp_roundoff():
    """certdp audit on the default suite's delta = 1e-12 case and the RDP case with the largest
    roundoff: dp_accounting's pessimistic PLD is UNSOUND, Opacus's alpha = 1.5 RDP is roundoff."""
    a, o = peer("dp_accounting"), peer("opacus")
    suite = {c.id: c for c in default_suite()}
    res = run_audit([suite["pld-q0.01-s2-n10000"], suite["rdp-q0.001-s0.7-n100000"]], [a, o])
    v = {(r.case.id, r.peer.peer, r.peer.method, r.peer.order): r.judgement.verdict for r in res.rows}
    assert v[("pld-q0.01-s2-n10000", "dp_accounting", "pld", None)] == "UNSOUND"
    assert v[("pld-q0.01-s2-n10000", "opacus", "gdp", None)] == "estimate"
    assert v[("pld-q0.01-s2-n10000", "dp_accounting", "pld-optimistic", None)] == "estimate"
    assert v[("rdp-q0.001-s0.7-n100000", "opacus", "rdp", Fraction(3, 2))] == "roundoff"
    assert all(r.judgement.verdict != "UNSOUND" for r in res.rows if r.peer.kind in ("rdp", "eps-rdp"))


def test_cli_rerun(tmp_path, capsys):
    a = peer("dp_accounting")
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([{"id": "f", "q": 0.2, "sigma": 5, "steps": 1, "orders": [1.5, 2], "checks": ["rdp"]}]))
    assert main(["audit", "--cases", str(cases), "--peers", a.name, "--json"]) == 0
    report = tmp_path / "report.json"
    report.write_text(capsys.readouterr().out)
    assert main(["audit", "--rerun", str(report), "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["rerun"] == rec["same_value"] == rec["same_verdict"] == 2
    # a tampered recorded value no longer reproduces, and the verdict changes: exit 1
    data = json.loads(report.read_text())
    data["rows"][0]["value"], data["rows"][0]["verdict"] = "0.5", "UNSOUND"
    report.write_text(json.dumps(data))
    assert main(["audit", "--rerun", str(report)]) == 1
    out = capsys.readouterr().out
    assert "1 reproduce the recorded value bit for bit, 1 its verdict" in out and "(UNSOUND), now" in out
    # a report without recorded calls is refused in one line naming the row
    del data["rows"][0]["call"]
    report.write_text(json.dumps(data))
    assert main(["audit", "--rerun", str(report)]) == 2
    assert "row f dp_accounting rdp: call is missing" in capsys.readouterr().err


def test_rerun_report_skips_missing_or_unrequested_peers():
    report = {"cases": [{"id": "c", "steps": 1}], "rows": [{"case": "c", "peer": "autodp", "call": {}}]}
    rec = rerun_report(report, peers=["prv"])
    assert rec["rerun"] == 0 and rec["skipped_peers"] == {"autodp": "not requested"}


@pytest.mark.parametrize("name", ["autodp", "riskcal", "prv"])
def test_peers_without_a_calibration_answer_nothing_for_a_sigma_case(name):
    """A calibration case (no sigma) is not asked of the peers that have no calibration."""
    a = peer(name)
    case = case_from_dict({"id": "s", "q": 0.01, "steps": 100, "eps": 1, "delta": 1e-5, "checks": ["sigma"]}, "c")
    assert a.evaluate(case) == []


def test_claims_roundoff_and_estimate_sentences(capsys):
    """--claim applies the same tolerance and estimate rules: Opacus's recorded alpha = 1.5 RDP at
    1e5 steps is roundoff (exit 0); a GDP epsilon below the exact one is an estimate (exit 0); the
    same number from a guarantee (method prv) is UNSOUND (exit 1)."""
    rdp = "opacus rdp rdp=0.49740549508216403 alpha=1.5 sigma=0.7 q=0.001 steps=100000"
    assert main(["audit", "--claim", rdp]) == 0
    out = capsys.readouterr().out
    assert "is roundoff: 2.88e-08 relative below" in out and "not a violation" in out
    gdp = "opacus gdp eps=0.79 sigma=5 q=0.5 steps=10 delta=1e-3"
    assert main(["audit", "--claim", gdp]) == 0
    assert "is an estimate below the truth" in capsys.readouterr().out
    assert main(["audit", "--claim", gdp.replace(" gdp ", " prv ")]) == 1
    assert "is UNSOUND" in capsys.readouterr().out
