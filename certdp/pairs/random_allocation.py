"""Random allocation (DP-SGD with balls-in-bins batching): arXiv:2610.09651; docs/math.md §9.

One epoch of M steps: Q = N(0, I_M) without the record; with it, one uniformly chosen step is
shifted by t = 1/sigma, so P = (1/M) sum_j N(t e_j, I_M). E epochs are independent. The
likelihood ratio of one epoch is L = dP/dQ = (1/M) sum_j Y_j with Y_j = exp(t X_j - t^2/2)
i.i.d. lognormal under Q, and E_Q Y^n = exp(n(n-1) t^2/2).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from certdp.enclose import Ball, power_truncated, to_ball
from certdp.errors import Unsupported, invalid
from certdp.pairs.base import PrivacyPair, require_positive_t
from certdp.pairs.domain import bounded
from certdp.pairs.params import Number, integer

#: Largest order (class docstring) and largest steps / epochs.
MAX_ORDER = 1024
MAX_COUNT = 10**12


@dataclass(frozen=True, init=False)
class RandomAllocation(PrivacyPair):
    """M steps per epoch, E epochs, noise multiplier sigma (integer Renyi orders only).

    Domain: steps and epochs integers in [1, 10^12], sigma in [1e-100, 1e100]; orders up to
    MAX_ORDER = 1024, the top of the default grid (LimitExceeded beyond: the moment costs about
    order^2 log(steps) ball operations, ~10 s at order 1024 with steps = 10^9).
    """

    steps: int
    epochs: int
    sigma: Fraction

    mechanism = "random-allocation"
    real_orders = False

    def __init__(self, steps: Number, sigma: Number, epochs: Number = 1) -> None:
        for name, value in (("steps", steps), ("epochs", epochs)):
            n = integer(name, value, ge=1)
            if n > MAX_COUNT:
                raise invalid(name, n, "must be <= 1e+12 (the supported range of random-allocation)")
            object.__setattr__(self, name, n)
        object.__setattr__(self, "sigma", bounded("sigma", sigma, self.mechanism, gt=0))

    order_limit_reason = "the moment costs about order^2 log(steps) ball operations"

    def max_t(self) -> Fraction:
        """Contract: MAX_ORDER - 1 (class docstring)."""
        return Fraction(MAX_ORDER - 1)

    def _t2(self) -> Ball:
        return 1 / to_ball(self.sigma) ** 2

    def moment_one_epoch(self, k: int) -> Ball:
        """E_Q L^k for one epoch (integer k >= 0).

        Contract: contains M^{-k} E(sum_j Y_j)^k, computed as M^{-k} k! [x^k] g(x)^M with
        g(x) = sum_{n<=k} E[Y^n] x^n/n! (exponential generating functions multiply for
        independent sums; this equals the sum over integer partitions of k of docs/math.md §9.3).
        All coefficients are positive, so the power has no cancellation.
        """
        t2 = self._t2()
        egf = [(t2 * (n * (n - 1)) / 2).exp() / math.factorial(n) for n in range(k + 1)]
        coeff = power_truncated(egf, self.steps, k + 1)[k]
        return coeff * math.factorial(k) / to_ball(self.steps) ** k

    def cgf_ball(self, t: Ball) -> Ball:
        """Contract: contains K(t) = E log E_Q L^{t+1} (E epochs add) at integer t >= 1."""
        require_positive_t(t)
        self.check_order(t)
        k = int(t.unique_fmpz()) + 1
        return self.epochs * self.moment_one_epoch(k).log()

    def kl_ball(self) -> Ball:
        """Contract: raises Unsupported: no enclosure is claimed."""
        raise Unsupported(
            "mechanism=random-allocation: KL has no closed form and needs real orders, which this pair "
            "does not support (integer orders only)"
        )

    def chi2_one_epoch(self) -> Ball:
        """Contract: contains chi^2(P||Q) of one epoch = (e^{1/sigma^2} - 1)/M (docs/math.md §9.2;
        proofs_checks ``ra_chi2_one_epoch``)."""
        return self._t2().expm1() / self.steps
