"""Validation of the notions' inputs (pairs, targets, orders) and the default integer-order grid.

Domain of orders: t = alpha - 1 in [MIN_T, MAX_T] = [1e-100, 1e100] (alpha in (1, 1e100]); the
float heuristics that choose widths and search points (e.g. the gap's t(t+1)) stay inside the
float range there. A pair may support a smaller range (its ``check_order``; e.g. integer-order
sums whose cost grows with the order). An explicit order list holds at most MAX_ORDERS orders.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction

from certdp.enclose import Ball, Target, to_ball
from certdp.errors import InvalidArgument, LimitExceeded, Unsupported, invalid
from certdp.pairs import PrivacyPair
from certdp.pairs.params import Number, real

MIN_T = Fraction(1, 10**100)
MAX_T = Fraction(10**100)
#: Most orders an explicit list may hold (each costs one CGF evaluation per precision tried).
MAX_ORDERS = 4096

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


def require_pair(pair: object, name: str = "pair") -> PrivacyPair:
    """The pair itself, or InvalidArgument when it is not a certdp privacy pair.

    Contract: returns only instances of certdp.pairs.PrivacyPair.
    """
    if not isinstance(pair, PrivacyPair):
        raise invalid(name, repr(pair), "must be a certdp privacy pair (e.g. certdp.Gaussian(sigma=1))")
    return pair


def require_target(target: object) -> Target:
    """The target itself, or InvalidArgument when it is not a certdp.Target.

    Contract: returns only instances of certdp.enclose.Target.
    """
    if not isinstance(target, Target):
        raise invalid("target", repr(target), "must be a certdp.Target (e.g. certdp.Target(rel_tol=1e-12))")
    return target


def require_numbers(
    name: str, values: object, limit: int = MAX_ORDERS, what: str = "numbers such as [1, 2]"
) -> list[object]:
    """The items of an iterable of numbers as a list (at most ``limit`` of them).

    Contract: a list of the items; a string, a single number or another non-iterable raises
    InvalidArgument (``"64"`` is not [6, 4]), more than ``limit`` items LimitExceeded.
    """
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise invalid(name, repr(values), f"must be an iterable of {what}, not a number or string")
    items = [v for _, v in zip(range(limit + 1), values, strict=False)]
    if len(items) > limit:
        raise LimitExceeded(f"{name} has more than {limit} entries: at most {limit} are accepted")
    return items


def t_of(t: Number) -> Fraction:
    """Contract: exact t in [MIN_T, MAX_T] (module docstring) or InvalidArgument."""
    v = real("t", t, gt=0)
    if not MIN_T <= v <= MAX_T:
        raise invalid("t", t, "must lie in [1e-100, 1e100] (the supported range of orders)")
    return v


def t_from_order(alpha: Number) -> Fraction:
    """Contract: exact t = alpha - 1 for alpha in (1 + MIN_T, 1 + MAX_T], or InvalidArgument."""
    v = real("order", alpha, gt=1) - 1
    if not MIN_T <= v <= MAX_T:
        raise invalid("order", alpha, "must lie in [1 + 1e-100, 1e100] (the supported range of orders)")
    return v


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

    Contract: the sorted t values of the orders searched, and the grid's name. ``orders`` must be
    an iterable of numbers (a list, tuple, range...): a single number or a string is refused
    (InvalidArgument; ``"64"`` is not the orders {6, 4}), and so is a list of more than MAX_ORDERS
    orders (LimitExceeded).
    """
    if orders is None:
        return tuple(Fraction(a - 1) for a in DEFAULT_INTEGER_ORDERS), DEFAULT_GRID_NAME
    items = require_numbers("orders", orders, what="orders such as [2, 4, 8]")
    ts = tuple(sorted({t_from_order(a) for a in items}))  # type: ignore[arg-type]
    if not ts:
        raise InvalidArgument("orders=[] must be non-empty")
    for t in ts:
        t_ball(pair, t)
    return ts, "explicit"
