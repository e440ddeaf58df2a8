"""What a printed number means: the interval of true values that print as it.

A paper that prints ``1.426215`` for a sigma it rounded to the nearest 1e-6 claims the true value
lies in [1.4262145, 1.4262155]; one that rounded *up* to a multiple of 1e-6 claims (1.426214,
1.426215]. ``14.9%`` is 0.149 to the nearest 0.001; a range ``0.552–0.557`` claims every value
in [0.5515, 0.5575]. "nearest" is closed at both ends: how a paper broke a tie is unknown, so a
value exactly halfway prints either way.
"""

from __future__ import annotations

import re
from decimal import Decimal
from fractions import Fraction

from certdp.claims.interval import Interval
from certdp.errors import InvalidArgument
from certdp.pairs.params import as_fraction

ROUNDINGS = ("nearest", "up", "down", "exact")
#: Separators of a printed range, e.g. "0.552–0.557" (en dash), "0.552..0.557", "0.552 to 0.557".
_SEPARATORS = ("–", "—", "..", " to ")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")
_FRACTION = re.compile(r"[+-]?\d+/\d+")


def _decimal(text: str, name: str) -> tuple[Fraction, Fraction]:
    """(value, unit in the last printed place) of an ASCII decimal or p/q (unit 0: exact); a trailing
    % scales both by 1/100. The size limits of certdp's numeric parameters apply."""
    s = text.strip().replace("−", "-")
    scale = Fraction(1)
    if s.endswith("%"):
        s, scale = s[:-1].strip(), Fraction(1, 100)
    if _FRACTION.fullmatch(s):
        return as_fraction(name, s) * scale, Fraction(0)
    if not _NUMBER.fullmatch(s):
        raise InvalidArgument(
            f"{name}={text!r} is not a decimal number like 1.25, 1e-5 or 14.9% (give 'value' for other notations)"
        )
    v = as_fraction(name, s)  # refuses absurd exponents and lengths before any exact arithmetic
    exp = Decimal(s).as_tuple().exponent
    assert isinstance(exp, int)
    return v * scale, Fraction(10) ** exp * scale


def _split_range(text: str, name: str) -> tuple[str, str] | None:
    s = text.strip().replace("−", "-")
    found = [sep for sep in _SEPARATORS if sep in s]
    if not found:
        return None
    parts = s.split(found[0])
    if len(found) > 1 or len(parts) != 2:
        raise InvalidArgument(f"{name}={text!r}: a range has exactly one separator (–, .. or to)")
    a, b = parts[0].strip(), parts[1].strip()
    if a.endswith("%") != b.endswith("%"):
        if not b.endswith("%"):
            raise InvalidArgument(f"{name}={text!r}: a percentage range ends with % (both ends or the last)")
        a += "%"
    return a, b


def printed_interval(
    text: str, rounding: str = "nearest", step: Fraction | None = None, name: str = "printed"
) -> Interval:
    """The true values that ``text`` stands for under ``rounding``.

    Contract: "nearest": [v - u/2, v + u/2] with u the unit in the last printed place, or ``step``
    (in the printed unit: with a %, in percentage points); a fraction p/q is exact; "up" (v was
    rounded up to a multiple of u): (v - u, v]; "down": [v, v + u); "exact": [v, v]. A range
    "a–b" runs from the lower end of a to the upper end of b. A percentage is divided by 100.
    Anything else raises InvalidArgument in one line.
    """
    if rounding not in ROUNDINGS:
        raise InvalidArgument(f"rounding={rounding!r} must be one of {', '.join(ROUNDINGS)}")
    ends = _split_range(text, name)
    if ends is not None:
        a = printed_interval(ends[0], rounding, step, name)
        b = printed_interval(ends[1], rounding, step, name)
        if a.lower is None or b.upper is None or a.lower > b.upper:
            raise InvalidArgument(f"{name}={text!r} is not an increasing range")
        return Interval(a.lower, b.upper, f"printed {text}", a.lower_open, b.upper_open)
    v, unit = _decimal(text, name)
    if step is not None and unit != 0:
        unit = step / 100 if text.strip().endswith("%") else step
    if unit == 0:  # an exact fraction
        return Interval(v, v, f"printed {text.strip()} (exact)")
    if unit < 0:
        raise InvalidArgument(f"step={step} must be > 0")
    detail = f"printed {text.strip()} ({rounding}{'' if step is None else f', step {step}'})"
    if rounding == "nearest":
        return Interval(v - unit / 2, v + unit / 2, detail)
    if rounding == "up":
        return Interval(v - unit, v, detail, lower_open=True)
    if rounding == "down":
        return Interval(v, v + unit, detail, upper_open=True)
    return Interval(v, v, detail)


def printed_value(text: str, name: str = "printed") -> Fraction:
    """The exact number ``text`` prints (a bound is meant exactly as printed). Contract: exact; the
    parsing and size limits of :func:`printed_interval`."""
    return _decimal(text, name)[0]
