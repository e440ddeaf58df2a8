"""The PLD accountant's refinement to a relative width (issue 34 item 1; docs/math.md §10): with
rel_width (1e-4 here, DEFAULT_REL_WIDTH), pld_bounds refines its lattice until
(upper - lower)/upper <= rel_width, else PrecisionExhausted; every round's enclosure is sound,
checked against mpmath references. Without h or rel_width it stays one lattice (opt-in for now)."""

from __future__ import annotations

import json
from fractions import Fraction
from itertools import pairwise

import mpmath as mp
import pytest

from certdp.cli import main
from certdp.enclose import workprec
from certdp.errors import InvalidArgument, PrecisionExhausted
from certdp.notions import accountant
from certdp.notions import pld as pld_mod
from certdp.notions.accountant import PLD_PREC
from certdp.notions.pld import DEFAULT_REL_WIDTH, MAX_REFINE_STEP, pld_bounds, refined_h
from certdp.pairs import compose
from certdp.pairs.params import exact_str
from certdp.pairs.subsampled import SubsampledGaussian
from tests.refs import contains, gaussian_delta, gaussian_eps


def _pair(q: str, sigma: str, steps: int, direction: str = "both"):
    base = SubsampledGaussian(q, sigma, direction)
    return base if steps == 1 else compose(base, steps)


def _bounds(pair, **kw):
    if "h" not in kw:  # the refinement is opt-in: these tests ask for the suggested 1e-4 target
        kw.setdefault("rel_width", DEFAULT_REL_WIDTH)
    with workprec(PLD_PREC):
        return pld_bounds(pair, **kw)


def test_without_a_target_the_default_width_is_met() -> None:
    with workprec(PLD_PREC):
        res = pld_bounds(_pair("0.01", "0.8", 50), delta="1e-5")
        one = pld_bounds(_pair("0.01", "0.8", 50), delta="1e-5", h=Fraction(1, 2**9))
    assert res.grid["rel_width"] == exact_str(DEFAULT_REL_WIDTH) and res.grid["rounds"]
    assert _rel(res.enclosure) <= DEFAULT_REL_WIDTH
    assert "rounds" not in one.grid and "rel_width" not in one.grid  # an explicit h: one lattice


def _rel(enc) -> Fraction:
    return Fraction(0) if enc.upper == 0 else (enc.upper - enc.lower) / enc.upper


# (q, sigma, steps, delta): across q in [1e-3, 1], sigma in [0.5, 5], delta in [1e-10, 1e-3]
TIGHT = [
    ("0.01", "0.8", 200, "1e-5"),
    ("0.001", "0.5", 300, "1e-3"),
    ("0.05", "2", 300, "1e-10"),
    ("0.2", "5", 50, "1e-6"),
    ("1", "3", 20, "1e-8"),
    ("1", "0.5", 1, "1e-4"),
]


@pytest.mark.parametrize(("q", "sigma", "steps", "delta"), TIGHT)
def test_default_eps_meets_relative_width(q: str, sigma: str, steps: int, delta: str) -> None:
    res = _bounds(_pair(q, sigma, steps), delta=delta)
    enc = res.enclosure
    assert 0 <= enc.lower <= enc.upper
    assert _rel(enc) <= DEFAULT_REL_WIDTH, (enc, res.grid["rounds"])
    assert res.grid["rel_width"] == "0.0001"
    rounds = res.grid["rounds"]
    assert rounds and (len(rounds) == 1 or float(rounds[-2]["width"]) > 1e-4)  # stopped when met
    hs = [Fraction(r["h"]) for r in rounds]
    assert all(b < a for a, b in pairwise(hs))  # each round refines


def test_looser_target_is_met_in_fewer_rounds() -> None:
    pair = _pair("0.01", "0.8", 200)
    loose = _bounds(pair, delta="1e-5", rel_width="1e-2")
    tight = _bounds(pair, delta="1e-5")
    assert _rel(loose.enclosure) <= Fraction(1, 100)
    assert len(loose.grid["rounds"]) <= len(tight.grid["rounds"])
    # both are sound enclosures of one number: they intersect
    assert loose.enclosure.lower <= tight.enclosure.upper and tight.enclosure.lower <= loose.enclosure.upper


# soundness: q = 1 is the Gaussian mechanism with mu^2 = steps/sigma^2 (mpmath, 60 digits)
GAUSS = [("0.7", 1, "1e-5"), ("2", 40, "1e-8"), ("4", 500, "1e-3"), ("1.3", 7, "1e-10")]


@pytest.mark.parametrize(("sigma", "steps", "delta"), GAUSS)
def test_enclosure_contains_gaussian_reference(sigma: str, steps: int, delta: str) -> None:
    res = _bounds(_pair("1", sigma, steps), delta=delta)
    ref = gaussian_eps(Fraction(steps) / Fraction(sigma) ** 2, delta)
    assert contains(res.enclosure, ref), (res.enclosure, ref)
    assert _rel(res.enclosure) <= DEFAULT_REL_WIDTH


@pytest.mark.parametrize(("sigma", "steps", "eps"), [("1", 4, "0.5"), ("3", 100, "2")])
def test_delta_enclosure_contains_gaussian_reference(sigma: str, steps: int, eps: str) -> None:
    res = _bounds(_pair("1", sigma, steps), eps=eps)
    with mp.workdps(50):
        ref = gaussian_delta(mp.sqrt(mp.mpf(steps)) / mp.mpf(sigma), eps)
    assert contains(res.enclosure, ref), (res.enclosure, ref)
    assert res.quantity == "delta" and _rel(res.enclosure) <= DEFAULT_REL_WIDTH  # the target on delta


def _one_step_delta(q: mp.mpf, s: mp.mpf, eps: mp.mpf) -> mp.mpf:
    """delta(eps) of one Poisson-subsampled Gaussian step, max over remove and add (docs/math.md §10:
    L > l iff x > x(l) = s^2 log((e^l - 1 + q)/q) + 1/2 for remove; add: L > l iff x < x(-l))."""

    def x_of(y: mp.mpf) -> mp.mpf:
        return s**2 * mp.log((mp.exp(y) - 1 + q) / q) + mp.mpf(1) / 2

    x0 = x_of(eps)
    remove = (1 - q) * mp.ncdf(-x0 / s) + q * mp.ncdf(-(x0 - 1) / s) - mp.exp(eps) * mp.ncdf(-x0 / s)
    add = mp.mpf(0)
    if mp.exp(-eps) > 1 - q:
        x1 = x_of(-eps)
        add = mp.ncdf(x1 / s) - mp.exp(eps) * ((1 - q) * mp.ncdf(x1 / s) + q * mp.ncdf((x1 - 1) / s))
    return max(remove, add)


def _one_step_eps(q: str, sigma: str, delta: str) -> mp.mpf:
    with mp.workdps(50):
        qq, s, d = mp.mpf(q), mp.mpf(sigma), mp.mpf(delta)
        lo, hi = mp.mpf(0), mp.mpf(60)
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if _one_step_delta(qq, s, mid) > d else (lo, mid)
        return (lo + hi) / 2


@pytest.mark.parametrize(("q", "sigma", "delta"), [("0.01", "0.6", "1e-6"), ("0.003", "0.5", "1e-8")])
def test_one_step_small_q_contains_closed_form(q: str, sigma: str, delta: str) -> None:
    res = _bounds(_pair(q, sigma, 1), delta=delta)
    ref = _one_step_eps(q, sigma, delta)
    assert contains(res.enclosure, ref, slack=1e-30), (res.enclosure, ref)


def test_unreachable_target_raises_precision_exhausted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pld_mod, "MAX_REFINE_ROUNDS", 1)  # the limit that stops it (cells would, slowly)
    pair = _pair("1", "2", 10)
    with pytest.raises(PrecisionExhausted) as info:
        _bounds(pair, delta="1e-6", rel_width="1e-12")
    exc = info.value
    msg = str(exc)
    assert "rel-width=1e-12" in msg and "relative width" in msg and "h=" in msg and "\n" not in msg
    assert exc.achieved_width is not None and exc.achieved_width > 1e-12
    # the best round's enclosure rides along, and it is sound
    best = exc.result  # type: ignore[attr-defined]
    assert contains(best.enclosure, gaussian_eps(Fraction(10, 4), "1e-6"))
    assert len(best.grid["rounds"]) == 1


def test_round_limit_stops_refinement(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pld_mod, "MAX_REFINE_ROUNDS", 1)
    with pytest.raises(PrecisionExhausted, match=r"rel-width=1e-08 not reached.*1 rounds"):
        _bounds(_pair("0.01", "0.8", 50), delta="1e-5", rel_width="1e-8")


def test_cli_unreachable_target_exits_3_on_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(pld_mod, "MAX_REFINE_ROUNDS", 1)
    argv = ["eps", "subsampled-gaussian", "--q", "0.01", "--sigma", "0.8", "--steps", "50", "--delta", "1e-5"]
    code = main([*argv, "--rel-width", "1e-8"])
    _, err = capsys.readouterr()
    assert code == 3 and "rel-width=1e-08" in err and err.count("\n") == 1


def test_cli_rel_width_flag_and_grid(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["eps", "subsampled-gaussian", "--q", "0.01", "--sigma", "0.8", "--steps", "100", "--delta", "1e-5"]
    code = main([*argv, "--rel-width", "0.001", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    rec = json.loads(out)
    assert rec["grid"]["rel_width"] == "0.001"
    assert (Fraction(rec["upper"]) - Fraction(rec["lower"])) / Fraction(rec["upper"]) <= Fraction(1, 1000)


@pytest.mark.parametrize("bad", ["0", "1", "-0.1", "nan", "x"])
def test_cli_rel_width_validated(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["eps", "subsampled-gaussian", "--q", "0.01", "--sigma", "0.8", "--steps", "10", "--delta", "1e-5"]
    code = main([*argv, "--rel-width", bad])
    _, err = capsys.readouterr()
    assert code == 2 and "rel-width" in err and err.count("\n") == 1


def test_explicit_h_skips_refinement() -> None:
    pair = _pair("0.01", "0.8", 100)
    res = _bounds(pair, delta="1e-5", h=Fraction(1, 2**8))
    assert "rounds" not in res.grid and "rel_width" not in res.grid
    assert res.grid["remove"]["h"] == "0.00390625"  # type: ignore[index]
    with pytest.raises(InvalidArgument, match="rel_width"):
        _bounds(pair, delta="1e-5", h=Fraction(1, 2**8), rel_width="1e-3")


def test_accountant_threads_rel_width() -> None:
    pair = _pair("0.01", "0.8", 100)
    with pytest.raises(InvalidArgument, match="rel_width"):
        accountant.epsilon(pair, "1e-5", via="rdp", rel_width="1e-3")
    res = accountant.epsilon(pair, "1e-5", via="pld", rel_width="1e-2")
    assert res.grid is not None and res.grid["rel_width"] == "0.01"
    assert _rel(res.enclosure) <= Fraction(1, 100)


def test_refined_h_model() -> None:
    h = Fraction(1, 2**9)
    # width 1e-2 -> 1e-4 wants h/10 (x 0.85 = 0.085 h): four significant bits below it give 10/128 h
    assert refined_h(h, Fraction(1, 100), Fraction(1, 10**4)) == h * 10 / 128
    # 2e-4 -> 1e-4 wants 0.707 h x 0.85 = 0.601 h: 9/16 h (not the power of two h/2)
    assert refined_h(h, Fraction(2, 10**4), Fraction(1, 10**4)) == h * 9 / 16
    assert refined_h(h, Fraction(11, 10**5), Fraction(1, 10**4)) == h * 3 / 4  # 0.953 x 0.85 h, capped at 3/4
    # a width of 0.1 (not yet deep in the second-order regime) keeps the safety 0.7: 1e-1 -> 1e-3
    # wants 0.1 h x 0.7 = 0.07 h: 8/128 h (x 0.85 would give 10/128 h)
    assert refined_h(h, Fraction(1, 10), Fraction(1, 10**3)) == h / 16
    for width in (Fraction(3, 10**4), Fraction(7, 10**3), Fraction(1, 30)):
        got = refined_h(h, width, Fraction(1, 10**4)) / h
        assert got.denominator & (got.denominator - 1) == 0 and got.numerator < 16  # dyadic, 4 bits
    assert refined_h(h, Fraction(1, 10), Fraction(1, 10**12)) == h / MAX_REFINE_STEP  # at most that per round
    assert refined_h(h, Fraction(9, 10), Fraction(1, 10**12)) == h / 4  # not yet second order
    # 0.18 -> 1e-4 wants 0.0236 h x 0.7: one step of about 60 (a cap of 32 once cost a third round)
    assert refined_h(h, Fraction(18, 100), Fraction(1, 10**4)) < h / 32


def test_result_is_the_intersection_of_the_rounds() -> None:
    """Every round is proved, so the result is [largest lower end, smallest upper end] over the
    rounds, and lower_h / upper_h name the rounds that gave them."""
    res = _bounds(_pair("0.01", "0.8", 200), delta="1e-5")
    rounds = res.grid["rounds"]
    assert len(rounds) >= 2
    lows = [Fraction(r["lower"]) for r in rounds]
    ups = [Fraction(r["upper"]) for r in rounds]
    # the rounds record their ends as outward-rounded decimals: compare in that form
    assert res.enclosure.lower_str() == rounds[lows.index(max(lows))]["lower"]
    assert res.enclosure.upper_str() == rounds[ups.index(min(ups))]["upper"]
    assert res.grid["lower_h"] == rounds[lows.index(max(lows))]["h"]
    assert res.grid["upper_h"] == rounds[ups.index(min(ups))]["h"]


def test_lattice_range_up_to_the_cell_limit_is_accepted() -> None:
    """The end search probes the cell limit itself before refusing: a range that fits the limit
    is accepted even when the doubling from ceil(1/h) cells would jump past it (it was refused)."""
    from certdp.errors import LimitExceeded
    from certdp.notions.pld_lattice import lattice_for

    pair = SubsampledGaussian("0.01", "0.8", "remove")
    h = Fraction(1, 2**10)
    full = lattice_for(pair, h, 60, max_cells=1 << 30)
    limit = max(full.hi, -full.lo, full.hi - full.lo)
    jump = 1 << 10  # the doubling's first probe above the right end
    while jump < full.hi:
        jump *= 2
    assert jump > limit  # the old search refused this limit
    got = lattice_for(pair, h, 60, max_cells=limit)
    assert (got.lo, got.hi) == (full.lo, full.hi)
    with pytest.raises(LimitExceeded, match="cells per step"):
        lattice_for(pair, h, 60, max_cells=full.hi - full.lo - 1)


def test_rounds_sure_to_pass_the_product_limit_are_not_built() -> None:
    """The refinement backs off from a round whose estimated products pass the limit by
    SURE_OVERFLOW (attack finding B2: four such rounds each built 17-21e6 work units before the
    limit stopped them); a round that fits (CIFAR-10's second one) is built."""
    from certdp.errors import LimitExceeded
    from certdp.notions.pld import _sure_to_overflow

    b2 = compose(SubsampledGaussian("0.001", "6.188176", "both"), 10**6)
    with pytest.raises(LimitExceeded, match="past the limit"):
        _sure_to_overflow(b2, Fraction(1, 10**10), Fraction(42, 10**8))  # estimated 2.5x the limit
    cifar = compose(SubsampledGaussian("256/50000", "1.1", "both"), 9766)
    _sure_to_overflow(cifar, Fraction(1, 10**5), Fraction(11, 2**17))  # no exception: it fits


def test_pld_bounds_sets_its_own_working_precision() -> None:
    """Called at the default context precision (53 bits), pld_bounds works at 128 bits as the CLI
    does: at 53 the tails' balls at fine spacings were wider than the cells, and at q = 0.001,
    sigma = 0.8, 10^5 steps the upper end grew as h fell until the target width was refused."""
    from certdp.enclose import current_prec, workprec
    from certdp.notions.pld import pld_bounds
    from certdp.pairs import SubsampledGaussian, compose

    pair = compose(SubsampledGaussian(Fraction(1, 100), Fraction(4, 5), "both"), 500)
    with workprec(53):
        assert current_prec() == 53
        at_default = pld_bounds(pair, delta=Fraction(1, 10**5))
    with workprec(128):
        at_128 = pld_bounds(pair, delta=Fraction(1, 10**5))
    assert at_default.enclosure.lower == at_128.enclosure.lower
    assert at_default.enclosure.upper == at_128.enclosure.upper
