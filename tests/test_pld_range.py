"""The default width target (relative 1e-4) at the corners of the PLD accountant's range (issue 34:
q in [1e-5, 1], sigma in [0.3, 50], steps in [1, 10^6], delta in [1e-15, 0.1]): each enclosure is
checked for its width (tightness) and against an independent reference (soundness): the exact
mpmath eps where a closed form exists (one step at q = 1), else the float PLD reference of
tests/pld_reference.py (an honest bracket of the truth, which must overlap certdp's).

Settings where the target is out of reach are not listed here; they end with PrecisionExhausted
and their measured width is in docs/math.md §10 (q = 1e-5, sigma = 0.3, 10^5 steps, delta = 1e-15:
1.35e-4, the one-step lattice needs more than 2^18 cells below h = 9e-5; q = 0.05, sigma = 3,
10^6 steps, delta = 1e-5, where eps is about 218: 2.0e-4, the products pass 2^22 coefficients).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath as mp
import pytest

from certdp.enclose import workprec
from certdp.notions.accountant import PLD_PREC
from certdp.notions.pld import DEFAULT_REL_WIDTH, pld_bounds
from certdp.pairs import SubsampledGaussian, compose
from tests import pld_reference as ref


def _certified(q: str, sigma: str, steps: int, delta: str, direction: str) -> tuple[Fraction, Fraction]:
    pair = SubsampledGaussian(q, sigma, direction)
    with workprec(PLD_PREC):
        res = pld_bounds(pair if steps == 1 else compose(pair, steps), delta=delta)  # the default target
    return res.enclosure.lower, res.enclosure.upper


def _assert_tight(lo: Fraction, up: Fraction, what: str) -> None:
    assert up - lo <= DEFAULT_REL_WIDTH * up, f"{what}: [{float(lo)!r}, {float(up)!r}] is wider than 1e-4"


def _assert_overlap(lo: Fraction, up: Fraction, q: str, sigma: str, steps: int, delta: str, direction: str) -> None:
    r = ref.reference_eps(float(q), float(sigma), steps, float(delta), direction, max_levels=3, max_cells=300_000)
    # the reference's optimistic end can be unbounded (inf) where its float tails underflow (delta =
    # 1e-15 at sigma = 50): that side is then no check, the other still is
    assert math.isfinite(r.lo) and Fraction(r.lo) <= up, (float(lo), float(up), r)
    assert not math.isfinite(r.hi) or lo <= Fraction(r.hi), (float(lo), float(up), r)


@pytest.mark.parametrize(
    ("q", "sigma", "steps", "delta"),
    [
        ("0.00001", "0.8", 1000, "1e-8"),  # the smallest q: one step's losses are ~1e-5 wide (h ~ 9e-7)
        ("0.01", "0.3", 1000, "1e-5"),  # the smallest sigma: eps ~ 70
    ],
)
def test_corners_meet_the_default_width_and_overlap_the_reference(q: str, sigma: str, steps: int, delta: str) -> None:
    lo, up = _certified(q, sigma, steps, delta, "both")
    what = f"q={q} sigma={sigma} steps={steps} delta={delta}"
    _assert_tight(lo, up, what)
    _assert_overlap(lo, up, q, sigma, steps, delta, "both")


@pytest.mark.parametrize("direction", ["remove", "add"])
def test_one_gaussian_step_at_delta_1e_15_contains_the_exact_eps(direction: str) -> None:
    lo, up = _certified("1", "0.3", 1, "1e-15", direction)
    _assert_tight(lo, up, f"q=1 sigma=0.3 one step delta=1e-15 {direction}")
    exact = ref.exact_eps("1", "0.3", 1, direction, "1e-15")
    assert exact is not None
    with mp.workdps(ref.DPS):
        assert mp.mpf(lo.numerator) / lo.denominator <= exact <= mp.mpf(up.numerator) / up.denominator


def test_a_tiny_q_at_a_large_delta_is_exactly_zero() -> None:
    # q = 1e-5, sigma = 50, 10^6 steps: delta = 0.1 is met at eps = 0 (an upper end of 0 meets any target)
    lo, up = _certified("0.00001", "50", 10**6, "0.1", "both")
    assert lo == up == 0


@pytest.mark.slow
def test_the_largest_sigma_at_the_smallest_delta_meets_the_width_and_overlaps_the_reference() -> None:
    # 10^6 steps: tests/test_pld_reference.py (q = 0.001, sigma = 0.8, delta = 1e-8)
    q, sigma, steps, delta = "0.5", "50", 10_000, "1e-15"
    lo, up = _certified(q, sigma, steps, delta, "both")
    _assert_tight(lo, up, f"q={q} sigma={sigma} steps={steps} delta={delta}")
    _assert_overlap(lo, up, q, sigma, steps, delta, "both")
