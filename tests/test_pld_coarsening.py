"""The coarsening of partial powers (certdp.enclose.fixed.coarsen_up, coarsen_down,
fixed_power_coarsening; docs/math.md §10, "Coarsening the partial powers"): against exact mass
splitting and exact hockey-stick curves in mpmath, against brute-force n-fold convolutions, and
end to end against the plain one-spacing composition."""

from __future__ import annotations

import random
from fractions import Fraction

import mpmath as mp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from certdp.enclose import workprec
from certdp.enclose.fixed import FixedPoly, coarsen_down, coarsen_up, fixed_power, fixed_power_coarsening
from certdp.notions import pld_fixed
from certdp.notions.pld import LatticeBounds, _split_for, lattice_for, resolution
from certdp.pairs import SubsampledGaussian

BITS = 64


def _delta(masses: dict[int, mp.mpf], h: Fraction, shift: Fraction, eps: mp.mpf) -> mp.mpf:
    """sum_k P_k (1 - e^{eps - l_k})_+ over atoms at l_k = shift + k h (Q-mass e^{-l} P)."""
    total = mp.mpf(0)
    for k, p in masses.items():
        loss = mp.mpf(shift.numerator) / shift.denominator + k * mp.mpf(h.numerator) / h.denominator
        if loss > eps:
            total += p * (1 - mp.exp(eps - loss))
    return total


def _exact_split(masses: dict[int, mp.mpf], h: Fraction, r: int) -> dict[int, mp.mpf]:
    """Mass splitting onto spacing r h, from the definition: an atom at a + k h goes to a and
    a + r h keeping its P- and Q-mass."""
    hh = mp.mpf(h.numerator) / h.denominator
    out: dict[int, mp.mpf] = {}
    for i, p in masses.items():
        j, k = divmod(i, r)
        if k == 0:
            out[j] = out.get(j, mp.mpf(0)) + p
            continue
        phi = (mp.exp(-k * hh) - mp.exp(-r * hh)) / (1 - mp.exp(-r * hh))
        out[j] = out.get(j, mp.mpf(0)) + phi * p
        out[j + 1] = out.get(j + 1, mp.mpf(0)) + (1 - phi) * p
    return out


@settings(max_examples=30, deadline=None)
@given(
    st.integers(-40, 40),
    st.lists(st.integers(0, 2**BITS), min_size=1, max_size=60),
    st.sampled_from([2, 4, 8, 16]),
    st.integers(4, 12),
    st.integers(0, 500),
)
def test_coarsen_up_bounds_the_exact_split_and_dominates(offset: int, units: list[int], r: int, k: int, e: int) -> None:
    """Each coarse coefficient is >= the exact split's mass, their total exceeds it by at most the
    error term, and the coarse pair's delta (with err at g = 1) is >= the fine pair's at every
    eps tried (the fine pair is a post-processing of the coarse one)."""
    h = Fraction(1, 2**k)
    fp = FixedPoly.from_units(offset, units, BITS)
    with mp.workdps(60):
        fine = {offset + i: mp.mpf(u) / 2**BITS for i, u in enumerate(units) if u}
        exact = _exact_split(fine, h, r)
        got = coarsen_up(fp, h, r)
        coarse = {got.offset + i: mp.mpf(int(c)) / 2**BITS for i, c in enumerate(got.poly.coeffs())}
        slack = mp.mpf(got.err - fp.err) / 2**BITS  # one unit per coarse coefficient
        for j, m in exact.items():
            assert coarse.get(j, mp.mpf(0)) + slack >= m - mp.mpf(10) ** -50
        assert sum(exact.values()) <= sum(coarse.values()) + slack + mp.mpf(10) ** -50
        eps = mp.mpf(e) / 100 - 1
        shift = Fraction(0)
        assert _delta(fine, h, shift, eps) <= _delta(coarse, h * r, shift, eps) + slack + mp.mpf(10) ** -50


@settings(max_examples=40, deadline=None)
@given(
    st.integers(-40, 40),
    st.lists(st.integers(0, 2**BITS), min_size=1, max_size=60),
    st.integers(3, 12),
    st.integers(-300, 500),
)
def test_coarsen_down_is_dominated(offset: int, units: list[int], k: int, e: int) -> None:
    """The balanced groups' coarse pair has delta <= the fine pair's at every eps tried (mpmath,
    60 digits; Q-masses e^{-loss} P as for the lattice pairs) and keeps at most the fine mass."""
    h = Fraction(1, 2**k)
    fp = FixedPoly.from_units(offset, units, BITS)
    got = coarsen_down(fp, h)
    with mp.workdps(60):
        fine = {offset + i: mp.mpf(u) / 2**BITS for i, u in enumerate(units) if u}
        coarse = {got.offset + i: mp.mpf(int(c)) / 2**BITS for i, c in enumerate(got.poly.coeffs())}
        assert got.err == 0 and sum(coarse.values()) <= sum(fine.values())
        eps = mp.mpf(e) / 100
        assert _delta(coarse, 2 * h, Fraction(0), eps) <= _delta(fine, h, Fraction(0), eps) + mp.mpf(10) ** -50


def test_coarsen_down_keeps_a_flat_pmf() -> None:
    """On a flat stretch the groups balance with y / x = e^{-h}: the interior mass is kept whole."""
    fp = FixedPoly.from_units(0, [2**60] * 200, 64)
    got = coarsen_down(fp, Fraction(1, 1024))
    inner = [int(c) for c in got.poly.coeffs()][2:-2]
    assert all(abs(c - 2**61) <= 2**61 >> 28 for c in inner)


def _brute_power(units: list[int], n: int) -> list[int]:
    """The exact n-fold convolution of integer masses (Python ints; no rounding at all)."""
    out = [1]
    for _ in range(n):
        nxt = [0] * (len(out) + len(units) - 1)
        for i, a in enumerate(out):
            if a:
                for j, b in enumerate(units):
                    nxt[i + j] += a * b
        out = nxt
    return out


@settings(max_examples=12, deadline=None)
@given(
    st.lists(st.integers(0, 2**20), min_size=3, max_size=12),
    st.integers(17, 48),
    st.sampled_from([1, 2, 4]),
    st.integers(5, 9),
    st.integers(-200, 600),
)
def test_the_coarsened_power_bounds_the_exact_power(units: list[int], n: int, coarse_from: int, k: int, e: int) -> None:
    """fixed_power_coarsening's upper delta (coefficients + err at g = 1) is >= the exact n-fold
    convolution's delta at every eps tried (it bounds a coarsening of it, which dominates it), its
    lower delta is <= it (whether or not they moved: test_spread_powers_move_and_spikes_stay)."""
    total = sum(units)
    if total == 0:
        return
    h, lo = Fraction(1, 2**k), -3
    scaled = [u * 2**20 // total for u in units]  # a sub-probability in units of 2^-20
    base = FixedPoly.from_units(lo, scaled, 20)
    got, scale = fixed_power_coarsening(base, n, h, coarse_from, bits_for=lambda c, length: 80)
    exact = _brute_power(scaled, n)
    with mp.workdps(60):
        fine = {n * lo + i: mp.mpf(c) / mp.mpf(2) ** (20 * n) for i, c in enumerate(exact) if c}
        coarse = {got.offset + i: mp.mpf(int(c)) / mp.mpf(2) ** got.bits for i, c in enumerate(got.poly.coeffs())}
        err = mp.mpf(got.err) / mp.mpf(2) ** got.bits
        eps = mp.mpf(e) / 1000
        assert (
            _delta(fine, h, Fraction(0), eps) <= _delta(coarse, h * scale, Fraction(0), eps) + err + mp.mpf(10) ** -40
        )
    low, scale_low = fixed_power_coarsening(base, n, h, coarse_from, bits_for=lambda c, length: 80, up=False)
    with mp.workdps(60):
        lower = {low.offset + i: mp.mpf(int(c)) / mp.mpf(2) ** low.bits for i, c in enumerate(low.poly.coeffs())}
        assert _delta(lower, h * scale_low, Fraction(0), eps) <= _delta(fine, h, Fraction(0), eps) + mp.mpf(10) ** -40


def test_spread_powers_move_and_spikes_stay() -> None:
    """A pmf spread over many cells moves to coarser lattices on both sides; one whose mass sits
    on one atom (the power of 2^j steps at 2^j q << 1) stays put (attack review: moving it lost
    first order on the lower side)."""
    rng = random.Random(11)
    spread = FixedPoly.from_units(0, [rng.randrange(2**58, 2**59) for _ in range(40)], 64)  # total < 1
    spike = FixedPoly.from_units(0, [2**63] + [rng.randrange(2**50) for _ in range(40)], 64)
    for up in (True, False):
        assert fixed_power_coarsening(spread, 512, Fraction(1, 2**12), 1, 16, None, lambda c, length: 70, up)[1] > 1
        assert fixed_power_coarsening(spike, 512, Fraction(1, 2**12), 1, 16, None, lambda c, length: 70, up)[1] == 1


def test_without_coarsening_the_power_is_unchanged() -> None:
    """coarse_from so large that no level moves: the same polynomial as fixed_power."""
    rng = random.Random(5)
    base = FixedPoly.from_units(-7, [rng.randrange(2**40) for _ in range(30)], 64)
    plain = fixed_power(base, 1000, True, 16, None, lambda c, length: 70)
    same, scale = fixed_power_coarsening(base, 1000, Fraction(1, 256), 2**40, 16, None, lambda c, length: 70)
    assert scale == 1 and same == plain


@pytest.mark.parametrize(
    ("q", "sigma", "n", "delta"), [("256/50000", "1.1", 9766, "1e-5"), ("0.01", "0.8", 2000, "1e-8")]
)
def test_coarsened_and_plain_compositions_agree(
    monkeypatch: pytest.MonkeyPatch, q: str, sigma: str, n: int, delta: str
) -> None:
    """The upper end with the partial powers coarsened (the default) is >= the lower end and within
    2e-5 relative of the upper end at one spacing throughout; the coarsened lattice is coarser."""
    d = Fraction(delta)
    floor, tail_bits = resolution(d, n)
    h = Fraction(1, 2**13)
    with workprec(128):
        pair = SubsampledGaussian(q, sigma, "remove")
        spl = _split_for([(pair, n)], h, tail_bits, d, tune=True)  # None: one plain lattice

        def upper() -> tuple[Fraction, Fraction, Fraction]:
            if spl is not None:
                b = LatticeBounds(pair, n, spl.bulk, floor, split=spl)
            else:
                b = LatticeBounds(pair, n, lattice_for(pair, h, tail_bits), floor)
            return b.eps("upper", d), b.eps("lower", d), b.composed("upper").h, b.composed("lower").h

        up_c, lo_c, h_c, hl_c = upper()
        monkeypatch.setattr(pld_fixed, "COARSE_FROM", None)
        up_p, lo_p, h_p, hl_p = upper()
    assert h_c > h_p == h == hl_p and hl_c >= h  # a split's lower side stays on the fine lattice
    assert lo_c <= lo_p <= up_p and lo_c >= lo_p * (1 - Fraction(4, 10**5))
    # coarsening adds splitting (up to the fixed-point floors, which differ between the two routes)
    assert up_p * (1 - Fraction(1, 10**9)) <= up_c <= up_p * (1 + Fraction(2, 10**5))
