"""decimal_str is exact (issue 12, item 12): Fraction(decimal_str(v)) == v, never rounded to 28 digits."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from certdp.errors import InvalidArgument
from certdp.pairs.params import MAX_DECIMAL_DIGITS, decimal_str

# The certificate schema's decimal pattern; decimal_str prints plain digits (no exponent).
SCHEMA_DECIMAL = re.compile(r"^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$")
PLAIN = re.compile(r"^-?(0|[1-9][0-9]*)(\.[0-9]*[1-9])?$")

mantissas = st.integers(min_value=-(10**60), max_value=10**60)


def _check(v: Fraction) -> None:
    s = decimal_str(v)
    assert Fraction(s) == v
    assert SCHEMA_DECIMAL.match(s) and PLAIN.match(s), s


@given(mantissas, st.integers(min_value=-1100, max_value=1100))
def test_dyadic_round_trips_exactly(m: int, e: int) -> None:
    _check(Fraction(m) * Fraction(2) ** e)


@given(mantissas, st.integers(min_value=-1100, max_value=1100))
def test_decimal_round_trips_exactly(m: int, e: int) -> None:
    _check(Fraction(m) * Fraction(10) ** e)


@given(mantissas, st.integers(min_value=0, max_value=600), st.integers(min_value=0, max_value=600))
def test_two_five_denominators_round_trip_exactly(m: int, a: int, b: int) -> None:
    _check(Fraction(m, 2**a * 5**b))


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_float_is_printed_exactly(x: float) -> None:
    _check(Fraction(x))


@pytest.mark.parametrize(
    ("v", "text"),
    [
        (Fraction(0), "0"),
        (Fraction(-5, 2), "-2.5"),
        (Fraction(1, 100), "0.01"),
        (Fraction(1200), "1200"),
        (Fraction(1, 2**40), "0.0000000000009094947017729282379150390625"),
        (Fraction(10**40 + 1, 10**20), "100000000000000000000.00000000000000000001"),
    ],
)
def test_plain_digits(v: Fraction, text: str) -> None:
    assert decimal_str(v) == text


def test_more_than_28_digits_are_kept() -> None:
    v = Fraction(2**-100) + 1  # 101 significant digits; the old version rounded to 28
    assert Fraction(decimal_str(v)) == v


@pytest.mark.parametrize("v", [Fraction(1, 3), Fraction(7, 30), Fraction(1, 2**10 * 7)])
def test_non_terminating_raises(v: Fraction) -> None:
    with pytest.raises(InvalidArgument, match=r"^q=.* has no finite decimal expansion"):
        decimal_str(v, "q")


@pytest.mark.parametrize(
    "v",
    [
        Fraction(1, 2**100000),
        Fraction(1, 10**5000),
        Fraction(1, 5**20000),
        Fraction(2**20000),
        Fraction(10**MAX_DECIMAL_DIGITS),
        Fraction(1, 3**20000),
    ],
)
def test_absurd_sizes_raise(v: Fraction) -> None:
    with pytest.raises(InvalidArgument, match=r"^value=\S.* must have at most \d+ decimal digits$"):
        decimal_str(v)


def test_the_bound_itself_prints() -> None:
    assert len(decimal_str(Fraction(10**MAX_DECIMAL_DIGITS - 1))) == MAX_DECIMAL_DIGITS
    tiny = Fraction(1, 2 ** (MAX_DECIMAL_DIGITS - 1))  # "0." and MAX_DECIMAL_DIGITS - 1 fractional digits
    assert Fraction(decimal_str(tiny)) == tiny
    with pytest.raises(InvalidArgument):
        decimal_str(tiny / 2)
