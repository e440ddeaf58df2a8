"""Certified TV bounds and calibration for random allocation (small M, fast enough for CI)."""

from __future__ import annotations

import json
from fractions import Fraction

import mpmath as mp
import pytest

from certdp.calibrate import calibrate_tv
from certdp.cli import main
from certdp.errors import InvalidArgument
from certdp.notions.tv_certified import LatticeGrid, auto_grid, tv_bound
from certdp.notions.tv_numeric import approx_tv_lattice, approx_tv_monte_carlo
from certdp.pairs import RandomAllocation


@pytest.mark.parametrize(("e", "sigma"), [(1, "1.5"), (3, "2"), (8, "4")])
def test_m_equals_one_bounds_contain_the_exact_value(e: int, sigma: str) -> None:
    pair = RandomAllocation(1, sigma, e)
    grid = auto_grid(pair, 1e-6)
    up, low = tv_bound(pair, grid, "upper"), tv_bound(pair, grid, "lower")
    with mp.workdps(50):
        exact = 2 * mp.ncdf(mp.sqrt(e) / mp.mpf(sigma) / 2) - 1
        ref = Fraction(mp.nstr(exact, 45))
    assert low.bound.lower <= ref <= up.bound.upper
    assert up.bound.upper - low.bound.lower < Fraction(1, 10**5)


@pytest.mark.parametrize(("m", "e", "sigma"), [(3, 2, "1.2"), (8, 3, "1.5"), (20, 3, "0.9")])
def test_bounds_bracket_numeric_and_monte_carlo(m: int, e: int, sigma: str) -> None:
    pair = RandomAllocation(m, sigma, e)
    numeric = approx_tv_lattice(m, e, sigma)
    grid = auto_grid(pair, 1e-6, ref=numeric)
    up, low = tv_bound(pair, grid, "upper"), tv_bound(pair, grid, "lower")
    assert low.bound.lower <= Fraction(numeric.value) <= up.bound.upper
    est, se = approx_tv_monte_carlo(m, e, sigma, n=200_000, seed=7)
    assert float(low.bound.lower) - 4 * se <= est <= float(up.bound.upper) + 4 * se
    assert float(up.bound.upper - low.bound.lower) < 2e-6  # tightness on the automatic grid
    assert 0 <= float(up.lost.upper) < 1e-6


def test_a_coarse_grid_is_still_sound() -> None:
    pair = RandomAllocation(5, "1", 2)
    coarse = LatticeGrid(h=1 / 64, cap=64.0, l_min=0.25, l_max=6.0, eta=1 / 256, prec=96)
    with pytest.raises(InvalidArgument, match="must be a power of two"):
        LatticeGrid(h=0.001, cap=64.0, l_min=0.25, l_max=6.0, eta=1 / 256)
    up, low = tv_bound(pair, coarse, "upper"), tv_bound(pair, coarse, "lower")
    value = approx_tv_lattice(5, 2, "1").value
    assert low.bound.lower <= Fraction(value) <= up.bound.upper
    with pytest.raises(InvalidArgument):
        tv_bound(pair, coarse, "middle")


def test_calibration_is_two_sided_on_a_small_cell() -> None:
    res = calibrate_tv(10, 2, "0.2", step="1e-4")
    assert res.tv_upper.upper <= Fraction(1, 5)
    assert res.tv_lower_at_miss is not None and res.tv_lower_at_miss.lower > Fraction(1, 5)
    assert res.sigma - res.sigma_miss == Fraction(1, 10**4)
    assert abs(float(res.sigma) - res.exact_sigma) <= 1e-4
    assert res.sigma < res.closed_form_sigma.lower  # the closed form needs more noise


def test_calibrate_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["calibrate", "random-allocation", "--steps", "10", "--epochs", "2", "--tv", "0.2", "--step", "1e-4", "--json"]
    )
    out = capsys.readouterr().out
    assert code == 0
    rec = json.loads(out)
    for key in (
        "sigma",
        "tv_upper",
        "sigma_miss",
        "tv_lower_at_miss",
        "exact_sigma",
        "closed_form_sigma",
        "grid",
        "seconds",
    ):
        assert key in rec
    assert Fraction(rec["tv_upper"]) <= Fraction(1, 5) < Fraction(rec["tv_lower_at_miss"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["calibrate", "random-allocation", "--steps", "10", "--tv", "1.5"], "tv=1.5 must be < 1"),
        (["calibrate", "random-allocation", "--steps", "0", "--tv", "0.1"], "steps=0 must be >= 1"),
        (["calibrate", "random-allocation", "--steps", "10", "--epochs", "0", "--tv", "0.1"], "epochs=0 must be >= 1"),
        (["calibrate", "random-allocation", "--steps", "10", "--tv", "0.1", "--step", "0"], "step=0 must be > 0"),
        (
            ["calibrate", "gaussian", "--tv", "0.1"],
            "calibrate is implemented for random-allocation and subsampled-gaussian, not mechanism=gaussian",
        ),
    ],
)
def test_calibrate_bad_input(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err == f"certdp: error: {message}\n"


@pytest.mark.parametrize(("m", "e", "sigma"), [(12, 2, "1.1"), (40, 3, "1.4")])
def test_two_scale_scheme_matches_scheme_two_on_the_same_grid(m: int, e: int, sigma: str) -> None:
    """Scheme 3 (two-scale powering) against scheme 2 on one grid: both bracket the numeric TV, and
    the two-scale moves cost at most 1e-9 on either side (the coarse part carries ~1e-5 of the mass)."""
    import dataclasses

    pair = RandomAllocation(m, sigma, e)
    numeric = approx_tv_lattice(m, e, sigma)
    g3 = auto_grid(pair, 1e-6, ref=numeric)
    assert g3.scheme == 3 and g3.to_dict()["scheme"] == 3
    g2 = dataclasses.replace(g3, scheme=2)
    for side in ("upper", "lower"):
        b3, b2 = tv_bound(pair, g3, side).bound, tv_bound(pair, g2, side).bound
        if side == "upper":
            assert Fraction(numeric.value) <= b3.upper and b3.upper - b2.upper < Fraction(1, 10**9)
        else:
            assert b3.lower <= Fraction(numeric.value) and b2.lower - b3.lower < Fraction(1, 10**9)


@pytest.mark.parametrize("scheme", [1, 3])
@pytest.mark.parametrize("side", ["upper", "lower"])
def test_progress_is_called_inside_the_phases_and_changes_no_number(
    scheme: int, side: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review round 3: a deadline was checked only between the phases of tv_bound (one ran ~30 s);
    the loops and the power routines' callbacks now call progress(phase, frac) every
    TICK_SECONDS, with frac inside the phase's range, and the bound is the same bit for bit."""
    import certdp.notions.tv_certified as tvc

    extra = {"scheme": 3, "tail_k": 0.0372, "coarsen": 0.25} if scheme == 3 else {}
    grid = LatticeGrid(h=2**-7, cap=36.765625, l_min=2**-8, l_max=13.0, eta=2**-11, **extra)
    pair = RandomAllocation(5, Fraction(1), 3)
    quiet = tv_bound(pair, grid, side)
    monkeypatch.setattr(tvc, "TICK_SECONDS", 0.0)
    monkeypatch.setattr(tvc, "TICK_EVERY", 16)
    calls: list[tuple[str, float]] = []
    loud = tv_bound(pair, grid, side, lambda what, frac: calls.append((what, frac)))
    assert (loud.bound.lower, loud.bound.upper) == (quiet.bound.lower, quiet.bound.upper)
    ranges = {"step lattice": (0.0, 0.3), "epoch sum": (0.3, 0.7), "log grid": (0.7, 0.85), "epochs": (0.85, 1.0)}
    inside = [(w, f) for w, f in calls if w in ranges]
    assert all(ranges[w][0] <= f <= ranges[w][1] for w, f in inside)
    for phase in ("step lattice", "epoch sum"):
        assert sum(w == phase for w, _ in calls) > 2, (phase, calls)  # the phase start and ticks inside it
    assert [w for w, _ in calls][-1] == "done"


def test_largest_product_replays_the_schedule_within_longest_product() -> None:
    from certdp.notions.tv_certified import largest_product, longest_product

    grid = LatticeGrid(
        h=2**-9, cap=2284.23828125, l_min=2**-8, l_max=456.85, eta=2**-14, scheme=3, tail_k=0.0302, coarsen=0.25
    )
    for m in (1, 7, 100, 250):
        assert 1 <= largest_product(m, 0.4027, grid, "upper") <= longest_product(m, 0.4027, grid, "upper")
    # small sigma, small M: every partial sum is as long as the lattice (review round 3)
    assert largest_product(7, 0.4027, grid, "upper") > 2_000_000
