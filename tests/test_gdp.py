"""zCDP -> GDP (arXiv:2611.01218) and the GDP conversions: widths, sharp bounds, limits, references."""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath as mp
import pytest
from hypothesis import given
from hypothesis import strategies as st

from certdp.cli import main
from certdp.enclose import Verdict, certify_positive, mills_ratio, to_ball, workprec
from certdp.errors import InvalidArgument
from certdp.notions import conversion_epsilon as epsilon
from certdp.notions.gdp import (
    compose_gdp,
    gdp_attack_accuracy,
    gdp_delta,
    gdp_epsilon,
    gdp_to_rho,
    gdp_tradeoff,
    gdp_tv,
    zcdp_delta,
    zcdp_epsilon,
)
from certdp.notions.zcdp_gdp import (
    check_mu_squared_convex,
    compare_composition_order,
    mu_bounds,
    mu_from_rho,
    randomized_response_check,
    rho_from_mu,
    t_of_rho,
    zcdp_tv_upper,
)
from certdp.pairs import Gaussian
from tests.refs import contains

RHOS = ["1e-6", "1e-3", "0.1", "1", "10", "100", "1000"]


def mp_mu(rho: str) -> mp.mpf:
    """Reference mu(rho) by mpmath: findroot for t, then 2 sqrt2 erfinv(tanh(t/2)) at enough digits
    that tanh(t/2) = 1 - 2e^{-t} keeps 60 significant digits of its distance to 1."""
    r = mp.mpf(rho)
    with mp.workdps(60 + int(float(r) / 2.3) + 10):
        t = mp.findroot(lambda x: x * mp.tanh(x / 2) - r, max(mp.sqrt(2 * r), r))
        return 2 * mp.sqrt(2) * mp.erfinv(mp.tanh(t / 2))


@pytest.mark.parametrize("rho", RHOS)
def test_mu_width_and_sharp_bounds(rho: str) -> None:
    mu = mu_from_rho(rho)
    low, high = mu_bounds(rho)
    assert mu.width <= Fraction(1, 10**15)
    assert low.upper <= mu.lower and mu.upper <= high.lower  # sqrt(pi rho) <= mu <= sqrt(8 rho), certified
    with mp.workdps(60):
        assert contains(mu, mp_mu(rho), slack=1e-40)


def test_mu_limits_at_the_extreme_rho() -> None:
    # mu/sqrt(pi rho) -> 1 as rho -> 0: relative gap O(rho), certified below 1e-10 at rho = 1e-12
    small = mu_from_rho("1e-12")
    low, _ = mu_bounds("1e-12")
    assert 1 <= small.lower / low.upper and small.upper / low.lower - 1 <= Fraction(1, 10**10)
    # mu/sqrt(8 rho) -> 1 as rho -> inf: the gap is about log(rho)/(4 rho); it shrinks monotonically
    gaps = []
    for rho in ["1e2", "1e4", "1e6", "1e8"]:
        mu = mu_from_rho(rho)
        _, high = mu_bounds(rho)
        assert mu.upper <= high.lower
        gaps.append(1 - mu.upper / high.lower)
    assert gaps == sorted(gaps, reverse=True) and gaps[-1] < Fraction(1, 10**6)


@given(st.floats(min_value=-10, max_value=3))
def test_mu_against_mpmath_50_digits(log10_rho: float) -> None:
    rho = f"{10**log10_rho:.12g}"
    with mp.workdps(60):
        assert contains(mu_from_rho(rho), mp_mu(rho), slack=1e-40)


@given(st.floats(min_value=-6, max_value=3))
def test_rho_from_mu_inverts(log10_rho: float) -> None:
    rho = Fraction(f"{10**log10_rho:.12g}")
    mu = mu_from_rho(rho)
    back_lo, back_hi = rho_from_mu(mu.lower), rho_from_mu(mu.upper)  # rho(mu) is increasing
    assert back_lo.lower <= rho <= back_hi.upper
    assert back_hi.upper - back_lo.lower <= rho * Fraction(1, 10**15)


@given(st.floats(min_value=0.01, max_value=40))
def test_randomized_response_kl_and_corner(t: float) -> None:
    res = randomized_response_check(f"{t:.10g}")
    assert res.agree
    assert res.kl_definition.width < Fraction(1, 10**15) and res.mu_corner.width < Fraction(1, 10**15)
    t_back = t_of_rho(res.kl_closed_form.upper)  # t_rho at rho = t tanh(t/2) is t itself
    assert t_back.lower <= Fraction(f"{t:.10g}") + Fraction(1, 10**12)


def test_zcdp_tv_is_gdp_tv_at_mu() -> None:
    for rho in ["0.01", "0.5", "3"]:
        tv = zcdp_tv_upper(rho)
        mu = mu_from_rho(rho)
        lo, hi = gdp_tv(mu.lower), gdp_tv(mu.upper)
        assert lo.lower <= tv.upper and tv.lower <= hi.upper


@given(st.floats(min_value=0.05, max_value=8), st.floats(min_value=0, max_value=20))
def test_gdp_delta_against_mpmath(mu: float, eps: float) -> None:
    m, e = f"{mu:.8g}", f"{eps:.8g}"
    with mp.workdps(80):
        mm, ee = mp.mpf(m), mp.mpf(e)
        ref = mp.ncdf(-ee / mm + mm / 2) - mp.exp(ee) * mp.ncdf(-ee / mm - mm / 2)
        enc = gdp_delta(m, e)  # may be as small as 1e-4000: compare in relative terms
        lo = mp.mpf(enc.lower.numerator) / enc.lower.denominator
        hi = mp.mpf(enc.upper.numerator) / enc.upper.denominator
        assert lo * (1 - mp.mpf("1e-60")) <= ref <= hi * (1 + mp.mpf("1e-60"))


@given(st.floats(min_value=0.05, max_value=8), st.floats(min_value=-12, max_value=-1))
def test_gdp_epsilon_inverts_delta(mu: float, log10_delta: float) -> None:
    m, d = f"{mu:.8g}", Fraction(f"{10**log10_delta:.8g}")
    eps = gdp_epsilon(m, d)
    if eps.upper == 0:
        assert gdp_tv(m).upper <= d
        return
    at_hi, at_lo = gdp_delta(m, eps.upper), gdp_delta(m, eps.lower)
    assert at_hi.lower <= d * (1 + Fraction(1, 10**12)) and at_lo.upper >= d * (1 - Fraction(1, 10**12))


def test_gdp_tv_accuracy_tradeoff_composition() -> None:
    with mp.workdps(60):
        assert contains(gdp_tv(1), 2 * mp.ncdf(mp.mpf(1) / 2) - 1)
        assert contains(gdp_attack_accuracy("2.5"), mp.ncdf(mp.mpf("1.25")))
        ref = mp.ncdf(-mp.sqrt(2) * mp.erfinv(2 * mp.mpf("0.05") - 1) - 1)  # Phi(Phi^-1(0.95) - 1)
        assert contains(gdp_tradeoff(1, "0.05"), ref)
    c = compose_gdp(["0.3", "0.4"])
    assert c.lower <= Fraction(1, 2) <= c.upper and c.width < Fraction(1, 10**15)
    assert gdp_to_rho("0.3") == Fraction(9, 200)


def test_zcdp_eps_delta_matches_gaussian_pair_and_beats_classic() -> None:
    # N(0,1) vs N(1,1) has K(t) = t(t+1)/2 exactly: the zCDP conversion at rho = 1/2 is the same infimum
    via_pair = epsilon(Gaussian(1, 1), "1e-5").enclosure
    via_rho = zcdp_epsilon("0.5", "1e-5").enclosure
    assert via_pair.lower <= via_rho.upper and via_rho.lower <= via_pair.upper
    d = zcdp_delta("0.5", via_rho.upper).enclosure
    assert d.upper <= Fraction(1, 10**5) * (1 + Fraction(1, 10**9))
    # the classic rho + 2 sqrt(rho log(1/delta)) is looser
    classic = Fraction(1, 2) + 2 * Fraction(str(mp.sqrt(mp.mpf("0.5") * mp.log(mp.mpf(10) ** 5))))
    assert via_rho.upper < classic


def test_converting_before_composition_is_tighter() -> None:
    res = compare_composition_order(["0.1", "0.2", "0.05"])
    assert res.before_is_tighter is Verdict.TRUE and res.before.upper < res.after.lower
    one = compare_composition_order(["0.3"])  # a single term: the two are equal, never "tighter"
    assert one.before_is_tighter is not Verdict.TRUE
    with pytest.raises(InvalidArgument, match="rho=0 must be > 0"):
        compare_composition_order(["0.1", "0"])


def test_mu_squared_is_convex_on_a_wide_interval() -> None:
    res = check_mu_squared_convex("0.001", "100")
    assert res.pieces >= 1 and res.z_interval[0] < 0.03 and res.z_interval[1] > 13


def test_certify_positive_can_refute_and_decide() -> None:
    with workprec(64):
        assert certify_positive(lambda x: x * x + 1, to_ball(-2), to_ball(3)).verdict == "positive"
        bad = certify_positive(lambda x: x * x - 1, to_ball(0), to_ball(2))
        assert bad.verdict == "negative_somewhere" and 0 <= bad.witness < 1
        # positive but touching 0 at the end: never "positive"
        assert certify_positive(lambda x: x * x, to_ball(0), to_ball(1), max_pieces=200).verdict == "undecided"


@given(st.floats(min_value=-5, max_value=60))
def test_mills_ratio_against_mpmath(x: float) -> None:
    xs = f"{x:.10g}"
    with workprec(128):
        q = mills_ratio(to_ball(Fraction(xs)))
        ball = mills_ratio(to_ball(Fraction(xs)).union(to_ball(Fraction(xs) + Fraction(1, 1000))))
    with mp.workdps(60):
        xm = mp.mpf(xs)
        ref = mp.ncdf(-xm) / mp.npdf(xm)
        assert abs(mp.mpf(q.mid().str(40, radius=False)) - ref) <= abs(ref) * mp.mpf("1e-30")
        assert ball.contains(q)


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_gdp_rho_100(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _cli(["gdp", "--rho", "100", "--json"], capsys)
    assert code == 0, err
    rec = json.loads(out)
    lo, hi = Fraction(rec["lower"]), Fraction(rec["upper"])
    assert rec["quantity"] == "mu" and rec["rho"] == "100" and hi - lo <= Fraction(1, 10**15)
    assert rec["within_bounds"] is True and Fraction(rec["sqrt_pi_rho"]["upper"]) < lo
    with mp.workdps(60):
        assert lo <= Fraction(mp.nstr(mp_mu("100"), 50)) <= hi


def test_cli_convert_paths(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _cli(["convert", "--from", "zcdp", "--to", "gdp", "--value", "0.5", "--json"], capsys)
    assert code == 0 and json.loads(out)["quantity"] == "mu"
    code, out, _ = _cli(
        ["convert", "--from", "gdp", "--to", "eps-delta", "--value", "1", "--delta", "1e-5", "--json"], capsys
    )
    rec = json.loads(out)
    assert code == 0 and rec["quantity"] == "epsilon" and rec["epsilon"] == rec["upper"]
    code, out, _ = _cli(
        ["convert", "--from", "zcdp", "--to", "eps-delta", "--value", "0.5", "--delta", "1e-5", "--json"], capsys
    )
    rec = json.loads(out)
    assert Fraction(rec["upper"]) < Fraction(rec["classic_epsilon"]["lower"])
    code, out, _ = _cli(["convert", "--from", "gdp", "--to", "tv", "--value", "1", "--json"], capsys)
    rec = json.loads(out)
    assert Fraction(rec["accuracy_upper"]) >= Fraction(1, 2) + Fraction(rec["upper"]) / 2
    code, out, _ = _cli(["convert", "--from", "gdp", "--to", "zcdp", "--value", "0.3", "--json"], capsys)
    assert json.loads(out)["exact"] == "0.045"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["gdp", "--rho", "-1"], "rho=-1 must be > 0"),
        (["gdp", "--rho", "nan"], "rho=nan must be a finite number"),
        (["convert", "--from", "gdp", "--to", "tv", "--value", "0"], "value=0 must be > 0"),
        (["convert", "--from", "zcdp", "--to", "eps-delta", "--value", "1"], "exactly one of --delta and --eps"),
        (["convert", "--from", "zcdp", "--to", "zcdp", "--value", "1"], "to=zcdp must differ"),
        (["convert", "--from", "gdp", "--to", "eps-delta", "--value", "1", "--delta", "2"], "delta=2 must be < 1"),
    ],
)
def test_cli_gdp_bad_input(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _cli(argv, capsys)
    assert code == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1


@given(st.floats(min_value=0.05, max_value=20))
def test_bounded_range_sup_is_randomized_response_at_half_eta(eta: float) -> None:
    from certdp.notions.bounded_range import mu_from_bounded_range

    e = f"{eta:.6g}"
    res = mu_from_bounded_range(e)
    assert res.mu.width <= res.mu.upper * Fraction(1, 10**14)
    # observed (not claimed by the code): the sup is randomized response at eps = eta/2
    rr = res.randomized_response
    assert res.mu.lower <= rr.upper and rr.lower <= res.mu.upper
    assert abs(res.argmax + float(e) / 2) < 1e-6 * max(1.0, float(e))  # a heuristic location


def test_bounded_range_brute_force_and_bad_input() -> None:
    from certdp.notions.bounded_range import MAX_ETA, mu_from_bounded_range

    res = mu_from_bounded_range("2")
    with mp.workdps(40):
        eta = mp.mpf(2)
        for k in range(1, 200):  # every two-point BR pair is below the certified sup
            a = -eta * k / 200
            q = mp.expm1(-a) / mp.expm1(eta)
            p = q * mp.exp(a + eta)
            mu = mp.sqrt(2) * (mp.erfinv(2 * p - 1) - mp.erfinv(2 * q - 1))
            assert mu <= mp.mpf(res.mu.upper.numerator) / res.mu.upper.denominator
    with pytest.raises(InvalidArgument, match="eta=0 must be > 0"):
        mu_from_bounded_range(0)
    with pytest.raises(InvalidArgument, match=f"eta=31 must be <= {MAX_ETA}"):
        mu_from_bounded_range(31)
