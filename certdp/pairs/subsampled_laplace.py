"""Subsampled Laplace: P = (1-q) Lap(0, b) + q Lap(1, b), Q = Lap(0, b) (docs/math.md §12.2).

The dominating pair of the Laplace mechanism (sensitivity 1, scale b) under Poisson sampling
with rate q (add or remove one: ``remove`` is (P, Q), ``add`` is (Q, P); Zhu, Dong and Wang,
arXiv:2106.08567), and under sampling b of n without replacement with q = b/n and the
substitution relation (docs/math.md §12.3). ``both`` stands for the two directions together; the
caller splits it (:meth:`SubsampledLaplace.directed`).

The loss of ``remove`` is L(x) = log(1 - q + q e^{g(x)}), g(x) = (|x| - |x - 1|)/b, which is -u
(u = 1/b) for x <= 0, (2x - 1)/b on [0, 1] and u for x >= 1: nondecreasing, with atoms at both
ends. Its tails are closed forms of the Laplace distribution function.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from certdp.enclose import Ball, to_ball
from certdp.errors import PrecisionExhausted, Unsupported, invalid
from certdp.pairs.base import LossGrid
from certdp.pairs.domain import bounded
from certdp.pairs.loss_only import LossOnlyPair
from certdp.pairs.params import Number

DIRECTIONS = ("remove", "add", "both")


def _laplace_above(x: Ball, m: Ball, b: Ball) -> Ball:
    """P(X > x) for X ~ Lap(m, b), for x in [m - ..., ...]: both branches of the closed form, and
    their union when the ball straddles m (the function is continuous, so the union contains it)."""
    d = x - m
    out = []
    if not d < 0:
        out.append((-(d.max(to_ball(0))) / b).exp() / 2)
    if not d >= 0:
        out.append(1 - (d.min(to_ball(0)) / b).exp() / 2)
    v = out[0]
    for w in out[1:]:
        v = v.union(w)
    return v


def _union(cases: list[tuple[Ball, Ball]]) -> tuple[Ball, Ball]:
    p, q = cases[0]
    for a, b in cases[1:]:
        p, q = p.union(a), q.union(b)
    return p, q


@dataclass(frozen=True, init=False)
class SubsampledLaplace(LossOnlyPair):
    """Laplace noise of scale b with sampling rate q in (0, 1] (module docstring).

    Domain: q in (0, 1], scale in [1e-100, 1e100]; closed forms, no work limit. CGF and KL are not
    implemented (Unsupported): certdp accounts this pair by its loss distribution (the PLD lattice).
    """

    q: Fraction
    scale: Fraction
    direction: str

    mechanism = "subsampled-laplace"

    def __init__(self, q: Number, scale: Number, direction: str = "both") -> None:
        object.__setattr__(self, "q", bounded("q", q, self.mechanism, gt=0, le=1))
        object.__setattr__(self, "scale", bounded("scale", scale, self.mechanism, gt=0))
        if direction not in DIRECTIONS:
            raise invalid("direction", direction, f"must be one of {', '.join(DIRECTIONS)}")
        object.__setattr__(self, "direction", direction)

    def directed(self, direction: str) -> SubsampledLaplace:
        """Contract: the same pair with one direction."""
        return SubsampledLaplace(self.q, self.scale, direction)

    def _ends(self) -> tuple[Ball, Ball]:
        """(L(x <= 0), L(x >= 1)) of ``remove``: log(1 - q + q e^{-u}) and log(1 - q + q e^{u})."""
        u = 1 / to_ball(self.scale)
        q, qc = to_ball(self.q), to_ball(1 - self.q)
        return (qc + q * (-u).exp()).log(), (qc + q * u.exp()).log()

    def loss_grid(self) -> LossGrid | None:
        """At q = 1 the two atoms are the Laplace pair's, -u and u (u = 1/b, rational): the lattice
        accountant puts its lattice just below them (at a lattice point an atom's tail ball
        straddles it and the bounds are vacuous: test_fixed_batch found [0.1998, 1] for delta(0)
        of a batch of 2 out of 2 with Laplace scale 1/2, exactly 1 - e^-1). For q < 1 the atoms
        log(1 - q + q e^{+-u}) are irrational, so no dyadic lattice point is one.

        Contract: None for q < 1; for q = 1, every atom of L (either direction) is in -u + 2u Z.
        """
        if self.q != 1:
            return None
        u = 1 / self.scale
        return LossGrid(2 * u, -u, atomic=False)

    def max_loss_ball(self) -> Ball:
        """Contract: contains D_inf of the chosen direction: remove, the top atom log(1 - q + q e^u);
        add, minus the bottom atom, -log(1 - q + q e^{-u}); both, the larger (L is nondecreasing
        between the two atoms, module docstring)."""
        low, high = self._ends()
        if self.direction == "remove":
            return high
        if self.direction == "add":
            return -low
        return high.max(-low)

    def loss_tail(self, ell: Ball) -> tuple[Ball, Ball]:
        """Contract: contains (P(L > ell), Q(L > ell)) of the chosen direction (not ``both``).

        remove: L > y iff e^{g(x)} > A(y) = (e^y - 1 + q)/q. A <= 0: always; else with
        y0 = log A: always when y0 < -u, never when y0 >= u, else iff x > x0 = (b y0 + 1)/2 in
        [0, 1); the tails are P(X > x0) under the mixture and under Lap(0, b).
        add: P' = Lap(0, b), Q' = the mixture, L' = -L, so L' > ell iff L(x) < -ell iff
        g(x) < y0 (y0 = log A(-ell)): never when A <= 0 or y0 <= -u, always when y0 > u, else
        iff x < x0; the tails are the complements of the remove case's at x0.
        A ball that meets several cases gets their union (x0 clamped to [0, 1]).
        """
        if self.direction == "both":
            raise Unsupported("direction=both: the loss distribution is per direction; use remove and add")
        b = to_ball(self.scale)
        u = 1 / b
        q, qc = to_ball(self.q), to_ball(1 - self.q)
        one, zero = to_ball(1), to_ball(0)
        low, high = self._ends()  # the two atoms of L (remove)
        remove = self.direction == "remove"
        y = ell if remove else -ell
        # L >= low everywhere: remove is always above y < low, add never below y <= low
        if remove and y < low:
            return one, one
        if not remove and y <= low:
            return zero, zero
        if remove and y >= high:  # L <= high everywhere
            return zero, zero
        if not remove and y > high:
            return one, one
        a = (y.exp() - qc) / q
        if not a > 0:
            raise PrecisionExhausted(f"loss_tail: ell={ell} is within the ball's width of log(1 - q)")
        y0 = a.log()
        # cases on y0 against -u and u; the middle one with x0 clamped to [0, 1]
        below, above = (one, one), (zero, zero)  # remove: g > y0 always / never
        if not remove:
            below, above = (zero, zero), (one, one)  # add: g < y0 never / always
        cases: list[tuple[Ball, Ball]] = []
        if not y0 >= -u:
            cases.append(below)
        if not y0 < u:
            cases.append(above)
        if not (y0 < -u or y0 >= u):
            x0 = ((b * y0 + 1) / 2).intersection(zero.union(one))
            base = _laplace_above(x0, zero, b)
            mix = qc * base + q * _laplace_above(x0, one, b)
            # X has no atoms: P(X < x0) = 1 - P(X > x0)
            cases.append((mix, base) if remove else (1 - base, 1 - mix))
        return _union(cases)
