"""Ball values: conversion between Arb balls and the exact :class:`Enclosure` value.

An :class:`Enclosure` is the public result type: two exact dyadic endpoints
``lower = lo_man * 2**lo_exp <= upper = hi_man * 2**hi_exp`` and the working precision that
produced them. It never holds a float. Decimal rendering rounds outward (lower down, upper up),
so a printed interval always contains the exact one; float conversions round outward too.

Range: an end is 0 or has magnitude in [2**-EXP_LIMIT, 2**EXP_LIMIT) (about 10**-315653 to
10**315653). :meth:`Enclosure.from_ball` rounds a smaller end outward (a positive upper end up to
2**-EXP_LIMIT, a positive lower end down to 0, and symmetrically for negative ends: still an
enclosure) and refuses a larger one (Unsupported): exact rational arithmetic on ends beyond that
costs seconds per operation.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from dataclasses import dataclass
from decimal import MAX_EMAX, MIN_EMIN, Decimal, localcontext
from fractions import Fraction

from flint import arb, fmpq

from certdp.enclose.context import MAX_PREC, prec_at_least
from certdp.errors import InvalidArgument, PrecisionExhausted, Unsupported, invalid

Ball = arb
Exact = int | Fraction
MIN_DIGITS = 17
MAX_DIGITS = 80
#: Ends of an Enclosure are 0 or of magnitude in [2**-EXP_LIMIT, 2**EXP_LIMIT) (module docstring).
EXP_LIMIT = 1 << 20
#: Dyadic ends whose exponent exceeds this in magnitude are rendered in decimal by Arb ball
#: arithmetic (certified directed rounding) instead of exact rational arithmetic, whose cost grows
#: quadratically with the exponent (seconds at 2**20).
_EXACT_RENDER_BITS = 4096


def _dyadic_of(x: arb) -> tuple[int, int]:
    """Exact (mantissa, exponent) of an exact arb."""
    man, exp = x.man_exp()
    return int(man), int(exp)


def _fraction(man: int, exp: int) -> Fraction:
    return Fraction(man * 2**exp) if exp >= 0 else Fraction(man, 2**-exp)


def _log2_floor(man: int, exp: int) -> int:
    """floor(log2 |man * 2**exp|) for man != 0 (exact integer arithmetic)."""
    return abs(man).bit_length() - 1 + exp


def _format_decimal(n: int, scale: int, digits: int) -> str:
    """The decimal n * 10**scale: plain digits when the leading exponent is in [-7, 21), else d.ddde+X."""
    with localcontext() as dctx:
        dctx.prec = max(digits, len(str(abs(n)))) + 2
        dctx.Emax, dctx.Emin = MAX_EMAX, MIN_EMIN
        dec = Decimal(n).scaleb(scale)
    if -7 <= dec.adjusted() < 21:
        return format(dec, "f")
    return format(dec, "E").replace("E+", "e+").replace("E-", "e-")


def _round_decimal_exact(value: Fraction, digits: int, up: bool) -> str:
    """``value`` rounded to ``digits`` significant digits, by exact rational arithmetic."""
    neg = value < 0
    mag = -value if neg else value
    # k = floor(log10(mag)), found exactly after a float guess.
    k = math.floor(math.log10(mag.numerator) - math.log10(mag.denominator))
    while Fraction(10) ** k > mag:
        k -= 1
    while Fraction(10) ** (k + 1) <= mag:
        k += 1
    scale = Fraction(10) ** (digits - 1 - k)
    scaled = mag * scale
    # Magnitude rounding direction: toward +inf for the value means away from zero when positive.
    away = up != neg
    n = -((-scaled.numerator) // scaled.denominator) if away else scaled.numerator // scaled.denominator
    # Exact: n * 10**(k - digits + 1); a carry to 10**digits is still exact.
    return _format_decimal(-n if neg else n, k - digits + 1, digits)


def _floor_dyadic(man: int, exp: int) -> int:
    return man << exp if exp >= 0 else man >> -exp


def _round_decimal_ball(man: int, exp: int, digits: int, up: bool) -> str:
    """man * 2**exp rounded outward to at least ``digits`` significant digits, for huge exponents.

    The scaled magnitude y = |v| 10**s is enclosed by an Arb ball at a precision that resolves
    digits + 2 decimal digits; the integer n = ceil(sup y) (away from zero) or floor(inf y)
    (toward zero) is then on the safe side of the exact y, so n 10**-s is outward. Arb's exponents
    are unbounded, so nothing here overflows; the cost is that of a few ball powers of 10.
    """
    neg = man < 0
    away = up != neg
    m = -man if neg else man
    k = math.floor(_log2_floor(m, exp) * math.log10(2))  # floor(log10 |v|) up to +-1
    with prec_at_least(4 * digits + m.bit_length() + abs(k).bit_length() + 64):
        exact = arb((m, exp))
        low, high = arb(10) ** (digits - 1), arb(10) ** digits
        for _ in range(8):
            s = digits - 1 - k  # aims y at [10**(digits-1), 10**digits)
            y = exact * arb(10) ** s
            if y.upper() < low:
                k -= 1
            elif y.lower() >= high:
                k += 1
            else:
                end = y.upper() if away else y.lower()
                n = _floor_dyadic(*_dyadic_of(end))
                if away and _fraction(*_dyadic_of(end)) != n:
                    n += 1
                if n >= 10 ** (digits - 1):
                    break
                k -= 1  # y straddled 10**(digits-1) and n fell below it: one more digit
        else:  # pragma: no cover - the float estimate of k is off by at most one
            raise PrecisionExhausted(f"decimal rendering of a 2**{exp} number did not settle")
    return _format_decimal(-n if neg else n, -s, digits)


def _round_decimal(value: Fraction, digits: int, up: bool) -> str:
    """``value`` rounded to ``digits`` significant digits toward +inf (up) or -inf (down).

    Contract: for up=False the returned decimal d satisfies d <= value; for up=True, d >= value.
    Exact integer arithmetic, no floats (dyadic values with exponents beyond 2**4096 in magnitude
    use certified Arb ball arithmetic and may carry one digit more).
    """
    if value == 0:
        return "0"
    den = value.denominator
    if not den & (den - 1):
        man, exp = value.numerator, -(den.bit_length() - 1)
        if exp == 0:
            tz = (man & -man).bit_length() - 1
            man, exp = man >> tz, tz
        if abs(exp) > _EXACT_RENDER_BITS:
            return _round_decimal_ball(man, exp, digits, up)
    return _round_decimal_exact(value, digits, up)


def decimal_outward(value: Fraction, up: bool, digits: int = 17) -> str:
    """Decimal text of an exact rational rounded outward to ``digits`` significant digits.

    Contract: as :func:`_round_decimal`: the decimal is <= value (up=False) or >= value (up=True),
    by exact integer arithmetic; used for ends that are not dyadic (an Enclosure needs dyadic ends).
    """
    return _round_decimal(value, digits, up)


def _dyadic_decimal(man: int, exp: int, digits: int, up: bool) -> str:
    """Outward decimal of man * 2**exp without building a huge Fraction first."""
    if man == 0:
        return "0"
    if abs(exp) > _EXACT_RENDER_BITS:
        return _round_decimal_ball(man, exp, digits, up)
    return _round_decimal_exact(_fraction(man, exp), digits, up)


def _dyadic_float(man: int, exp: int, up: bool) -> float:
    """The float next to man * 2**exp on the safe side: >= it (up) or <= it (down).

    Overflow gives +-inf or +-max float (whichever is on the safe side); underflow gives 0.0 or
    the smallest subnormal. No Fraction is built outside the float range, so any exponent is cheap.
    """
    if man == 0:
        return 0.0
    neg = man < 0
    lg = _log2_floor(man, exp)
    if lg >= 1024:  # |v| >= 2**1024 > max float
        if neg:
            return -math.inf if not up else -sys.float_info.max
        return math.inf if up else sys.float_info.max
    if lg < -1080:  # |v| < 2**-1080, below half the smallest subnormal
        tiny = math.ulp(0.0)
        if neg:
            return -0.0 if up else -tiny
        return tiny if up else 0.0
    exact = _fraction(man, exp)
    try:
        f = float(exact)
    except OverflowError:  # rounds past max float: the safe side is inf or max
        f = math.inf if not neg else -math.inf
        return f if up == (not neg) else math.copysign(sys.float_info.max, f)
    if up and Fraction(f) < exact:
        f = math.nextafter(f, math.inf)
    elif not up and Fraction(f) > exact:
        f = math.nextafter(f, -math.inf)
    return f


def _clamp_end(man: int, exp: int, up: bool) -> tuple[int, int]:
    """An end rounded outward into the range of the module docstring (Unsupported beyond it)."""
    if man == 0:
        return 0, 0
    lg = _log2_floor(man, exp)
    if lg >= EXP_LIMIT:
        raise Unsupported(
            f"value of magnitude about 2^{lg} exceeds the range of certdp enclosures "
            f"(|x| < 2^{EXP_LIMIT}, about 1e315653)"
        )
    if lg < -EXP_LIMIT:  # |v| < 2**-EXP_LIMIT
        if (man > 0) == up:
            return (1 if up else -1), -EXP_LIMIT
        return 0, 0
    return man, exp


def _exact_operand(name: str, value: object) -> Fraction:
    """Exact rational value of a number for comparisons with an Enclosure (InvalidArgument else)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str | Fraction | Decimal):
        raise invalid(name, value, "must be a finite number (int, float, str, Fraction or Decimal)")
    if isinstance(value, Fraction):
        return value
    try:
        v = Fraction(value)
    except (ValueError, OverflowError, ArithmeticError):
        raise invalid(name, value, "must be a finite number") from None
    return v


@dataclass(frozen=True)
class Enclosure:
    """A certified real interval [lower, upper] with exact dyadic endpoints.

    ``repr`` shows outward-rounded decimal ends (``Enclosure([0.99999999999999989,
    1.0000000000000002], prec=64)``). There is no implicit float: ``float(enc)`` raises
    Unsupported, because an interval has no single float that is safe for every use; call
    :meth:`upper_float` (rounded up, e.g. a privacy loss bound) or :meth:`lower_float` (rounded
    down) instead. Ends lie in the range of the module docstring.

    Contract: the quantity it was computed for lies in [lower, upper]; ``prec_bits`` is the
    working precision of the computation that produced it.
    """

    lo_man: int
    lo_exp: int
    hi_man: int
    hi_exp: int
    prec_bits: int

    def __post_init__(self) -> None:
        for name in ("lo_man", "lo_exp", "hi_man", "hi_exp", "prec_bits"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool):
                raise invalid(name, v, "must be an integer")
        for man, exp, name in ((self.lo_man, self.lo_exp, "lower"), (self.hi_man, self.hi_exp, "upper")):
            # mantissas come from balls of at most MAX_PREC bits; exponents from the range above
            if abs(man).bit_length() > 2 * MAX_PREC or abs(exp) > EXP_LIMIT + 2 * MAX_PREC:
                raise InvalidArgument(
                    f"enclosure {name}=({abs(man).bit_length()}-bit mantissa, exponent {exp}) is out of range"
                )
        if self.lower > self.upper:
            raise InvalidArgument(
                f"enclosure lower={_dyadic_decimal(self.lo_man, self.lo_exp, MIN_DIGITS, False)} must be <= "
                f"upper={_dyadic_decimal(self.hi_man, self.hi_exp, MIN_DIGITS, True)}"
            )

    @staticmethod
    def from_ball(x: arb, prec_bits: int | None = None) -> Enclosure:
        """Enclosure of the ball ``x``; raises PrecisionExhausted when x is not finite.

        Contract: [lower, upper] contains every point of x (ends rounded outward at >= the midpoint's
        bits; an end below 2**-EXP_LIMIT in magnitude rounded outward to 0 or +-2**-EXP_LIMIT); an
        end of magnitude >= 2**EXP_LIMIT raises Unsupported (module docstring).
        """
        if not x.is_finite():
            raise PrecisionExhausted(f"ball {x} is not finite")
        # Endpoints are rounded outward at this precision: keep every bit of the midpoint. The
        # block holds the FLINT lock, so the caller's precision (old) cannot change under us.
        with prec_at_least(x.mid().bits() + 32) as old:
            lo = _clamp_end(*_dyadic_of(x.lower()), up=False)
            hi = _clamp_end(*_dyadic_of(x.upper()), up=True)
        return Enclosure(lo[0], lo[1], hi[0], hi[1], prec_bits or old)

    @staticmethod
    def from_bounds(lower: Exact, upper: Exact, prec_bits: int) -> Enclosure:
        """Enclosure with exact dyadic endpoints given as Fractions (must be dyadic).

        Contract: exactly [lower, upper]; non-dyadic or non-finite ends raise InvalidArgument.
        """
        lo, hi = _exact_operand("lower", lower), _exact_operand("upper", upper)
        return Enclosure(*_split_dyadic(lo), *_split_dyadic(hi), prec_bits)

    def ball(self) -> arb:
        """The smallest arb ball (at the current precision) that contains this interval.

        Contract: the returned ball contains [lower, upper].
        """
        lo = arb((self.lo_man, self.lo_exp))
        hi = arb((self.hi_man, self.hi_exp))
        return lo.union(hi)

    @property
    def lower(self) -> Fraction:
        """Contract: the exact lower end."""
        return _fraction(self.lo_man, self.lo_exp)

    @property
    def upper(self) -> Fraction:
        """Contract: the exact upper end."""
        return _fraction(self.hi_man, self.hi_exp)

    @property
    def width(self) -> Fraction:
        """Contract: exactly upper - lower."""
        return self.upper - self.lower

    @property
    def mid(self) -> Fraction:
        """Contract: exactly (lower + upper)/2."""
        return (self.lower + self.upper) / 2

    def rel_width(self) -> float:
        """Width divided by the smallest |x| in the interval (inf when it contains 0).

        Contract: a float estimate for reporting and tests; not a certified quantity.
        """
        if self.lower <= 0 <= self.upper:
            return math.inf if self.width else 0.0
        return _ratio_float_up(self.width / min(abs(self.lower), abs(self.upper)))

    def digits(self) -> int:
        """Significant digits that show the width: at least 17, at most 80.

        Contract: enough significant digits that the rendered ends resolve the width (estimated
        from bit lengths, so any magnitude works: no float overflow).
        """
        w = self.width
        if w == 0:
            return MIN_DIGITS
        lg_mag = max(_log2_floor(m, e) for m, e in ((self.lo_man, self.lo_exp), (self.hi_man, self.hi_exp)) if m)
        lg_w = w.numerator.bit_length() - w.denominator.bit_length()  # floor(log2 w) - 1 <= . <= + 1
        need = math.ceil((lg_mag + 1 - lg_w + 1) * math.log10(2)) + 3
        return max(MIN_DIGITS, min(MAX_DIGITS, need))

    def lower_str(self, digits: int | None = None) -> str:
        """Contract: a decimal <= lower (rounded toward -inf), any magnitude."""
        return _dyadic_decimal(self.lo_man, self.lo_exp, digits or self.digits(), up=False)

    def upper_str(self, digits: int | None = None) -> str:
        """Contract: a decimal >= upper (rounded toward +inf), any magnitude."""
        return _dyadic_decimal(self.hi_man, self.hi_exp, digits or self.digits(), up=True)

    def upper_float(self) -> float:
        """The upper end rounded up to a float (inf past the float range, the smallest subnormal
        for a tiny positive end): safe for an upper bound such as a sound epsilon or delta.

        Contract: a float >= upper (never NaN).
        """
        return _dyadic_float(self.hi_man, self.hi_exp, up=True)

    def lower_float(self) -> float:
        """The lower end rounded down to a float (-inf past the float range, 0.0 for a tiny
        positive end): safe for a lower bound.

        Contract: a float <= lower (never NaN).
        """
        return _dyadic_float(self.lo_man, self.lo_exp, up=False)

    def contains(self, value: Exact | float | str | Decimal) -> bool:
        """Exact test ``lower <= value <= upper`` (floats and decimals are taken exactly).

        Contract: exact rational comparison with both ends; NaN, infinities, booleans and
        non-numbers raise InvalidArgument (``value=nan must be a finite number``).
        """
        v = _exact_operand("value", value)
        return self.lower <= v <= self.upper

    def to_dict(self) -> dict[str, object]:
        """Contract: decimal ends rounded outward plus the exact dyadic ends and prec_bits."""
        return {
            "lower": self.lower_str(),
            "upper": self.upper_str(),
            "width": _round_decimal(self.width, 6, up=True),
            "lower_dyadic": [_int_str(self.lo_man), self.lo_exp],
            "upper_dyadic": [_int_str(self.hi_man), self.hi_exp],
            "prec_bits": self.prec_bits,
        }

    def __str__(self) -> str:
        return f"[{self.lower_str()}, {self.upper_str()}]"

    def __repr__(self) -> str:
        return f"Enclosure([{self.lower_str()}, {self.upper_str()}], prec={self.prec_bits})"

    def __float__(self) -> float:
        raise Unsupported(
            "float(Enclosure) is ambiguous: use enc.upper_float() (rounded up) or enc.lower_float() (rounded down)"
        )


#: Significant digits of a number in :func:`readable_repr` (a shorter exact decimal shows in full).
REPR_DIGITS = 12
#: Longest rendering of one container or nested object in :func:`readable_repr` before it is
#: summarised (``[... n items]``, ``Name(...)``): a repr stays one readable line.
_REPR_PART = 120
#: Longest string field shown whole in :func:`readable_repr` (messages such as a miss reason).
_REPR_TEXT = 60


def short_decimal(value: Fraction | int, digits: int = REPR_DIGITS) -> str:
    """Short decimal text of an exact rational for display: exact when it has at most ``digits``
    significant digits (``1.41469``, ``1e-05``), else ``~`` and ``digits`` digits rounded down
    (``~0.991055368781``).

    Contract: display only; an unmarked result equals ``value`` exactly, a ``~`` one is ``value``
    rounded toward zero (within a unit of its last digit). Integers below 10**20 show whole.
    """
    v = Fraction(value)
    if v.denominator == 1 and abs(v.numerator) < 10**20:  # counts and other integers show whole
        return str(v.numerator)
    text = _round_decimal(v, digits, up=v < 0)  # toward zero: ~0.333, ~-0.333
    mant, sep, exp = text.partition("e")
    if "." in mant:  # the rounding pads to ``digits`` digits: 1.41469000000 -> 1.41469
        mant = mant.rstrip("0").rstrip(".")
    text = mant + sep + exp
    return text if Fraction(text) == v else "~" + text


def _readable(value: object, depth: int) -> str:
    """One value of a :func:`readable_repr`: numbers short, long parts summarised."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int | Fraction):
        return short_decimal(value)
    if isinstance(value, float):
        return repr(value) if len(repr(value)) <= 14 else f"{value:.{REPR_DIGITS}g}"
    if isinstance(value, Enclosure):  # outward, so the shown interval still contains the exact one
        return f"[{value.lower_str(REPR_DIGITS)}, {value.upper_str(REPR_DIGITS)}]"
    if isinstance(value, str):
        return repr(value) if len(value) <= _REPR_TEXT else repr(value[: _REPR_TEXT - 3] + "...")
    if isinstance(value, list | tuple | dict):
        opening, closing = "{}" if isinstance(value, dict) else "()" if isinstance(value, tuple) else "[]"
        summary = f"{opening}... {len(value)} item{'' if len(value) == 1 else 's'}{closing}"
        items = value.values() if isinstance(value, dict) else value
        # a long list, or one of nested results (each has its own repr), is not rendered at all
        if depth > 2 or len(value) > 8 or any(dataclasses.is_dataclass(v) for v in items):
            return summary
        if isinstance(value, dict):
            parts = [f"{k!r}: {_readable(v, depth + 1)}" for k, v in value.items()]
        else:
            parts = [_readable(v, depth + 1) for v in value]
        text = opening + ", ".join(parts) + ("," if isinstance(value, tuple) and len(value) == 1 else "") + closing
        return text if len(text) <= _REPR_PART else summary
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        name = type(value).__name__
        if depth > 2:
            return f"{name}(...)"
        shown = []
        for f in dataclasses.fields(value):
            if not f.repr:
                continue
            v = getattr(value, f.name)
            if depth and f.default is not dataclasses.MISSING and v == f.default:
                continue  # a nested object's defaults say nothing
            shown.append(f"{f.name}={_readable(v, depth + 1)}")
        text = f"{name}({', '.join(shown)})"
        return text if depth == 0 or len(text) <= _REPR_PART else f"{name}(...)"
    text = repr(value)
    return text if len(text) <= _REPR_TEXT else text[: _REPR_TEXT - 3] + "..."


def readable_repr(obj: object) -> str:
    """A one-line repr of a result dataclass for Python users: exact rationals as short decimals
    (:func:`short_decimal`, never ``Fraction(544838226407, 549755813888)``), Enclosures as
    outward-rounded ``[lower, upper]``, long lists and nested objects summarised (``[... n
    items]``, ``Name(...)``), long strings cut. Use as ``__repr__ = readable_repr`` in the class.

    Contract: display only (fields, equality and hashing are untouched); one line, a few hundred
    characters for the library's result classes; every number is exact or marked ``~``.
    """
    return _readable(obj, 0)


def _ratio_float_up(q: Fraction) -> float:
    """A float >= the positive rational q (inf past the float range)."""
    lg = q.numerator.bit_length() - q.denominator.bit_length()
    if lg > 1025:
        return math.inf
    if lg < -1080:
        return math.ulp(0.0)
    f = float(q)
    return f if Fraction(f) >= q else math.nextafter(f, math.inf)


def _int_str(n: int) -> str:
    """Decimal digits of an int of any size (str() refuses more than 4300 digits)."""
    if n.bit_length() < 14000:
        return str(n)
    return format(Decimal(n), "f")  # Decimal(int) is exact whatever the context precision


def _split_dyadic(v: Fraction) -> tuple[int, int]:
    den = v.denominator
    if den & (den - 1):
        raise invalid("endpoint", v, "must be a dyadic rational")
    if den == 1 and v.numerator:  # an integer: trailing zero bits go to the exponent
        tz = (v.numerator & -v.numerator).bit_length() - 1
        return v.numerator >> tz, tz
    return v.numerator, -(den.bit_length() - 1)


def to_ball(value: Exact | float | str | Decimal | arb) -> arb:
    """A ball containing ``value`` exactly, at the current precision.

    Contract: ints, dyadic floats and dyadic rationals give exact balls; other rationals and
    decimal strings give a ball that contains the exact rational value; the strings "inf" and
    "-inf" give the infinite points (bounds of branch-and-bound searches, never results).
    """
    if isinstance(value, arb):
        return value
    if isinstance(value, str) and value in ("inf", "-inf"):
        return arb(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return arb(value)
    if isinstance(value, float) and math.isfinite(value):
        return arb(value)
    q = _exact_operand("value", value)
    if q.denominator == 1:
        return arb(q.numerator)
    return arb(fmpq(q.numerator, q.denominator))


def upper_float(x: arb) -> float:
    """A float >= every point of x (for heuristics and messages only, never certified).

    Contract: a float >= every point of x (heuristics only).
    """
    if not x.is_finite():
        return math.inf  # an infinite or NaN ball: +inf is >= every point
    return _dyadic_float(*_dyadic_of(x.upper()), up=True)


def lower_float(x: arb) -> float:
    """A float <= every point of x (for heuristics and messages only, never certified).

    Contract: a float <= every point of x (heuristics only).
    """
    if not x.is_finite():
        return -math.inf
    return _dyadic_float(*_dyadic_of(x.lower()), up=False)


def width_of(x: arb) -> float:
    """An upper bound on the diameter of x, as a float (for heuristics and messages).

    Contract: a float >= the diameter of x (heuristics and messages only).
    """
    return upper_float(2 * x.rad())
