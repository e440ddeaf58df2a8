"""Generalized Gaussian noise (arXiv:2610.02414 §4.4; docs/math.md §4.4): density f(x) = c e^{-|x|^beta/beta},
c = beta^{1-1/beta}/(2 Gamma(1/beta)), beta in [1, 2]; P = Law(Z + s), Q = Law(Z).

beta = 1 is the unit Laplace pair and beta = 2 the unit Gaussian pair; there this pair evaluates
through those closed forms (the integrals below are tested against them). By symmetry of f every
quantity depends on |s| only; below s > 0.

Integrals. With A = |x|^beta, B = |x - s|^beta and L = (A - B)/beta,

    e^{K(t)} = c int exp(-((t+1) B - t A)/beta) dx,   E_P[g(L)] = c int e^{-B/beta} g(L) dx,

integrated by acb.integral on [-X, 0], [0, s], [s, s + X]: |x|^beta is analytic inside each piece
and certdp.enclose.abs_pow gives Arb both the analyticity check (branch points at 0 and s, the
ends of the pieces) and real-ball enclosures for its direct bounds at those ends.
Tails (proofs_checks ``ggauss_tails``), beta >= 1; each bound below covers x >= X (or x <= -X), a
superset of the parts left out (x > s + X and x < -X):

- CGF, x >= X >= max(s, 2(t+1) beta s): convexity of y^beta gives (x-s)^beta >= x^beta - beta s x^{beta-1},
  so (t+1)B - tA >= x^beta/2 and the tail is <= c 2 beta X^{1-beta} e^{-X^beta/(2 beta)};
  x <= -X: B >= A, so (t+1)B - tA >= |x|^beta and the tail is <= c beta X^{1-beta} e^{-X^beta/beta}.
- Tilted second moment N(t) = E_P[e^{tL} (L - c)^2] (x >= X as above, X >= 1): the CGF bounds and
  |L - c| <= |c| + s^2 + s|x| give both tails <= 2 int_X^inf e^{-x^beta/(2 beta)} (a' + s x)^2 dx,
  a' = |c| + s^2, whose log has slope <= -(X^{beta-1}/2 - 2/X) =: -delta, so <= 2 e^{h(X)}/delta.
- Moments of L (|g(L)| <= (a + |L|)^k): |L| <= s(|x| + s)^{beta-1} <= s^2 + s|x| once |x| + s >= 1,
  so both tails together are <= 2c int_Y^inf e^{-y^beta/beta} (a + 2s^2 + s y)^k dy, Y = X - s >= 1;
  the log of that integrand has slope <= -(Y^{beta-1} - k/Y) =: -delta < 0 on [Y, inf), so the
  integral is <= e^{h(Y)}/delta.

rho tail (proofs_checks ``ggauss_ratio_tail``): for 0 < e < 1, split (t+1)B - tA = e B + [(t+1-e)B - tA]
and bound the bracket below by -M, M = sup_b [t(b+s)^beta - (t+1-e) b^beta]; then
e^{K(t)} <= e^{M/beta} e^{-1/beta}-scaled mass, i.e. K(t) <= (M - log e)/beta. With gamma = beta - 1
and the mean-value bounds (b+s)^beta - b^beta <= beta s (b+s)^gamma,
M <= t s (1+c')^{1+gamma} (gamma s t/(1-e))^gamma, c' = (1-e)/t, so for t >= T

    K(t)/(t(t+1)) <= s (1+1/T)^{1+gamma} (gamma s/(1-e))^gamma T^{gamma-1}/beta - log(e)/(beta T(T+1)),

which decreases to 0 for beta < 2.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from certdp.enclose import Ball, abs_pow, current_prec, integrate_real, to_ball
from certdp.errors import PrecisionExhausted
from certdp.pairs.additive import Gaussian, Laplace
from certdp.pairs.base import PrivacyPair, require_positive_t
from certdp.pairs.domain import bounded, work_limit
from certdp.pairs.params import Number, real
from certdp.pairs.tails import cumulants_from_central

#: Work limits of the generalized-Gaussian pair (class docstring).
GG_MAX_SHIFT = 30
GG_MAX_T = 16
GG_MAX_T_SHIFT = 64
GG_MAX_T_SMALL = 64
GG_MAX_T_SHIFT_SMALL = 16

# Integrand in terms of A = |x|^beta and B = |x - s|^beta.
Kernel = Callable[[Ball, Ball], Ball]


def _pieces_integral(beta: Fraction, s: Fraction, kernel: Kernel, X: float, what: str) -> Ball:
    """int kernel(|x|^beta, |x - s|^beta) dx over [-X, s + X] (s > 0) in three analytic pieces:
    x in [-X, 0], x = s u with u in [0, 1], and x = s + v with v in [0, X], so that every end is
    an exact number (Arb never integrates between ball ends) and the branch points sit at ends."""
    b, sh, Xb = to_ball(beta), to_ball(s), to_ball(X)

    def left(x, analytic):  # noqa: ANN001 - acb callback signature
        return kernel(abs_pow(x, b, analytic, -1), abs_pow(x - sh, b, analytic, -1))

    def middle(u, analytic):  # noqa: ANN001 - acb callback signature
        return sh * kernel(abs_pow(sh * u, b, analytic, 1), abs_pow(sh * (u - 1), b, analytic, -1))

    def right(v, analytic):  # noqa: ANN001 - acb callback signature
        return kernel(abs_pow(sh + v, b, analytic, 1), abs_pow(v, b, analytic, 1))

    zero, one = to_ball(0), to_ball(1)
    return (
        integrate_real(left, -Xb, zero, what=what)
        + integrate_real(middle, zero, one, what=what)
        + integrate_real(right, zero, Xb, what=what)
    )


def _length(beta: float, bits: float, floor: float) -> float:
    """X with X^beta/(2 beta) >= bits ln 2 + 10, and X >= floor."""
    return max((2 * beta * (bits * math.log(2) + 10)) ** (1 / beta), floor)


@dataclass(frozen=True, init=False)
class GeneralizedGaussian(PrivacyPair):
    """Generalized Gaussian noise, density proportional to e^{-|x|^beta/beta}, beta in [1, 2], shift s.

    beta = 1 and 2 use the Laplace and Gaussian closed forms; otherwise integrals with proved
    tails (module docstring). rho is certified by the search with the tail bound of the
    module docstring (arXiv:2610.02414 reports rho = KL numerically).

    Domain (work limits, LimitExceeded beyond; measured at a few seconds per integral there):
    |shift| in [1e-100, 30]; for 1 < beta < 2, t = order - 1 <= min(64, 16/|shift|) when
    |shift| <= 1 and t <= min(16, 64/|shift|) when |shift| > 1 (the integrand's exponent
    (t A - (t+1) B)/beta varies faster with t and t |shift|, and near beta = 2 Arb's error bounds
    need ever more subintervals: measured, beta = 1.99 took 4-13 s at (shift, order) = (0.2, 65),
    (0.5, 33), (2, 16), (6.4, 10), (10, 6.4), and over 30 s at (1, 32), (0.2, 129), (10, 10.5)).
    beta = 1 and 2 are the closed-form pairs and have no order limit. Real-order searches (rho, epsilon,
    delta) that would probe beyond the limit raise LimitExceeded: pass explicit orders then.
    """

    beta: Fraction
    shift: Fraction

    mechanism = "generalized-gaussian"

    def __init__(self, beta: Number = Fraction(3, 2), shift: Number = 1) -> None:
        object.__setattr__(self, "beta", real("beta", beta, ge=1, le=2))
        s = bounded("shift", shift, self.mechanism, nonzero=True)
        if abs(s) > GG_MAX_SHIFT:
            raise work_limit("shift", shift, GG_MAX_SHIFT, self.mechanism, "the integrals' cost grows with the shift")
        object.__setattr__(self, "shift", s)

    order_limit_reason = "the integral's cost grows fast with t and t*|shift|; pass explicit smaller orders"

    def max_t(self) -> Fraction | None:
        """Contract: None at beta = 1, 2 (closed forms), else the limit of the class docstring."""
        if self.closed_form_pair() is not None:
            return None
        s = abs(self.shift)
        if s <= 1:
            return min(Fraction(GG_MAX_T_SMALL), GG_MAX_T_SHIFT_SMALL / s)
        return min(Fraction(GG_MAX_T), GG_MAX_T_SHIFT / s)

    def closed_form_pair(self) -> PrivacyPair | None:
        """Contract: the identical pair with a closed-form CGF at beta = 1 (Laplace, scale 1) and
        beta = 2 (Gaussian, sigma 1), else None (the densities coincide)."""
        if self.beta == 1:
            return Laplace(1, self.shift)
        if self.beta == 2:
            return Gaussian(1, self.shift)
        return None

    def _c(self) -> Ball:
        b = to_ball(self.beta)
        return b ** (1 - 1 / b) / (2 * (1 / b).gamma())

    def cgf_integral(self, t: Ball) -> Ball:
        """Contract: contains K(t) by the integral of the module docstring (any beta in [1, 2]),
        with the proved tails (proofs_checks ``ggauss_tails``)."""
        s = abs(self.shift)
        bf, sf, tf = float(self.beta), float(s), float(t.upper())
        prec = current_prec()
        X = _length(bf, prec + 10, max(2 * (tf + 1) * bf * sf, sf) + 1)
        b = to_ball(self.beta)

        def kernel(A: Ball, B: Ball) -> Ball:
            return (-((t + 1) * B - t * A) / b).exp()

        body = _pieces_integral(self.beta, s, kernel, X, "generalized-gaussian CGF")
        Xb = to_ball(X)
        tail = b * Xb ** (1 - b) * (2 * (-(Xb**b) / (2 * b)).exp() + (-(Xb**b) / b).exp())
        return (self._c() * (body + to_ball(0).union(tail))).log()

    def cgf_ball(self, t: Ball) -> Ball:
        """Contract: contains K(t) for every t > 0 in the ball (the closed form at beta = 1, 2;
        otherwise :meth:`cgf_integral`)."""
        require_positive_t(t)
        closed = self.closed_form_pair()
        return closed.cgf_ball(t) if closed is not None else self.cgf_integral(t)

    def _moment(self, g: Callable[[Ball], Ball], k: int, a: Ball, what: str) -> Ball:
        """c int e^{-B/beta} g(L) dx for |g(L)| <= (a + |L|)^k (module docstring tails)."""
        s = abs(self.shift)
        bf, sf = float(self.beta), float(s)
        prec = current_prec()
        af = float(a.upper()) + 2 * sf * sf
        X = _length(bf, prec + 10 + k * math.log2(af + sf * 100 + 1), sf + 2 * k + 2)
        b, sh = to_ball(self.beta), to_ball(s)

        def kernel(A: Ball, B: Ball) -> Ball:
            return (-B / b).exp() * g((A - B) / b)

        body = _pieces_integral(self.beta, s, kernel, X, what)
        Y = to_ball(X) - sh
        delta = Y ** (b - 1) - to_ball(k) / Y
        if not delta > 0:
            raise PrecisionExhausted(f"{what}: tail length too short")
        tail = 2 * (-(Y**b) / b).exp() * (a + 2 * sh * sh + sh * Y) ** k / delta
        return self._c() * (body + (-tail).union(tail))

    def tilted_square_moment(self, t: Ball, c0: Ball) -> Ball:
        """Contract: contains N(t) = E_P[e^{tL}(L - c0)^2] (any beta in [1, 2]): the integral of the
        module docstring with its proved tail (used by PrivacyPair.head_curvature_upper)."""
        s = abs(self.shift)
        bf, sf, tf = float(self.beta), float(s), float(t.upper())
        prec = current_prec()
        af = abs(float(c0.mid())) + sf * sf + 1
        X = _length(bf, prec + 10 + 2 * math.log2(af + sf * 100), max(2 * (tf + 1) * bf * sf, sf) + 8)
        b, sh = to_ball(self.beta), to_ball(s)

        def kernel(A: Ball, B: Ball) -> Ball:
            return (-((t + 1) * B - t * A) / b).exp() * ((A - B) / b - c0) ** 2

        body = _pieces_integral(self.beta, s, kernel, X, "generalized-gaussian curvature")
        Xb = to_ball(X)
        delta = Xb ** (b - 1) / 2 - 2 / Xb
        if not delta > 0:
            raise PrecisionExhausted("generalized-gaussian curvature: tail length too short")
        tail = 2 * (-(Xb**b) / (2 * b)).exp() * (abs(c0) + sh * sh + sh * Xb) ** 2 / delta
        return self._c() * (body + to_ball(0).union(tail))

    def head_curvature_upper(self, lo: float) -> Ball | None:
        """Contract: upper end >= sup_{0<t<=lo} K''(t): the closed-form pairs' bound at beta = 1, 2,
        else PrivacyPair.head_curvature_upper with :meth:`tilted_square_moment`."""
        closed = self.closed_form_pair()
        return closed.head_curvature_upper(lo) if closed is not None else super().head_curvature_upper(lo)

    def kl_ball(self) -> Ball:
        """Contract: contains KL = E_P L (closed form at beta = 1, 2; otherwise the integral of the
        module docstring with its proved tails, proofs_checks ``ggauss_tails``)."""
        closed = self.closed_form_pair()
        if closed is not None:
            return closed.kl_ball()
        return self._moment(lambda L: L, 1, to_ball(0), "generalized-gaussian KL")

    def loss_cumulants(self) -> tuple[Ball, Ball, Ball, Ball]:
        """Contract: contains (kappa_1, .., kappa_4) of L under P (closed forms at beta = 1, 2;
        otherwise kappa_1 = KL and central moments mu_k = E_P (L - kappa_1)^k by the integral of the
        module docstring, kappa_4 = mu_4 - 3 mu_2^2)."""
        closed = self.closed_form_pair()
        if closed is not None:
            return closed.loss_cumulants()  # type: ignore[return-value]
        k1 = self.kl_ball()
        mus = [
            self._moment(lambda L, k=k: (L - k1) ** k, k, abs(k1), f"generalized-gaussian loss moment {k}")
            for k in (2, 3, 4)
        ]
        return cumulants_from_central(k1, *mus)

    def rho_closed_form(self) -> Ball | None:
        """Contract: s^2/2 at beta = 2 (Gaussian); None otherwise (rho is then searched)."""
        closed = self.closed_form_pair()
        return closed.rho_closed_form() if closed is not None else None

    def max_loss_ball(self) -> Ball | None:
        """Contract: D_inf = |s| at beta = 1 (Laplace); None otherwise (L is unbounded for beta > 1)."""
        return to_ball(abs(self.shift)) if self.beta == 1 else None

    def ratio_tail_bound(self, T: float) -> Ball | None:
        """Contract: upper end >= sup_{t >= T} K(t)/(t(t+1)): the bound of the module docstring
        (proofs_checks ``ggauss_ratio_tail``) for 1 < beta < 2, the closed-form pairs' otherwise."""
        closed = self.closed_form_pair()
        if closed is not None:
            return closed.ratio_tail_bound(T)
        b, s, Tb = to_ball(self.beta), to_ball(abs(self.shift)), to_ball(T)
        g = b - 1
        best = None
        for log2e in (-1, -4, -8, -16, -32):
            e = to_ball(2) ** log2e
            power_part = s * (1 + 1 / Tb) ** (1 + g) * (g * s / (1 - e)) ** g * Tb ** (g - 1) / b
            bound = power_part - e.log() / (b * Tb * (Tb + 1))
            if best is None or bound.upper() < best.upper():
                best = bound
        return best
