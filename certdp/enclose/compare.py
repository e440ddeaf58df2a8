"""Three-valued comparisons (Arb semantics): a straddling enclosure is UNDECIDED.

Operands are compared on exact endpoints: Enclosures by their dyadic ends, balls by their exact
lower/upper ends, numbers (int, float, decimal string, Fraction) by their exact rational value.
"""

from __future__ import annotations

import enum
from decimal import Decimal
from fractions import Fraction

from flint import arb

from certdp.enclose.ball import Enclosure, _dyadic_of, _fraction
from certdp.errors import InvalidArgument, Undecided

Operand = arb | Enclosure | int | float | str | Fraction | Decimal


class Verdict(enum.Enum):
    """TRUE and FALSE are proved; UNDECIDED is neither. ``bool(UNDECIDED)`` raises Undecided."""

    TRUE = "true"
    FALSE = "false"
    UNDECIDED = "undecided"

    def __bool__(self) -> bool:
        if self is Verdict.UNDECIDED:
            raise Undecided("comparison is undecided: the enclosure straddles the target")
        return self is Verdict.TRUE


def _bounds(x: Operand) -> tuple[Fraction, Fraction]:
    if isinstance(x, Enclosure):
        return x.lower, x.upper
    if isinstance(x, arb):
        if not x.is_finite():
            raise InvalidArgument(f"ball={x} must be finite to compare")
        return _fraction(*_dyadic_of(x.lower())), _fraction(*_dyadic_of(x.upper()))
    if isinstance(x, bool):
        raise InvalidArgument(f"value={x} must be a number")
    try:
        v = Fraction(x)
    except (ValueError, TypeError, ArithmeticError):
        raise InvalidArgument(f"value={x} must be a finite number") from None
    return v, v


def le(x: Operand, y: Operand) -> Verdict:
    """Verdict of ``x <= y`` for every point of both operands.

    Contract: TRUE iff sup x <= inf y; FALSE iff inf x > sup y; otherwise UNDECIDED. Exact.
    """
    (xl, xu), (yl, yu) = _bounds(x), _bounds(y)
    if xu <= yl:
        return Verdict.TRUE
    if xl > yu:
        return Verdict.FALSE
    return Verdict.UNDECIDED


def lt(x: Operand, y: Operand) -> Verdict:
    """Verdict of ``x < y``. Contract: TRUE iff sup x < inf y; FALSE iff inf x >= sup y. Exact."""
    (xl, xu), (yl, yu) = _bounds(x), _bounds(y)
    if xu < yl:
        return Verdict.TRUE
    if xl >= yu:
        return Verdict.FALSE
    return Verdict.UNDECIDED


def certainly_le(x: Operand, y: Operand) -> bool:
    """True only when ``x <= y`` is proved.

    Contract: True only when sup x <= inf y is proved (compare.le).
    """
    return le(x, y) is Verdict.TRUE


def certainly_lt(x: Operand, y: Operand) -> bool:
    """True only when ``x < y`` is proved.

    Contract: True only when sup x < inf y is proved (compare.lt).
    """
    return lt(x, y) is Verdict.TRUE
