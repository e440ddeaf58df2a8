"""The bulk/tail lattice (certdp.notions.pld_split): where one step's loss has long light tails
(small q), the lattice is fine in the bulk and coarse in the tails, and the composition is
B^n + n B^(n-1) T plus the bounded k >= 2 mass. Checked against the exact one-step value (mpmath,
normal tails) and against the plain fine lattice over the whole range."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mpmath import mp

from certdp.enclose import workprec
from certdp.notions import pld_fixed
from certdp.notions.pld import LatticeBounds, _split_for, lattice_for, pld_bounds, resolution
from certdp.pairs import SubsampledGaussian, compose
from tests.test_honest_ends import ref_sg_delta

PREC = 128


@settings(max_examples=10, deadline=None)
@given(
    q=st.integers(1, 9).map(lambda k: Fraction(k, 1000)),
    sigma=st.integers(60, 150).map(lambda k: Fraction(k, 100)),
    k=st.integers(5, 10),
    direction=st.sampled_from(["remove", "add"]),
)
def test_one_step_enclosure_holds_the_exact_value(q, sigma, k, direction) -> None:
    """One step: the exact eps solves delta(eps) = delta in closed form; the split lattice's ends
    must bracket it (delta at the upper end <= delta < delta at the lower end). Most drawn settings
    split (the remove direction's tail reaches far); the test below pins one that must."""
    delta = Fraction(1, 10**k)
    with workprec(PREC):
        res = pld_bounds(SubsampledGaussian(q, sigma, direction), delta=delta, h=Fraction(1, 2**12))
    lo, up = res.enclosure.lower, res.enclosure.upper
    with mp.workdps(50):
        d = mp.mpf(delta.numerator) / delta.denominator
        assert ref_sg_delta(q, sigma, mp.mpf(up.numerator) / up.denominator, direction) <= d * (1 + mp.mpf(10) ** -30)
        if lo > 0:
            assert ref_sg_delta(q, sigma, mp.mpf(lo.numerator) / lo.denominator, direction) > d


def test_a_one_step_remove_direction_at_small_q_is_split() -> None:
    with workprec(PREC):
        res = pld_bounds(SubsampledGaussian("0.001", "0.8", "remove"), delta=Fraction(1, 10**8), h=Fraction(1, 2**14))
    assert "bulk_lo" in res.grid["remove"] and res.grid["remove"]["stride"] > 1
    lo, up = res.enclosure.lower, res.enclosure.upper
    with mp.workdps(50):
        d = mp.mpf(10) ** -8
        assert ref_sg_delta("0.001", "0.8", mp.mpf(up.numerator) / up.denominator, "remove") <= d
        assert ref_sg_delta("0.001", "0.8", mp.mpf(lo.numerator) / lo.denominator, "remove") > d


def test_split_and_full_lattices_agree_on_a_long_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """2000 steps at q = 0.001: the split's enclosure overlaps the plain full-range lattice's at
    the same spacing and offset, its upper end within 1e-8 relative, its lower end within 1e-4
    (both at one spacing throughout: the partial powers' coarsening, which the two compositions
    schedule differently, is tested in tests/test_pld_coarsening.py)."""
    monkeypatch.setattr(pld_fixed, "COARSE_FROM", None)
    n, delta, h = 2000, Fraction(1, 10**8), Fraction(1, 2**13)
    floor, tail_bits = resolution(delta, n)
    with workprec(PREC):
        for direction in ("remove", "add"):
            pair = SubsampledGaussian("0.001", "0.8", direction)
            spl = _split_for([(pair, n)], h, tail_bits, delta, tune=True)
            assert spl is not None and spl.stride > 1
            split = LatticeBounds(pair, n, spl.bulk, floor, split=spl)
            full = LatticeBounds(pair, n, lattice_for(pair, h, tail_bits, offset=spl.offset), floor)
            s_lo, s_up = split.eps("lower", delta), split.eps("upper", delta)
            f_lo, f_up = full.eps("lower", delta), full.eps("upper", delta)
            assert s_lo <= f_up and f_lo <= s_up  # two sound enclosures overlap
            assert abs(s_up - f_up) <= f_up * Fraction(1, 10**8)
            assert f_lo - s_lo <= f_up * Fraction(1, 10**4)


def test_the_split_is_recorded_and_the_default_target_is_met() -> None:
    with workprec(PREC):
        res = pld_bounds(compose(SubsampledGaussian("0.001", "0.8", "both"), 2000), delta=Fraction(1, 10**8))
    rec = res.grid["remove"]
    assert {"bulk_lo", "bulk_hi", "stride"} <= set(rec) and rec["lo"] <= rec["bulk_lo"] < rec["bulk_hi"] <= rec["hi"]
    enc = res.enclosure
    assert (enc.upper - enc.lower) <= enc.upper / 10**4


def test_eps_in_the_tail_keeps_the_lower_end_close_to_the_full_lattice() -> None:
    """Attack finding: 3 steps at q = 1e-4, delta = 1e-10 put eps in the coarse tail, where each
    coarse cell's mass sat at its left end (first order: lower end 2.33242 against the full
    lattice's 2.33307, relative width 2.7e-4). A merged cell now sits at its own loss."""
    n, delta, h = 3, Fraction(1, 10**10), Fraction(1, 2**13)
    pair = SubsampledGaussian(Fraction(1, 10**4), Fraction(1, 2), "remove")
    floor, tail_bits = resolution(delta, n)
    with workprec(PREC):
        spl = _split_for([(pair, n)], h, tail_bits, delta, tune=True)
        assert spl is not None and spl.stride > 1
        split = LatticeBounds(pair, n, spl.bulk, floor, split=spl)
        full = LatticeBounds(pair, n, lattice_for(pair, h, tail_bits, offset=spl.offset), floor)
        s_lo, f_lo, f_up = split.eps("lower", delta), full.eps("lower", delta), full.eps("upper", delta)
    assert s_lo <= f_up and f_lo - s_lo <= f_up * Fraction(1, 10**4)
