"""Poisson-subsampled Gaussian (DP-SGD): P = (1-q) N(0, z^2) + q N(1, z^2), Q = N(0, z^2).

``direction`` selects the divergence: ``remove`` is D(P||Q), ``add`` is D(Q||P), ``both`` is
the larger of the two at each order (K = max of the two CGFs, sound for either neighbour).
Integer orders use the exact binomial sum (remove); every other case is a rigorous integral with
analytic tail bounds. Conversions default to a named integer-order grid (``grid_by_default``),
as peer accountants do, so that results compare like for like; pass real orders explicitly.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from certdp.enclose import Ball, binomial, current_prec, integrate_real, phi, pi, to_ball, workprec
from certdp.enclose.taylor import Series, taylor_values
from certdp.errors import PrecisionExhausted, Unsupported, invalid
from certdp.pairs.base import PrivacyPair, require_positive_t
from certdp.pairs.domain import bounded
from certdp.pairs.params import Number
from certdp.pairs.tails import cumulants_from_central, gaussian_poly_tail

if TYPE_CHECKING:
    import numpy as np

DIRECTIONS = ("remove", "add", "both")
#: Largest integer order evaluated by the exact binomial sum (remove) and the meromorphic
#: integral (add): the sum costs O(alpha) ball operations, about 0.1 s at 10^4 and seconds at
#: 10^6; larger integer orders use the integrals of :meth:`SubsampledGaussian._moment_real`,
#: which cost about the same at any order.
MAX_SUM_ORDER = 10_000
#: Largest order evaluated (class docstring).
MAX_ORDER = 10**8
#: Smallest sigma (below it the loss is astronomically large and the tails' floats degenerate).
MIN_SIGMA = Fraction(1, 10**4)


@functools.lru_cache(maxsize=64)
def _tail_constants(qn: int, qd: int, sn: int, sd: int, prec: int) -> tuple[Ball, Ball, Ball, Ball, Ball]:
    """Balls of q = qn/qd, 1 - q (exact complement), sigma^2 (sigma = sn/sd), 1/2 and
    1/(sigma sqrt 2) at ``prec`` bits (loss_tail runs once per lattice point: converting the
    Fractions, and sqrt 2, every time took about half of its time)."""
    q, sigma = Fraction(qn, qd), Fraction(sn, sd)
    with workprec(prec):
        z = to_ball(sigma)
        return to_ball(q), to_ball(1 - q), z * z, to_ball(Fraction(1, 2)), 1 / (z * to_ball(2).sqrt())


@dataclass(frozen=True, init=False)
class SubsampledGaussian(PrivacyPair):
    """Poisson-subsampled Gaussian with sampling rate q in (0, 1] and noise multiplier sigma.

    Domain: q in [1e-100, 1], sigma in [1e-4, 1e100] (InvalidArgument outside), orders up to
    MAX_ORDER = 1e8 (LimitExceeded beyond: the integrals' float truncation lengths lose their
    precision). Integer orders up to MAX_SUM_ORDER use the exact sum (remove) or the meromorphic
    integral (add); larger and real orders use :meth:`_moment_real`, which costs about 0.1 s at
    any order thanks to the knee split and the normalisations documented there.
    """

    q: Fraction
    sigma: Fraction
    direction: str

    mechanism = "subsampled-gaussian"
    grid_by_default = True

    @property
    def rho_attained_at_infinity(self) -> bool:  # type: ignore[override]
        """Contract: True for remove and both, and for add at q = 1 (proof in rho_closed_form)."""
        return self.direction != "add" or self.q == 1

    order_limit_reason = "the integrals' float truncation lengths lose precision beyond it"

    def max_t(self) -> Fraction:
        """Contract: MAX_ORDER - 1 (class docstring)."""
        return Fraction(MAX_ORDER - 1)

    def __init__(self, q: Number, sigma: Number, direction: str = "both") -> None:
        object.__setattr__(self, "q", bounded("q", q, self.mechanism, gt=0, le=1))
        object.__setattr__(self, "sigma", bounded("sigma", sigma, self.mechanism, gt=0, low=MIN_SIGMA))
        if direction not in DIRECTIONS:
            raise invalid("direction", direction, f"must be one of {', '.join(DIRECTIONS)}")
        object.__setattr__(self, "direction", direction)

    # -- remove direction: exact finite sum ---------------------------------------------------
    def _cgf_remove(self, alpha: int) -> Ball:
        """K(alpha-1) for D(P||Q): log1p(sum_{k>=2} C(alpha,k)(1-q)^{alpha-k} q^k expm1(k(k-1)/(2 z^2))).

        Contract: exact finite sum (docs/math.md §4.7, binomial expansion; proofs_checks
        ``subsampled_binomial``, ``subsampled_k1``). The
        k = 0, 1 terms have expm1(0) = 0 and the binomial weights sum to 1, so this is
        log of the sum in docs/math.md §4.7, kept free of cancellation for small q.
        """
        q = to_ball(self.q)
        qc = to_ball(1 - self.q)  # exact complement (q near 1 must not round 1 - q to 0)
        h = 1 / (2 * to_ball(self.sigma) ** 2)
        if self.q == 1:  # only the k = alpha term: the Gaussian pair
            return h * (alpha * (alpha - 1))
        p = qc
        # weights w_k = C(alpha, k) p^(alpha-k) q^k by the exact ratio w_k / w_(k-1) =
        # (alpha-k+1)/k * q/p, in ball arithmetic (each step a ball operation, so the result
        # still contains the sum; O(alpha) operations instead of alpha big binomials)
        ratio = q / p
        w = binomial(alpha, 2) * p ** (alpha - 2) * q * q
        acc = w * (h * 2).expm1()
        for k in range(3, alpha + 1):
            w = w * ratio * (alpha - k + 1) / k
            acc += w * (h * (k * (k - 1))).expm1()
        return acc.log1p()

    # -- integrals: the knee split --------------------------------------------------------------
    def _neg_log1m_q(self) -> float:
        """-log(1 - q) as a float from the exact q (inf at q = 1; no float rounding of q to 1.0)."""
        if self.q == 1:
            return math.inf
        r = 1 - self.q
        return math.log(r.denominator) - math.log(r.numerator)

    def _knee(self) -> float:
        """The g0 where q W(g0) = 1 - q (a float: any split point is valid, see _integrate_split)."""
        r = 1 - self.q
        zf = float(self.sigma)
        log_ratio = (
            math.log(r.numerator) - math.log(r.denominator) - math.log(self.q.numerator) + math.log(self.q.denominator)
        )
        return zf * log_ratio + 1 / (2 * zf)

    def _integrate_split(self, make: Callable[[Ball, Ball, Ball], Ball], a: float, b: float, what: str) -> Ball:
        """int_a^b make(phi(g), phi(g) rho(g), log rho(g)) dg for q < 1, split at the knee g0 (q W(g0) = 1 - q).

        rho = 1 - q + q W, W = e^{g/z - 1/(2z^2)}. On the left piece log rho is Arb's log with the
        analyticity flag; on the right piece it is written log q + (g/z - 1/(2z^2)) + log(1 + u),
        u = (1-q)/(q W): the same function on the real line (W > 0), but its only singularities
        (1 + u on the negative real axis, i.e. |u| >= 1) lie near Re g <= g0, whereas the plain
        log has a branch cut along Im g = +-pi z for every Re g > g0. Arb's integrator needs
        subintervals narrower than the distance to a singularity, so the plain form cost
        (R - g0)/(pi z) of them: seconds to minutes for small sigma or large orders. Any float
        split point is valid: each form is the exact function on the real line and each piece is
        checked for analyticity by Arb (flag forwarded to log). On the right piece phi(g) rho is
        written q phi(g - 1/z) (1 + u) (phi(g) W = phi(g - 1/z)), which stays of moderate size on
        complex balls where phi(g) and W separately are huge and tiny.
        """
        q = to_ball(self.q)
        qc = to_ball(1 - self.q)  # exact complement (q near 1 must not round 1 - q to 0)
        z = to_ball(self.sigma)
        shift = 1 / (2 * z * z)
        logq = q.log()
        norm = 1 / (2 * pi()).sqrt()

        def left(g, analytic):  # noqa: ANN001 - acb callback signature
            rho = qc + q * (g / z - shift).exp()
            dens = norm * (-g * g / 2).exp()
            return make(dens, dens * rho, rho.log(analytic=analytic))

        def right(g, analytic):  # noqa: ANN001 - acb callback signature
            e = g / z - shift
            u = qc * (-e).exp() / q
            lg = logq + e + (1 + u).log(analytic=analytic)
            d = g - 1 / z
            return make(norm * (-g * g / 2).exp(), q * norm * (-d * d / 2).exp() * (1 + u), lg)

        k = self._knee()
        if not k > a:
            return integrate_real(right, to_ball(a), to_ball(b), what=what)
        if not k < b:
            return integrate_real(left, to_ball(a), to_ball(b), what=what)
        return integrate_real(left, to_ball(a), to_ball(k), what=what) + integrate_real(
            right, to_ball(k), to_ball(b), what=what
        )

    # -- add direction: rigorous integral -----------------------------------------------------
    def _cgf_add(self, alpha: int) -> Ball:
        """K(alpha-1) for D(Q||P) = log E_{G~N(0,1)}[rho(G)^{-(alpha-1)}], rho(g) = 1-q+q e^{g/z - 1/(2z^2)}.

        Contract: the integrand is meromorphic (integer power), integrated over [-L, L] by
        acb.integral. Tails: rho >= 1-q everywhere and rho >= 1 for g >= 1/(2z), so the left
        tail lies in [0, (1-q)^{-(alpha-1)} Phi(-L)] and the right tail in [0, Phi(-L)], with
        L >= 1/(2z). The expectation is >= 1 (Jensen: x^{-m} convex, E rho = 1), so K >= 0.
        q = 1 is the Gaussian pair (P = N(1, z^2), Q = N(0, z^2)): K = m(m+1)/(2 z^2).
        """
        m = alpha - 1
        q = to_ball(self.q)
        qc = to_ball(1 - self.q)  # exact complement (q near 1 must not round 1 - q to 0)
        z = to_ball(self.sigma)
        if self.q == 1:
            return m * (m + 1) / (2 * z * z)
        zf = float(self.sigma)
        prec = current_prec()
        lead = m * self._neg_log1m_q()  # log of the left tail factor (1-q)^{-m}, from the exact q
        L = max(1 / (2 * zf) + 1, math.sqrt(2 * ((prec + 10) * math.log(2) + lead)) + 1)
        shift = 1 / (2 * z * z)
        norm = 1 / (2 * pi()).sqrt()

        def f(g, analytic):  # noqa: ANN001 - acb callback signature
            rho = qc + q * (g / z - shift).exp()
            return norm * (-g * g / 2).exp() * rho ** (-m)

        Lb = to_ball(L)
        body = integrate_real(f, -Lb, Lb, what="subsampled-gaussian add-direction CGF")
        tail_mass = phi(-Lb)
        tail = to_ball(0).union((qc ** (-m) + 1) * tail_mass)
        return (body + tail).log()

    def _log_peak(self, p: float, a: float, b: float) -> float:
        """Float maximum over [a, b] of h(g) = -g^2/2 + p log rho(g) for p <= 0 (h is concave:
        (log rho)'' >= 0), by golden-section search; only a normalising constant, never certified.
        """
        zf = float(self.sigma)
        log_q = math.log(self.q.numerator) - math.log(self.q.denominator)
        log_r = -self._neg_log1m_q()
        shift = 1 / (2 * zf * zf)

        def h(g: float) -> float:
            x, y = log_r, log_q + g / zf - shift
            hi, lo = max(x, y), min(x, y)
            return -g * g / 2 + p * (hi + math.log1p(math.exp(lo - hi)))

        golden = (math.sqrt(5) - 1) / 2
        lo, hi = a, b
        for _ in range(200):
            if not hi - lo > 1e-9 * max(1.0, abs(lo), abs(hi)):
                break
            m1, m2 = hi - golden * (hi - lo), lo + golden * (hi - lo)
            if h(m1) < h(m2):
                lo = m1
            else:
                hi = m2
        return max(h(lo), h(hi), h(a), h(b))

    def _moment_real(self, power: Ball) -> Ball:
        """E_{G~N(0,1)}[rho(G)^power] for a real exponent, rho(g) = 1 - q + q W(g), W = e^{g/z - 1/(2z^2)}.

        Contract: contains the expectation for every power p in the ball (q < 1), integrated on
        [-L, R] in the two pieces of :meth:`_integrate_split`, split at the knee g0: left,
        (1-q)^p phi(g) exp(p log(1 + v)), v = q W/(1-q) (rho = (1-q)(1 + v)); right,
        C phi(g - p/z) exp(p log(1 + u)), u = (1-q)/(q W), C = q^p e^{p(p-1)/(2 z^2)}
        (phi(g) (q W)^p = C phi(g - p/z), completing the square) for p > 0, and for p <= 0
        phi(g) exp(p (log q + log W + log(1 + u))) (rho^p <= 1 there, and factoring out C would turn
        Arb's absolute tolerance into a huge error). Arb's log carries the
        analyticity flag; 1 + v and 1 + u reach the branch cut only near the knee (|v|, |u| < 1
        on their pieces). With the constant factors outside, each integrand is of moderate size
        (at most 2^|p| relative to its factor) instead of e^{p(p-1)/(2 z^2)} or (1-q)^p, which made
        Arb's error bounds on complex balls useless at large orders. Tails (both >= 0):
        left, g <= -L <= 0: rho in [1-q, 1], so rho^p <= max(1, (1-q)^p) and the tail is at most
        that times Phi(-L); right, g >= R >= 1/(2z): rho <= W when W >= 1, so for p > 0
        rho^p <= W^p and the tail is at most e^{p(p-1)/(2z^2)} Phi(-(R - p/z)) (completing the
        square), and for p < 0, rho >= 1 gives rho^p <= 1 and the tail is at most Phi(-R).
        R - p/z >= sqrt(2 (bits + p log(1/q))) makes the right tail 2^-bits of C, and the
        integral is at least about C (the mass of phi(g - p/z) right of the knee).
        """
        q = to_ball(self.q)
        qc = to_ball(1 - self.q)  # exact complement (q near 1 must not round 1 - q to 0)
        z = to_ball(self.sigma)
        zf, pf = float(self.sigma), float(power.mid())
        prec = current_prec()
        bits = (prec + 10) * math.log(2)
        # left tail factor max(1, (1-q)^p): log (1-q)^p = -p (-log(1-q)), > 0 only for p < 0
        low_factor = max(0.0, -pf * self._neg_log1m_q())
        log_inv_q = math.log(self.q.denominator) - math.log(self.q.numerator)
        L = math.sqrt(2 * (bits + low_factor)) + 1
        R = max(1 / (2 * zf), max(pf, 0.0) / zf) + math.sqrt(2 * (bits + max(pf, 0.0) * log_inv_q)) + 1
        norm = 1 / (2 * pi()).sqrt()
        shift = 1 / (2 * z * z)
        center = power / z
        knee = self._knee()

        # p <= 0: phi(g) rho^p is log-concave (log rho is convex), with its peak left of the knee
        # and a value up to (1-q)^p e^{-g*^2/2}; the left integrand is divided by e^c, c the float
        # maximum of its log (any constant c is exact: e^c is multiplied back as a ball), so that it
        # peaks at about 1 (for p > 0 the factor (1-q)^p does this; see the docstring)
        peak = 0.0 if pf > 0 else self._log_peak(pf, -L, min(max(knee, -L), R))

        def left_f(g, analytic):  # noqa: ANN001 - acb callback signature
            v = q * (g / z - shift).exp() / qc
            lead = 0 if pf > 0 else power * qc.log() - peak
            return norm * (-g * g / 2 + lead + power * (1 + v).log(analytic=analytic)).exp()

        def right_f(g, analytic):  # noqa: ANN001 - acb callback signature
            u = qc * (shift - g / z).exp() / q
            d = g - center
            return norm * (-d * d / 2 + power * (1 + u).log(analytic=analytic)).exp()

        def right_plain(g, analytic):  # noqa: ANN001 - acb callback signature
            e = g / z - shift
            u = qc * (-e).exp() / q
            return norm * (-g * g / 2 + power * (q.log() + e + (1 + u).log(analytic=analytic))).exp()

        what = f"subsampled-gaussian moment {pf:g}"
        body = to_ball(0)
        split = min(max(knee, -L), R)
        if split > -L:
            factor = (power * qc.log()).exp() if pf > 0 else to_ball(peak).exp()
            body += factor * integrate_real(left_f, to_ball(-L), to_ball(split), what=what)
        if split < R and pf > 0:
            c = (power * q.log() + power * (power - 1) * shift).exp()
            body += c * integrate_real(right_f, to_ball(split), to_ball(R), what=what)
        elif split < R:  # p <= 0: rho^p <= 1 right of the knee, nothing to factor out
            body += integrate_real(right_plain, to_ball(split), to_ball(R), what=what)
        left_factor = to_ball(1).max(qc**power)
        left = left_factor * phi(to_ball(-L))
        if pf > 0:
            right = (power * (power - 1) / (2 * z * z)).exp() * phi(-(to_ball(R) - power / z))
        else:
            right = phi(to_ball(-R))
        return body + to_ball(0).union(left + right)

    def cgf_ball(self, t: Ball) -> Ball:
        """Contract: contains K(t) of the chosen direction for every t > 0 in the ball: the exact
        binomial sum at integer t (remove), else log of the integral of :meth:`_moment_real`
        (remove: exponent t+1; add: exponent -t, as D(Q||P) = log E_Q[rho^{-t}]/t)."""
        require_positive_t(t)
        self.check_order(t)
        if self.q == 1:  # P = N(1, z^2), Q = N(0, z^2): the Gaussian pair in either direction
            return t * (t + 1) / (2 * to_ball(self.sigma) ** 2)
        if t.is_exact() and t.is_integer() and t + 1 <= MAX_SUM_ORDER:
            alpha = int(t.unique_fmpz()) + 1
            if self.direction == "remove":
                return self._cgf_remove(alpha)
            if self.direction == "add":
                return self._cgf_add(alpha)
            return self._cgf_remove(alpha).max(self._cgf_add(alpha))
        remove = lambda: self._moment_real(t + 1).log()  # noqa: E731
        add = lambda: self._moment_real(-t).log()  # noqa: E731
        if self.direction == "remove":
            return remove()
        if self.direction == "add":
            return add()
        return remove().max(add())

    def loss_cumulants(self) -> tuple[Ball, Ball, Ball, Ball]:
        """Contract: contains kappa_1..kappa_4 of the loss of the chosen direction (remove:
        L = log rho under P, E_P h(L) = E_G[rho h(log rho)]; add: L = -log rho under Q,
        E_Q h(L) = E_G[h(-log rho)]), kappa_1 = KL, kappa_2..3 central moments, kappa_4 = mu_4 - 3 mu_2^2.
        Central moments by acb.integral on [-L, L]; tails: log(1-q) <= log rho <= max(0, g/z), so
        |L - kappa_1| <= A + |g|/z with A = -log(1-q) + |kappa_1|; the weight is at most
        phi(g) + phi(g - 1/z) <= 2 phi(|g| - 1/z) for |g| >= 1/z (rho <= 1 + W, W phi(g) = phi(g - 1/z));
        so both tails together are at most 4 phi(L - c)(A + L/z)^k/delta, c = 1/z,
        delta = (L - c) - k/L > 0 (log-slope bound, as for the Gaussian mixture). ``both`` has no
        single loss: Unsupported. q = 1: P = N(1, z^2) and Q = N(0, z^2), so either direction is
        the Gaussian pair (cumulants c, 2c, 0, 0 with c = 1/(2 z^2)). The integrals are split at
        the knee (:meth:`_integrate_split`)."""
        if self.direction == "both":
            raise Unsupported("subsampled-gaussian: loss cumulants need one direction (remove or add), not both")
        z = to_ball(self.sigma)
        if self.q == 1:
            c = 1 / (2 * z * z)
            return c, 2 * c, to_ball(0), to_ball(0)
        qc = to_ball(1 - self.q)  # exact complement (q near 1 must not round 1 - q to 0)
        k1 = self._kl(self.direction)
        zf = float(self.sigma)
        a = -qc.log() + abs(k1)
        af = self._neg_log1m_q() + abs(float(k1.mid())) + 1
        bits = (current_prec() + 10) * math.log(2)
        c = 1 / zf
        big = c + math.sqrt(2 * (bits + 4 * math.log(af + (c + 50) / zf) + 10)) + 4 + c
        remove = self.direction == "remove"
        out = []
        for k in (2, 3, 4):

            def f(dens: Ball, dens_rho: Ball, lg: Ball, k: int = k) -> Ball:
                weight = dens_rho if remove else dens
                return weight * ((lg if remove else -lg) - k1) ** k

            Lb = to_ball(big)
            body = self._integrate_split(f, -big, big, f"subsampled-gaussian loss moment {k}")
            tail = 4 * gaussian_poly_tail(Lb, 1 / z, a, 1 / z, k, "subsampled-gaussian cumulants")
            out.append(body + (-tail).union(tail))
        return cumulants_from_central(k1, *out)

    def loss_tail(self, ell: Ball) -> tuple[Ball, Ball]:
        """(P(L > ell), Q(L > ell)) for the remove or add pair (not ``both``: its two directions
        are two pairs; the lattice accountant takes the larger delta).

        Contract: contains the two tails. With M = (1-q) N(0, s^2) + q N(1, s^2), N0 = N(0, s^2),
        r(x) = log(1 - q + q e^{(2x-1)/(2 s^2)}) increases in x, and r(x) > y iff x > x(y) =
        s^2 log((e^y - 1 + q)/q) + 1/2 when e^y > 1 - q (always, when not: r > log(1-q)).
        remove: P = M, Q = N0, L = r(x): tails (M(x > x(ell)), N0(x > x(ell))).
        add: P = N0, Q = M, L = -r(x): L > ell iff x < x(-ell) (never when e^{-ell} <= 1 - q):
        tails (N0(x < x(-ell)), M(x < x(-ell))) (docs/math.md §10).
        """
        if self.direction == "both":
            raise Unsupported("direction=both: the loss distribution is per direction; use remove and add")
        # cached by the integers of q and sigma: hashing the two Fractions themselves (a modular
        # inverse each) cost a fifth of loss_tail's time
        q_, s_ = self.q, self.sigma
        q, qc, zz, half, c = _tail_constants(q_.numerator, q_.denominator, s_.numerator, s_.denominator, current_prec())
        y = ell if self.direction == "remove" else -ell
        # e^y - (1 - q): expm1 keeps it accurate near y = 0; far below 0 (or at q = 1, where the
        # loss has no end) e^y is tiny and must not be added to a number of size 1 first
        arg = y.exp() - qc if (self.q == 1 or y < -1) else y.expm1() + q
        if not (arg > 0 or arg <= 0):
            raise PrecisionExhausted(f"loss_tail: ell={ell} is within the ball's width of the loss's end log(1-q)")
        if self.direction == "remove":
            if not arg > 0:
                return to_ball(1), to_ball(1)
            x = zz * (arg / q).log() + half
            # 1 - Phi(t) = erfc(t/sqrt 2)/2 at t = x/sigma and (x - 1)/sigma (certdp.enclose.special)
            above0, above1 = (x * c).erfc() / 2, ((x - 1) * c).erfc() / 2
            return qc * above0 + q * above1, above0
        if not arg > 0:
            return to_ball(0), to_ball(0)
        x = zz * (arg / q).log() + half
        # Phi(t) = erfc(-t/sqrt 2)/2
        below0, below1 = (-x * c).erfc() / 2, ((1 - x) * c).erfc() / 2
        return below0, qc * below0 + q * below1

    def loss_tails(self, ells: list[Ball]) -> list[tuple[Ball, Ball] | None]:
        """:meth:`loss_tail` at each of the sorted losses ``ells``, by Taylor models in
        w = log((e^y - 1 + q)/q), y = +-ell (certdp.enclose.taylor): the threshold x = s^2 w + 1/2
        is linear in w, so the tails are erfc of linear functions of w, entire (the loss's end
        log(1 - q), a singularity in ell, is w = -inf). Each point costs its w (expm1 and log) and
        two polynomial evaluations instead of two erfc (about 17 us); points with e^y <= 1 - q, and
        those whose block fails, take :meth:`loss_tail`.

        Contract: as :meth:`loss_tail` at every point: the same formulas, the tails as power series
        in w with the Lagrange remainder bounded by Arb at a ball holding the block's w
        (docs/math.md §10, "Tails by Taylor models").
        """
        if self.direction == "both":
            raise Unsupported("direction=both: the loss distribution is per direction; use remove and add")
        q_, s_ = self.q, self.sigma
        q, qc, zz, half, c = _tail_constants(q_.numerator, q_.denominator, s_.numerator, s_.denominator, current_prec())
        remove = self.direction == "remove"
        ws: list[Ball | None] = []
        for ell in ells:
            y = ell if remove else -ell
            arg = y.exp() - qc if (q_ == 1 or y < -1) else y.expm1() + q
            ws.append((arg / q).log() if arg > 0 else None)

        def tails(w: Series) -> tuple[Series, Series]:
            x = zz * w + half
            if remove:
                above0, above1 = (x * c).erfc() / 2, ((x - 1) * c).erfc() / 2
                return qc * above0 + q * above1, above0
            below0, below1 = (-x * c).erfc() / 2, ((1 - x) * c).erfc() / 2
            return below0, qc * below0 + q * below1

        out: list[tuple[Ball, Ball] | None] = [None] * len(ells)
        i = 0
        while i < len(ells):  # runs of points with a w: one Taylor-model pass each
            if ws[i] is None:
                i += 1
                continue
            j = i
            while j < len(ells) and ws[j] is not None:
                j += 1
            out[i:j] = taylor_values(tails, ws[i:j])  # type: ignore[arg-type]
            i = j
        return [t if t is not None else self.loss_tail(ell) for t, ell in zip(out, ells, strict=True)]

    def loss_tail_float(self, ell: float) -> tuple[float, float] | None:
        """The two tails of :meth:`loss_tail` in floats (its formulas, math.erfc), for steering.

        Contract: floats near (P(L > ell), Q(L > ell)); no enclosure (steering only).
        """
        if self.direction == "both":
            return None
        q, s = float(self.q), float(self.sigma)
        y = ell if self.direction == "remove" else -ell
        try:
            arg = math.expm1(y) + q if y > -1 else math.exp(y) - float(1 - self.q)
        except OverflowError:
            return None
        c = 1 / (s * math.sqrt(2))
        if self.direction == "remove":
            if not arg > 0:
                return 1.0, 1.0
            x = s * s * math.log(arg / q) + 0.5
            above0, above1 = math.erfc(x * c) / 2, math.erfc((x - 1) * c) / 2
            return (1 - q) * above0 + q * above1, above0
        if not arg > 0:
            return 0.0, 0.0
        x = s * s * math.log(arg / q) + 0.5
        below0, below1 = math.erfc(-x * c) / 2, math.erfc((1 - x) * c) / 2
        return below0, (1 - q) * below0 + q * below1

    def loss_tails_float(self, ells: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """:meth:`loss_tail_float` vectorised (numpy and scipy.special.erfc), for steering.

        Contract: float arrays near (P(L > ell), Q(L > ell)) at each ell; no enclosure.
        """
        import numpy as np  # lazily: steering only

        # math.erfc per element (scipy.special's import alone took 0.25 s of a 2 s epsilon)
        erfc_each = np.frompyfunc(math.erfc, 1, 1)

        def erfc(x: np.ndarray) -> np.ndarray:
            return erfc_each(x).astype(float)

        if self.direction == "both":
            return None
        q, s = float(self.q), float(self.sigma)
        y = np.asarray(ells, dtype=float) if self.direction == "remove" else -np.asarray(ells, dtype=float)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            arg = np.where(y > -1, np.expm1(np.minimum(y, 700.0)) + q, np.exp(np.minimum(y, 700.0)) - float(1 - self.q))
            x = s * s * np.log(np.where(arg > 0, arg, 1.0) / q) + 0.5
            c = 1 / (s * math.sqrt(2))
            if self.direction == "remove":
                above0, above1 = erfc(x * c) / 2, erfc((x - 1) * c) / 2
                pt = np.where(arg > 0, (1 - q) * above0 + q * above1, 1.0)
                return pt, np.where(arg > 0, above0, 1.0)
            below0, below1 = erfc(-x * c) / 2, erfc((1 - x) * c) / 2
            return np.where(arg > 0, below0, 0.0), np.where(arg > 0, (1 - q) * below0 + q * below1, 0.0)

    def kl_ball(self) -> Ball:
        """Contract: contains KL of the chosen direction (max of the two for ``both``).

        remove: E_{G}[rho log rho]; add: E_{G}[-log rho], rho as in :meth:`_cgf_add`, integrated
        over [-L, L] with log's branch cut checked on complex balls. Tails (L >= 1/(2z) + 2/z):
        for g <= -L, rho in [1-q, 1] so |rho log rho|, |log rho| <= -log(1-q), times Phi(-L);
        for g >= L, 0 <= rho log rho <= rho(rho-1) <= qW + q^2 W^2 and 0 <= log rho <= qW with
        W = e^{g/z - 1/(2z^2)}, E[W; G >= L] = Phi(1/z - L), E[W^2; G >= L] = e^{1/z^2} Phi(2/z - L);
        for remove, L >= 2/z + sqrt(2 (bits + 1/z^2)) keeps that last term below e^-bits (small sigma).
        """
        if self.direction == "both":
            return self._kl("remove").max(self._kl("add"))
        return self._kl(self.direction)

    def _kl(self, direction: str) -> Ball:
        q = to_ball(self.q)
        qc = to_ball(1 - self.q)  # exact complement (q near 1 must not round 1 - q to 0)
        z = to_ball(self.sigma)
        if self.q == 1:
            return 1 / (2 * z * z)  # P = N(1, z^2), Q = N(0, z^2): the Gaussian KL either way
        prec = current_prec()
        zf = float(self.sigma)
        bits = (prec + 10) * math.log(2)
        L = 2 / zf + 1 / (2 * zf) + math.sqrt(2 * bits) + 1
        if direction == "remove":  # the q^2 e^{1/z^2} Phi(2/z - L) tail term is below e^-bits only here
            L = max(L, 2 / zf + math.sqrt(2 * (bits + 1 / (zf * zf))) + 1)

        def f(dens: Ball, dens_rho: Ball, lg: Ball) -> Ball:
            return dens_rho * lg if direction == "remove" else -dens * lg

        Lb = to_ball(L)
        body = self._integrate_split(f, -L, L, f"subsampled-gaussian {direction} KL")
        left = -qc.log() * phi(-Lb)
        if direction == "remove":
            right = q * phi(1 / z - Lb) + q * q * (1 / (z * z)).exp() * phi(2 / z - Lb)
            tail = (-left).union(left + right)
        else:
            right = q * phi(1 / z - Lb)
            tail = (-right).union(left)
        return body + tail

    def rho_closed_form(self) -> Ball | None:
        """Contract: contains rho = 1/(2 sigma^2) for directions ``remove`` and ``both``
        (proofs_checks ``subsampled_rho_limit``).

        Proof. Upper bound, both directions: E_Q[(p/Q)^alpha] is convex in p, and
        sum P^{1-alpha} Q^alpha is jointly convex (a perspective), so mixing with weight q gives
        e^{(alpha-1) D_alpha} <= (1-q) + q e^{alpha(alpha-1)/(2 z^2)} <= e^{alpha(alpha-1)/(2z^2)},
        i.e. K(t)/(t(t+1)) <= 1/(2 z^2). Lower bound, remove direction: the k = alpha term of the
        binomial sum gives K(t) >= (t+1) log q + t(t+1)/(2 z^2), so the ratio tends to 1/(2 z^2).
        For ``add`` alone (q < 1) the loss is bounded (D_inf = -log(1-q)), so the ratio tends to 0
        as t -> inf and rho is the sup over t > 0, which may be KL itself (approached as t -> 0: in
        several settings the ratio decreases on all of (0, inf)); certdp.notions.zcdp searches it over
        real orders. At q = 1, P = N(1, z^2), Q = N(0, z^2) is the Gaussian pair either way.
        """
        if self.direction == "add" and self.q < 1:
            return None
        return 1 / (2 * to_ball(self.sigma) ** 2)

    def ratio_upper_bound(self) -> Ball:
        """Contract: 1/(2 sigma^2) >= K(t)/(t(t+1)) for every t > 0 and every direction (the upper
        bound proved in :meth:`rho_closed_form`'s docstring)."""
        return 1 / (2 * to_ball(self.sigma) ** 2)

    def ratio_tail_bound(self, T: float) -> Ball:
        """1/(2 sigma^2) bounds the ratio in every direction (upper bound in rho_closed_form); for
        ``add`` the loss is also bounded: D_inf(Q||P) = -log(1-q), so the ratio is <= D_inf/(T+1).

        Contract: sup_{t>=T} K(t)/(t(t+1)) <= the upper end (proofs above and in the base class).
        """
        glob = 1 / (2 * to_ball(self.sigma) ** 2)
        loss = self.max_loss_ball()
        return glob if loss is None else glob.min(loss / (to_ball(T) + 1))

    def ratio_tail_decay(self, T: float) -> tuple[Ball, Ball] | None:
        """(1/(2 sigma^2), g(T)) for ``remove``, g(t) = log(q + (1-q) e^{-t/(2 sigma^2)}) <= 0: the
        ratio approaches its limit from below like log(q)/t. ``both`` takes c = max(g(T),
        D_add - T/(2 sigma^2)); ``add`` and q = 1 use the base class forms.

        Proof (remove). With W = e^{(2x-1)/(2 sigma^2)} under Q = N(0, sigma^2), e^{K(t)} =
        E_Q[(1 - q + q W)^{t+1}] = ||1 - q + q W||^{t+1} in L^{t+1}(Q). Minkowski's inequality and
        ||W|| = e^{t/(2 sigma^2)} give e^{K(t)} <= (1 - q + q e^{t/(2 sigma^2)})^{t+1}, so
        K(t)/(t(t+1)) <= 1/(2 sigma^2) + g(t)/t, and g decreases, so g(t) <= g(T) for t >= T
        (proofs_checks ``subsampled_ratio_decay``; docs/math.md §4.7). ``both``: the add ratio is
        <= D_add/t = L + (D_add - L t)/t <= L + (D_add - L T)/t for t >= T.

        Contract: for every t >= T, K(t)/(t(t+1)) <= upper(L) + upper(c)/t.
        """
        if self.direction == "add" or self.q == 1:
            return super().ratio_tail_decay(T)
        q, Tb = to_ball(self.q), to_ball(T)
        limit = 1 / (2 * to_ball(self.sigma) ** 2)
        g = (q + to_ball(1 - self.q) * (-Tb * limit).exp()).log()
        if self.direction == "both":
            g = g.max(-to_ball(1 - self.q).log() - limit * Tb)
        return limit, g

    def max_loss_ball(self) -> Ball | None:
        """Contract: contains D_inf for ``add`` with q < 1: sup log(Q/P) = -log(1-q), approached as
        g -> -inf (rho -> 1-q, rho >= 1-q everywhere); None otherwise (unbounded loss)."""
        if self.direction != "add" or self.q == 1:
            return None
        return -to_ball(1 - self.q).log()
