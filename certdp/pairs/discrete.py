"""Integer-valued additive noise: discrete Laplace and discrete Gaussian with integer shift r."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from certdp.enclose import Ball, theta, to_ball
from certdp.pairs.base import PrivacyPair, require_positive_t
from certdp.pairs.params import Number, integer, real


@dataclass(frozen=True, init=False)
class DiscreteLaplace(PrivacyPair):
    """Discrete Laplace, mass proportional to lambda^{|z|} with lambda = e^{-a}, shift r in Z.

    The loss L = a(|z| - |z - r|) takes the value a r with probability 1/(1+lambda), -a r with
    probability lambda^r/(1+lambda), and a(2j - r) with probability C lambda^{r-j} for
    0 < j < r, where C = (1-lambda)/(1+lambda). Hence
    e^{K(t)} - 1 = [expm1(t a r) + lambda^r expm1(-t a r)]/(1+lambda)
                   + C sum_{j=1}^{r-1} lambda^{r-j} expm1(t a (2j - r)),
    which equals MATH.md section 2's finite sum (checked) minus 1 after j -> r - j.
    """

    a: Fraction
    shift: int

    mechanism = "discrete-laplace"

    def __init__(self, a: Number, shift: Number = 1) -> None:
        object.__setattr__(self, "a", real("a", a, gt=0))
        object.__setattr__(self, "shift", integer("shift", shift, ge=1))

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

    def max_loss_ball(self) -> Ball:
        """Contract: contains D_inf = a r (the largest atom of L, positive probability)."""
        return to_ball(self.a * self.shift)


@dataclass(frozen=True, init=False)
class DiscreteGaussian(PrivacyPair):
    """Discrete Gaussian, mass proportional to exp(-z^2/(2 sigma^2)) on Z, integer shift r.

    e^{K(t)} = e^{r^2 t(t+1)/(2 sigma^2)} Theta(t r)/Theta(0), Theta the 1-periodic theta sum
    (MATH.md section 2). rho = r^2/(2 sigma^2) (proof in :meth:`rho_closed_form`).
    """

    sigma: Fraction
    shift: int

    mechanism = "discrete-gaussian"
    rho_attained_at_infinity = True

    def __init__(self, sigma: Number, shift: Number = 1) -> None:
        object.__setattr__(self, "sigma", real("sigma", sigma, gt=0))
        object.__setattr__(self, "shift", integer("shift", shift, ge=1))

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

    def rho_closed_form(self) -> Ball:
        """Contract: contains rho = r^2/(2 sigma^2).

        Proof: by Poisson summation Theta(x) = sqrt(2 pi) sigma sum_k exp(-2 pi^2 sigma^2 k^2)
        cos(2 pi k x), maximal at integer x, so Theta(t r) <= Theta(0) and
        K(t) <= r^2 t(t+1)/(2 sigma^2); equality holds at t = 1/r, where t r = 1.
        """
        return self._c()
