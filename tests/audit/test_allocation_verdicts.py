"""Random-allocation audit cases and the verdicts on two-sided peers (no peer package needed):
case validation, the mirrored verdict on a peer's lower end, fault injection against the
certified reference, the reference against the Gaussian closed form (steps = 1, 50-digit mpmath),
and the refusal when the reference module cannot be imported."""

from __future__ import annotations

import re
import sys
from fractions import Fraction

import mpmath as mp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from certdp.audit.adapters import Adapter, PeerValue
from certdp.audit.cases import Case, case_from_dict, default_suite
from certdp.audit.reference import Reference, eps_allocation_reference
from certdp.audit.rerun import rejudge
from certdp.audit.run import run_audit
from certdp.audit.verdict import judge, judge_lower
from certdp.errors import InvalidArgument

ALLOC = {"id": "a", "steps": 4, "epochs": 2, "sigma": 1, "delta": 1e-5, "checks": ["eps-allocation"]}


def test_allocation_case_round_trips_and_has_no_q():
    case = case_from_dict(ALLOC, "c")
    assert case.allocation and case.epochs == 2 and case.q == Fraction(1, 4)
    d = case.to_dict()
    assert "q" not in d and d["epochs"] == 2
    assert case_from_dict(d, "again") == case
    assert "random allocation" in case.label()


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"q": 0.1}, "a.q=0.1 is not read by a random-allocation case"),
        ({"checks": ["eps-allocation", "eps-pld"]}, "cannot be combined with other checks"),
        ({"eps": 1}, "a.eps=1 is not read"),
        ({"epochs": 0}, "a.epochs=0"),
        ({"steps": 10**6, "epochs": 10**4}, "steps x epochs must be <="),
        ({"delta": None}, "a.delta is required by the check 'eps-allocation'"),
    ],
)
def test_allocation_case_refusals_name_the_field(change, words):
    raw = {k: v for k, v in {**ALLOC, **change}.items() if v is not None}
    with pytest.raises(InvalidArgument, match=re.escape(words)):
        case_from_dict(raw, "c")


def test_epochs_is_refused_in_a_poisson_case():
    with pytest.raises(InvalidArgument, match=r"p\.epochs is read only by a random-allocation case"):
        case_from_dict({"id": "p", "q": 0.1, "steps": 3, "epochs": 2, "sigma": 1, "delta": 1e-5}, "c")


def test_default_suite_has_allocation_cases():
    alloc = [c for c in default_suite() if c.allocation]
    assert len(alloc) >= 3 and all(c.checks == ("eps-allocation",) for c in alloc)
    assert {c.epochs for c in alloc} >= {1, 10}


REF = Reference("q", Fraction(2), Fraction(3), 0.0)


@pytest.mark.parametrize(
    ("value", "verdict"),
    [
        (2.5, "exact"),
        (2.0, "exact"),
        (3.0, "exact"),
        (1.0, "conservative"),
        (3.001, "UNSOUND"),
        (float("inf"), "UNSOUND"),
        (float("-inf"), "conservative"),
        (float("nan"), "inconclusive"),
    ],
)
def test_judge_lower_is_the_mirror_of_judge(value, verdict):
    assert judge_lower(value, REF).verdict == verdict
    assert judge(value, REF, side="lower").verdict == verdict


def test_judge_lower_roundoff_zone_and_one_sided_references():
    assert judge_lower(3 + 1e-9, REF, roundoff=Fraction(1, 10**6)).verdict == "roundoff"
    assert judge_lower(3 + 1e-3, REF, roundoff=Fraction(1, 10**6)).verdict == "UNSOUND"
    assert judge_lower(3 + 1e-3, REF, estimate=True).verdict == "estimate"
    only_upper = Reference("q", None, Fraction(3), 0.0, "why")
    assert judge_lower(2.5, only_upper).verdict == "inconclusive"  # might be above the truth: undecidable
    only_lower = Reference("q", Fraction(2), None, 0.0, "why")
    assert judge_lower(5.0, only_lower).verdict == "inconclusive"
    assert judge_lower(1.0, only_lower).verdict == "conservative"
    with pytest.raises(ValueError, match="side='middle'"):
        judge(1.0, REF, side="middle")


@settings(max_examples=200, deadline=None)
@given(
    v=st.fractions(min_value=-10, max_value=10),
    lo=st.fractions(min_value=-5, max_value=5),
    width=st.fractions(min_value=0, max_value=5),
    tol=st.fractions(min_value=0, max_value=1),
)
def test_judge_lower_equals_judge_of_the_negated_problem(v, lo, width, tol):
    """A lower bound v on X is an upper bound -v on -X: the verdicts agree exactly."""
    hi = lo + width
    mirrored = judge(-v, Reference("q", -hi, -lo, 0.0), roundoff=tol).verdict
    assert judge_lower(v, Reference("q", lo, hi, 0.0), roundoff=tol).verdict == mirrored


class FakeBand(Adapter):
    """A two-sided peer reporting a fixed band: the fault injected by the tests."""

    name = "fake"
    package = "certdp"

    def __init__(self, lower: float, upper: float) -> None:
        self.lower, self.upper = lower, upper

    def evaluate(self, case: Case) -> list[PeerValue]:
        return [
            self.value("band-upper", "eps-allocation", lambda: self.upper),
            self.value("band-lower", "eps-allocation", lambda: self.lower, side="lower"),
        ]


@pytest.fixture(scope="module")
def alloc_ref() -> tuple[Case, Reference]:
    pytest.importorskip("certdp.notions.allocation_dp")
    case = case_from_dict({**ALLOC, "steps": 3, "epochs": 1}, "c")
    ref = eps_allocation_reference(case.sigma, case.steps, case.epochs, case.delta)
    assert ref.lower is not None and ref.upper is not None, ref.reason
    return case, ref


def test_fake_band_outside_the_enclosure_fails_the_audit(alloc_ref):
    """Injected faults on both ends: an upper end below the certified lower end is UNSOUND, a lower
    end above the certified upper end is UNSOUND; a band around the enclosure passes."""
    case, r = alloc_ref
    lo, hi = float(r.lower), float(r.upper)
    res = run_audit([case], [FakeBand(lo * 0.99, hi * 1.01)])
    assert [row.judgement.verdict for row in res.rows] == ["conservative", "conservative"] and res.unsound == 0
    res = run_audit([case], [FakeBand(lo * 0.99, lo * (1 - 1e-4))])
    assert res.rows[0].judgement.verdict == "UNSOUND" and res.unsound == 1
    res = run_audit([case], [FakeBand(hi * (1 + 1e-4), hi * 1.01)])
    row = res.rows[1]
    assert row.judgement.verdict == "UNSOUND" and res.unsound == 1
    assert row.to_dict()["side"] == "lower" and abs(row.judgement.relative - 1e-4) < 1e-9
    finding = res.findings()["unsound"][0]
    assert finding["side"] == "lower" and finding["upper"] == r.to_dict()["upper"]
    # a report's row is judged again the same way (certdp audit --rerun)
    rec = row.to_dict()
    assert rejudge(rec, row.peer.value, case.steps).verdict == "UNSOUND"
    assert rejudge({**rec, "side": "upper"}, row.peer.value, case.steps).verdict == "conservative"
    with pytest.raises(InvalidArgument, match="side='sideways'"):
        rejudge({**rec, "side": "sideways"}, row.peer.value, case.steps)


def test_text_and_html_reports_name_a_lower_bound_finding(alloc_ref):
    """The headline says a lower end is above the certified upper end (not "below the lower end"),
    and the HTML page plots the eps-allocation rows."""
    from certdp.audit.report import render_html, render_text

    case, r = alloc_ref
    res = run_audit([case], [FakeBand(float(r.upper) * 1.01, float(r.upper) * 1.02)])
    text = render_text(res)
    assert "lower bound" in text and "> certified upper end" in text
    pytest.importorskip("matplotlib")
    page = render_html(res)
    assert "random-allocation epsilon" in page and "data:image/png;base64," in page


def _mp_gaussian_eps(s: mp.mpf, delta: mp.mpf) -> mp.mpf:
    """eps(delta) of the Gaussian mechanism with sensitivity 1 and noise s (Balle and Wang,
    arXiv:1805.06530): delta(eps) = Phi(1/(2s) - eps s) - e^eps Phi(-1/(2s) - eps s), decreasing in
    eps, solved by 300 bisection steps on [0, 64] (far below the 50 digits' resolution)."""

    def d(e: mp.mpf) -> mp.mpf:
        return mp.ncdf(1 / (2 * s) - e * s) - mp.exp(e) * mp.ncdf(-1 / (2 * s) - e * s) - delta

    lo, hi = mp.mpf(0), mp.mpf(64)
    for _ in range(300):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if d(mid) > 0 else (lo, mid)
    return lo


@settings(max_examples=3, deadline=None)
@given(sigma=st.sampled_from(["1.5", "2", "3"]), epochs=st.integers(1, 3), delta=st.sampled_from(["1e-5", "1e-3"]))
def test_reference_encloses_the_gaussian_closed_form_at_one_step(sigma, epochs, delta):
    """steps = 1: every epoch uses every record, so the run is the Gaussian mechanism composed
    ``epochs`` times, i.e. one Gaussian with noise sigma/sqrt(epochs)."""
    pytest.importorskip("certdp.notions.allocation_dp")
    ref = eps_allocation_reference(Fraction(sigma), 1, epochs, Fraction(delta))
    assert ref.lower is not None and ref.upper is not None, ref.reason
    with mp.workdps(50):
        true = _mp_gaussian_eps(mp.mpf(sigma) / mp.sqrt(epochs), mp.mpf(delta))
        assert mp.mpf(ref.lower.numerator) / ref.lower.denominator <= true
        assert true <= mp.mpf(ref.upper.numerator) / ref.upper.denominator


def test_reference_not_available_is_a_refusal_not_a_pass(monkeypatch):
    """Without certdp.notions.allocation_dp every value is inconclusive, with the reason."""
    monkeypatch.setitem(sys.modules, "certdp.notions.allocation_dp", None)  # the import raises ImportError
    case = case_from_dict(ALLOC, "c")
    res = run_audit([case], [FakeBand(0.0, 1e9)])
    assert [row.judgement.verdict for row in res.rows] == ["inconclusive", "inconclusive"]
    assert all("reference not available" in row.judgement.why for row in res.rows)


# --- k of t steps (each record in k steps of an epoch) -------------------------------------------


def test_k_case_round_trips_with_rate_k_over_t():
    case = case_from_dict({**ALLOC, "k": 2}, "c")
    assert case.k == 2 and case.q == Fraction(2, 4) and "k=2" in case.label()
    d = case.to_dict()
    assert d["k"] == 2 and case_from_dict(d, "again") == case
    assert "k" not in case_from_dict(ALLOC, "c").to_dict()  # k = 1 is not written out


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        ({**ALLOC, "k": 0}, "a.k=0 must be >= 1"),
        ({**ALLOC, "k": 5}, "a.k=5 must be <= steps=4"),
        ({**ALLOC, "k": 1.5}, "a.k=1.5"),
        ({"id": "p", "q": 0.1, "steps": 3, "k": 2, "sigma": 1, "delta": 1e-5}, "p.k is read only by a random"),
    ],
)
def test_k_refusals_name_the_field(raw, words):
    with pytest.raises(InvalidArgument, match=re.escape(words)):
        case_from_dict(raw, "c")


WIDE = Reference("q", Fraction(2), Fraction(3), 0.0, wide=True)


@pytest.mark.parametrize(
    ("value", "side", "verdict"),
    [
        (2.5, "upper", "inconclusive"),
        (2.0, "upper", "inconclusive"),
        (1.9, "upper", "UNSOUND"),
        (3.1, "upper", "conservative"),
        (2.5, "lower", "inconclusive"),
        (3.1, "lower", "UNSOUND"),
        (1.9, "lower", "conservative"),
    ],
)
def test_a_wide_reference_never_calls_a_value_exact(value, side, verdict):
    j = judge(value, WIDE, side=side)
    assert j.verdict == verdict, j
    if verdict == "inconclusive":
        assert "wide" in j.why
    assert WIDE.to_dict()["wide"] is True and "wide" not in REF.to_dict()


def test_k_equal_t_reference_is_refined_and_contains_the_gaussian():
    """k = t = 2, one epoch: the pair is one Gaussian of mu = sqrt(2)/sigma, which the reference
    answers on the equal 1-step run (both ends refined, not marked wide); 80-digit mpmath."""
    ref = eps_allocation_reference(Fraction(1), 2, 1, Fraction(1, 10**5), k=2)
    assert not ref.wide and ref.lower is not None and ref.upper is not None and "2 of 2 steps" in ref.quantity
    assert ref.upper - ref.lower <= ref.upper / 1000
    # The Gaussian's delta(eps) decreases in eps, so eps lies in [lo, hi] iff delta(lo) >= 1e-5 >= delta(hi).
    # Signs at 80 digits, not a root found by bisection: the closed form is tight to about 1e-27,
    # below what mpmath's bisection resolves at its default tolerance.
    mp.mp.dps = 80
    mu = mp.sqrt(2)

    def gap(e):
        return mp.ncdf(-e / mu + mu / 2) - mp.e**e * mp.ncdf(-e / mu - mu / 2) - mp.mpf("1e-5")

    lo = mp.mpf(ref.lower.numerator) / ref.lower.denominator
    hi = mp.mpf(ref.upper.numerator) / ref.upper.denominator
    assert gap(lo) >= 0 >= gap(hi)


@pytest.mark.slow
def test_k_below_t_reference_is_wide():
    """1 < k < t: the reduction's upper end and the statistic's lower end, marked wide (a verdict
    against it can only be inconclusive inside it)."""
    ref = eps_allocation_reference(Fraction(1), 3, 1, Fraction(1, 10**5), k=2)
    assert ref.wide and ref.lower is not None and ref.upper is not None and "2 of 3 steps" in ref.quantity
    assert 0 < ref.lower < ref.upper


def test_rejudge_reads_the_wide_mark():
    record = {"compared": "q", "lower": "2", "upper": "3", "kind": "eps-allocation", "wide": True}
    assert rejudge(record, 2.5, 10).verdict == "inconclusive"
    assert rejudge({**record, "wide": False}, 2.5, 10).verdict == "exact"


def test_pld_accounting_k_case_end_to_end():
    """The real peer (test extra) on k = 2 of 10: its band is consistent with the wide reference."""
    pytest.importorskip("PLD_accounting")
    case = case_from_dict(
        {"id": "k2", "steps": 10, "epochs": 1, "k": 2, "sigma": 1, "delta": 1e-5, "checks": ["eps-allocation"]}, "c"
    )
    from certdp.audit.adapters import load_adapter

    report = run_audit([case], [load_adapter("pld_accounting")])
    verdicts = [r.judgement.verdict for r in report.rows]
    assert len(verdicts) == 2 and all(r.reference.wide for r in report.rows)
    assert "UNSOUND" not in verdicts and "exact" not in verdicts  # a wide reference calls nothing exact
    for row in report.rows:  # the record carries the mark, and a rerun judges it the same way
        rec = row.to_dict()
        assert rec["wide"] is True
        assert rejudge(rec, row.peer.value, case.steps).verdict == row.judgement.verdict


def test_rerun_derives_the_wide_mark_from_the_case_k(monkeypatch):
    """A k > 1 row whose ``wide`` mark was deleted (and its verdict edited to exact) is still judged
    inconclusive on rerun: the mark follows from the recorded case, not only from the row."""
    from certdp.audit.rerun import rerun_report

    class Replay:
        orders = ()

        def replay(self, call):
            return 2.5

        def version(self):
            return "0"

        path = "fake"

    row = {"case": "k2", "peer": "fake", "method": "m", "kind": "eps-allocation", "compared": "q"}
    row |= {"lower": "2", "upper": "3", "value": "2.5", "verdict": "exact", "call": {}}
    cases = [{"id": "k2", "steps": 10, "epochs": 1, "k": 2}]
    import certdp.audit.rerun as rr

    monkeypatch.setattr(rr, "load_adapter", lambda name: Replay())
    out = rerun_report({"rows": [row], "cases": cases})
    assert out["rows"][0]["verdict"] == "inconclusive" and out["same_verdict"] == 0
    out1 = rerun_report({"rows": [row], "cases": [{**cases[0], "k": 1}]})
    assert out1["rows"][0]["verdict"] == "exact"  # k = 1: a tight reference, exact stays exact
    # a loose k, a case that is not recorded, or a malformed integer field is refused in one line
    # (attack review: "1.5" and 1.99 were rounded down to 1, a missing case read as k = 1)
    for k in ("two", "1.5", 1.99, float("inf"), 0, True):
        with pytest.raises(InvalidArgument, match=re.escape(f"case k2: k={k!r} must be an integer >= 1")):
            rerun_report({"rows": [row], "cases": [{**cases[0], "k": k}]})
    for field, value in (("steps", "abc"), ("steps", None), ("epochs", 1e400)):
        with pytest.raises(InvalidArgument, match=f"case k2: {field}="):
            rerun_report({"rows": [row], "cases": [{**cases[0], field: value}]})
    with pytest.raises(InvalidArgument, match="names case 'k2', which is not in cases"):
        rerun_report({"rows": [row], "cases": [{**cases[0], "id": "k2 "}]})
    with pytest.raises(InvalidArgument, match="string id"):
        rerun_report({"rows": [row], "cases": [{**cases[0], "id": ["x"]}]})
