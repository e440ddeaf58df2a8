"""Random allocation (DP-SGD with balls-in-bins batching), seed 003 / MATH.md section 4.

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
from certdp.errors import Unsupported
from certdp.pairs.base import PrivacyPair, require_positive_t
from certdp.pairs.params import Number, integer, real


@dataclass(frozen=True, init=False)
class RandomAllocation(PrivacyPair):
    """M steps per epoch, E epochs, noise multiplier sigma (integer Renyi orders only)."""

    steps: int
    epochs: int
    sigma: Fraction

    mechanism = "random-allocation"
    real_orders = False

    def __init__(self, steps: Number, sigma: Number, epochs: Number = 1) -> None:
        object.__setattr__(self, "steps", integer("steps", steps, ge=1))
        object.__setattr__(self, "epochs", integer("epochs", epochs, ge=1))
        object.__setattr__(self, "sigma", real("sigma", sigma, gt=0))

    def _t2(self) -> Ball:
        return 1 / to_ball(self.sigma) ** 2

    def moment_one_epoch(self, k: int) -> Ball:
        """E_Q L^k for one epoch (integer k >= 0).

        Contract: contains M^{-k} E(sum_j Y_j)^k, computed as M^{-k} k! [x^k] g(x)^M with
        g(x) = sum_{n<=k} E[Y^n] x^n/n! (exponential generating functions multiply for
        independent sums; this equals MATH.md section 4's sum over integer partitions of k).
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
        raise Unsupported("random-allocation: KL has no closed form; it needs real orders (issue 3 follow-up)")

    def chi2_one_epoch(self) -> Ball:
        """Contract: contains chi^2(P||Q) of one epoch = (e^{1/sigma^2} - 1)/M (MATH.md section 4;
        proofs_checks ``ra_chi2_one_epoch``)."""
        return self._t2().expm1() / self.steps
