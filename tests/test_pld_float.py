"""The float steering accountant (certdp.notions.pld_float) and the calibration's float plan.

The float accountant only steers, so what is tested is that it steers well: its merged-cells eps
at a spacing h is the certified merged lower end at the same h up to float error (the same
construction in other arithmetic), its extrapolation lies inside the certified enclosure at a finer
spacing, and a calibration steered by it finds the same sigma as the certified search alone.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import certdp.calibrate.pld as calibrate_pld
from certdp.calibrate.pld import calibrate_pld as calibrate
from certdp.enclose import workprec
from certdp.notions.pld import LatticeBounds, lattice_for, resolution
from certdp.notions.pld_float import float_eps, float_eps_merged
from certdp.pairs import SubsampledGaussian

DELTA = Fraction(1, 10**5)


def certified_ends(pair: SubsampledGaussian, n: int, h: Fraction, units_eps: Fraction) -> tuple[float, float]:
    floor, tail_bits = resolution(DELTA, n)
    with workprec(128):
        b = LatticeBounds(
            pair, n, lattice_for(pair, h, tail_bits), floor, coarsen=False, lower="merged", units_eps=units_eps
        )
        return float(b.eps("lower", DELTA)), float(b.eps("upper", DELTA))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    q=st.sampled_from(["0.001", "0.005", "0.02", "0.1", "1"]),
    sigma=st.floats(0.4, 4.0),
    n=st.sampled_from([1, 10, 300, 2000]),
    direction=st.sampled_from(["remove", "add"]),
)
def test_float_merged_matches_the_certified_merged_lower_end(q: str, sigma: float, n: int, direction: str) -> None:
    """Same cells, same merge: the float eps is the certified lower end at h up to float error, and
    never far below it (the case that was: a heavy right tail wrapped out of the FFT window)."""
    pair = SubsampledGaussian(Fraction(q), Fraction(sigma).limit_denominator(1000), direction)
    h = Fraction(1, 2**10)
    _, tail_bits = resolution(DELTA, n)
    got = float_eps_merged(pair, n, float(DELTA), h, tail_bits)
    if got is None or got > 39:
        return  # no float estimate (an eps past the window), or past the merged units' range
    lower, upper = certified_ends(pair, n, h, Fraction(math.ceil(got) + 1))
    if lower == 0:
        return
    # the certified end is the same quantity rounded down in fixed point: the float lies at or just above it
    assert lower - 1e-9 * max(1, lower) <= got <= lower + 1e-6 * max(1.0, lower) + (upper - lower) * 0.01, (got, lower)


@pytest.mark.parametrize(
    ("q", "n", "sigma"),
    [("0.001", 1000, "0.3845"), ("0.005", 1000, "0.9393"), ("0.05", 1000, "1.1904"), ("0.01", 300, "0.8")],
)
def test_the_extrapolation_lies_in_the_certified_enclosure(q: str, n: int, sigma: str) -> None:
    pair = SubsampledGaussian(Fraction(q), Fraction(sigma), "remove")
    _, tail_bits = resolution(DELTA, n)
    est = float_eps(pair, n, float(DELTA), Fraction(1, 2**10), tail_bits, tol=1e-6)
    assert est is not None and est.lower_coeff > 0
    lower, upper = certified_ends(pair, n, Fraction(1, 2**13), Fraction(16))
    assert lower <= est.eps <= upper, (lower, est.eps, upper)


@pytest.mark.parametrize(
    ("q", "n", "eps", "step"), [("0.01", 200, "2", "1e-4"), ("0.05", 100, "1", "1e-4"), ("0.001", 1000, "8", "1e-4")]
)
def test_the_planned_calibration_finds_the_certified_search_sigma(
    q: str, n: int, eps: str, step: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    planned = calibrate(q, n, eps, "1e-5", step=step)
    assert planned.refutation is not None  # the plan's two probes proved both sides
    assert planned.probes["fine"] <= 4
    monkeypatch.setattr(calibrate_pld, "_float_plan", lambda *args: None)
    searched = calibrate(q, n, eps, "1e-5", step=step)
    assert searched.sigma == planned.sigma
