"""Gaussian-mixture pair (arXiv:2610.02414 Prop. 4.1), the Prop. 4.3 allocation path and the gap's order in s."""

from __future__ import annotations

import json
import math
from fractions import Fraction

import mpmath as mp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import certdp
from certdp.cli import main
from certdp.enclose import to_ball, workprec
from certdp.notions import cgf, gap, kl
from certdp.notions.allocation import allocation_gap
from tests import refs


@pytest.mark.parametrize(
    ("family", "omega", "seed_value"),
    [
        ("gaussian-mixture", 0, "0.435179700"),
        ("gaussian-mixture", 1, "0.342190807"),
        ("laplace", 0, "0.037202015"),
        ("laplace", 1, "0.193535993"),
    ],
)
def test_paper_allocation_numbers(family: str, omega: int, seed_value: str) -> None:
    enc = allocation_gap(family, 8, "0.5", 1, omega, m=1)
    assert enc.width <= Fraction(1, 10**9)
    assert abs(enc.mid - Fraction(seed_value)) <= Fraction(5, 10**10)  # the seed prints 9 decimals


def test_allocation_path_is_monotone_for_the_mixture() -> None:
    vals = [allocation_gap("gaussian-mixture", 8, "0.5", 1, w).mid for w in ("0", "0.25", "0.5", "0.75", "1")]
    assert vals == sorted(vals, reverse=True)  # arXiv:2610.02414 §4.3: concentrating lowers the mixture's gap


@given(st.decimals("0", "3", places=2), st.decimals("0.05", "2", places=2), st.decimals("0.1", "20", places=1))
def test_mixture_rho_is_s2_over_2_as_a_certified_sup(m, s, t) -> None:
    pair = certdp.GaussianMixture(str(m), str(s))
    with workprec(128):
        upper = pair.rho_closed_form()
        witness = pair.ratio_witness_at(to_ball(2) ** 64)  # K(T)/(T(T+1)) >= this at T = 2^64
        assert (upper - witness).upper() < 1e-15 and witness < upper
    # independently of the proof: every evaluated K(t)/(t(t+1)) stays at or below s^2/2
    k = cgf(pair, str(t))
    tt = Fraction(str(t))
    assert k.lower / (tt * (tt + 1)) <= Fraction(str(s)) ** 2 / 2


def _slope(xs: list[float], ys: list[float]) -> float:
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly, strict=True)) / sum((a - mx) ** 2 for a in lx)


def test_gap_log_log_slopes() -> None:
    shifts = ["0.001", "0.002", "0.004", "0.007", "0.01"]
    mixture = [float(gap(certdp.GaussianMixture(1, s), 1).mid) for s in shifts]
    # Laplace: the certified search is too slow to resolve the flat ratio to 1e-20 at s = 0.001, so rho
    # comes from an independent dense mpmath search of K(t)/(t(t+1)) over the quadrature of the
    # definition (refs.sup_ratio; its sup sits at t -> 0, reached to O(1e-30)), passed in exactly
    laplace = []
    for s in shifts:
        ref, arg = refs.sup_ratio(lambda t, s=s: refs.laplace_cgf(1, s, t), refs.log_grid(-3, 2, 2))
        assert arg < 1  # the sup is the t -> 0 end, inside the grid
        rho = Fraction(mp.nstr(ref, 50, min_fixed=-mp.inf, max_fixed=mp.inf))
        assert refs.contains(kl(certdp.Laplace(1, s)), ref, slack=1e-25)  # and it is KL, as proved
        laplace.append(float(gap(certdp.Laplace(1, s), 1, rho=rho).mid))
    gauss = [gap(certdp.Gaussian(1, s), 1) for s in shifts]
    xs = [float(s) for s in shifts]
    assert abs(_slope(xs, mixture) - 2) < 0.005  # arXiv:2610.02414 §4.1: 2.00
    assert abs(_slope(xs, laplace) - 4) < 0.005  # arXiv:2610.02414 §4.1: 4.00 (3.997 fitted)
    assert all(g.lower <= 0 <= g.upper for g in gauss)  # Gaussian: exactly zero


def test_cli_mixture(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rho", "gaussian-mixture", "--m", "1", "--shift", "0.5", "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert Fraction(rec["lower"]) <= Fraction(1, 8) <= Fraction(rec["upper"]) and rec["method"] == "closed-form"
    assert main(["cgf", "gaussian-mixture", "--m", "1", "--shift", "0.5", "--t", "1.5", "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert Fraction(rec["upper"]) - Fraction(rec["lower"]) < Fraction(1, 10**15)
    assert main(["cgf", "gaussian-mixture", "--m", "-1", "--t", "1"]) == 2
    assert "m=-1 must be >= 0" in capsys.readouterr().err


def test_student_t_argmax_and_ggauss_chi() -> None:
    from certdp.notions.expansion import ggauss_chi, student_t_quartic, student_t_quartic_argmax

    arg = student_t_quartic_argmax()
    assert arg.width <= Fraction(1, 10**9) and abs(arg.mid - Fraction("6.013052641")) < Fraction(5, 10**10)
    # it is a maximum: the coefficient is smaller one unit either side
    peak = student_t_quartic(str(arg.lower))
    assert student_t_quartic(5).upper < peak.lower and student_t_quartic(7).upper < peak.lower
    one, two = ggauss_chi(1), ggauss_chi(2)
    assert one.lower <= Fraction(1, 12) <= one.upper and one.width <= Fraction(1, 10**9)
    assert two.lower <= 0 <= two.upper and two.width <= Fraction(1, 10**9)
    mid = ggauss_chi("1.5")
    assert 0 < mid.lower and mid.upper < Fraction(1, 12)  # between the Laplace and Gaussian ends


@given(st.decimals("1", "40", places=2))
def test_student_t_quartic_against_quadrature(nu) -> None:
    import mpmath as mp

    from certdp.notions.expansion import student_t_quartic

    with mp.workdps(50):
        n = mp.mpf(str(nu))
        c = mp.gamma((n + 1) / 2) / (mp.sqrt(n * mp.pi) * mp.gamma(n / 2))
        dens = lambda z: c * (1 + z * z / n) ** (-(n + 1) / 2)  # noqa: E731
        score = lambda z: (n + 1) * z / (n + z * z)  # noqa: E731
        m2 = mp.quad(lambda z: dens(z) * score(z) ** 2, [-mp.inf, -1, 0, 1, mp.inf])
        m4 = mp.quad(lambda z: dens(z) * score(z) ** 4, [-mp.inf, -1, 0, 1, mp.inf])
        ref = Fraction(mp.nstr(-(m4 - 3 * m2**2) / 24, 40))
    enc = student_t_quartic(str(nu))
    assert enc.lower - Fraction(1, 10**35) <= ref <= enc.upper + Fraction(1, 10**35)


def _mp_cumulants(logf, lo_pts, s: str):
    import mpmath as mp

    with mp.workdps(40):
        sh = mp.mpf(s)
        f = lambda x: mp.exp(logf(x))  # noqa: E731
        loss = lambda x: logf(x - sh) - logf(x)  # noqa: E731
        mom = [mp.quad(lambda x, k=k: f(x - sh) * loss(x) ** k, [-mp.inf, *lo_pts(sh), mp.inf]) for k in range(1, 5)]
        k1 = mom[0]
        k2 = mom[1] - k1**2
        k3 = mom[2] - 3 * mom[1] * k1 + 2 * k1**3
        k4 = mom[3] - 4 * mom[2] * k1 - 3 * mom[1] ** 2 + 12 * mom[1] * k1**2 - 6 * k1**4
        return [Fraction(mp.nstr(v, 30)) for v in (k1, k2, k3, k4)]


@pytest.mark.slow
@settings(max_examples=8)  # each example runs eight 40-digit mpmath quadratures
@given(st.decimals("0.05", "1.5", places=2), st.decimals("0", "2", places=1))
def test_loss_cumulants_against_quadrature(s, m) -> None:
    import mpmath as mp

    mix = certdp.GaussianMixture(str(m), str(s))
    with mp.workdps(40):  # m at 40 digits: mpf("0.1") at the default 15 digits is a different m
        mm = mp.mpf(str(m))
    ref = _mp_cumulants(
        lambda x: mp.log((mp.npdf(x, mm, 1) + mp.npdf(x, -mm, 1)) / 2),
        lambda sh: [-mm - 6, -mm - 3, -mm, 0, mm, mm + 3, mm + 6],
        str(s),
    )
    lap = _mp_cumulants(lambda x: -abs(x) - mp.log(2), lambda sh: [-20, -5, 0, sh, 5, 20], str(s))
    with workprec(128):
        for got, want in zip(mix.loss_cumulants(), ref, strict=True):
            assert abs(Fraction(got.mid().str(40, radius=False)) - want) <= Fraction(1, 10**25) * (1 + abs(want))
        for got, want in zip(certdp.Laplace(1, str(s)).loss_cumulants(), lap, strict=True):
            assert abs(Fraction(got.mid().str(40, radius=False)) - want) <= Fraction(1, 10**25) * (1 + abs(want))


def test_local_expansion_matches_the_gap_to_the_next_order(capsys: pytest.CaptureFixture[str]) -> None:
    from certdp.notions.expansion import local_expansion

    g = local_expansion(certdp.Gaussian(1, "0.5"), 2)
    assert all(x.lower <= 0 <= x.upper for x in (g.first, g.third, g.fourth, g.gap))
    for pair, lead in ((certdp.Laplace, 4), (certdp.GaussianMixture, 2)):
        errs = []
        for s in ("0.02", "0.04"):
            e = local_expansion(pair(1, s), "1.5")
            errs.append(abs(float(e.total.mid - e.gap.mid)))
        # the error is of higher order than the leading term (Laplace s^4, mixture s^2): halving s
        # shrinks it by more than 2^(lead + 1/2) (measured: about 2^6 and 2^4)
        assert errs[1] / errs[0] > 2.0 ** (lead + 0.5)
    assert main(["expansion", "gaussian-mixture", "--m", "1", "--shift", "0.1", "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["quantity"] == "gap_expansion" and Fraction(rec["gap"]["lower"]) > 0
    assert main(["expansion", "random-allocation", "--steps", "3", "--sigma", "1"]) == 2
    assert "not implemented" in capsys.readouterr().err


@pytest.mark.parametrize(("m", "s"), [("1", "0.5")])
def test_mixture_rho_by_certified_search(m: str, s: str) -> None:
    """The branch-and-bound search (chord bounds on finite t, the proved tail) confirms rho = s^2/2:
    no evaluated order exceeds it, and the sup is approached as t -> inf."""
    from certdp.notions import rho_detail

    res = rho_detail(certdp.GaussianMixture(m, s), method="search")
    half = Fraction(s) ** 2 / 2
    assert res.method == "search" and res.argmax == float("inf")
    assert res.enclosure.lower <= half <= res.enclosure.upper and res.enclosure.width <= half * Fraction(1, 10**15)
