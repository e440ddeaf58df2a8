"""A (xi, rho)-zCDP guarantee as a pair: the Renyi bound every such mechanism satisfies.

Bun and Steinke (arXiv:1605.02065, Definition 1.1): a mechanism is (xi, rho)-zCDP when
D_alpha(P||Q) <= xi + rho alpha for every alpha > 1 and every pair of neighbouring inputs. With
K(t) = t D_{t+1} (docs/math.md §1) that reads K(t) <= xi t + rho t(t+1) for every t > 0.

:class:`ZcdpBound` is that envelope: its "CGF" is the largest one a (xi, rho)-zCDP mechanism can
have, so every certdp notion that only needs an upper bound of K (RDP, the RDP -> (eps, delta)
conversion, rho) is sound for every mechanism with the guarantee. It has no loss distribution
(a guarantee is not a mechanism), so the lattice (PLD) accountant refuses it.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from certdp.enclose import Ball, to_ball
from certdp.pairs.base import PrivacyPair, require_positive_t
from certdp.pairs.domain import bounded
from certdp.pairs.params import Number


@dataclass(frozen=True, init=False)
class ZcdpBound(PrivacyPair):
    """The Renyi envelope of a (xi, rho)-zCDP guarantee: K(t) = xi t + rho t(t+1), t > 0.

    It stands for every mechanism with the guarantee: each such mechanism's CGF is at most this
    one (module docstring), so an RDP-based bound computed from it holds for all of them. KL
    (the limit t -> 0 of K(t)/t) is xi + rho; sup_t K(t)/(t(t+1)) = rho + sup_t xi/(t+1) is
    rho + xi, approached as t -> 0 when xi > 0 (and rho at every t when xi = 0, the Gaussian's
    envelope: Gaussian(sigma) has exactly K(t) = t(t+1)/(2 sigma^2)).

    No ``loss_tail``: the guarantee fixes no loss distribution, so certdp.notions.pld raises
    Unsupported for it (alone or as a part of a composition).

    Domain: rho > 0 and xi >= 0, each nonzero value of magnitude in [1e-100, 1e100]
    (certdp.pairs.domain); closed forms, so no work limit.
    """

    rho: Fraction
    xi: Fraction

    mechanism = "zcdp-bound"

    def __init__(self, rho: Number, xi: Number = 0) -> None:
        object.__setattr__(self, "rho", bounded("rho", rho, self.mechanism, gt=0))
        object.__setattr__(self, "xi", bounded("xi", xi, self.mechanism, ge=0))

    @property
    def rho_attained_at_infinity(self) -> bool:  # type: ignore[override]
        """Contract: True iff xi = 0: K(t)/(t(t+1)) = rho + xi/(t+1) is then constant; for xi > 0
        it decreases to rho, below the closed-form sup rho + xi."""
        return self.xi == 0

    def cgf_ball(self, t: Ball) -> Ball:
        """Contract: contains xi t + rho t(t+1) for every t > 0 in the ball, the largest CGF any
        (xi, rho)-zCDP mechanism has (K(t) = t D_{t+1} <= t (xi + rho (t+1)); module docstring)."""
        require_positive_t(t)
        return t * (to_ball(self.xi) + to_ball(self.rho) * (t + 1))

    def kl_ball(self) -> Ball:
        """Contract: contains xi + rho = lim_{t->0} K(t)/t of the envelope, an upper bound of the KL
        divergence of every (xi, rho)-zCDP mechanism (KL = D_1 <= lim_{alpha->1} (xi + rho alpha))."""
        return to_ball(self.xi + self.rho)

    def rho_closed_form(self) -> Ball:
        """Contract: contains sup_{t>0} K(t)/(t(t+1)) = sup_t (rho + xi/(t+1)) = rho + xi (the
        ratio decreases in t: approached as t -> 0 when xi > 0, equal to rho everywhere when xi = 0)."""
        return to_ball(self.rho + self.xi)

    def ratio_tail_bound(self, T: float) -> Ball:
        """Contract: upper end >= sup_{t>=T} K(t)/(t(t+1)) = rho + xi/(T+1) (the ratio decreases in t)."""
        return to_ball(self.rho) + to_ball(self.xi) / (to_ball(Fraction(T)) + 1)

    def ratio_tail_decay(self, T: float) -> tuple[Ball, Ball]:
        """Contract: (rho, xi): K(t)/(t(t+1)) = rho + xi/(t+1) <= rho + xi/t for every t > 0 (so for
        t >= T); tighter in a composition than the default (rho + xi, 0)."""
        return to_ball(self.rho), to_ball(self.xi)

    def ratio_tail_witness(self) -> Ball:
        """Contract: rho = lim_{t->inf} K(t)/(t(t+1)) (= rho + xi/(t+1) -> rho), so lower end <= limsup."""
        return to_ball(self.rho)

    def curvature_upper(self, a: float, b: float) -> Ball:
        """Contract: 2 rho = K''(t) at every t of the envelope (so >= sup over [a, b])."""
        return to_ball(2 * self.rho)
