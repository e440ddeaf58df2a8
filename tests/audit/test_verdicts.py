"""Verdicts, references and the fake peers the issue asks for (an injected wrong peer is flagged)."""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mpmath import mp

from certdp.audit.adapters import Adapter, PeerValue
from certdp.audit.cases import Case
from certdp.audit.reference import Reference, eps_pld_reference, sigma_interval
from certdp.audit.run import run_audit
from certdp.audit.verdict import FLOAT_SLACK, judge
from certdp.notions.pld import MAX_STEPS as MAX_PLD_STEPS
from tests.refs import subsampled_cgf

ORDERS = (Fraction(3, 2), Fraction(2), Fraction(4), Fraction(16))


def ref(lo, hi, reason="") -> Reference:
    f = lambda x: None if x is None else Fraction(x)  # noqa: E731
    return Reference("test quantity", f(lo), f(hi), 0.0, reason)


@pytest.mark.parametrize(
    ("value", "lo", "hi", "verdict"),
    [
        (1.0, "0.5", "1.5", "exact"),
        (0.4, "0.5", "1.5", "UNSOUND"),
        (1.6, "0.5", "1.5", "conservative"),
        (math.inf, "0.5", "1.5", "conservative"),
        (-math.inf, "0.5", "1.5", "UNSOUND"),
        (math.nan, "0.5", "1.5", "inconclusive"),
        (0.4, None, "1.5", "inconclusive"),  # only an upper end: a small value says nothing
        (1.6, None, "1.5", "conservative"),
        (0.4, "0.5", None, "UNSOUND"),
        (1.6, "0.5", None, "inconclusive"),
        (1.0, None, None, "inconclusive"),
    ],
)
def test_judge_cases(value, lo, hi, verdict):
    assert judge(value, ref(lo, hi)).verdict == verdict


def test_judge_float_slack_is_tight():
    """A value one slack below the lower end is exact; twice the slack below is UNSOUND."""
    lo = Fraction(1, 3)
    inside = float(lo * (1 - FLOAT_SLACK / 2))
    outside = float(lo * (1 - 2 * FLOAT_SLACK))
    assert judge(inside, ref(lo, lo)).verdict == "exact"
    j = judge(outside, ref(lo, lo))
    assert j.verdict == "UNSOUND" and 1.5 * float(FLOAT_SLACK) < j.relative < 2.5 * float(FLOAT_SLACK)


def test_judge_huge_distances_are_inf_not_a_crash():
    j = judge(Fraction(10**400), ref("0", "1e-300"))
    assert j.verdict == "conservative" and j.relative == math.inf


def test_judge_relative_excess():
    j = judge(1.1, ref("0.9", "1"))
    assert j.verdict == "conservative" and abs(j.relative - 0.1) < 1e-12


def test_sigma_interval_brackets_a_threshold():
    threshold = Fraction(7919, 10000)
    lo, hi, why = sigma_interval(lambda s: s >= threshold, Fraction(1), Fraction(1, 10**6))
    assert why == "" and lo < threshold <= hi and (hi - lo) <= hi / 10**6
    # an undecided probe stops the search without inventing a side
    lo, hi, why = sigma_interval(lambda s: None, Fraction(1), Fraction(1, 10**6))
    assert lo is None and hi is None and "undecided" in why


@functools.cache
def mp_step_cgf(q: str, sigma: str, order: Fraction) -> mp.mpf:
    """log E[(P/Q)^alpha] of one step, the larger direction, by 50-digit quadrature (cached: the
    hypothesis draws share their (q, sigma, order))."""
    with mp.workdps(50):
        a = mp.mpf(order.numerator) / order.denominator
        return max(subsampled_cgf(q, sigma, a, d) for d in ("remove", "add"))


def mp_cks_epsilon(q, sigma, steps, delta, orders) -> mp.mpf:
    """Independent 50-digit reference of the CKS conversion over ``orders`` (max of the directions)."""
    with mp.workdps(50):
        best = mp.inf
        for order in orders:
            k = mp_step_cgf(q, sigma, order)
            a = mp.mpf(order.numerator) / order.denominator
            e = steps * k / (a - 1) + mp.log((a - 1) / a) - (mp.log(mp.mpf(delta)) + mp.log(a)) / (a - 1)
            best = min(best, e)
        return max(best, mp.mpf(0))


class FakePeer(Adapter):
    """A peer that reports a fixed function of the true value: the fault injected by the test."""

    name = "fake"
    package = "certdp"

    def __init__(self, kind: str, values: dict[str, float], conversion: str = "cks") -> None:
        self.kind, self.values, self.conversion = kind, values, conversion

    def evaluate(self, case: Case) -> list[PeerValue]:
        orders = ORDERS if self.kind == "eps-rdp" else ()
        return [self.value("fake", self.kind, lambda: self.values[case.id], orders=orders, conversion=self.conversion)]


@settings(max_examples=10)
@given(
    q=st.sampled_from(["0.01", "0.2", "1"]),
    sigma=st.sampled_from(["0.8", "4"]),
    steps=st.integers(1, 2000),
    delta=st.sampled_from(["1e-3", "1e-6", "1e-10"]),
)
def test_fake_rdp_peer_off_by_minus_1e6_is_unsound_and_plus_1e3_conservative(q, sigma, steps, delta):
    """The issue's injected faults, on RDP epsilons with an independent 50-digit mpmath reference:
    the true value is exact, true - 1e-6 UNSOUND, true + 1e-3 conservative."""
    true = mp_cks_epsilon(q, sigma, steps, delta, ORDERS)
    if true < mp.mpf("1e-4"):
        return  # clamped at 0: no smaller claim to inject
    case = Case("c", Fraction(q), steps, ("eps-rdp",), Fraction(sigma), Fraction(delta))
    with mp.workdps(50):
        values = {"exact": float(true), "low": float(true - mp.mpf("1e-6")), "high": float(true + mp.mpf("1e-3"))}
    expect = {"exact": "exact", "low": "UNSOUND", "high": "conservative"}
    # one audit of the three peers: the certified reference is computed once and shared by them
    res = run_audit([case], [FakePeer("eps-rdp", {"c": value}) for value in values.values()])
    r = res.rows[0].reference
    assert r.lower is not None and r.upper is not None and all(row.reference is r for row in res.rows)
    with mp.workdps(50):  # the certified enclosure contains the independent reference
        assert mp.mpf(r.lower.numerator) / r.lower.denominator <= true + mp.mpf("1e-40")
        assert true - mp.mpf("1e-40") <= mp.mpf(r.upper.numerator) / r.upper.denominator
    assert [row.judgement.verdict for row in res.rows] == [expect[name] for name in values]


@pytest.fixture(scope="module")
def pld_case() -> tuple[Case, Reference]:
    case = Case("p", Fraction(1, 2), 10, ("eps-pld",), Fraction(5), Fraction(1, 1000))
    return case, eps_pld_reference(case.q, case.sigma, case.steps, case.delta)


def test_fake_pld_peer_is_flagged(pld_case):
    """On the exact epsilon (PLD): a peer 1e-6 below the certified lower end is UNSOUND, one 1e-3
    above the upper end is conservative, the summary names the worst finding and the exit status counts it."""
    case, r = pld_case
    assert r.lower is not None and r.upper is not None and r.upper - r.lower < Fraction(1, 10**4)
    low = FakePeer("eps-pld", {"p": float(r.lower) - 1e-6})
    high = FakePeer("eps-pld", {"p": float(r.upper) + 1e-3})
    res = run_audit([case], [low])
    assert res.rows[0].judgement.verdict == "UNSOUND" and res.unsound == 1
    assert res.summary()["fake"]["worst"]["verdict"] == "UNSOUND"
    res = run_audit([case], [high])
    assert res.rows[0].judgement.verdict == "conservative" and res.unsound == 0
    assert abs(res.rows[0].judgement.relative - 1e-3 / float(r.upper)) < 1e-6


def test_peer_failure_is_inconclusive_not_a_crash(pld_case):
    class Broken(FakePeer):
        def evaluate(self, case):
            return [self.value("broken", "eps-pld", lambda: 1 / 0)]

    case, _ = pld_case
    res = run_audit([case], [Broken("eps-pld", {})])
    row = res.rows[0]
    assert row.judgement.verdict == "inconclusive" and "ZeroDivisionError" in row.peer.error


def test_an_estimate_below_the_truth_is_reported_but_does_not_fail_the_audit(pld_case):
    class Optimistic(FakePeer):
        def evaluate(self, case):
            return [self.value("optimistic", "eps-pld", lambda: self.values[case.id], estimate=True)]

    case, r = pld_case
    res = run_audit([case], [Optimistic("eps-pld", {"p": float(r.lower) * 0.99})])
    assert res.rows[0].judgement.verdict == "estimate" and res.rows[0].to_dict()["estimate"] is True
    summary = res.summary()["fake"]
    assert res.unsound == 0 and summary["unsound_guarantees"] == 0 and summary["counts"]["estimate"] == 1
    assert summary["counts"]["UNSOUND"] == 0 and len(res.findings()["estimates_below_truth"]) == 1
    assert summary["worst"] is None


def test_past_the_lattice_limit_only_the_upper_side_is_certified():
    """More steps than the lattice accepts: the exact-epsilon reference keeps only the RDP conversion's upper end, so a
    value below it is inconclusive (certdp has one side only) and a value above it conservative."""
    r = eps_pld_reference(Fraction(1, 100), Fraction(1), 2 * MAX_PLD_STEPS, Fraction(1, 10**5))
    assert r.lower is None and r.upper is not None and "limit" in r.reason
    assert judge(float(r.upper) * 0.9, r).verdict == "inconclusive"
    assert judge(float(r.upper) * 1.1, r).verdict == "conservative"
