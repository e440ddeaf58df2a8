"""Exact fixed-point powers (certdp.enclose.fixed) against brute-force rational arithmetic: the
upper side's coefficients plus its error bound dominate the exact power in every upper tail sum,
the lower side's never exceed the exact coefficients. Small bits magnify the rounding."""

from __future__ import annotations

from fractions import Fraction

from flint import arb
from hypothesis import given, settings
from hypothesis import strategies as st

from certdp.enclose.fixed import FixedPoly, fixed_power, fixed_product, to_units


def _exact_power(p: list[Fraction], n: int) -> list[Fraction]:
    out = [Fraction(1)]
    for _ in range(n):
        nxt = [Fraction(0)] * (len(out) + len(p) - 1)
        for i, a in enumerate(out):
            for j, b in enumerate(p):
                nxt[i + j] += a * b
        out = nxt
    return out


pmfs = st.lists(st.integers(0, 1000), min_size=1, max_size=6).filter(any)


def _probabilities(weights: list[int], scale: int) -> list[Fraction]:
    total = sum(weights) * scale  # total mass 1/scale <= 1 (a sub-probability measure)
    return [Fraction(w, total) for w in weights]


@settings(max_examples=60, deadline=None)
@given(pmfs, st.integers(1, 3), st.integers(1, 24), st.integers(6, 24), st.integers(0, 1 << 12), st.integers(-5, 5))
def test_upper_side_dominates_every_tail_sum(weights, scale, n, bits, allowance, offset) -> None:
    p = _probabilities(weights, scale)
    units = to_units([arb(x.numerator) / x.denominator for x in p], bits, up=True)
    res = fixed_power(FixedPoly.from_units(offset, units, bits), n, True, allowance)
    exact = _exact_power(p, n)
    got = {res.offset + i: Fraction(c, 2**bits) for i, c in enumerate(res.coeffs())}
    err = Fraction(res.err, 2**bits)
    lo = n * offset
    # for every threshold t: sum_{k >= t} exact_k <= sum_{k >= t} computed_k + err (g nondecreasing in [0, 1])
    keys = range(min(lo, min(got, default=lo)), max(lo + len(exact), max(got, default=lo) + 1) + 1)
    for t in keys:
        ex = sum(v for i, v in enumerate(exact) if lo + i >= t)
        gv = sum(v for k, v in got.items() if k >= t)
        assert ex <= gv + err, (t, ex, gv, err)


@settings(max_examples=60, deadline=None)
@given(pmfs, st.integers(1, 3), st.integers(1, 24), st.integers(6, 24), st.integers(0, 1 << 12))
def test_lower_side_never_exceeds_the_exact_coefficients(weights, scale, n, bits, allowance) -> None:
    p = _probabilities(weights, scale)
    units = to_units([arb(x.numerator) / x.denominator for x in p], bits, up=False)
    res = fixed_power(FixedPoly.from_units(0, units, bits), n, False, allowance)
    exact = _exact_power(p, n)
    assert res.err == 0
    for i, c in enumerate(res.coeffs()):
        assert Fraction(c, 2**bits) <= exact[res.offset + i]


@settings(max_examples=30, deadline=None)
@given(pmfs, pmfs, st.integers(1, 6), st.integers(1, 6), st.integers(6, 16))
def test_products_of_parts_keep_both_invariants(w1, w2, n1, n2, bits) -> None:
    p1, p2 = _probabilities(w1, 1), _probabilities(w2, 2)
    exact = _exact_power(p1, n1)
    e2 = _exact_power(p2, n2)
    prod = [Fraction(0)] * (len(exact) + len(e2) - 1)
    for i, a in enumerate(exact):
        for j, b in enumerate(e2):
            prod[i + j] += a * b
    for up in (True, False):
        parts = []
        for p, n in ((p1, n1), (p2, n2)):
            units = to_units([arb(x.numerator) / x.denominator for x in p], bits, up=up)
            parts.append(fixed_power(FixedPoly.from_units(0, units, bits), n, up, 1 << 6))
        res = fixed_product(parts, up, 1 << 6)
        got = {res.offset + i: Fraction(c, 2**bits) for i, c in enumerate(res.coeffs())}
        err = Fraction(res.err, 2**bits)
        for t in range(len(prod) + 1):
            ex = sum(v for k, v in enumerate(prod) if k >= t)
            gv = sum(v for k, v in got.items() if k >= t)
            assert (ex <= gv + err) if up else (gv <= ex)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(0, 2**200), min_size=1, max_size=3000), st.integers(1, 120))
def test_the_floor_division_is_a_coefficient_wise_floor(coeffs, bits) -> None:
    from flint import fmpz, fmpz_poly

    from certdp.enclose.fixed import _floor_div

    got = _floor_div(fmpz_poly(coeffs), fmpz(1) << bits)
    want = [c >> bits for c in coeffs]
    while want and want[-1] == 0:
        want.pop()
    assert [int(c) for c in got.coeffs()] == want


def _naive_prune(coeffs: list[int], allowance: int, weight: int) -> tuple[int, int, int]:
    """(lo, hi, dropped): the end-by-end loop the galloping search replaced."""
    n = len(coeffs)
    if allowance <= 0:
        return 0, n, 0
    lo, acc = 0, 0
    while lo < n - 1 and (acc + coeffs[lo]) * weight <= allowance:
        acc += coeffs[lo]
        lo += 1
    hi, acc2 = n, 0
    while hi > lo + 1 and (acc2 + coeffs[hi - 1]) * weight <= allowance:
        acc2 += coeffs[hi - 1]
        hi -= 1
    return lo, hi, acc + acc2


@settings(max_examples=300, deadline=None)
@given(
    coeffs=st.lists(st.integers(0, 50), min_size=1, max_size=60),
    allowance=st.integers(0, 400),
    weight=st.integers(1, 5),
)
def test_prune_drops_what_the_end_by_end_loop_drops(coeffs, allowance, weight) -> None:
    """The galloping prune keeps the same window and counts the same dropped mass as the plain
    loop (the largest end runs whose mass times weight is within the allowance)."""
    from flint import fmpz_poly

    from certdp.enclose.fixed import _prune

    if coeffs[-1] == 0:
        coeffs = [*coeffs, 1]  # an fmpz_poly has no trailing zeros
    fp = FixedPoly(3, fmpz_poly(coeffs), 8, 5)
    lo, hi, dropped = _naive_prune(coeffs, allowance, weight)
    got = _prune(fp, True, allowance, weight)
    assert got.offset == 3 + lo
    assert got.coeffs() == [int(c) for c in fmpz_poly(coeffs[lo:hi]).coeffs()] or (lo, hi) == (0, len(coeffs))
    assert got.err == 5 + dropped
    down = _prune(fp, False, allowance, weight)
    assert down.offset == got.offset and down.err == 5


@settings(max_examples=60, deadline=None)
@given(pmfs, st.integers(1, 3), st.integers(2, 24), st.integers(8, 20), st.integers(0, 8), st.integers(0, 1 << 10))
def test_per_product_units_keep_both_invariants(weights, scale, n, bits, extra, allowance) -> None:
    """Powers whose products take their own units from the copies and the length (``bits_for``,
    as certdp.notions.pld_fixed does: more bits early, fewer late) keep the upper side's
    domination (with its error) and the lower side below the exact power."""
    p = _probabilities(weights, scale)

    def units(copies: int, length: int) -> int:
        return max(6, (copies * length).bit_length() + bits - 12 + extra)

    exact = _exact_power(p, n)
    for up in (True, False):
        b0 = units(n, len(p))
        base = FixedPoly.from_units(0, to_units([arb(x.numerator) / x.denominator for x in p], b0, up=up), b0)
        res = fixed_power(base, n, up, allowance, None, units)
        got = {res.offset + i: Fraction(c, 2**res.bits) for i, c in enumerate(res.coeffs())}
        if not up:
            assert res.err == 0
            assert all(v <= exact[k] for k, v in got.items()), (got, exact)
            continue
        err = Fraction(res.err, 2**res.bits)
        for t in range(0, len(exact) + 1):
            ex = sum(v for i, v in enumerate(exact) if i >= t)
            gv = sum(v for k, v in got.items() if k >= t)
            assert ex <= gv + err, (t, ex, gv, err)
