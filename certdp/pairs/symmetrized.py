"""The symmetric pair whose hockey-stick curve at eps >= 0 is that of a base pair (docs/math.md §12.3).

A mechanism under a symmetric neighbouring relation (substitution) whose every ordered pair of
neighbours (A, B) satisfies H_a(A || B) <= H_a(P || Q) for a >= 1 (both orders: (B, A) is also a
pair of neighbours) need not be dominated by (P, Q) at a < 1, which composition needs. It is
dominated at every a >= 0 by the symmetric pair S whose loss distribution (under its first law)
keeps the base pair's part above 0 and mirrors it below:

    omega_S(l) = omega(l) for l > 0,   omega_S(-l) = e^{-l} omega(l),   omega_S(0) = 1 - P(L > 0) - Q(L > 0),

with omega the base pair's loss distribution under P (Q's mass at loss l is e^{-l} times P's).
For a >= 1, H_a(S) = H_a(P || Q) (only losses above log a count); for a < 1 both laws of S have
the same curve (S is symmetric), H_a(S) = 1 - a + a H_{1/a}(S) = 1 - a + a H_{1/a}(P || Q) >=
1 - a + a H_{1/a}(B || A) = H_a(A || B). The tails at an exact loss l:

    l >= 0:  (P_S(L > l), Q_S(L > l)) = (P(L > l), Q(L > l))
    l < 0:   (P_S(L > l), Q_S(L > l)) = (1 - Q(L >= -l), 1 - P(L >= -l)),

and P(L >= x) lies between P(L > x) and P(L > x - 2^-GAP_BITS) (monotone in x), whose union is
taken, so an atom of the base loss at x is covered without knowing where the atoms are.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from certdp.enclose import Ball, to_ball
from certdp.errors import Unsupported, invalid
from certdp.pairs.base import PrivacyPair
from certdp.pairs.loss_only import LossOnlyPair

if TYPE_CHECKING:
    import numpy as np

#: P(L >= x) is enclosed by P(L > x) and P(L > x - 2^-GAP_BITS).
GAP_BITS = 60


@dataclass(frozen=True, init=False)
class Symmetrized(LossOnlyPair):
    """The symmetric pair of a base pair of one direction (module docstring).

    Domain: the base has a loss distribution and one direction, and P(L > 0) + Q(L > 0) <= 1 (the
    subsampled pairs certdp symmetrizes, by proof; a base certainly above 1 is refused on first use).
    """

    base: PrivacyPair
    direction: str

    mechanism = "symmetrized"

    def __init__(self, base: PrivacyPair) -> None:
        if getattr(base, "direction", None) == "both":
            raise invalid("base.direction", "both", "must be one direction (the curve at eps >= 0 of one pair)")
        object.__setattr__(self, "base", base)
        object.__setattr__(self, "direction", "remove")  # symmetric: the two orders coincide
        object.__setattr__(self, "_checked", {})

    def params(self) -> dict[str, str]:
        """Contract: the base pair's description."""
        return {"base": self.base.describe()}

    def _check(self) -> None:
        from certdp.enclose import current_prec

        prec = current_prec()
        if prec in self._checked:  # type: ignore[attr-defined]
            return
        t = self.base.loss_tail(to_ball(0))
        if t is None:
            raise Unsupported(f"{self.base.mechanism}: no loss distribution to symmetrize")
        # the pairs certdp symmetrizes have P(L > 0) + Q(L > 0) <= 1 by proof (docs/math.md §12.3; = 1
        # at rate 1, where a ball cannot decide it): refuse only a base that certainly exceeds it
        if t[0] + t[1] > 1:
            raise Unsupported(f"{self.base.describe()}: P(L > 0) + Q(L > 0) > 1, so no symmetric pair has its curve")
        self._checked[prec] = True  # type: ignore[attr-defined]

    def _at_least(self, x: Ball) -> tuple[Ball, Ball]:
        """Enclosures of (P(L >= x), Q(L >= x)) of the base (module docstring)."""
        a = self.base.loss_tail(x)
        b = self.base.loss_tail(x - to_ball(2) ** -GAP_BITS)
        if a is None or b is None:
            raise Unsupported(f"{self.base.mechanism}: no loss distribution to symmetrize")
        return a[0].union(b[0]), a[1].union(b[1])

    def loss_tail(self, ell: Ball) -> tuple[Ball, Ball]:
        """Contract: contains (P_S(L > ell), Q_S(L > ell)) of the module docstring, from the base's
        enclosures; an ell whose sign a ball cannot decide gets the union of both formulas."""
        self._check()
        one = to_ball(1)
        outs = []
        if not ell < 0:  # ell >= 0 possible
            t = self.base.loss_tail(ell)
            if t is None:
                raise Unsupported(f"{self.base.mechanism}: no loss distribution to symmetrize")
            outs.append(t)
        if not ell >= 0:  # ell < 0 possible
            p_ge, q_ge = self._at_least(-ell)
            outs.append((one - q_ge, one - p_ge))
        if len(outs) == 1:
            return outs[0]
        return outs[0][0].union(outs[1][0]), outs[0][1].union(outs[1][1])

    def loss_tails(self, ells: list[Ball]) -> list[tuple[Ball, Ball] | None]:
        """Contract: as :meth:`loss_tail` at each of the sorted ``ells``, from the base's own
        loss_tails (its faster route) at the points >= 0 and at the mirrored points."""
        self._check()
        one = to_ball(1)
        pos = [i for i, e in enumerate(ells) if e >= 0]
        neg = [i for i, e in enumerate(ells) if e < 0]
        out: list[tuple[Ball, Ball] | None] = [None] * len(ells)
        for i, t in zip(pos, self.base.loss_tails([ells[i] for i in pos]), strict=True):
            out[i] = t
        gap = to_ball(2) ** -GAP_BITS
        mirrored = sorted(neg, key=lambda i: -ells[i].mid())  # -ell ascending
        at = self.base.loss_tails([-ells[i] for i in mirrored])
        below = self.base.loss_tails([-ells[i] - gap for i in mirrored])
        for i, a, b in zip(mirrored, at, below, strict=True):
            if a is None or b is None:
                continue
            out[i] = (one - a[1].union(b[1]), one - a[0].union(b[0]))
        # a point whose sign a ball does not decide, or a failed block: the one-point route
        return [t if t is not None else self.loss_tail(e) for t, e in zip(out, ells, strict=True)]

    def loss_tail_float(self, ell: float) -> tuple[float, float] | None:
        """Contract: floats near the tails (the base's floats mirrored); steering only."""
        if ell >= 0:
            return self.base.loss_tail_float(ell)
        t = self.base.loss_tail_float(-ell)
        return None if t is None else (1.0 - t[1], 1.0 - t[0])

    def loss_tails_float(self, ells: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """Contract: float arrays near the tails at ``ells``; steering only."""
        import numpy as np

        e = np.asarray(ells, dtype=float)
        up = self.base.loss_tails_float(np.abs(e))
        if up is None:
            return None
        p, q = up
        neg = e < 0
        return np.where(neg, 1.0 - q, p), np.where(neg, 1.0 - p, q)

    def max_t(self) -> Fraction | None:
        """Contract: the base's order limit (the CGF bound evaluates the base's)."""
        return self.base.max_t()

    def max_loss_ball(self) -> Ball | None:
        """Contract: contains D_inf of S: that of the base (the positive part is the base's), when known."""
        return self.base.max_loss_ball()


def symmetrized(base: PrivacyPair) -> Symmetrized:
    """Contract: the pair of the module docstring for ``base``."""
    return Symmetrized(base)


__all__ = ["GAP_BITS", "Symmetrized", "symmetrized"]
