"""The float tails that steer the PLD offset search (steering only: nothing certified is computed
from them) agree with the certified Arb tails, so the search compares offsets as the Arb tails
would."""

from __future__ import annotations

import math
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from certdp.enclose import to_ball, workprec
from certdp.notions.pld_lattice import lattice_for, tuned_offset
from certdp.pairs import Gaussian, SubsampledGaussian


@settings(max_examples=60, deadline=None)
@given(
    q=st.sampled_from(["1/100000", "1/1000", "256/50000", "1/20", "1/2", "1"]),
    sigma=st.sampled_from(["0.3", "0.8", "1.1", "5", "50"]),
    direction=st.sampled_from(["remove", "add"]),
    ell=st.floats(-3, 3),
)
def test_float_tails_match_arb_tails(q: str, sigma: str, direction: str, ell: float) -> None:
    pair = SubsampledGaussian(q, sigma, direction)
    got = pair.loss_tail_float(ell)
    assert got is not None
    with workprec(128):
        ref = pair.loss_tail(to_ball(ell))
    for f, ball in zip(got, ref, strict=True):
        exact = float(ball.mid())
        assert 0.0 <= f <= 1.0
        # float formulas (expm1, log, erfc): a few ulps of relative error where the tail is in range
        assert math.isclose(f, exact, rel_tol=1e-9, abs_tol=1e-300), (f, exact)


def test_pairs_without_float_tails_are_steered_by_arb() -> None:
    # the default is None: the offset search keeps the certified tails for such pairs
    assert Gaussian(1).loss_tail_float(0.5) is None
    assert SubsampledGaussian("1/100", "1", "both").loss_tail_float(0.5) is None


def test_offset_search_result_is_a_valid_offset() -> None:
    pair = SubsampledGaussian("1/100", "0.8", "remove")
    h = Fraction(1, 2**11)
    offset, imbalance = tuned_offset(pair, h, base=lattice_for(pair, h, 40))
    assert 0 <= offset < h and (offset / h * 2**40).denominator == 1
    assert imbalance >= 0 or math.isclose(imbalance, 0, abs_tol=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    q=st.sampled_from(["1/100000", "1/1000", "256/50000", "1/20", "1/2", "1"]),
    sigma=st.sampled_from(["0.3", "0.8", "1.1", "5", "50"]),
    direction=st.sampled_from(["remove", "add"]),
    ells=st.lists(st.floats(-3, 3), min_size=1, max_size=20),
)
def test_vectorised_float_tails_match_the_scalar_ones(q: str, sigma: str, direction: str, ells: list[float]) -> None:
    import numpy as np

    pair = SubsampledGaussian(q, sigma, direction)
    got = pair.loss_tails_float(np.array(ells))
    assert got is not None
    for i, ell in enumerate(ells):
        one = pair.loss_tail_float(ell)
        assert one is not None
        for f, g in zip((got[0][i], got[1][i]), one, strict=True):
            assert math.isclose(f, g, rel_tol=1e-12, abs_tol=1e-300), (ell, f, g)


@settings(max_examples=25, deadline=None)
@given(
    q=st.sampled_from(["1/1000", "256/50000", "1/100", "1/20", "1/5"]),
    sigma=st.sampled_from(["0.52", "0.8", "1.1", "2"]),
    direction=st.sampled_from(["remove", "add"]),
    eighths=st.integers(0, 7),
    hbits=st.integers(9, 14),
)
def test_float_construction_tracks_the_ball_construction(
    q: str, sigma: str, direction: str, eighths: int, hbits: int
) -> None:
    """The offset search ranks offsets by the float construction (certdp.notions.pld_steer); it
    must give the imbalance that the certified construction on the Arb tails gives."""
    from certdp.notions.pld_lattice import LossLattice, _cell_masses, _imbalance, _lower_groups
    from certdp.notions.pld_steer import float_imbalance

    pair = SubsampledGaussian(q, sigma, direction)
    h = Fraction(1, 2**hbits)
    base = lattice_for(pair, h, 40)
    window = LossLattice(h, base.lo, min(base.hi, base.lo + 800), h * Fraction(eighths, 8))
    below = window.hi - window.lo - 8
    with workprec(128):
        ref = _imbalance(_lower_groups(pair, window, _cell_masses(pair, window)), window, below)
    got = float_imbalance(pair, window, below)
    assert got is not None
    # the ball construction rounds its fractions to 2^-50 and backs off where floats were optimistic
    assert math.isclose(got, ref, rel_tol=0.3, abs_tol=1e-14 + 1e-6 * abs(ref)), (got, ref)
