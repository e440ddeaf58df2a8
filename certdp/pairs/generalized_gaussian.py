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

from certdp.enclose import Ball, abs_pow, current_prec, integrate_real, log1p_ratio, to_ball, workprec
from certdp.errors import PrecisionExhausted
from certdp.pairs.additive import Gaussian, Laplace
from certdp.pairs.base import PrivacyPair, require_positive_t
from certdp.pairs.domain import bounded, work_limit
from certdp.pairs.params import Number, real
from certdp.pairs.tails import cumulants_from_central

#: Work limits of the generalized-Gaussian pair (class docstring): |shift|, and the largest
#: exponent of the CGF integrand (about K(t)), which sets the integrals' cost
GG_MAX_SHIFT = 30
GG_MAX_PEAK = 1 << 18
#: ... and t |shift|, the length of the integration range (near beta = 1 the integrand decays
#: slowly along it: beta = 1.000001, shift 1 took 9.7 s at t |shift| = 2^15)
GG_MAX_T_SHIFT = 1 << 14


def peak_exponent(beta: float, s: float, t: float) -> float:
    """max over x of (t |x|^beta - (t+1) |x - s|^beta)/beta for 1 < beta, s > 0, t > 0: at the
    stationary point x* = s/(1 - r), r = (t/(t+1))^(1/(beta-1)), written without cancellation
    (a float estimate of K(t) that only sets a work limit).

    Contract: a float near that maximum (t s^beta/beta where x* = s to float precision; inf on
    overflow); not an enclosure: it only sets work limits and tolerances."""
    if t < 1e-12 or beta - 1 < 1e-12:  # x* = s to float precision (1/t or 1/(beta-1) overflow)
        return t * s**beta / beta
    try:
        r = math.exp(-math.log1p(1 / t) / (beta - 1))
        y = s * r / -math.expm1(-math.log1p(1 / t) / (beta - 1))  # x* - s
        if y == 0:  # beta near 1: x* = s to float precision, where the exponent is t s^beta/beta
            return t * s**beta / beta
        return (t * y**beta * math.expm1(beta * math.log1p(s / y)) - y**beta) / beta
    except OverflowError:
        return math.inf


def _order_limit(beta: float, s: float) -> float:
    """The largest t (a float, bisected in log t) with peak_exponent <= GG_MAX_PEAK and
    t s <= GG_MAX_T_SHIFT."""
    lo, hi = 1e-6, min(1e12, GG_MAX_T_SHIFT / s)
    if peak_exponent(beta, s, hi) <= GG_MAX_PEAK:
        return hi
    for _ in range(80):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if peak_exponent(beta, s, mid) <= GG_MAX_PEAK else (lo, mid)
    return lo


# Integrand in terms of B = |x - s|^beta and D = |x|^beta - |x - s|^beta (so L = D / beta).
Kernel = Callable[[Ball, Ball], Ball]


def _dyadic_floor(s: Fraction) -> Fraction:
    """The largest power of two <= s (s > 0): an exact split point near the shift."""
    w = Fraction(2) ** (s.numerator.bit_length() - s.denominator.bit_length())
    while w > s:
        w /= 2
    while 2 * w <= s:
        w *= 2
    return w


def _pieces_integral(
    beta: Fraction, s: Fraction, make_kernel: Callable[[Ball], Kernel], X: float, what: str, peak: float
) -> Ball:
    """int kernel(B, D) dx over [-X, s + X] (s > 0), B = |x - s|^beta, D = |x|^beta - B, in five
    analytic pieces with exact ends (Arb never integrates between ball ends) and the branch points
    at ends: x = -y for y in [0, w] and [w, X]; x = s u for u in [0, 1]; x = s + v for v in [0, w]
    and [w, X], where w = 2^floor(log2 s) <= s.

    Why five: far from the shift, |x|^beta and |x - s|^beta are large and nearly equal, and the
    kernels weigh their difference by t. Subtracting two balls there loses a factor ~t x / s of
    width on Arb's complex boxes (and costs that many subintervals), so on [w, X] the difference
    is formed without cancellation: for z >= w > 0, (z + s)^beta - z^beta = z^beta expm1(beta
    log1p(s/z)) (an identity for z > 0).

    ``peak`` is a float estimate of the kernel's largest exponent (0 for the moments): the
    integrals are evaluated log2|peak| + 8 bits above the working precision, at a relative
    tolerance of 2^-(working precision) and an absolute one of that times e^peak 2^-20 (an
    integral of a peak of height e^peak is rarely below that; certdp.enclose.integrate_real);
    ``make_kernel(beta ball)`` builds the kernel at that precision."""
    prec = current_prec()
    peak = min(peak, 1e12)  # beyond any work limit (an overflowed estimate is inf)
    guard = math.ceil(math.log2(2 + abs(peak))) + 8
    with workprec(prec + guard):
        scale = (to_ball(Fraction(peak)) - 14).exp()
        return _pieces_at(beta, s, make_kernel, X, what, prec, scale)


def _pieces_at(
    beta: Fraction, s: Fraction, make_kernel: Callable[[Ball], Kernel], X: float, what: str, tol: int, scale: Ball
) -> Ball:
    b, sh, Xb = to_ball(beta), to_ball(s), to_ball(X)
    kernel = make_kernel(b)
    w = to_ball(_dyadic_floor(s))

    def left_near(y, analytic):  # noqa: ANN001 - acb callback signature (x = -y)
        A, B = abs_pow(y, b, analytic, 1), abs_pow(y + sh, b, analytic, 1)
        return kernel(B, A - B)

    def left_far(y, analytic):  # noqa: ANN001 - acb callback signature (x = -y, y >= w)
        A = abs_pow(y, b, analytic, 1)
        grow = (b * log1p_ratio(sh, y, analytic)).expm1()  # (y + s)^beta = A (1 + grow)
        return kernel(A + A * grow, -(A * grow))

    def middle(u, analytic):  # noqa: ANN001 - acb callback signature (x = s u)
        A, B = abs_pow(sh * u, b, analytic, 1), abs_pow(sh * (u - 1), b, analytic, -1)
        return sh * kernel(B, A - B)

    def right_near(v, analytic):  # noqa: ANN001 - acb callback signature (x = s + v)
        A, B = abs_pow(sh + v, b, analytic, 1), abs_pow(v, b, analytic, 1)
        return kernel(B, A - B)

    def right_far(v, analytic):  # noqa: ANN001 - acb callback signature (x = s + v, v >= w)
        B = abs_pow(v, b, analytic, 1)
        return kernel(B, B * (b * log1p_ratio(sh, v, analytic)).expm1())

    zero, one = to_ball(0), to_ball(1)
    return (
        integrate_real(left_near, zero, w, what=what, tol_bits=tol, max_intervals=32 * tol, scale=scale)
        + integrate_real(left_far, w, Xb, what=what, tol_bits=tol, max_intervals=32 * tol, scale=scale)
        + integrate_real(middle, zero, one, what=what, tol_bits=tol, max_intervals=32 * tol, scale=scale)
        + integrate_real(right_near, zero, w, what=what, tol_bits=tol, max_intervals=32 * tol, scale=scale)
        + integrate_real(right_far, w, Xb, what=what, tol_bits=tol, max_intervals=32 * tol, scale=scale)
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

    Domain (work limits, LimitExceeded beyond): |shift| in [1e-100, 30], and for 1 < beta < 2
    orders with peak_exponent(beta, shift, t) <= GG_MAX_PEAK = 2^18, the largest exponent of
    the CGF integrand (about K(t)), and t |shift| <= GG_MAX_T_SHIFT = 2^14. The cost grows with
    that exponent, not with t alone: measured about
    4 s per order at the limit, e.g. (beta, shift, order) = (1.99, 1, 733), (1.99, 30, 24),
    (1.5, 30, 218), (1.2, 30, 1598), (1.5, 0.01, 655186); 17 s at 2^20. beta = 1 and 2 are the
    closed-form pairs and have no order limit. Real-order searches (rho, epsilon, delta) that
    would probe beyond the limit raise LimitExceeded: pass explicit orders then.
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

    order_limit_reason = "the integrand's largest exponent, about K(t), sets the integrals' cost"

    def max_t(self) -> Fraction | None:
        """Contract: None at beta = 1, 2 (closed forms), else a t with
        peak_exponent(beta, |shift|, t) <= GG_MAX_PEAK and t |shift| <= GG_MAX_T_SHIFT (class
        docstring)."""
        if self.closed_form_pair() is not None:
            return None
        return Fraction(_order_limit(float(self.beta), float(abs(self.shift))))

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
        with the proved tails (proofs_checks ``ggauss_tails``). An inexact t is replaced by its
        exact ends (K increases on t > 0: K' >= K'(0) = KL >= 0 by convexity), so that the
        integrand carries no input radius that the guard bits could not remove."""
        if not t.is_exact():
            return self.cgf_integral(to_ball(t.lower())).union(self.cgf_integral(to_ball(t.upper())))
        s = abs(self.shift)
        bf, sf, tf = float(self.beta), float(s), float(t.upper())
        prec = current_prec()
        X = _length(bf, prec + 10, max(2 * (tf + 1) * bf * sf, sf) + 1)

        def make_kernel(b: Ball) -> Kernel:
            # (t A - (t+1) B)/beta = (t D - B)/beta: no difference of the large A and B
            return lambda B, D: ((t * D - B) / b).exp()

        peak = peak_exponent(bf, sf, tf) if bf > 1 else tf * sf
        body = _pieces_integral(self.beta, s, make_kernel, X, "generalized-gaussian CGF", peak)
        b = to_ball(self.beta)
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

        def make_kernel(bb: Ball) -> Kernel:
            return lambda B, D: (-B / bb).exp() * g(D / bb)

        body = _pieces_integral(self.beta, s, make_kernel, X, what, 0.0)
        Y = to_ball(X) - sh
        delta = Y ** (b - 1) - to_ball(k) / Y
        if not delta > 0:
            raise PrecisionExhausted(f"{what}: tail length too short")
        tail = 2 * (-(Y**b) / b).exp() * (a + 2 * sh * sh + sh * Y) ** k / delta
        return self._c() * (body + (-tail).union(tail))

    def tilted_square_moment(self, t: Ball, c0: Ball) -> Ball:
        """Contract: contains N(t) = E_P[e^{tL}(L - c0)^2] (any beta in [1, 2]): the integral of the
        module docstring with its proved tail (used by PrivacyPair.curvature_upper)."""
        s = abs(self.shift)
        bf, sf, tf = float(self.beta), float(s), float(t.upper())
        prec = current_prec()
        af = abs(float(c0.mid())) + sf * sf + 1
        X = _length(bf, prec + 10 + 2 * math.log2(af + sf * 100), max(2 * (tf + 1) * bf * sf, sf) + 8)
        b, sh = to_ball(self.beta), to_ball(s)

        def make_kernel(bb: Ball) -> Kernel:
            return lambda B, D: ((t * D - B) / bb).exp() * (D / bb - c0) ** 2

        peak = peak_exponent(bf, sf, tf) if bf > 1 else tf * sf
        body = _pieces_integral(self.beta, s, make_kernel, X, "generalized-gaussian curvature", peak)
        Xb = to_ball(X)
        delta = Xb ** (b - 1) / 2 - 2 / Xb
        if not delta > 0:
            raise PrecisionExhausted("generalized-gaussian curvature: tail length too short")
        tail = 2 * (-(Xb**b) / (2 * b)).exp() * (abs(c0) + sh * sh + sh * Xb) ** 2 / delta
        return self._c() * (body + to_ball(0).union(tail))

    def curvature_upper(self, a: float, b: float) -> Ball | None:
        """Contract: upper end >= sup_{a<=t<=b} K''(t): the closed-form pairs' bound at beta = 1, 2,
        else PrivacyPair.curvature_upper with :meth:`tilted_square_moment`."""
        closed = self.closed_form_pair()
        return closed.curvature_upper(a, b) if closed is not None else super().curvature_upper(a, b)

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
