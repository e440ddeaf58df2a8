"""Coarsening maps of lattice masses: the directions of Jensen's inequality that the TV bounds use."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import assume, given
from hypothesis import strategies as st

from certdp.enclose import (
    coarsen_group,
    coarsen_spread,
    power_multires,
    power_truncated,
    power_two_scale,
    to_ball,
    workprec,
)

masses = st.lists(st.integers(0, 1000), min_size=1, max_size=40)


def _dist(off: int, coeffs: list, spacing: int) -> list[tuple[int, Fraction, Fraction]]:
    """(value, lower mass, upper mass) triples; values in units of the original spacing. The ends
    are read at 128 bits (at the default 53 bits .lower() itself would round them)."""
    with workprec(128):
        ends = [(c.lower().mid().man_exp(), c.upper().mid().man_exp()) for c in coeffs]
    return [
        (
            (off + i) * spacing,
            Fraction(int(a[0])) * Fraction(2) ** int(a[1]),
            Fraction(int(b[0])) * Fraction(2) ** int(b[1]),
        )
        for i, (a, b) in enumerate(ends)
    ]


def _eg(dist: list[tuple[int, Fraction, Fraction]], k: int, upper: bool) -> Fraction:
    """E min(1, X/k) (concave, nondecreasing) with the lower or upper ends of the masses."""
    return sum((min(Fraction(1), Fraction(v, k)) * (hi if upper else lo) for v, lo, hi in dist), Fraction(0))


@given(masses, st.integers(0, 7), st.integers(1, 60))
def test_spread_keeps_mass_and_mean_and_lowers_concave_expectations(ws: list[int], off: int, k: int) -> None:
    total = sum(ws) or 1
    with workprec(128):
        coeffs = [to_ball(Fraction(w, total)) for w in ws]
        o2, c2 = coarsen_spread(off, coeffs)
    before, after = _dist(off, coeffs, 1), _dist(o2, c2, 2)
    assert abs(sum(m for _, m, _ in after) - sum(m for _, m, _ in before)) < Fraction(1, 10**30)
    assert abs(sum(v * m for v, m, _ in after) - sum(v * m for v, m, _ in before)) < Fraction(1, 10**28)
    assert _eg(after, k, upper=False) <= _eg(before, k, upper=True)


@given(masses, st.integers(0, 7), st.integers(1, 60))
def test_group_keeps_mass_and_raises_concave_expectations(ws: list[int], off: int, k: int) -> None:
    total = sum(ws) or 1
    with workprec(128):
        coeffs = [to_ball(Fraction(w, total)) for w in ws]
        o2, c2 = coarsen_group(off, coeffs)
    before, after = _dist(off, coeffs, 1), _dist(o2, c2, 2)
    assert abs(sum(m for _, m, _ in after) - sum(m for _, m, _ in before)) < Fraction(1, 10**30)
    assert sum(v * m for v, _, m in after) >= sum(v * m for v, m, _ in before) - Fraction(1, 10**28)
    assert _eg(after, k, upper=True) >= _eg(before, k, upper=False)


@given(st.lists(st.integers(0, 100), min_size=2, max_size=12), st.integers(2, 24), st.integers(1, 80))
def test_multires_power_brackets_the_exact_power(ws: list[int], n: int, k: int) -> None:
    total = sum(ws) or 1
    top = 4 * n * len(ws)  # nothing truncated, even after rounding values up by the coarsest spacing
    with workprec(128):
        coeffs = [to_ball(Fraction(w, total)) for w in ws]
        exact = _dist(0, power_truncated(coeffs, n, top + 1), 1)
        floor = to_ball(0)
        schedule = lambda j: j // 2  # noqa: E731 - coarsen every other level
        o_up, c_up, _, d_up = power_multires(coeffs, n, top, floor, schedule, spread=True)
        o_lo, c_lo, _, d_lo = power_multires(coeffs, n, top, floor, schedule, spread=False)
    up, lo = _dist(o_up, c_up, 2**d_up), _dist(o_lo, c_lo, 2**d_lo)
    assert _eg(up, k, upper=False) <= _eg(exact, k, upper=True) + Fraction(1, 10**25)
    assert _eg(lo, k, upper=True) >= _eg(exact, k, upper=False) - Fraction(1, 10**25)


@given(
    st.lists(st.integers(0, 100), min_size=2, max_size=12),
    st.integers(2, 24),
    st.integers(1, 80),
    st.integers(1, 3),
    st.integers(1, 40),
)
def test_two_scale_power_brackets_the_exact_power(ws: list[int], n: int, k: int, gap: int, cut: int) -> None:
    """The fine/coarse split at any threshold keeps the Jensen directions of power_multires."""
    assume(sum(ws) > 0)
    total = sum(ws)
    top = 4 * n * len(ws) + (1 << (gap + n.bit_length()))  # rounding up never reaches the top
    with workprec(128):
        coeffs = [to_ball(Fraction(w, total)) for w in ws]
        exact = _dist(0, power_truncated(coeffs, n, top + 1), 1)
        floor = to_ball(0)
        schedule = lambda j: j // 3  # noqa: E731
        split = lambda copies: cut * copies / 4  # noqa: E731 - anywhere, even inside the bulk
        o_up, c_up, _, d_up = power_two_scale(coeffs, n, top, floor, schedule, True, gap, split)
        o_lo, c_lo, _, d_lo = power_two_scale(coeffs, n, top, floor, schedule, False, gap, split)
    up, lo = _dist(o_up, c_up, 2**d_up), _dist(o_lo, c_lo, 2**d_lo)
    assert abs(sum(m for _, m, _ in up) - 1) < Fraction(1, 10**25)
    assert abs(sum(m for _, m, _ in lo) - 1) < Fraction(1, 10**25)
    # spreads keep the mean; rounding up raises it
    mean = sum(v * m for v, m, _ in exact)
    assert abs(sum(v * m for v, m, _ in up) - mean) < Fraction(1, 10**20)
    assert sum(v * m for v, _, m in lo) >= mean - Fraction(1, 10**20)
    assert _eg(up, k, upper=False) <= _eg(exact, k, upper=True) + Fraction(1, 10**25)
    assert _eg(lo, k, upper=True) >= _eg(exact, k, upper=False) - Fraction(1, 10**25)
