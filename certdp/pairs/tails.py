"""Shared pieces of the loss-cumulant integrals (a Gaussian-weighted polynomial tail bound, the
step from central moments to cumulants) and of the loss tails of integer-valued noise."""

from __future__ import annotations

import math
from collections.abc import Callable

from certdp.enclose import Ball, Enclosure, pi, to_ball
from certdp.errors import PrecisionExhausted

#: a tail (P(L > ell), Q(L > ell))
Tails = tuple[Ball, Ball]


def tails_above_integer(x0: Ball, at: Callable[[int], Tails]) -> Tails:
    """The tails of an integer-valued output X whose loss exceeds ell iff X > x0, given ``at(m)``
    = (P(X >= m), Q(X >= m)): at m = floor(x0) + 1. When the ball x0 holds an integer (the
    smallest integer above x0 is not decided), the union over the candidates.

    Contract: contains (P(X > x), Q(X > x)) for every x in the ball x0, if ``at`` encloses its
    tails (both are nonincreasing in m, so the union of the two extreme candidates holds every
    one between).
    """
    if not x0.is_finite():
        raise PrecisionExhausted(f"loss tail: the output threshold {x0} is not finite")
    enc = Enclosure.from_ball(x0)
    m_lo, m_hi = math.floor(enc.lower) + 1, math.floor(enc.upper) + 1
    first = at(m_lo)
    if m_hi == m_lo:
        return first
    last = at(m_hi)
    return first[0].union(last[0]), first[1].union(last[1])


def gaussian_poly_tail(L: Ball, c: Ball, a: Ball, b: Ball, k: int, what: str) -> Ball:
    """Upper bound of int_L^inf phi(y - c) (a + b y)^k dy, phi the standard normal density.

    Contract: valid for L > c, a >= 0, b >= 0: h(y) = log phi(y - c) + k log(a + b y) has
    h'(y) = -(y - c) + k b/(a + b y) <= -(L - c) + k/L =: -delta on [L, inf) (b/(a + b y) <= 1/y),
    so the integral is at most e^{h(L)}/delta. Raises PrecisionExhausted when delta > 0 is not
    certain (L too short).
    """
    delta = (L - c) - to_ball(k) / L
    if not delta > 0:
        raise PrecisionExhausted(f"{what}: tail length too short")
    return (-(L - c) * (L - c) / 2).exp() / (2 * pi()).sqrt() * (a + b * L) ** k / delta


def cumulants_from_central(k1: Ball, mu2: Ball, mu3: Ball, mu4: Ball) -> tuple[Ball, Ball, Ball, Ball]:
    """Contract: (kappa_1, .., kappa_4) = (mean, mu_2, mu_3, mu_4 - 3 mu_2^2) from the mean and the
    central moments (exact identities)."""
    return k1, mu2, mu3, mu4 - 3 * mu2 * mu2
