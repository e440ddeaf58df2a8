"""The claims checker: the judging rules on exact intervals, and end-to-end runs that confirm and refute."""

from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from certdp.claims import check_claims, load_claims
from certdp.claims.check import Outcome, judge
from certdp.claims.interval import Interval, inside, outside
from certdp.claims.model import parse_claims
from certdp.cli import main

HERE = Path(__file__).parent
HEADER = '[paper]\nid = "p"\ntitle = "t"\nauthors = "a"\nurl = "u"\n'


def _one(body: str):
    return parse_claims(HEADER + "[[claim]]\n" + body, "test")[0]


def _judge(claim, *intervals):
    results = {r.key: Outcome(iv) for r, iv in zip(claim.refs, intervals, strict=True)}
    return judge(claim, results, {})


VALUE = (
    'id = "v"\nwhere = "w"\nprinted = "1.737"\nstatement = "s"\nkind = "value"\n'
    'quantity = "constant"\nparams = { name = "sqrt(pi)" }\n'
)


def test_value_inside_outside_straddle():
    c = _one(VALUE)
    assert _judge(c, Interval(Fraction("1.7369"), Fraction("1.7371"))).status == "confirmed"
    assert _judge(c, Interval(Fraction("1.7376"), Fraction("1.7377"))).status == "refuted"
    assert _judge(c, Interval(Fraction("1.7374"), Fraction("1.7376"))).status == "imprecise"
    # "nearest" is closed at both ends: a value exactly halfway prints either way (the tie rule is unknown)
    assert _judge(c, Interval(Fraction("1.7375"), Fraction("1.7375"))).status == "confirmed"
    assert _judge(c, Interval(Fraction("1.7375"), Fraction("1.73751"))).status == "imprecise"
    assert _judge(c, Interval(None, Fraction("1.7371"))).status == "imprecise"


def test_rounding_up_half_open():
    c = _one(VALUE.replace('printed = "1.737"', 'printed = "1.426215"\nrounding = "up"\nstep = "1e-6"'))
    enc = Interval(Fraction("1.426214"), Fraction("1.426215"), lower_open=True)
    assert _judge(c, enc).status == "confirmed"
    assert _judge(c, Interval(Fraction("1.426214"), Fraction("1.426215"))).status == "imprecise"


BOUND = (
    'id = "b"\nwhere = "w"\nprinted = "0.1"\nstatement = "s"\nkind = "bound"\nop = "<="\n'
    'quantity = "constant"\nparams = { name = "sqrt(pi)" }\n'
)


@pytest.mark.parametrize(
    ("lo", "hi", "status"),
    [("0.05", "0.1", "confirmed"), ("0.1", "0.2", "imprecise"), ("0.100001", "0.2", "refuted")],
)
def test_bound(lo, hi, status):
    c = _one(BOUND)
    assert _judge(c, Interval(Fraction(lo), Fraction(hi))).status == status


def test_one_sided_bound_is_never_refuted():
    c = _one(BOUND + "one_sided = true\n")
    assert _judge(c, Interval(Fraction(1), Fraction(2))).status == "imprecise"
    assert _judge(c, Interval(Fraction(0), Fraction("0.1"))).status == "confirmed"


REL = (
    'id = "r"\nwhere = "w"\nprinted = "-"\nstatement = "s"\nkind = "relation"\nop = "OP"\n'
    'left = { quantity = "constant", name = "sqrt(pi)" }\nright = "2"\n'
)


@pytest.mark.parametrize(
    ("op", "lo", "hi", "status"),
    [
        ("<", "1", "1.9", "confirmed"),
        ("<", "2", "3", "refuted"),
        ("<", "1.9", "2.1", "imprecise"),
        ("<=", "1", "2", "confirmed"),
        (">", "2", "3", "imprecise"),
        (">=", "2", "3", "confirmed"),
        ("==", "2", "2", "confirmed"),
        ("==", "2.5", "3", "refuted"),
        ("==", "1.5", "2.5", "imprecise"),
    ],
)
def test_relation(op, lo, hi, status):
    c = _one(REL.replace("OP", op))
    assert c.refs[0].name == "constant"
    out = judge(c, {c.refs[0].key: Outcome(Interval(Fraction(lo), Fraction(hi)))}, {})
    assert out.status == status


def test_failed_computation_is_imprecise_with_reason():
    c = _one(VALUE)
    out = judge(c, {c.refs[0].key: Outcome(None, "PrecisionExhausted: width")}, {})
    assert out.status == "imprecise" and "PrecisionExhausted" in out.evidence


@settings(max_examples=200, deadline=None)
@given(
    st.fractions(min_value=-10, max_value=10),
    st.fractions(min_value=0, max_value=1),
    st.fractions(min_value=-10, max_value=10),
    st.fractions(min_value=0, max_value=1),
)
def test_inside_and_outside_agree_with_pointwise_truth(a, w, b, v):
    x = Interval(a, a + w)
    t = Interval(b, b + v, upper_open=True)  # as "down" rounding prints
    points = [a, a + w, a + w / 2]

    def member(p):
        return b <= p < b + v

    if inside(x, t):
        assert all(member(p) for p in points)
    if outside(x, t):
        assert not any(member(p) for p in points)
    if v > 0:
        assert not (inside(x, t) and outside(x, t))


def test_wrong_fixture_is_refuted_and_true_claims_confirmed():
    """A deliberately wrong claim file: every claim is refuted by certified computations."""
    report = check_claims(load_claims(HERE / "wrong_claims.toml"), workers=1)
    assert [r.status for r in report.results] == ["refuted"] * len(report.results), [
        (r.claim.id, r.status, r.evidence) for r in report.results
    ]


def test_cli_exit_codes(tmp_path, capsys):
    assert main(["claims", "check", "--file", str(HERE / "wrong_claims.toml"), "--jobs", "1", "--json"]) == 1
    good = tmp_path / "good.toml"
    good.write_text(HEADER + "[[claim]]\n" + VALUE.replace('"1.737"', '"1.7725"').replace('"v"', '"sqrtpi"'))
    assert main(["claims", "check", "--file", str(good), "--jobs", "1"]) == 0
    assert "1 confirmed" in capsys.readouterr().out
    undecided = tmp_path / "undecided.toml"  # a one-sided bound above the printed number: imprecise
    undecided.write_text(HEADER + "[[claim]]\n" + BOUND.replace('"0.1"', '"1"') + "one_sided = true\n")
    assert main(["claims", "check", "--file", str(undecided), "--jobs", "1"]) == 3
