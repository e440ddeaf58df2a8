"""Shared pieces of the loss-cumulant integrals: a Gaussian-weighted polynomial tail bound and
the step from central moments to cumulants."""

from __future__ import annotations

from certdp.enclose import Ball, pi, to_ball
from certdp.errors import PrecisionExhausted


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
