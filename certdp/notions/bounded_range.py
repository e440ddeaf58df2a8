"""Sharp GDP parameter of eta-bounded-range mechanisms (e.g. the exponential mechanism), certified.

A pair (P, Q) is eta-bounded-range (BR) when its privacy loss L = log dP/dQ takes values in an
interval [a, a + eta]; E_Q e^L = 1 forces a in [-eta, 0].

Derivation (arXiv:2611.01218 also gives this sharp conversion; certdp re-derives it here,
summarised in docs/math.md §7, and claims only the certified supremum below):

1. Reduction to two points (proofs_checks ``br_garbling``). Let T be the two-point pair with
   losses a (output "lo") and b = a + eta (output "hi"), Q_T(hi) = q = (1 - e^a)/(e^b - e^a),
   P_T(hi) = p = q e^b, P_T(lo) = (1 - q) e^a. With w(x) = (e^{L(x)} - e^a)/(e^b - e^a) in
   [0, 1], the kernel K(hi, dx) = Q(dx) w(x)/q, K(lo, dx) = Q(dx)(1 - w(x))/(1 - q) maps Q_T to
   Q and P_T to P. So every BR pair with range [a, a + eta] is a post-processing of T_a, and
   its trade-off curve lies above T_a's.
2. GDP parameter of T_a (proofs_checks ``br_two_point_mu``): T_a's trade-off curve is the
   polygon (0, 1) - (q, 1 - p) - (1, 0); G_mu is convex, so G_mu <= f_T iff G_mu(q) <= 1 - p,
   i.e. mu >= mu(a) = Phi^{-1}(p) - Phi^{-1}(q) (as for randomized response, the corner
   argument of docs/math.md §7). T_a itself is eta-BR, so the sharp conversion is mu_BR(eta) = sup_{a in [-eta, 0]}
   mu(a).
3. The supremum is certified numerically: branch and bound over [-eta + d, -d] and, on the two
   end pieces, mu(a) <= g(x) = Phi^{-1}(e^eta x) - Phi^{-1}(x) with x = q (a near 0) or
   x = 1 - p (a near -eta; then mu = Phi^{-1}(e^{-a} x) - Phi^{-1}(x)), and for e^eta x < 1/2
   g(x) = int_x^{e^eta x} d xi / phi(Phi^{-1}(xi)) <= eta / |Phi^{-1}(e^eta x)| (Mills:
   phi(y) >= |y| Phi(y) for y < 0).

Observation (not claimed): at every eta tried the supremum sits at a = -eta/2, i.e. mu_BR(eta)
equals randomized response at eps = eta/2, 2 Phi^{-1}(1/(1 + e^{-eta/2})).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from certdp.enclose import (
    Ball,
    Enclosure,
    Target,
    phi_inv,
    pi,
    refine,
    sup_interval,
    to_ball,
    upper_float,
)
from certdp.errors import LimitExceeded, PrecisionExhausted, fmt_value
from certdp.notions.zcdp_gdp import mu_randomized_response
from certdp.pairs.params import Number, real

#: eta above this needs end pieces too thin for float interval ends; say so instead of guessing.
MAX_ETA = 30
#: eta below this costs more than a few seconds of branch and bound (LimitExceeded).
MIN_ETA = 0.01


def _two_point(a: Ball, eta: Ball) -> tuple[Ball, Ball]:
    """(q, 1 - p) of the two-point pair with losses a and a + eta."""
    q = (-a).expm1() / eta.expm1()
    return q, (1 - q) * a.exp()


def _mu_point(a: Ball, eta: Ball) -> Ball:
    q, pbar = _two_point(a, eta)
    if not (q > 0 and pbar > 0 and q + pbar < 1):  # a box too wide to place q, p in (0, 1)
        return to_ball("inf")  # upper bound +inf: branch and bound splits it
    return phi_inv(1 - pbar) - phi_inv(q)


def _mu_slope(a: Ball, eta: Ball) -> Ball:
    """d mu / d a = p'/phi(Phi^{-1}(p)) - q'/phi(Phi^{-1}(q)), q' = -e^{-a}/(e^eta - 1),
    p' = q' e^a - (1 - q) e^a (from 1 - p = (1 - q) e^a), on a ball."""
    q, pbar = _two_point(a, eta)
    if not (q > 0 and pbar > 0 and q + pbar < 1):
        return to_ball(0).union(to_ball("inf")).union(to_ball("-inf"))
    dq = -(-a).exp() / eta.expm1()
    dp = (dq - (1 - q)) * a.exp()
    norm = (2 * pi()).sqrt()

    def dens(x: Ball) -> Ball:
        z = phi_inv(x)
        return (-z * z / 2).exp() / norm

    return dp / dens(1 - pbar) - dq / dens(q)


def _mu_of_a(a: Ball, eta: Ball) -> Ball:
    """mu(a) on a ball, or on a first-order series a0 + e (value and slope on a0), so that the
    branch and bound uses the mean-value form (second order near the maximum)."""
    if hasattr(a, "coeffs"):  # a Taylor series a0 + e from the core's mean-value form
        a0 = a.coeffs()[0]
        return (a - a0) * _mu_slope(a0, eta) + _mu_point(a0, eta)
    return _mu_point(a, eta)


def _end_bound(x_up: Ball, eta: Ball) -> Ball:
    """eta / |Phi^{-1}(e^eta x)| for x <= x_up (requires e^eta x_up < 1/2)."""
    y = eta.exp() * x_up
    if not y < 0.5:
        return to_ball("inf")
    return eta / (-phi_inv(y))


@dataclass(frozen=True)
class BoundedRangeGDP:
    """``mu`` encloses sup_a mu(a) (the sharp GDP parameter of eta-BR); ``randomized_response``
    encloses 2 Phi^{-1}(1/(1 + e^{-eta/2})) for comparison; ``argmax`` is the float location of
    the best witness; ``end_piece`` the width d of the two end pieces."""

    mu: Enclosure
    randomized_response: Enclosure
    argmax: float
    end_piece: float


#: Default width: relative 1e-15 (branch and bound to Arb's full precision is not needed here).
BR_TARGET = Target(rel_tol=1e-15, abs_tol=1e-30)


def mu_from_bounded_range(eta: Number, target: Target = BR_TARGET) -> BoundedRangeGDP:
    """Certified sharp GDP parameter of eta-bounded-range mechanisms: sup_{a in [-eta, 0]} mu(a).

    Contract: ``mu`` contains sup over a of Phi^{-1}(p_a) - Phi^{-1}(q_a) (module docstring:
    every eta-BR mechanism is mu-GDP with this mu, and the two-point pair attains it;
    proofs_checks ``br_garbling``, ``br_two_point_mu``). Branch and bound with interval
    evaluation; the end pieces are bounded analytically. Raises PrecisionExhausted if the
    requested width is not reached; InvalidArgument for eta outside (0, MAX_ETA].
    """
    e = real("eta", eta, gt=0, le=MAX_ETA)
    if e < MIN_ETA:
        raise LimitExceeded(
            f"eta={fmt_value(eta)} is below the limit {MIN_ETA} of the bounded-range conversion (its branch and "
            "bound's cost grows as eta -> 0: about 2 s at 0.01, 10 s at 0.001)"
        )
    ef = float(e)
    rr = mu_randomized_response(e / 2, target)
    guess = float(rr.lower)
    # end pieces: shrink d until the analytic bound is clearly below the interior (float guess)
    d = ef / 4
    for _ in range(200):
        q_f = math.expm1(d) / math.expm1(ef)
        if q_f * math.exp(ef) < 0.5:
            y = max(q_f * math.exp(ef), 1e-300)
            z = -_float_phi_inv(y)
            if ef / z < 0.8 * guess:
                break
        d /= 2
    else:
        raise PrecisionExhausted(f"eta={eta}: no end piece small enough")
    state: dict[str, float] = {}

    def compute() -> Ball:
        eb = to_ball(e)
        lo, hi = -ef + d, -d
        tol = target.tolerance_for(guess) / 4
        res = sup_interval(lambda a: _mu_of_a(a, eb), lo, hi, tol=tol, max_evals=200_000)
        state["arg"] = res.argbest
        # end pieces, bounded by interval evaluation of x over each whole piece
        near0 = to_ball(-d).union(to_ball(0))
        near_eta = (-eb).union(-eb + d)
        b0 = _end_bound(_two_point(near0, eb)[0].upper(), eb)
        b1 = _end_bound(_two_point(near_eta, eb)[1].upper(), eb)
        ends = b0.max(b1)
        if not ends < res.value.lower():
            raise PrecisionExhausted(f"eta={eta}: end bound {upper_float(ends):.3g} not below the interior sup")
        return res.value

    enc = refine(compute, target, what="mu_BR")
    return BoundedRangeGDP(enc, rr, state["arg"], d)


def _float_phi_inv(y: float) -> float:
    """Float Phi^{-1} for choosing the end pieces only (never certified)."""
    from scipy.special import ndtri

    return float(ndtri(y))
