"""Gaussian differential privacy (mu-GDP), certified conversions (docs/math.md §6).

A mechanism is mu-GDP when its trade-off curve lies above G_mu(a) = Phi(Phi^{-1}(1 - a) - mu),
the curve of N(0, 1) vs N(mu, 1). Everything below is exact for that Gaussian pair:

* delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2), strictly decreasing in eps
  (derivative -e^eps Phi(-eps/mu - mu/2) < 0); eps(delta) is its certified inverse;
* TV = delta(0) = 2 Phi(mu/2) - 1, and the best balanced membership attack has accuracy
  1/2 + TV/2 = Phi(mu/2);
* composition: mu = sqrt(sum mu_i^2);
* mu-GDP implies (mu^2/2)-zCDP (the Gaussian pair's rho).

zCDP -> (eps, delta) uses the optimal CGF conversion with K(t) = rho t(t+1)
(certdp.notions.eps_delta) and, for comparison, the classic rho + 2 sqrt(rho log(1/delta)).

Supported ranges: mu in [1e-100, 1e4] and rho in [1e-100, 1e20] (certdp.notions.zcdp_gdp;
InvalidArgument outside): at mu = 1e6 eps(delta) would need e^{mu^2/2} in ball arithmetic.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from fractions import Fraction

from certdp.enclose import (
    DEFAULT_TARGET,
    Ball,
    Enclosure,
    Target,
    current_prec,
    lower_float,
    phi,
    phi_inv_upper,
    refine,
    root_increasing,
    to_ball,
)
from certdp.errors import InvalidArgument, PrecisionExhausted
from certdp.notions.eps_delta import CONVERSION_TARGET, ConversionResult, delta_from_cgf, epsilon_from_cgf
from certdp.notions.orders import require_numbers
from certdp.notions.zcdp_gdp import MU_MAX, MU_MIN, mu_value, rho_value
from certdp.pairs.params import Number, real


def _mu(mu: Number) -> Fraction:
    return mu_value(mu)


def _delta_ball(m: Ball, e: Ball) -> Ball:
    return phi(-e / m + m / 2) - e.exp() * phi(-e / m - m / 2)


def gdp_delta(mu: Number, eps: Number, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Certified delta(eps) of mu-GDP: Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).

    Contract: contains the exact delta of the Gaussian pair N(0,1) vs N(mu,1) at eps >= 0, the
    tight (eps, delta) curve of every mu-GDP mechanism (docs/math.md §6; proofs_checks
    ``gdp_delta_formula``). Precision rises until the relative target is met (the two terms
    cancel for large eps).
    """
    m, e = _mu(mu), real("eps", eps, ge=0)
    return refine(lambda: _delta_ball(to_ball(m), to_ball(e)), target, what="delta")


def gdp_epsilon(mu: Number, delta: Number, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Certified eps(delta) of mu-GDP: the root of delta(eps) = delta (0 when delta >= TV).

    Bracket: delta(0) = TV; at eps_hi = mu^2/2 + mu Phi^{-1}(1 - delta) + mu,
    delta(eps_hi) <= Phi(-eps_hi/mu + mu/2) < delta. delta(eps) is strictly decreasing.
    Contract: contains the smallest eps >= 0 with delta(eps) <= delta (docs/math.md §6).
    """
    m = _mu(mu)
    return _epsilon_of(lambda: to_ball(m), delta, target)


def _mu_sq_checked(mu_sq: Fraction) -> Fraction:
    """mu^2 validated against the supported mu range [1e-100, 1e4] (as exact rationals)."""
    if not MU_MIN**2 <= mu_sq <= MU_MAX**2:
        raise InvalidArgument(
            f"mu^2={float(mu_sq):.6g} must be in [1e-200, 1e8]: the composed Gaussian's mu = sqrt(sum s^2/sigma^2) "
            "is outside the range certdp evaluates in closed form"
        )
    return mu_sq


def gaussian_epsilon(mu_sq: Fraction, delta: Number, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Certified exact eps(delta) of the Gaussian pair N(0,1) vs N(mu,1) given mu^2 exactly.

    A composition of Gaussian mechanisms (sigma_i, shift s_i, n_i runs) is exactly this pair with
    mu^2 = sum n_i s_i^2/sigma_i^2 (the product of Gaussians is a Gaussian pair; Balle and Wang
    2018, Dong, Roth and Su 2019), so mu^2 is rational and no square root is rounded early.
    Contract: as :func:`gdp_epsilon` with mu = sqrt(mu_sq) (docs/math.md §6).
    """
    m2 = _mu_sq_checked(mu_sq)
    return _epsilon_of(lambda: to_ball(m2).sqrt(), delta, target)


def gaussian_delta(mu_sq: Fraction, eps: Number, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Certified exact delta(eps) of the Gaussian pair N(0,1) vs N(mu,1) given mu^2 exactly.

    Contract: as :func:`gdp_delta` with mu = sqrt(mu_sq) (docs/math.md §6).
    """
    m2, e = _mu_sq_checked(mu_sq), real("eps", eps, ge=0)
    return refine(lambda: _delta_ball(to_ball(m2).sqrt(), to_ball(e)).max(to_ball(0)), target, what="delta")


def _epsilon_of(mu_ball: Callable[[], Ball], delta: Number, target: Target) -> Enclosure:
    """The certified root of delta_mu(eps) = delta, mu given as a ball factory (per precision)."""
    d = real("delta", delta, gt=0, lt=1)

    def compute() -> Ball:
        mb, db = mu_ball(), to_ball(d)
        tv = _delta_ball(mb, to_ball(0))
        if db >= tv:
            return to_ball(0)
        if not db < tv:  # refine retries at a higher precision
            raise PrecisionExhausted(f"delta={delta}: cannot decide delta < TV at this precision")
        hi = (mb * mb / 2 + mb * phi_inv_upper(db) + mb).upper()
        # the tolerance is a float: at most 1060 - 8 bits below hi (2^-1074 is the least float),
        # and the bisection gets the halvings that takes (attack review 50: 400 fixed halvings
        # could not reach 2^-(prec - 8) from prec 416 up, so every higher --prec exited 3)
        bits = min(current_prec(), 1060) - 8
        tol = max(lower_float(hi), 1.0) * 2.0**-bits
        return root_increasing(
            lambda x: db - _delta_ball(mb, x), to_ball(0), hi, tol=tol, max_iter=bits + 64, straddle_ok=True
        )

    return refine(compute, target, what="epsilon")


def gdp_tv(mu: Number, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Certified TV of mu-GDP: 2 Phi(mu/2) - 1 = erf(mu / (2 sqrt 2)).

    Contract: contains the total variation of N(0,1) vs N(mu,1), the largest TV of a mu-GDP
    mechanism (docs/math.md §6).
    """
    m = _mu(mu)
    return refine(lambda: (to_ball(m) / 2 / to_ball(2).sqrt()).erf(), target, what="tv")


def gdp_attack_accuracy(mu: Number, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Certified best balanced membership-attack accuracy of mu-GDP: 1/2 + TV/2 = Phi(mu/2).

    Contract: contains Phi(mu/2) (docs/math.md §6 and §8, TV and attacks).
    """
    m = _mu(mu)
    return refine(lambda: phi(to_ball(m) / 2), target, what="accuracy")


def gdp_tradeoff(mu: Number, fpr: Number, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Certified G_mu(a) = Phi(Phi^{-1}(1 - a) - mu): the smallest type-II error (1 - TPR) of any
    test at false-positive rate a against a mu-GDP mechanism.

    Contract: contains G_mu(a) for a in (0, 1) (docs/math.md §6). 1 - G_mu(a) is the largest
    true-positive rate at that FPR.
    """
    m, a = _mu(mu), real("fpr", fpr, gt=0, lt=1)
    return refine(lambda: phi(phi_inv_upper(to_ball(a)) - to_ball(m)), target, what="G_mu")


def compose_gdp(mus: Iterable[Number], target: Target = DEFAULT_TARGET) -> Enclosure:
    """Certified mu of the composition of mu_i-GDP mechanisms: sqrt(sum mu_i^2).

    Contract: contains sqrt(sum mu_i^2) (Dong, Roth, Su; docs/math.md §6).
    """
    ms = [_mu(m) for m in require_numbers("mus", mus)]  # type: ignore[arg-type]
    if not ms:
        raise InvalidArgument("mus=[] must hold at least one value")
    total = sum((m * m for m in ms), Fraction(0))
    return refine(lambda: to_ball(total).sqrt(), target, what="mu")


def gdp_to_rho(mu: Number) -> Fraction:
    """rho = mu^2 / 2: a mu-GDP mechanism is (mu^2/2)-zCDP (exact rational).

    Contract: the exact value mu^2/2 (the Gaussian pair's rho; docs/math.md §4.1 and §6).
    """
    m = _mu(mu)
    return m * m / 2


def zcdp_epsilon(rho: Number, delta: Number, target: Target = CONVERSION_TARGET) -> ConversionResult:
    """Certified eps at delta for a rho-zCDP mechanism: inf_t (rho t(t+1) + log c_t - log delta)/t.

    Contract: as certdp.notions.epsilon with K(t) = rho t(t+1) (docs/math.md §3, F_Z); the
    upper end is a sound epsilon for every rho-zCDP mechanism.
    """
    r = rho_value(rho)
    return epsilon_from_cgf(lambda t: to_ball(r) * t * (t + 1), delta, via="zcdp", target=target)


def zcdp_delta(rho: Number, eps: Number, target: Target = CONVERSION_TARGET) -> ConversionResult:
    """Certified delta at eps for a rho-zCDP mechanism: exp(inf_t rho t(t+1) - t eps + log c_t).

    Contract: as certdp.notions.delta with K(t) = rho t(t+1) (docs/math.md §3).
    """
    r = rho_value(rho)
    return delta_from_cgf(lambda t: to_ball(r) * t * (t + 1), eps, via="zcdp", target=target, kl=lambda: to_ball(r))
