"""Up-front validation of pair parameters (Hypothesis style: fail before any computation).

Parameters are stored as exact rationals (``Fraction``): a decimal string such as ``"0.01"``
means exactly 1/100, and a float means its exact binary value. Errors read ``sigma=-1 must be > 0``.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from fractions import Fraction

from certdp.errors import InvalidArgument, fmt_value, invalid

Number = int | float | str | Fraction | Decimal


def as_fraction(name: str, value: Number) -> Fraction:
    """Exact rational value of ``value``; rejects NaN, infinities, booleans and non-numbers.

    Contract: the exact rational value, or InvalidArgument naming the parameter.
    """
    if isinstance(value, bool):
        raise invalid(name, value, "must be a number")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise invalid(name, value, "must be a finite number")
        return Fraction(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise invalid(name, value, "must be a finite number")
        # the same bounds as text: Fraction(Decimal("1E+999999999")) builds a billion-digit integer
        if value and abs(value.adjusted()) > MAX_NUMBER_EXPONENT:
            raise invalid(name, value, f"must be a number between 1e-{MAX_NUMBER_EXPONENT} and 1e{MAX_NUMBER_EXPONENT}")
        if len(value.as_tuple().digits) > MAX_NUMBER_CHARS:
            raise invalid(name, value, f"must be a number of at most {MAX_NUMBER_CHARS} digits")
        return Fraction(value)
    if isinstance(value, str):
        return _parse_text(name, value)
    raise invalid(name, value, "must be a number")


#: Longest numeric text accepted (enough for the exact decimal value of any binary64 float).
MAX_NUMBER_CHARS = 1100
#: Largest |decimal exponent| of a parsed number's leading digit: 1e999999999 would otherwise be
#: expanded into a billion-digit integer by Fraction() before any range check could refuse it.
MAX_NUMBER_EXPONENT = 1000
_PLAIN_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_RATIO = re.compile(r"[+-]?[0-9]+/[0-9]+")


def _parse_text(name: str, value: str) -> Fraction:
    """A decimal (``0.01``, ``1e-5``) or a ratio (``1/3``) in ASCII digits; nothing else.

    Python's Decimal and Fraction also read ``1_0``, Arabic-Indic or full-width digits and
    ``Infinity``; a privacy parameter written that way is more likely a typo than intended.
    """
    text = value.strip()
    if len(text) > MAX_NUMBER_CHARS:
        raise invalid(name, value, f"must be a number of at most {MAX_NUMBER_CHARS} characters")
    if text.lower().lstrip("+-") in ("nan", "snan", "inf", "infinity"):
        raise invalid(name, value, "must be a finite number")
    if _RATIO.fullmatch(text):
        num, den = text.split("/")
        if int(den) == 0:
            raise invalid(name, value, "must be a number (zero denominator)")
        return Fraction(int(num), int(den))
    if not _PLAIN_NUMBER.fullmatch(text):
        raise invalid(name, value, "must be a number (ASCII digits, e.g. 0.01, 1e-5 or 1/3)")
    dec = Decimal(text)
    if dec and abs(dec.adjusted()) > MAX_NUMBER_EXPONENT:
        raise invalid(name, value, f"must be a number between 1e-{MAX_NUMBER_EXPONENT} and 1e{MAX_NUMBER_EXPONENT}")
    return Fraction(dec)


def real(
    name: str,
    value: Number,
    *,
    gt: Fraction | int | None = None,
    ge: Fraction | int | None = None,
    lt: Fraction | int | None = None,
    le: Fraction | int | None = None,
    nonzero: bool = False,
) -> Fraction:
    """Validated exact real parameter with optional bounds (each checked exactly).

    Contract: an exact rational inside the bounds, or InvalidArgument ``name=value must ...``.
    """
    v = as_fraction(name, value)
    shown = value if not isinstance(value, Fraction) else v
    if gt is not None and not v > gt:
        raise invalid(name, shown, f"must be > {fmt_value(gt)}")
    if ge is not None and not v >= ge:
        raise invalid(name, shown, f"must be >= {fmt_value(ge)}")
    if lt is not None and not v < lt:
        raise invalid(name, shown, f"must be < {fmt_value(lt)}")
    if le is not None and not v <= le:
        raise invalid(name, shown, f"must be <= {fmt_value(le)}")
    if nonzero and v == 0:
        raise invalid(name, shown, "must be != 0")
    return v


def integer(name: str, value: Number, *, ge: int | None = None) -> int:
    """Validated integer parameter (``2``, ``2.0`` and ``"2"`` are accepted; ``2.5`` is not).

    Contract: an exact integer inside the bound, or InvalidArgument.
    """
    v = as_fraction(name, value)
    if v.denominator != 1:
        raise invalid(name, value, "must be an integer")
    n = int(v)
    if ge is not None and n < ge:
        raise invalid(name, value, f"must be >= {ge}")
    return n


#: Most digits :func:`decimal_str` prints (integer and fractional digits together, a leading 0
#: included). Enough for the exact value of every binary64 float (at most 1074 fractional or 309
#: integer digits) and below CPython's 4300-digit int-to-str limit; anything longer is an absurd
#: parameter, not a value to print.
MAX_DECIMAL_DIGITS = 4096


def _shown(v: Fraction) -> str:
    """``v`` for an error message, without printing thousands of digits (or hitting int-to-str limits)."""
    if max(v.numerator.bit_length(), v.denominator.bit_length()) <= 200:
        return str(v)
    return f"<rational with {v.numerator.bit_length()}-bit numerator, {v.denominator.bit_length()}-bit denominator>"


def decimal_str(v: Fraction | int, name: str = "value") -> str:
    """Exact decimal text of a rational whose denominator has no prime factor but 2 and 5.

    Plain digits, no exponent, no trailing zeros (``0.5``, ``-12``, ``0.000001``), so it matches the
    certificate schema's decimal pattern. A rational with another prime in its denominator (1/3) has
    no finite decimal expansion and one longer than MAX_DECIMAL_DIGITS digits is absurd: both raise
    InvalidArgument (never rounded: certificates record parameters with this function).

    Contract: Fraction(decimal_str(v)) == v exactly, or InvalidArgument ``name=v ...``.
    """
    v = Fraction(v)
    den = v.denominator
    # Checked before the factor loop and the 10**k product, so a 2**100000 denominator costs nothing.
    if den.bit_length() > 4 * MAX_DECIMAL_DIGITS:
        raise invalid(name, _shown(v), f"must have at most {MAX_DECIMAL_DIGITS} decimal digits")
    d2 = (den & -den).bit_length() - 1
    den >>= d2
    d5 = 0
    while den % 5 == 0:
        den //= 5
        d5 += 1
    if den != 1:
        raise invalid(name, _shown(v), "has no finite decimal expansion (only 2, 5 may divide the denominator)")
    frac_digits = max(d2, d5)
    if frac_digits > MAX_DECIMAL_DIGITS:
        raise invalid(name, _shown(v), f"must have at most {MAX_DECIMAL_DIGITS} decimal digits")
    # |v| * 10**frac_digits is an integer: v = n / (2**d2 5**d5).
    mag = abs(v.numerator) * 2 ** (frac_digits - d2) * 5 ** (frac_digits - d5)
    # A bit-length bound first: str() of an int past CPython's 4300-digit limit raises ValueError.
    if mag.bit_length() > MAX_DECIMAL_DIGITS * 10 // 3:
        raise invalid(name, _shown(v), f"must have at most {MAX_DECIMAL_DIGITS} decimal digits")
    digits = str(mag).rjust(frac_digits + 1, "0")
    if len(digits) > MAX_DECIMAL_DIGITS:
        raise invalid(name, _shown(v), f"must have at most {MAX_DECIMAL_DIGITS} decimal digits")
    head, tail = digits[: len(digits) - frac_digits], digits[len(digits) - frac_digits :].rstrip("0")
    text = f"{head}.{tail}" if tail else head
    return f"-{text}" if v < 0 else text


#: Widest numerator or denominator :func:`exact_str` spells out as ``p/q`` (about 3900 decimal
#: digits, under CPython's 4300-digit int-to-str limit, which raises ValueError past it).
MAX_RATIO_BITS = 13000


def exact_str(v: Fraction | int) -> str:
    """Exact text of a rational for display and JSON records: its finite decimal when it has one
    (:func:`decimal_str`), else ``p/q`` (``1/3``). Certificates use decimal_str, which refuses p/q.
    A ratio of integers wider than MAX_RATIO_BITS is never spelled out (that conversion alone
    would raise or take seconds): it shows as its approximate size, :func:`approx_str`.

    Contract: Fraction(exact_str(v)) == v exactly when v has a decimal of at most
    MAX_DECIMAL_DIGITS digits or both its numerator and denominator have at most MAX_RATIO_BITS
    bits; otherwise the text starts with ``~`` and is not a number (never a silent rounding).
    """
    v = Fraction(v)
    try:
        return decimal_str(v)
    except InvalidArgument:
        pass
    if max(v.numerator.bit_length(), v.denominator.bit_length()) <= MAX_RATIO_BITS:
        return f"{v.numerator}/{v.denominator}"
    return approx_str(v)


def approx_str(v: Fraction) -> str:
    """Short text of a rational with huge terms: ``~1.2346e-3 (a ratio of 245000-bit integers)``.

    Contract: five significant digits of v, computed from a 64-bit leading quotient (no integer is
    ever converted to decimal, so any size is cheap); for display only, the ``~`` marks it as
    approximate.
    """
    num, den = abs(v.numerator), v.denominator
    bits = max(num.bit_length(), den.bit_length())
    size = f"(a ratio of {bits}-bit integers)"
    if num == 0:
        return f"0 {size}"
    shift = num.bit_length() - den.bit_length() - 64
    # v ~ m * 2**shift with m a 64-bit integer: the leading quotient carries far more than 5 digits
    m = num // (den << shift) if shift >= 0 else (num << -shift) // den
    log10 = math.log10(m) + shift * math.log10(2)
    exp = math.floor(log10)
    mant = 10 ** (log10 - exp)
    if round(mant, 4) >= 10:  # 9.99996 rounds up to the next decade
        mant, exp = mant / 10, exp + 1
    sign = "-" if v < 0 else ""
    return f"~{sign}{mant:.4f}e{exp} {size}"
