"""Rounded printed inputs ("~0.638"): the claim is judged over every input that prints that way, and
derived checks and distinct printed numbers are counted apart."""

from fractions import Fraction

import pytest
from mpmath import exp, mp, mpf, ncdf, sqrt

from certdp.claims import check_claims, shipped_claims
from certdp.claims.check import Outcome, judge
from certdp.claims.interval import Interval
from certdp.claims.model import parse_claims, summarize
from certdp.errors import InvalidArgument

HEADER = '[paper]\nid = "p"\ntitle = "t"\nauthors = "a"\nurl = "u"\n'
ROUNDED = (
    'id = "r"\nwhere = "w"\nprinted = "8.68"\nstatement = "s"\nkind = "value"\nquantity = "gdp_eps"\n'
    'params = { delta = "1e-5", mu = { quantity = "gdp_clt_mu", q = "256/60000", sigma = "~0.638", '
    'steps = "16406.25" } }\n'
)


def _one(body: str):
    return parse_claims(HEADER + "[[claim]]\n" + body, "test")[0]


def test_a_rounded_input_stands_for_its_interval():
    c = _one(ROUNDED)
    ((path, box),) = c.rounded
    assert path == "params.mu.sigma"
    assert (box.lower, box.upper) == (Fraction("0.6375"), Fraction("0.6385"))
    assert len(c.corners) == 2
    sigmas = sorted(corner.refs[0].get("mu").get("sigma") for corner in c.corners)
    assert [Fraction(s) for s in sigmas] == [Fraction("0.6375"), Fraction("0.6385")]
    assert {r.key for r in c.refs} == {corner.refs[0].key for corner in c.corners}


def test_a_rounded_input_needs_a_declared_monotone_quantity():
    body = ROUNDED.replace('quantity = "gdp_eps"', 'quantity = "ratio"').replace(
        'params = { delta = "1e-5", mu = {', 'params = { den = "2", num = {'
    )
    with pytest.raises(InvalidArgument, match="not declared monotone in num"):
        _one(body)
    with pytest.raises(InvalidArgument, match="list"):
        _one(ROUNDED.replace('"~0.638"', '["~0.638"]'))


@pytest.mark.parametrize(
    ("lo_corner", "hi_corner", "status"),
    [
        (("8.676", "8.677"), ("8.683", "8.684"), "confirmed"),  # every input confirms
        (("8.690", "8.691"), ("8.719", "8.720"), "refuted"),  # every input refutes
        (("8.674", "8.675"), ("8.719", "8.720"), "imprecise"),  # some confirm, some refute
    ],
)
def test_verdict_over_the_box(lo_corner, hi_corner, status):
    c = _one(ROUNDED)
    results = {}
    for corner, (a, b) in zip(c.corners, (lo_corner, hi_corner), strict=True):
        for r in corner.refs:
            results[r.key] = Outcome(Interval(Fraction(a), Fraction(b)))
    assert judge(c, results, {}).status == status


def _gdp_eps_mp(mu, delta):
    """eps(delta) of mu-GDP by bisection (delta(eps) falls from 2 Phi(mu/2) - 1 to 0 as eps grows)."""
    lo, hi = mpf(0), 20 * mu + mu * mu
    for _ in range(200):
        mid = (lo + hi) / 2
        if ncdf(-mid / mu + mu / 2) - exp(mid) * ncdf(-mid / mu - mu / 2) > delta:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def test_bu_fig4_is_imprecise_and_mpmath_agrees():
    """Bu et al. 2019, Figure 4: sigma~ = 0.638 printed. Over [0.6375, 0.6385] eps(1e-5) runs over
    about [8.675, 8.720], which meets [8.675, 8.685] without lying in it: imprecise, not refuted."""
    claim = next(c for c in shipped_claims("bu-2019-gdp") if c.id == "fig4-eps-8.68")
    r = check_claims([claim], workers=1).results[0]
    assert r.status == "imprecise"
    mp.dps = 40
    ends = []
    for s in ("0.6375", "0.6385"):
        mu = mpf(256) / 60000 * sqrt(mpf("16406.25") * (exp(1 / mpf(s) ** 2) - 1))
        ends.append(_gdp_eps_mp(mu, mpf("1e-5")))
    assert ends[1] < mpf("8.675") < mpf("8.685") < ends[0]  # an independent reference: both outcomes occur
    assert r.value.lower <= Fraction(str(ends[1])) + Fraction(1, 10**12)
    assert r.value.upper >= Fraction(str(ends[0])) - Fraction(1, 10**12)


def test_autodp_calibrator_claim_is_the_printed_epsilon_and_confirmed():
    claim = next(c for c in shipped_claims("autodp") if c.id == "calibrator-gm-0.1-1e-6")
    assert claim.kind == "value" and claim.printed == "0.10000000492561108"
    r = check_claims([claim], workers=1).results[0]
    assert r.status in ("confirmed", "out of scope")
    mp.dps = 40
    eps = _gdp_eps_mp(1 / mpf("36.30468875626822"), mpf("1e-6"))
    assert abs(eps - mpf("0.10000000492561108")) < mpf("5e-13")


DERIVED = (
    'id = "d"\nwhere = "w"\nprinted = "2/3"\nstatement = "s"\nkind = "derived"\nchecks_as = "relation"\n'
    'reasoning = "why it follows"\nleft = { quantity = "constant", name = "sqrt(pi)" }\nop = ">"\nright = "1"\n'
)


def test_derived_checks_and_distinct_numbers_are_counted_apart():
    d = _one(DERIVED)
    assert d.kind == "relation" and d.category == "derived" and d.reasoning == "why it follows"
    with pytest.raises(InvalidArgument, match="reasoning"):
        _one(DERIVED.replace('reasoning = "why it follows"\n', ""))
    with pytest.raises(InvalidArgument, match="checks_as"):
        _one(DERIVED.replace('"relation"', '"out-of-scope"'))
    v = (
        'id = "x{i}"\nwhere = "w"\nprinted = "1.77"\nnumber = "n"\nstatement = "s"\nkind = "value"\n'
        'quantity = "constant"\nparams = {{ name = "sqrt(pi)" }}\n'
    )
    text = HEADER + "".join("[[claim]]\n" + v.format(i=i) for i in range(3)) + "[[claim]]\n" + DERIVED
    claims = parse_claims(text, "test")
    s = summarize(claims, ["confirmed", "refuted", "confirmed", "confirmed"])["all"]
    assert s["printed"] == {"claims": 3, "numbers": 1, "confirmed": 0, "refuted": 1, "imprecise": 0, "out of scope": 0}
    assert s["derived"]["claims"] == 1 and s["derived"]["confirmed"] == 1
