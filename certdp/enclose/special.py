"""Special functions on balls that the privacy pairs need.

Each function works at the current precision and returns a ball that contains the exact value
for every point of its input balls. Truncated sums add an analytic tail bound, stated below.
``log1p``/``expm1``/``erfc``/``erfcinv`` are Arb's own (``x.log1p()`` etc.).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from flint import arb, arb_series, fmpz

from certdp.enclose.ball import upper_float
from certdp.enclose.context import current_cap, pinned, workcap
from certdp.errors import InvalidArgument


def pi() -> arb:
    """Contract: a ball containing pi at the current precision."""
    return arb.pi()


def binomial(n: int, k: int) -> arb:
    """Exact C(n, k) as a ball (exact when it fits the precision).

    Contract: the exact integer C(n, k) as a ball.
    """
    return arb(fmpz(n).bin(k)) if hasattr(fmpz, "bin") else arb(math.comb(n, k))


def interval(lo: arb, hi: arb) -> arb:
    """The ball hull of two balls (contains every point of both).

    Contract: contains every point of both balls.
    """
    return lo.union(hi)


def nonneg_error(bound: arb) -> arb:
    """A ball containing [0, bound.upper()]: add it to a truncated sum of nonnegative terms.

    Contract: contains [0, sup bound].
    """
    u = bound.upper()
    return arb(0).union(u)


def logsumexp(xs: Sequence[arb]) -> arb:
    """Enclosure of log(sum_i exp(x_i)).

    Contract: contains log sum exp(x_i) for every choice of points x_i in the balls. The shift by
    an exact point near max x_i only prevents overflow; it does not affect the enclosure.
    """
    if not xs:
        raise InvalidArgument("xs=[] must be non-empty")
    shift = arb(max(float(x.mid()) for x in xs))
    total = arb(0)
    for x in xs:
        total += (x - shift).exp()
    return total.log() + shift


def phi(x: arb) -> arb:
    """Standard normal CDF Phi(x) = erfc(-x/sqrt 2)/2.

    Contract: contains Phi(x) for all x in the ball; relative accuracy is kept in both tails
    because erfc is evaluated directly (no 1 - ... cancellation). Proof: definition of erfc.
    """
    return (-x / arb(2).sqrt()).erfc() / 2


def phi_upper_tail(x: arb) -> arb:
    """1 - Phi(x) = erfc(x/sqrt 2)/2, accurate for large x. Contract: as :func:`phi`."""
    return (x / arb(2).sqrt()).erfc() / 2


def _mills_point(x: arb) -> arb:
    return (x / arb(2).sqrt()).erfc() / 2 * (2 * arb.pi()).sqrt() * (x * x / 2).exp()


def mills_ratio(x: arb | arb_series) -> arb | arb_series:
    """Mills ratio Q(x) = (1 - Phi(x)) / phi(x), for a ball or a first-order series [x0, 1].

    Q is decreasing on the real line (Q' = x Q - 1 < 0, as Q(x) < 1/x for x > 0), so a ball
    input is enclosed by [Q(hi), Q(lo)] from its exact ends: no dependency between the tiny
    numerator and denominator. For a series x0 + e the Taylor coefficients come from the ODE:
    Q1 = x0 Q0 - 1, Q2 = (Q0 + x0 Q1)/2, Q3 = (2 Q1 + x0 Q2)/3, ... (Q'' = Q + x Q', so
    (k+1) Q_{k+1} = x0 Q_k + Q_{k-1} for k >= 1), each evaluated on the ball x0.
    Contract: contains Q(x) for every x in the ball (and the series coefficients for every
    expansion point in x0); proofs_checks ``mills_ode``.
    """
    if isinstance(x, arb_series):
        c = x.coeffs()
        if len(c) > 2 or (len(c) == 2 and not (c[1] - 1).is_zero()):
            raise TypeError("mills_ratio: series argument must be x0 + e")
        x0 = c[0] if c else arb(0)
        q = [mills_ratio(x0)]
        n = max(current_cap(), 1)
        if n > 1:
            q.append(x0 * q[0] - 1)
        for k in range(1, n - 1):
            q.append((x0 * q[k] + q[k - 1]) / (k + 1))
        return arb_series(q)
    if x.is_exact():
        return _mills_point(x)
    return _mills_point(x.upper()).union(_mills_point(x.lower()))


def phi_inv(p: arb) -> arb:
    """Phi^{-1}(p) for p in (0, 1) = -sqrt(2) erfcinv(2p).

    Contract: contains Phi^{-1}(p) for all p in the ball; the ball must lie inside (0, 1).
    Accurate in the lower tail. For p near 1 call :func:`phi_inv_upper` with 1 - p.
    """
    if not (p > 0 and p < 1):
        raise InvalidArgument(f"p={p} must lie in (0, 1)")
    return -arb(2).sqrt() * (2 * p).erfcinv()


def phi_inv_upper(u: arb) -> arb:
    """Phi^{-1}(1 - u) for u in (0, 1) = sqrt(2) erfcinv(2u), accurate for tiny u.

    Contract: contains Phi^{-1}(1-u) for all u in the ball (0 < u < 1).
    """
    if not (u > 0 and u < 1):
        raise InvalidArgument(f"u={u} must lie in (0, 1)")
    return arb(2).sqrt() * (2 * u).erfcinv()


def _geometric_tail(first: arb, ratio: arb) -> arb:
    """Upper bound first/(1 - ratio) of sum_{k>=0} first*ratio^k; ratio in [0, 1)."""
    if not ratio < 1:
        return arb("inf")
    return first / (1 - ratio)


def theta(x: arb, sigma: arb) -> arb:
    """Theta_sigma(x) = sum_{z in Z} exp(-(z - x)^2 / (2 sigma^2)), a 1-periodic function.

    Contract: contains Theta_sigma(x) for all x, sigma in the balls (sigma > 0).
    Method and tail bounds (proved here):
    * sigma < 1 (direct sum): reduce y = x - n, n = round(x), so |y| <= 1/2 + rad. Sum |z| <= N.
      For m = N + 1 - |y|_max > 0, each one-sided tail is
      sum_{k>=0} exp(-(m+k)^2/(2 s^2)) <= exp(-m^2/(2 s^2)) / (1 - exp(-m/s^2)),
      because (m+k)^2 >= m^2 + 2mk.
    * sigma >= 1 (Poisson summation, Jacobi): Theta(x) = sqrt(2 pi) s [1 + 2 sum_{k>=1}
      exp(-2 pi^2 s^2 k^2) cos(2 pi k x)]. With |cos| <= 1 and (K+1+j)^2 >= (K+1)^2 + j(2K+3),
      the tail k > K is at most 2 exp(-2 pi^2 s^2 (K+1)^2) / (1 - exp(-2 pi^2 s^2 (2K+3))).
    The truncation N (or K) is chosen so that the tail is below 2^-prec of the leading term.
    """
    if not sigma > 0:
        raise InvalidArgument(f"sigma={sigma} must be > 0")
    # Pinned: the truncation is chosen for this precision, so it must not change mid-sum under
    # another thread (FLINT's context is process-wide; see certdp.enclose.context).
    with pinned() as prec:
        s_lo = float(sigma.lower().mid())
        if s_lo >= 1:
            c = 2 * arb.pi() ** 2 * sigma**2
            kmax = max(1, math.ceil(math.sqrt((prec + 8) * math.log(2) / (2 * math.pi**2 * s_lo**2))))
            acc = arb(0)
            for k in range(1, kmax + 1):
                acc += (-c * k * k).exp() * (2 * arb.pi() * k * x).cos()
            tail = 2 * _geometric_tail((-c * (kmax + 1) ** 2).exp(), (-c * (2 * kmax + 3)).exp())
            acc = 1 + 2 * acc + arb(0, upper_float(tail))
            return (2 * arb.pi()).sqrt() * sigma * acc
        n = round(float(x.mid()))
        y = x - n
        s_hi = upper_float(sigma)
        nmax = math.ceil(s_hi * math.sqrt(2 * (prec + 8) * math.log(2))) + 2
        two_s2 = 2 * sigma**2
        acc = arb(0)
        for z in range(-nmax, nmax + 1):
            d = z - y  # d * d, not d ** 2: Arb's power of a ball that straddles 0 is nan
            acc += (-(d * d) / two_s2).exp()
        m = nmax + 1 - abs(y).upper()
        tail = _geometric_tail((-(m**2) / two_s2).exp(), (-m / sigma**2).exp())
        return acc + nonneg_error(2 * tail)


def taylor_coefficients(f: Callable[[arb_series], arb_series], x0: arb, n: int) -> list[arb]:
    """Taylor coefficients f^{(k)}(x0)/k!, k = 0..n, by Arb's power-series arithmetic.

    Contract: each ball contains the exact coefficient, provided f is built from arithmetic and
    functions that arb_series implements (exp, log, sqrt, ...) and is analytic at x0 (Arb's
    series functions enclose the truncated composition exactly; no truncation error enters).
    """
    with workcap(n + 1):
        out = f(arb_series([x0, 1]))
        coeffs = out.coeffs() if isinstance(out, arb_series) else [out]
    return [coeffs[k] if k < len(coeffs) else arb(0) for k in range(n + 1)]
