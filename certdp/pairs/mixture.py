"""Gaussian-mixture noise (arXiv:2610.02414 Prop. 4.1; docs/math.md §4.3):
Z ~ (N(-m, 1) + N(m, 1))/2, P = Law(Z + s), Q = Law(Z).

With f(x) = phi(x) e^{-m^2/2} cosh(m x), the Gaussian parts combine exactly
(phi(x - s)^{t+1} phi(x)^{-t} = phi(x - (t+1)s) e^{t(t+1)s^2/2}), so

    K(t) = t(t+1) s^2/2 + log I(t),
    I(t) = e^{-m^2/2} E_{U ~ N(0,1)}[cosh(m(U + c - s))^{t+1} cosh(m(U + c))^{-t}],  c = (t+1)s,

and the gap is Gamma(t) = rho t(t+1) - K(t) = -log I(t) (rho = s^2/2 below).

Tail bound of I (proofs_checks ``mixture_tail``): cosh(m(x - s))/cosh(m x) <= e^{m|s|}, so the
integrand is at most e^{(t+1) m|s|} e^{-m^2/2} phi(u) cosh(m(u + c)) =
e^{(t+1) m|s|} (phi(u - m) e^{m c} + phi(u + m) e^{-m c})/2, whose mass on |u| > L is at most
e^{(t+1) m|s|} cosh(m c) 2 Phi(m - L); the integrand is >= 0, so the tail lies in [0, that].
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from certdp.enclose import Ball, current_prec, integrate_real, phi, pi, to_ball
from certdp.pairs.base import PrivacyPair, require_positive_t
from certdp.pairs.domain import bounded, work_limit
from certdp.pairs.params import Number, real
from certdp.pairs.tails import cumulants_from_central, gaussian_poly_tail

#: Work limits of the Gaussian-mixture pair (class docstring).
MIX_MAX_M = 8
MIX_MAX_SHIFT = 10
MIX_MAX_PRODUCT = 40
MIX_MAX_T = 10**4
MIX_MAX_T_PRODUCT = 10**5


def _length(mf: float, extra: float) -> float:
    bits = (current_prec() + 10) * math.log(2)
    return mf + math.sqrt(2 * (bits + max(extra, 0.0))) + 1


def mixture_log_i(m: Ball, s: Ball, t: Ball) -> Ball:
    """log I(t) of the module docstring for balls m >= 0, s, t > 0 (the shift may be a ball, as
    on the Prop. 4.3 allocation path where s = sqrt(2 rho)).

    Contract: contains log I(t) for every (m, s, t) in the balls: acb.integral on [-L, L] (Arb's
    log with the analyticity flag, so branch cuts of log cosh are detected) plus the proved tail
    of the module docstring (proofs_checks ``mixture_tail``).
    """
    c = (t + 1) * s
    mf, sf, tf = float(m.mid()), abs(float(s.mid())), float(t.mid())
    L = _length(mf, 2 * (tf + 1) * mf * sf)
    norm = 1 / (2 * pi()).sqrt()

    ch, sh = (m * s).cosh(), (m * s).sinh()

    def f(u, analytic):  # noqa: ANN001 - acb callback signature
        # (t+1) log cosh(m(y - s)) - t log cosh(m y) = log cosh(m(y - s)) + t log r(y) with
        # r(y) = cosh(m(y - s))/cosh(m y) = cosh(ms) - tanh(m y) sinh(ms) in [e^{-m|s|}, e^{m|s|}]:
        # no difference of two huge logs, so large t stays cheap (y = u + c)
        up = (m * (u + c - s)).cosh().log(analytic=analytic)
        ratio = (ch - (m * (u + c)).tanh() * sh).log(analytic=analytic)
        return norm * (-u * u / 2 - m * m / 2 + up + t * ratio).exp()

    Lb = to_ball(L)
    body = integrate_real(f, -Lb, Lb, what="gaussian-mixture CGF")
    tail = ((t + 1) * m * abs(s)).exp() * (m * c).cosh() * 2 * phi(m - Lb)
    return (body + to_ball(0).union(tail)).log()


@dataclass(frozen=True, init=False)
class GaussianMixture(PrivacyPair):
    """Symmetric two-component Gaussian mixture noise (unit variances, means +-m), shift s.

    Domain (work limits, LimitExceeded beyond; a few seconds per integral there): m in [0, 8],
    |shift| in [1e-100, 10], m |shift| <= 40 (log cosh(m x) has singularities pi/(2m) off the
    real axis and the ratio term spans e^{+-m|s|}), and for m > 0 t = order - 1 <= 10^4 with
    t m |shift| <= 10^5 (measured 4 s at (m, shift, order) = (8, 1, 10^4), over 15 s at (8, 5, 10^4)).
    """

    m: Fraction
    shift: Fraction

    mechanism = "gaussian-mixture"
    rho_attained_at_infinity = True

    def __init__(self, m: Number = 1, shift: Number = 1) -> None:
        mv = real("m", m, ge=0)
        if mv > MIX_MAX_M:
            raise work_limit("m", m, MIX_MAX_M, self.mechanism, "log cosh(m x) has singularities pi/(2m) off the axis")
        s = bounded("shift", shift, self.mechanism, nonzero=True)
        if abs(s) > MIX_MAX_SHIFT:
            raise work_limit("shift", shift, MIX_MAX_SHIFT, self.mechanism, "the integrands span e^(+-m shift)")
        if mv * abs(s) > MIX_MAX_PRODUCT:
            raise work_limit(
                "m*|shift|", mv * abs(s), MIX_MAX_PRODUCT, self.mechanism, "the integrands span e^(+-m shift)"
            )
        object.__setattr__(self, "m", mv)
        object.__setattr__(self, "shift", s)

    order_limit_reason = "the integrand's range grows with the order"

    def max_t(self) -> Fraction | None:
        """Contract: None for m = 0 (the Gaussian pair), else the limit of the class docstring."""
        if self.m == 0:
            return None
        return min(Fraction(MIX_MAX_T), MIX_MAX_T_PRODUCT / (self.m * abs(self.shift)))

    def cgf_ball(self, t: Ball) -> Ball:
        """Contract: contains K(t) = t(t+1)s^2/2 + log I(t) for every t > 0 in the ball (module
        docstring; integral with the proved tail, proofs_checks ``mixture_tail``)."""
        require_positive_t(t)
        s = to_ball(self.shift)
        if self.m == 0:
            return t * (t + 1) * s * s / 2  # plain N(0, 1)
        return t * (t + 1) * s * s / 2 + mixture_log_i(to_ball(self.m), s, t)

    def kl_ball(self) -> Ball:
        """Contract: contains KL(P||Q) = s^2/2 + E_{Z~f}[log cosh(mZ) - log cosh(m(Z+s))]
        (E[sZ] = 0 by symmetry); the bracket lies in [-m|s|, m|s|], so the tail beyond |z| > L
        lies in m|s| [-1, 1] 2 Phi(m - L) (f(z) <= phi(|z| - m))."""
        s, m = to_ball(self.shift), to_ball(self.m)
        if self.m == 0:
            return s * s / 2
        L = _length(float(self.m), 0.0)
        norm = 1 / (2 * pi()).sqrt()

        def f(z, analytic):  # noqa: ANN001 - acb callback signature
            dens = norm * ((-(z - m) * (z - m) / 2).exp() + (-(z + m) * (z + m) / 2).exp()) / 2
            lc = (m * z).cosh().log(analytic=analytic) - (m * (z + s)).cosh().log(analytic=analytic)
            return dens * lc

        Lb = to_ball(L)
        body = integrate_real(f, -Lb, Lb, what="gaussian-mixture KL")
        tail = m * abs(s) * 2 * phi(m - Lb)
        return s * s / 2 + body + (-tail).union(tail)

    def loss_cumulants(self) -> tuple[Ball, Ball, Ball, Ball]:
        """Contract: contains (kappa_1, .., kappa_4) of L under P: kappa_1 = KL (:meth:`kl_ball`),
        then the central moments mu_k = int f(x - s)(L(x) - kappa_1)^k dx (k = 2, 3, 4) by
        acb.integral on [-L, L], with L(x) = s x - s^2/2 + log cosh(m(x - s)) - log cosh(m x),
        kappa_2 = mu_2, kappa_3 = mu_3, kappa_4 = mu_4 - 3 mu_2^2. Tails: |L - kappa_1| <= A + B|x|
        with B = |s|, A = s^2/2 + m|s| + |kappa_1|, and f(x - s) <= phi(|x| - c), c = |s| + m, for
        |x| >= c; h = log phi(x - c) + k log(A + Bx) has h' <= -(L - c) + k/L =: -delta < 0 on
        [L, inf), so each tail is at most phi(L - c)(A + BL)^k / delta (both sides: twice that).
        """
        s, m = to_ball(self.shift), to_ball(self.m)
        k1 = self.kl_ball()
        sf, mf = abs(float(self.shift)), float(self.m)
        c = sf + mf
        a_f = sf * sf / 2 + mf * sf + abs(float(k1.mid())) + 1
        bits = (current_prec() + 10) * math.log(2)
        big = c + math.sqrt(2 * (bits + 4 * math.log(a_f + sf * (c + 50)) + 10)) + 2
        norm = 1 / (2 * pi()).sqrt()
        a = s * s / 2 + m * abs(s) + abs(k1)
        out = []
        for k in (2, 3, 4):

            def f(x, analytic, k=k):  # noqa: ANN001 - acb callback signature
                dens = norm * ((-(x - s - m) * (x - s - m) / 2).exp() + (-(x - s + m) * (x - s + m) / 2).exp()) / 2
                lc = (m * (x - s)).cosh().log(analytic=analytic) - (m * x).cosh().log(analytic=analytic)
                return dens * (s * x - s * s / 2 + lc - k1) ** k

            Lb = to_ball(big)
            body = integrate_real(f, -Lb, Lb, what=f"gaussian-mixture loss moment {k}")
            tail = 2 * gaussian_poly_tail(Lb, to_ball(c), a, abs(s), k, "gaussian-mixture cumulants")
            out.append(body + (-tail).union(tail))
        return cumulants_from_central(k1, *out)

    def rho_closed_form(self) -> Ball:
        """Contract: contains rho = s^2/2 (arXiv:2610.02414 Prop. 4.1), attained as t -> inf.

        Proof. Upper: P and Q are the same-weight mixtures of the pairs (N(-m+s,1), N(-m,1)) and
        (N(m+s,1), N(m,1)); (p, q) -> p^a q^{1-a} is jointly convex for a > 1, so
        e^{K(t)} <= max over the two Gaussian pairs = e^{t(t+1)s^2/2}. Lower (the limit):
        on x >= 0 (s > 0; s < 0 by symmetry), f(x - s) >= phi(x - s - m)/2 and f(x) <= phi(x - m),
        so e^{K(t)} >= 2^{-(t+1)} e^{t(t+1)s^2/2} Phi(m + (t+1)s), and
        K(t)/(t(t+1)) >= s^2/2 - log(2)/t + log Phi(m + (t+1)s)/(t(t+1)) -> s^2/2
        (proofs_checks ``mixture_rho_bounds``).
        """
        s = to_ball(self.shift)
        return s * s / 2

    def ratio_witness_at(self, T: Ball) -> Ball:
        """Contract: lower end <= K(T)/(T(T+1)) (the lower bound of :meth:`rho_closed_form`)."""
        s = to_ball(abs(self.shift))
        return s * s / 2 - to_ball(2).log() / T + phi(to_ball(self.m) + (T + 1) * s).log() / (T * (T + 1))
