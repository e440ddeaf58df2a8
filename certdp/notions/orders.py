"""Validation of orders and the default integer-order grid."""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction

from certdp.enclose import Ball, to_ball
from certdp.errors import InvalidArgument, Unsupported
from certdp.pairs import PrivacyPair
from certdp.pairs.params import Number, real

#: Integer Renyi orders used when a pair has no real orders: every integer 2..64, then a sparse
#: tail up to 1024 (large orders matter for small epsilon / large sigma).
DEFAULT_INTEGER_ORDERS: tuple[int, ...] = (
    *tuple(range(2, 65)),
    72,
    80,
    96,
    112,
    128,
    160,
    192,
    256,
    384,
    512,
    768,
    1024,
)
DEFAULT_GRID_NAME = "integer:2..64,72..1024(12)"


def t_of(t: Number) -> Fraction:
    """Contract: exact t > 0 or InvalidArgument."""
    return real("t", t, gt=0)


def t_from_order(alpha: Number) -> Fraction:
    """Contract: exact t = alpha - 1 for alpha > 1, or InvalidArgument."""
    return real("order", alpha, gt=1) - 1


def t_ball(pair: PrivacyPair, t: Fraction) -> Ball:
    """Ball of t after checking that the pair supports it (Unsupported otherwise).

    Contract: an exact (or enclosing) ball of t, or Unsupported for orders the pair lacks.
    """
    b = to_ball(t)
    if not pair.real_orders and t.denominator != 1:
        raise Unsupported(f"{pair.mechanism} is supported at integer orders only: order={float(t + 1):g}")
    pair.check_order(b)
    return b


def order_grid(pair: PrivacyPair, orders: Iterable[Number] | None) -> tuple[tuple[Fraction, ...], str]:
    """The t values (alpha - 1) of an explicit order list, or of the default integer grid.

    Contract: the sorted t values of the orders searched, and the grid's name.
    """
    if orders is None:
        return tuple(Fraction(a - 1) for a in DEFAULT_INTEGER_ORDERS), DEFAULT_GRID_NAME
    ts = tuple(sorted({t_from_order(a) for a in orders}))
    if not ts:
        raise InvalidArgument("orders=[] must be non-empty")
    for t in ts:
        t_ball(pair, t)
    return ts, "explicit"
