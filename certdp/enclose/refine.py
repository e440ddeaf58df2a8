"""Ziv's strategy: raise the working precision until a requested width is met.

The compute callback is re-run from scratch at each precision; it must derive every ball from
exact inputs, so that a result at precision p is an enclosure whatever p is.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from flint import arb

from certdp.enclose.ball import Enclosure, width_of
from certdp.enclose.context import MAX_PREC, workprec
from certdp.errors import PrecisionExhausted, invalid

DEFAULT_START_PREC = 64
DEFAULT_MAX_PREC = 4096


@dataclass(frozen=True)
class Target:
    """Requested accuracy: met when ``width <= abs_tol + rel_tol * |x|`` for the smallest |x| in the ball.

    ``start_prec``/``max_prec`` bound the precisions tried (doubling in between).
    """

    rel_tol: float = 2.0**-60
    abs_tol: float = 1e-40
    start_prec: int = DEFAULT_START_PREC
    max_prec: int = DEFAULT_MAX_PREC

    def __post_init__(self) -> None:
        for name in ("rel_tol", "abs_tol"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
                raise invalid(name, v, "must be a finite number >= 0")
        if self.rel_tol == 0 and self.abs_tol == 0:
            raise invalid("tolerance", (self.rel_tol, self.abs_tol), "must be >= 0 and not both 0")
        for name in ("start_prec", "max_prec"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int):
                raise invalid(name, v, "must be an integer")
        if not 16 <= self.start_prec <= self.max_prec <= MAX_PREC:
            raise invalid("prec", self.start_prec, f"must be in [16, max_prec={self.max_prec}]")

    def tolerance_for(self, magnitude: float) -> float:
        """Contract: abs_tol + rel_tol * magnitude."""
        return self.abs_tol + self.rel_tol * magnitude

    def met_by(self, x: arb) -> bool:
        """Contract: True only if x is finite and 2 rad(x) <= tolerance_for(min |x|)."""
        if not x.is_finite():
            return False
        # in ball arithmetic, not floats: an enclosure of e^10000 has a width beyond the float range
        # that is still tiny relative to |x|
        mag = arb(0) if x.contains(0) else abs(x).lower()
        tol = arb(self.abs_tol) + arb(self.rel_tol) * mag
        return bool(2 * x.rad() <= tol.lower())


DEFAULT_TARGET = Target()


def refine(compute: Callable[[], arb], target: Target = DEFAULT_TARGET, what: str = "value") -> Enclosure:
    """Enclose ``compute()`` to the width ``target`` asks, doubling the precision as needed.

    Contract: returns Enclosure.from_ball(compute()) at the first precision whose ball meets the
    target. ``compute`` may raise PrecisionExhausted at a low precision; that precision is then
    skipped. Raises PrecisionExhausted(achieved_width, max_prec) if max_prec does not suffice, and
    InvalidArgument if ``target`` is not a Target.
    """
    if not isinstance(target, Target):
        raise invalid("target", repr(target), "must be a certdp.Target")
    prec = target.start_prec
    best: arb | None = None
    last_error: PrecisionExhausted | None = None
    while True:
        with workprec(prec):
            try:
                x = compute()
            except PrecisionExhausted as exc:
                last_error, x = exc, None
            if x is not None:
                if target.met_by(x):
                    return Enclosure.from_ball(x, prec)
                if x.is_finite():
                    best = x
        if prec >= target.max_prec:
            break
        prec = min(2 * prec, target.max_prec)
    achieved = width_of(best) if best is not None else float("inf")
    detail = f"; last error: {last_error}" if last_error is not None and best is None else ""
    raise PrecisionExhausted(
        f"{what}: width {achieved:.3g} above the target at max_prec={target.max_prec} bits{detail}",
        achieved_width=achieved,
        max_prec=target.max_prec,
    )
