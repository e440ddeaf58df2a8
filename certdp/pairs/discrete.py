"""Integer-valued additive noise: discrete Laplace and discrete Gaussian with integer shift r."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from certdp.enclose import Ball, current_prec, theta, to_ball, workprec
from certdp.errors import PrecisionExhausted, invalid
from certdp.pairs.base import LossGrid, PrivacyPair, require_positive_t
from certdp.pairs.domain import MAX_MAGNITUDE, bounded, work_limit
from certdp.pairs.params import Number, integer
from certdp.pairs.tails import Tails, cumulants_from_central, tails_above_integer

#: Largest shift of the discrete Laplace pair (class docstring).
DL_MAX_SHIFT = 10**5
#: Largest sigma for which the discrete Gaussian's loss cumulants are summed (class docstring).
DG_MAX_CUMULANT_SIGMA = 10**4


@dataclass(frozen=True, init=False)
class DiscreteLaplace(PrivacyPair):
    """Discrete Laplace, mass proportional to lambda^{|z|} with lambda = e^{-a}, shift r in Z.

    The loss L = a(|z| - |z - r|) takes the value a r with probability 1/(1+lambda), -a r with
    probability lambda^r/(1+lambda), and a(2j - r) with probability C lambda^{r-j} for
    0 < j < r, where C = (1-lambda)/(1+lambda). Hence
    e^{K(t)} - 1 = [expm1(t a r) + lambda^r expm1(-t a r)]/(1+lambda)
                   + C sum_{j=1}^{r-1} lambda^{r-j} expm1(t a (2j - r)),
    which equals the finite sum of docs/math.md §4.5 (checked) minus 1 after j -> r - j.

    Domain: a in [1e-100, 1e100]; integer shift in [1, MAX_SHIFT] = [1, 10^5] (LimitExceeded
    beyond: the loss has shift + 1 atoms, so time and memory grow linearly with the shift;
    about 0.5 s at 10^5, and 10^12 would need terabytes).
    """

    a: Fraction
    shift: int

    mechanism = "discrete-laplace"

    def __init__(self, a: Number, shift: Number = 1) -> None:
        object.__setattr__(self, "a", bounded("a", a, self.mechanism, gt=0))
        r = integer("shift", shift, ge=1)
        if r > DL_MAX_SHIFT:
            raise work_limit(
                "shift", r, DL_MAX_SHIFT, self.mechanism, "the loss has shift + 1 atoms: cost grows linearly"
            )
        object.__setattr__(self, "shift", r)

    def _atoms(self) -> list[tuple[Ball, Ball]]:
        """(probability under P, loss value) of each atom of L."""
        a = to_ball(self.a)
        r = self.shift
        lam = (-a).exp()
        c = (1 - lam) / (1 + lam)
        atoms = [(1 / (1 + lam), a * r), (lam**r / (1 + lam), -a * r)]
        atoms += [(c * lam ** (r - j), a * (2 * j - r)) for j in range(1, r)]
        return atoms

    def cgf_ball(self, t: Ball) -> Ball:
        """Contract: contains K(t) = log E_P e^{tL} (exact finite sum above; no truncation;
        proofs_checks ``discrete_laplace_sum``)."""
        require_positive_t(t)
        acc = to_ball(0)
        for p, loss in self._atoms():
            acc += p * (t * loss).expm1()
        return acc.log1p()

    def kl_ball(self) -> Ball:
        """Contract: contains E_P[L] = sum over atoms of probability * loss (exact finite sum)."""
        acc = to_ball(0)
        for p, loss in self._atoms():
            acc += p * loss
        return acc

    def loss_cumulants(self) -> tuple[Ball, Ball, Ball, Ball]:
        """Contract: contains kappa_1..kappa_4 of L under P from the exact atoms: kappa_1 = mean,
        kappa_2 = mu_2, kappa_3 = mu_3, kappa_4 = mu_4 - 3 mu_2^2 (central moments, finite sums)."""
        atoms = self._atoms()
        mean = self.kl_ball()
        mu = [sum((p * (loss - mean) ** k for p, loss in atoms), to_ball(0)) for k in (2, 3, 4)]
        return cumulants_from_central(mean, *mu)

    def max_loss_ball(self) -> Ball:
        """Contract: contains D_inf = a r (the largest atom of L, positive probability)."""
        return to_ball(self.a * self.shift)

    def loss_tail(self, ell: Ball) -> Tails:
        """Contract: contains (P(L > ell), Q(L > ell)) for every ell in the ball. L(x) = a(|x| -
        |x - r|) is nondecreasing in the output x (P centred at r, Q at 0), so L > ell iff
        x >= m, m the smallest integer > x0 = (ell/a + r)/2 (the loss of x in [0, r] is
        a(2x - r)), clamped to [0, r + 1]. Geometric sums give, for 1 <= m <= r,
        P(X >= m) = (1 + lam - lam^{r-m+1})/(1 + lam) and Q(X >= m) = lam^m/(1 + lam); 1 for
        m <= 0; 0 for m > r (every atom is at most a r) (docs/math.md §10; proofs_checks ``lattice_atom_tails``)."""
        r = self.shift
        lam = (-to_ball(self.a)).exp()

        def at(m: int) -> Tails:
            if m <= 0:
                return to_ball(1), to_ball(1)
            if m > r:
                return to_ball(0), to_ball(0)
            return (1 + lam - lam ** (r - m + 1)) / (1 + lam), lam**m / (1 + lam)

        return tails_above_integer((ell / to_ball(self.a) + r) / 2, at)

    def loss_grid(self) -> LossGrid:
        """Contract: the atoms a(2j - r), j = 0..r (class docstring): anchor -a r, spacing 2a,
        and no continuous part."""
        return LossGrid(2 * self.a, -self.a * self.shift, atomic=True)


def discrete_gaussian_moment(sigma: Ball, k: int) -> Ball:
    """S_k = sum_{z in Z} z^k exp(-z^2/(2 sigma^2)) for even k >= 0.

    Contract: contains S_k: the sum over |z| <= N plus both tails, each at most
    int_N^inf x^k e^{-x^2/(2 sigma^2)} dx <= N^k e^{-N^2/(2 sigma^2)}/delta, delta = N/sigma^2 - k/N > 0
    (the summand decreases for z >= sigma sqrt(k), so the sum over z > N is below the integral from
    N; the log of the integrand has slope <= -delta beyond N).
    """
    sf = float(sigma.upper())
    N = math.ceil(sf * math.sqrt(k) + sf * math.sqrt(2 * (current_prec() + 10 + 2 * k) * math.log(2)) + k + 2)
    acc = to_ball(0)
    two_var = 2 * sigma * sigma
    for z in range(1, N + 1):
        acc += to_ball(z) ** k * (-to_ball(z * z) / two_var).exp()
    total = 2 * acc + (1 if k == 0 else 0)
    Nb = to_ball(N)
    delta = Nb / (sigma * sigma) - to_ball(k) / Nb
    if not delta > 0:
        raise PrecisionExhausted(f"discrete-gaussian moment {k}: tail length too short")
    tail = 2 * Nb**k * (-Nb * Nb / two_var).exp() / delta
    return total + to_ball(0).union(tail)


@functools.lru_cache(maxsize=8)
def discrete_gaussian_suffix(sigma: Fraction, prec: int) -> Callable[[int], Ball]:
    """k -> a ball containing T(k) = sum_{z >= k} e^{-z^2/(2 sigma^2)} (any integer k).

    Contract: the terms |z| <= N are summed (suffix sums, computed once per sigma and precision);
    each tail beyond is at most e^{-M^2/(2 sigma^2)} (1 + sigma^2/M), M = N + 1, because the terms
    decrease for z >= M and sum_{z > M} e^{-z^2/(2 sigma^2)} <= int_M^inf e^{-x^2/(2 sigma^2)} dx
    <= (sigma^2/M) e^{-M^2/(2 sigma^2)} (Mills); T(k) then adds [0, tail] for the terms above N,
    and for k < -N also those below -N. N = sigma sqrt(2 (prec + 20) log 2) + 2, so the tail is
    below 2^-(prec+20) of the total.
    """
    with workprec(prec):
        s = to_ball(sigma)
        two_var = 2 * s * s
        n = math.ceil(float(sigma) * math.sqrt(2 * (prec + 20) * math.log(2))) + 2
        terms = [(-to_ball(z * z) / two_var).exp() for z in range(n + 1)]
        sums = [to_ball(0)] * (2 * n + 2)  # sums[i] = sum_{z >= i - n, |z| <= n}
        for i in range(2 * n, -1, -1):
            sums[i] = sums[i + 1] + terms[abs(i - n)]
        m = to_ball(n + 1)
        tail = (-m * m / two_var).exp() * (1 + s * s / m)
        above = to_ball(0).union(tail)

    def suffix(k: int) -> Ball:
        if k > n:
            return above
        body = sums[max(k, -n) + n]
        return body + above + (above if k < -n else to_ball(0))

    return suffix


@dataclass(frozen=True, init=False)
class DiscreteGaussian(PrivacyPair):
    """Discrete Gaussian, mass proportional to exp(-z^2/(2 sigma^2)) on Z, integer shift r.

    e^{K(t)} = e^{r^2 t(t+1)/(2 sigma^2)} Theta(t r)/Theta(0), Theta the 1-periodic theta sum
    (docs/math.md §4.6). rho = r^2/(2 sigma^2) (proof in :meth:`rho_closed_form`).

    Domain: sigma in [1e-100, 1e100], integer shift in [1, 1e100] (InvalidArgument outside);
    the theta sums cost O(1) terms at any sigma. :meth:`loss_cumulants` sums about 12 sigma
    terms, so it refuses sigma > DG_MAX_CUMULANT_SIGMA = 10^4 (LimitExceeded; ~1 s there).
    """

    sigma: Fraction
    shift: int

    mechanism = "discrete-gaussian"
    rho_attained_at_infinity = True

    def __init__(self, sigma: Number, shift: Number = 1) -> None:
        object.__setattr__(self, "sigma", bounded("sigma", sigma, self.mechanism, gt=0))
        r = integer("shift", shift, ge=1)
        if r > MAX_MAGNITUDE:
            raise invalid("shift", r, "must have magnitude in [1, 1e+100] (the supported range of discrete-gaussian)")
        object.__setattr__(self, "shift", r)

    def _c(self) -> Ball:
        return to_ball(Fraction(self.shift**2) / (2 * self.sigma**2))

    def cgf_ball(self, t: Ball) -> Ball:
        """Contract: contains K(t); Theta is enclosed with the tail bound of enclose.special.theta
        (proofs_checks ``discrete_gaussian_square``, ``discrete_gaussian_period``)."""
        require_positive_t(t)
        s = to_ball(self.sigma)
        return t * (t + 1) * self._c() + (theta(t * self.shift, s) / theta(to_ball(0), s)).log()

    def kl_ball(self) -> Ball:
        """Contract: contains KL = r^2/(2 sigma^2): K'(0) = r^2/(2 sigma^2) + r Theta'(0)/Theta(0)
        and Theta'(0) = 0 because Theta is even."""
        return self._c()

    def loss_cumulants(self) -> tuple[Ball, Ball, Ball, Ball]:
        """Contract: contains kappa_1..kappa_4 of L under P. Under P the noise is Z + r with
        Z ~ DG(sigma), and L = (2 r Z + r^2)/(2 sigma^2) is affine in Z, so kappa_1 = r^2/(2 sigma^2),
        kappa_2 = (r/sigma^2)^2 E Z^2, kappa_3 = 0 (Z symmetric), kappa_4 = (r/sigma^2)^4
        (E Z^4 - 3 (E Z^2)^2), with the moments of :func:`discrete_gaussian_moment`.
        Refuses sigma > DG_MAX_CUMULANT_SIGMA (LimitExceeded; class docstring)."""
        if self.sigma > DG_MAX_CUMULANT_SIGMA:
            raise work_limit(
                "sigma",
                self.sigma,
                DG_MAX_CUMULANT_SIGMA,
                "discrete-gaussian loss cumulants",
                "they sum ~12 sigma terms",
            )
        s = to_ball(self.sigma)
        b = to_ball(self.shift) / (s * s)
        m0, m2, m4 = (discrete_gaussian_moment(s, k) for k in (0, 2, 4))
        e2, e4 = m2 / m0, m4 / m0
        return self._c(), b * b * e2, to_ball(0), b**4 * (e4 - 3 * e2 * e2)

    def loss_tail(self, ell: Ball) -> Tails:
        """Contract: contains (P(L > ell), Q(L > ell)) for every ell in the ball. Under P the
        output is X = r + Z, under Q it is Z, and L(x) = r(2x - r)/(2 sigma^2) increases in x, so
        L > ell iff x >= m, m the smallest integer > x0 = sigma^2 ell/r + r/2; the tails are
        (T(m - r), T(m))/T(-inf) with T(k) = sum_{z >= k} e^{-z^2/(2 sigma^2)}, summed by
        :func:`discrete_gaussian_suffix` (its truncation bound is in its docstring; proofs_checks
        ``lattice_atom_tails``). Refuses
        sigma > DG_MAX_CUMULANT_SIGMA like :meth:`loss_cumulants` (the sums hold ~30 sigma terms).
        """
        if self.sigma > DG_MAX_CUMULANT_SIGMA:
            raise work_limit(
                "sigma", self.sigma, DG_MAX_CUMULANT_SIGMA, "discrete-gaussian loss tails", "they sum ~30 sigma terms"
            )
        suffix = discrete_gaussian_suffix(self.sigma, current_prec())
        total = suffix(-(10**9))
        r = self.shift

        def at(m: int) -> Tails:
            return suffix(m - r) / total, suffix(m) / total

        s = to_ball(self.sigma)
        return tails_above_integer(s * s * ell / r + to_ball(Fraction(r, 2)), at)

    def loss_grid(self) -> LossGrid:
        """Contract: the loss r(2x - r)/(2 sigma^2) at integer x: anchor -r^2/(2 sigma^2),
        spacing r/sigma^2, and no continuous part."""
        r = self.shift
        return LossGrid(Fraction(r) / self.sigma**2, -Fraction(r * r) / (2 * self.sigma**2), atomic=True)

    def rho_closed_form(self) -> Ball:
        """Contract: contains rho = r^2/(2 sigma^2).

        Proof: by Poisson summation Theta(x) = sqrt(2 pi) sigma sum_k exp(-2 pi^2 sigma^2 k^2)
        cos(2 pi k x), maximal at integer x, so Theta(t r) <= Theta(0) and
        K(t) <= r^2 t(t+1)/(2 sigma^2); equality holds at t = 1/r, where t r = 1.
        """
        return self._c()
