"""The recheck kernel's fixed-point product (recheck/recheck.py `product`), against a brute-force
convolution in Python integers (issue 38).

The kernel keeps products in FLINT polynomials and, for the TV upper side, truncates them at the
clamp (`mul_low`) and adds the mass above it back as one atom at the clamp. Whatever bits it picks,
every returned coefficient must lie at or below the exact one (scaled to its bits), no index may
pass the clamp, and the error count must cover both what the floors and the pruning dropped and
the operands' own error counts (docs/math.md §10: the composition's directed rounding).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from flint import fmpz_poly
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "recheck"))
import recheck as kernel  # the kernel is one file, not a package

coeffs = st.lists(st.integers(0, 2**70), min_size=1, max_size=30).filter(any)  # a zero operand: next test


def exact_product(a: list[int], sa: int, b: list[int], sb: int, clamp: int | None) -> dict[int, int]:
    """index -> exact coefficient of the product; with a clamp, the mass above it sits at the clamp."""
    out: dict[int, int] = {}
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            k = sa + sb + i + j
            k = k if clamp is None else min(k, clamp)
            out[k] = out.get(k, 0) + x * y
    return out


@settings(max_examples=200, deadline=None)
@given(
    a=coeffs,
    b=coeffs,
    sa=st.integers(-5, 5),
    sb=st.integers(-5, 5),
    bits=st.tuples(st.integers(0, 90), st.integers(0, 90)),
    errors=st.tuples(st.integers(0, 2**40), st.integers(0, 2**40)),
    floor_bits=st.integers(1, 100),
    prune_gap=st.integers(0, 60),
    copies=st.integers(1, 64),
    clamp_at=st.one_of(st.none(), st.integers(1, 60)),
)
def test_product_rounds_down_and_counts_what_it_drops(
    a, b, sa, sb, bits, errors, floor_bits, prune_gap, copies, clamp_at
) -> None:
    clamp = None if clamp_at is None else sa + sb + clamp_at
    (ba, bb), (da, db) = bits, errors
    res, start, b_out, d = kernel.product(
        (fmpz_poly(a), sa, ba, da), (fmpz_poly(b), sb, bb, db), copies, floor_bits, floor_bits - prune_gap, clamp
    )
    assert b_out <= ba + bb
    scale = 2 ** (ba + bb - b_out)  # one unit of the result in units of the exact product
    got = {start + i: int(v) for i, v in enumerate(res.coeffs())}
    exact = exact_product(a, sa, b, sb, clamp)
    assert all(v >= 0 and v * scale <= exact.get(k, 0) for k, v in got.items())  # rounded down, in range
    if clamp is not None:
        assert max(got, default=clamp) <= clamp
    dropped = sum(exact.values()) - scale * sum(got.values())  # floors and pruning, exact units
    carried = da * sum(b) + sum(a) * db + da * db  # the operands' errors propagated
    assert d * scale >= dropped + carried


def test_an_empty_product_is_not_proved() -> None:
    """All mass gone (a zero operand, or everything above the clamp): no bound, exit 1."""
    for a, clamp in (([0], None), ([1, 2], 0)):
        with pytest.raises(kernel.NotProved):
            kernel.product((fmpz_poly(a), 0, 10, 0), (fmpz_poly([3]), 0, 10, 0), 1, 20, 10, clamp)
