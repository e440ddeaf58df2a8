"""Additive-noise pairs with closed-form CGFs: P = Law(s + Z), Q = Law(Z) (docs/math.md §4)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from certdp.enclose import Ball, phi, phi_upper_tail, taylor_coefficients, to_ball
from certdp.pairs.base import LossGrid, PrivacyPair, require_positive_t
from certdp.pairs.domain import bounded
from certdp.pairs.params import Number

#: sub-balls of Laplace.curvature_upper's interval
LAPLACE_CURVATURE_PIECES = 8


@dataclass(frozen=True, init=False)
class Gaussian(PrivacyPair):
    """Gaussian noise N(0, sigma^2) with shift s.

    K(t) = t(t+1) s^2/(2 sigma^2); KL = rho = s^2/(2 sigma^2); Gamma = 0.

    Domain: sigma > 0 and shift != 0 of magnitude in [1e-100, 1e100] (certdp.pairs.domain);
    closed forms, so no work limit.
    """

    sigma: Fraction
    shift: Fraction

    mechanism = "gaussian"
    rho_attained_at_infinity = True

    def __init__(self, sigma: Number, shift: Number = 1) -> None:
        object.__setattr__(self, "sigma", bounded("sigma", sigma, self.mechanism, gt=0))
        object.__setattr__(self, "shift", bounded("shift", shift, self.mechanism, nonzero=True))

    def _c(self) -> Ball:
        return to_ball(self.shift**2 / (2 * self.sigma**2))

    def cgf_ball(self, t: Ball) -> Ball:
        """Contract: contains t(t+1) s^2/(2 sigma^2). Proof: docs/math.md §4.1;
        proofs_checks ``gaussian_cgf``."""
        require_positive_t(t)
        return t * (t + 1) * self._c()

    def kl_ball(self) -> Ball:
        """Contract: contains s^2/(2 sigma^2). Proof: docs/math.md §4.1; proofs_checks ``gaussian_cgf``."""
        return self._c()

    def loss_cumulants(self) -> tuple[Ball, Ball, Ball, Ball]:
        """Contract: contains (c, 2c, 0, 0), c = s^2/(2 sigma^2): K(t) = c t + 2c t^2/2 exactly
        (proofs_checks ``gaussian_cgf``)."""
        c = self._c()
        return c, 2 * c, to_ball(0), to_ball(0)

    def loss_tail(self, ell: Ball) -> tuple[Ball, Ball]:
        """Contract: contains (P(L > ell), Q(L > ell)). With P = N(s, sigma^2), Q = N(0, sigma^2),
        L(x) = s (2x - s)/(2 sigma^2) is monotone in x: for s > 0, L > ell iff x > x0 =
        sigma^2 ell/s + s/2, so the tails are (1 - Phi((x0 - s)/sigma), 1 - Phi(x0/sigma)); for
        s < 0 the inequality turns, and the tails are (Phi((x0 - s)/sigma), Phi(x0/sigma))
        (docs/math.md §10)."""
        sig, s = to_ball(self.sigma), to_ball(self.shift)
        x0 = sig * sig * ell / s + s / 2
        if self.shift > 0:
            return phi_upper_tail((x0 - s) / sig), phi_upper_tail(x0 / sig)
        return phi((x0 - s) / sig), phi(x0 / sig)

    def rho_closed_form(self) -> Ball:
        """Contract: contains rho = s^2/(2 sigma^2): K(t)/(t(t+1)) is this constant for every t
        (proofs_checks ``gaussian_rho_gap``)."""
        return self._c()


def laplace_cgf_u(t: Ball, u: Ball) -> Ball:
    """K(t) of the Laplace pair at u = |s|/b, for balls (u may be a ball, e.g. a certified root).

    Contract: contains log((t+1)/(2t+1) e^{tu} + t/(2t+1) e^{-(t+1)u}) for every t > 0 and u >= 0
    in the balls (proofs_checks ``laplace_cgf``), in the expm1/log1p form of Laplace.cgf_ball.
    """
    num = (t + 1) * (t * u).expm1() + t * (-(t + 1) * u).expm1()
    return (num / (2 * t + 1)).log1p()


def _laplace_cgf_closed(u: Ball) -> Callable[[Ball], Ball]:
    """t -> log((t+1)/(2t+1) e^{tu} + t/(2t+1) e^{-(t+1)u}), written for balls and series alike."""

    def k(t: Ball) -> Ball:
        return ((t + 1) / (2 * t + 1) * (t * u).exp() + t / (2 * t + 1) * (-(t + 1) * u).exp()).log()

    return k


@dataclass(frozen=True, init=False)
class Laplace(PrivacyPair):
    """Laplace noise with density exp(-|x|/b)/(2b) and shift s; u = |s|/b.

    e^{K(t)} = (t+1)/(2t+1) e^{t u} + t/(2t+1) e^{-(t+1) u} (docs/math.md §4.2, derived there).
    KL = u + e^{-u} - 1; D_inf = u. rho is certified by search (certdp.notions.zcdp), and
    arXiv:2610.02414 (after Harrison and Manurangsi) states it equals KL (sup approached as t -> 0).

    Domain: scale > 0 and shift != 0 of magnitude in [1e-100, 1e100] (certdp.pairs.domain);
    closed forms, so no work limit.
    """

    scale: Fraction
    shift: Fraction

    mechanism = "laplace"

    def __init__(self, scale: Number = 1, shift: Number = 1) -> None:
        object.__setattr__(self, "scale", bounded("scale", scale, self.mechanism, gt=0))
        object.__setattr__(self, "shift", bounded("shift", shift, self.mechanism, nonzero=True))

    def _u(self) -> Ball:
        return to_ball(abs(self.shift) / self.scale)

    def cgf_ball(self, t: Ball) -> Ball:
        """Contract: contains K(t) for all t in the ball (proofs_checks ``laplace_cgf``).

        Evaluated as log1p([(t+1) expm1(t u) + t expm1(-(t+1) u)]/(2t+1)), algebraically equal to
        the form of docs/math.md §4.2 (subtract 1 = ((t+1) + t)/(2t+1)); the expm1/log1p form keeps relative
        accuracy as t -> 0.
        """
        require_positive_t(t)
        return laplace_cgf_u(t, self._u())

    def kl_ball(self) -> Ball:
        """Contract: contains u + e^{-u} - 1 = E_P[L] (docs/math.md §4.2; proofs_checks ``laplace_kl``)."""
        u = self._u()
        return u + (-u).expm1()

    def loss_cumulants(self) -> tuple[Ball, Ball, Ball, Ball]:
        """Contract: contains kappa_j = j! [t^j] K(t), j = 1..4, from Taylor arithmetic on the closed
        form log((t+1)/(2t+1) e^{tu} + t/(2t+1) e^{-(t+1)u}) at t = 0, where it is analytic
        (certdp.enclose.taylor_coefficients; proofs_checks ``laplace_cgf``)."""
        u = self._u()
        c = taylor_coefficients(_laplace_cgf_closed(u), to_ball(0), 4)
        return c[1], 2 * c[2], 6 * c[3], 24 * c[4]

    def curvature_upper(self, a: float, b: float) -> Ball:
        """Contract: upper end >= sup_{a<=t<=b} K''(t) (0 <= a < b): Arb's series arithmetic on the
        closed form at a ball encloses K''(t)/2 for every t in it (proofs_checks ``laplace_cgf``);
        [a, b] is split into LAPLACE_CURVATURE_PIECES balls, since a wide ball overestimates by
        the dependency of the closed form's terms on t."""
        f, A, B = _laplace_cgf_closed(self._u()), Fraction(a), Fraction(b)
        ends = [to_ball(A + (B - A) * k / LAPLACE_CURVATURE_PIECES) for k in range(LAPLACE_CURVATURE_PIECES + 1)]
        best = None
        for lo, hi in itertools.pairwise(ends):
            c = 2 * taylor_coefficients(f, lo.union(hi), 2)[2]
            best = c if best is None else best.max(c)
        return best  # type: ignore[return-value]

    def max_loss_ball(self) -> Ball:
        """Contract: contains D_inf = sup |log p(x-s)/p(x)| = u (triangle inequality, attained)."""
        return self._u()

    def loss_tail(self, ell: Ball) -> tuple[Ball, Ball]:
        """Contract: contains (P(L > ell), Q(L > ell)) for every ell in the ball. The pair is
        symmetric under x -> -x, so take s > 0 and y = x/b: L = |y| - |y - u| is -u for y <= 0,
        2y - u on [0, u] and u for y >= u (atoms of P-mass e^{-u}/2 at -u and 1/2 at u). For
        -u <= ell < u, L > ell iff y > y0 = (ell + u)/2 in [0, u), so the tails are
        (1 - e^{-(u - y0)}/2, e^{-y0}/2); (1, 1) below -u and (0, 0) from u on. A ball that
        straddles -u or u gets the union of the cases it meets (docs/math.md §10; proofs_checks
        ``lattice_atom_tails``)."""
        u = self._u()
        one, zero = to_ball(1), to_ball(0)
        out: list[tuple[Ball, Ball]] = []
        if not ell >= -u:
            out.append((one, one))
        if not ell >= u:  # some of the ball is below u: the middle case (y0 clamped to [0, u])
            if not ell < -u:
                y0 = ((ell + u) / 2).intersection(zero.union(u))
                out.append((1 - (y0 - u).exp() / 2, (-y0).exp() / 2))
        if not ell < u:
            out.append((zero, zero))
        p, q = out[0]
        for a, b in out[1:]:
            p, q = p.union(a), q.union(b)
        return p, q

    def loss_grid(self) -> LossGrid:
        """Contract: the atoms of L are -u and u (see :meth:`loss_tail`): anchor -u, spacing 2u;
        L also has a continuous part on (-u, u), so not atomic."""
        u = abs(self.shift) / self.scale
        return LossGrid(2 * u, -u, atomic=False)
