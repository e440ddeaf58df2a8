"""Student-t noise (arXiv:2610.02414 §4.4; docs/math.md §4.4): Z ~ t_nu, density f(x) = c_nu (1 + x^2/nu)^{-(nu+1)/2},
P = Law(Z + s), Q = Law(Z), nu >= 1.

Substitution x = sqrt(nu) tan(theta) maps the real line onto (-pi/2, pi/2) and makes every
integrand analytic up to the ends, so the heavy tails need no tail bound on x (proofs_checks
``student_t_substitution``):

    f(x) dx = C cos(theta)^{nu-1} d theta,  C = Gamma((nu+1)/2) / (sqrt(pi) Gamma(nu/2)),
    f(x - s)/f(x) = D(theta)^{-a},  a = (nu+1)/2,
    D(theta) = 1 - (s/sqrt(nu)) sin(2 theta) + (s^2/nu) cos(theta)^2 = (nu + (x-s)^2)/(nu + x^2).

Hence L = -a log D and, for any g,

    E_P[g(L)] = C int_{-pi/2}^{pi/2} cos(theta)^{nu-1} D^{-a} g(-a log D) d theta,
    e^{K(t)} = C int cos(theta)^{nu-1} D^{-a(t+1)} d theta.

Range of D (proofs_checks ``student_t_dinf``): with w = s^2/(2 nu), D = 1 + w + w cos(2 theta)
- sqrt(2w) sin(2 theta) ranges over [1 + w - sqrt(w^2 + 2w), 1 + w + sqrt(w^2 + 2w)] =
[e^{-A}, e^{A}], A = acosh(1 + w); so |L| <= D_inf = a acosh(1 + s^2/(2 nu)), attained.

Ends (nu not an integer): cos(theta)^{nu-1} has branch points at +-pi/2, the ends of the
interval; the integrand evaluates it with certdp.enclose.abs_pow, whose non-analytic mode encloses
|cos|^{nu-1} on real balls, so Arb integrates up to the ends with direct bounds there. Nothing of
the real line is left out, so there is no tail term.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from certdp.enclose import Ball, abs_pow, integrate_real, pi, to_ball
from certdp.pairs.base import PrivacyPair, require_positive_t
from certdp.pairs.domain import bounded, work_limit
from certdp.pairs.params import Number, real
from certdp.pairs.tails import cumulants_from_central

#: Work limits of the Student-t pair (class docstring).
T_MAX_NU = 10**5
T_MAX_SHIFT = 10
T_MAX_T = 10**6
T_MAX_T_SHIFT = 10**4


def _student_t_expectation(nu: Fraction, s: Fraction, expo: Ball, g: Callable[[Ball], Ball] | None, what: str) -> Ball:
    """C int_{-pi/2}^{pi/2} cos^{nu-1} D^{-expo} g(log D) d theta (g = 1 when None)."""
    n, sh = to_ball(nu), to_ball(s)
    C = ((n + 1) / 2).gamma() / (pi().sqrt() * (n / 2).gamma())
    r, w2 = sh / n.sqrt(), sh * sh / n
    integer_nu = nu.denominator == 1

    half = pi() / 2

    def f(u, analytic):  # noqa: ANN001 - acb callback signature
        # theta = (pi/2) u: exact ends u = +-1 (Arb need not integrate between ball ends)
        th = half * u
        c = th.cos()
        logd = (1 - r * (2 * th).sin() + w2 * c * c).log(analytic=analytic)
        weight = c ** int(nu - 1) if integer_nu else abs_pow(c, n - 1, analytic)
        val = half * weight * (-expo * logd).exp()
        return val if g is None else val * g(logd)

    return C * integrate_real(f, to_ball(-1), to_ball(1), what=what)


@dataclass(frozen=True, init=False)
class StudentT(PrivacyPair):
    """Student-t noise with nu >= 1 degrees of freedom (unit scale) and shift s.

    K(t) and the loss moments are integrals after the substitution of the module docstring;
    D_inf = (nu+1)/2 acosh(1 + s^2/(2 nu)) is finite, so rho is certified by the search with the
    bounded-loss tail K(t)/(t(t+1)) <= D_inf/(t+1) (arXiv:2610.02414 §4.4: rho = KL for small shifts).

    Domain (work limits, LimitExceeded beyond; measured at a few seconds per integral there):
    nu in [1, 10^5] (the weight cos^{nu-1} narrows as nu grows), |shift| in [1e-100, 10] (the
    integrand peaks where D ~ 1/shift^2), t = order - 1 <= min(10^6, 10^4/|shift|) (D^{-a(t+1)}
    sharpens with t |shift|: measured 5 s at (shift, order) = (10, 1000), over 15 s at (1, 10^6)).
    """

    nu: Fraction
    shift: Fraction

    mechanism = "student-t"

    def __init__(self, nu: Number = 3, shift: Number = 1) -> None:
        v = real("nu", nu, ge=1)
        if v > T_MAX_NU:
            raise work_limit("nu", nu, T_MAX_NU, self.mechanism, "the weight cos^(nu-1) narrows as nu grows")
        object.__setattr__(self, "nu", v)
        s = bounded("shift", shift, self.mechanism, nonzero=True)
        if abs(s) > T_MAX_SHIFT:
            raise work_limit(
                "shift", shift, T_MAX_SHIFT, self.mechanism, "the integrand peaks sharply for large shifts"
            )
        object.__setattr__(self, "shift", s)

    order_limit_reason = "the integrand D^(-(nu+1)(t+1)/2) sharpens as the order grows"

    def max_t(self) -> Fraction:
        """Contract: min(T_MAX_T, T_MAX_T_SHIFT/|shift|) (class docstring)."""
        return min(Fraction(T_MAX_T), T_MAX_T_SHIFT / abs(self.shift))

    def _a(self) -> Ball:
        return (to_ball(self.nu) + 1) / 2

    def cgf_ball(self, t: Ball) -> Ball:
        """Contract: contains K(t) = log C int cos^{nu-1} D^{-(nu+1)(t+1)/2} d theta for every t > 0
        in the ball: acb.integral over the whole of (-pi/2, pi/2) (log and pow with Arb's
        analyticity flag; the ends as in the module docstring) (proofs_checks ``student_t_substitution``)."""
        require_positive_t(t)
        return _student_t_expectation(self.nu, self.shift, self._a() * (t + 1), None, "student-t CGF").log()

    def kl_ball(self) -> Ball:
        """Contract: contains KL = E_P L = C int cos^{nu-1} D^{-a} (-a log D) d theta; |L| <= D_inf
        (module docstring; proofs_checks ``student_t_substitution``)."""
        a = self._a()
        return _student_t_expectation(self.nu, self.shift, a, lambda logd: -a * logd, "student-t KL")

    def loss_cumulants(self) -> tuple[Ball, Ball, Ball, Ball]:
        """Contract: contains (kappa_1, .., kappa_4) of L under P: kappa_1 = KL, central moments
        mu_k = E_P (L - kappa_1)^k by the integral of the module docstring; kappa_2 = mu_2, kappa_3 = mu_3,
        kappa_4 = mu_4 - 3 mu_2^2."""
        a, k1 = self._a(), self.kl_ball()
        mus = []
        for k in (2, 3, 4):
            mus.append(
                _student_t_expectation(
                    self.nu,
                    self.shift,
                    a,
                    lambda logd, k=k: (-a * logd - k1) ** k,
                    f"student-t loss moment {k}",
                )
            )
        return cumulants_from_central(k1, *mus)

    def tilted_square_moment(self, t: Ball, c: Ball) -> Ball:
        """Contract: contains N(t) = E_P[e^{tL}(L - c)^2] = C int cos^{nu-1} D^{-a(t+1)} (-a log D - c)^2
        d theta (module docstring; used by PrivacyPair.curvature_upper)."""
        a = self._a()
        return _student_t_expectation(
            self.nu, self.shift, a * (t + 1), lambda logd: (-a * logd - c) ** 2, "student-t curvature"
        )

    def max_loss_ball(self) -> Ball:
        """Contract: contains D_inf = ess sup |L| = (nu+1)/2 acosh(1 + s^2/(2 nu)) (range of D in the
        module docstring; proofs_checks ``student_t_dinf``)."""
        n, s = to_ball(self.nu), to_ball(self.shift)
        return self._a() * (1 + s * s / (2 * n)).acosh()
