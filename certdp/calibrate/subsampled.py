"""Certified sigma calibration of the Poisson-subsampled Gaussian to an (eps, delta) target (RDP)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction

from certdp.enclose import Enclosure
from certdp.notions import DEFAULT_INTEGER_ORDERS, epsilon
from certdp.pairs import SubsampledGaussian, compose
from certdp.pairs.params import Number, integer, real


@dataclass(frozen=True)
class EpsCalibration:
    """sigma is certified to give eps <= target over ``orders``; at sigma_miss = sigma - step the
    certified infimum over the same orders exceeds the target (the RDP accountant on these orders
    cannot certify it), unless ``eps_lower_at_miss`` is None."""

    q: Fraction
    steps: int
    eps: Fraction
    delta: Fraction
    direction: str
    step: Fraction
    orders: tuple[int, ...]
    sigma: Fraction
    eps_at_sigma: Enclosure
    sigma_miss: Fraction
    eps_at_miss: Enclosure | None
    seconds: float


def calibrate_epsilon(
    q: Number, steps: Number, eps: Number, delta: Number, step: Number = "1e-6", direction: str = "both"
) -> EpsCalibration:
    """Smallest sigma on the ``step`` lattice whose certified RDP epsilon (over the default integer
    orders) is <= eps. Contract: eps_at_sigma.upper <= eps, and eps_at_miss.lower > eps when set.
    eps(sigma) is non-increasing in sigma (each Renyi divergence is), so bisection on the lattice
    index is exact; every probe is a certified evaluation.
    """
    qq = real("q", q, gt=0, le=1)
    n = integer("steps", steps, ge=1)
    target = real("epsilon", eps, gt=0)
    d = real("delta", delta, gt=0, lt=1)
    st = real("step", step, gt=0, le=Fraction(1, 10))
    start = time.perf_counter()
    orders = tuple(DEFAULT_INTEGER_ORDERS)

    def eps_at(k: int) -> Enclosure:
        pair = compose(SubsampledGaussian(qq, k * st, direction), n)
        return epsilon(pair, d, orders=orders).enclosure

    lo = max(1, math.floor(Fraction(1, 10) / st))  # sigma = 0.1 certainly fails any sane target
    hi = lo
    while not eps_at(hi).upper <= target:
        lo, hi = hi, hi * 2
    while hi - lo > 1:  # invariant: eps_at(hi).upper <= target; lo fails (or is the start)
        mid = (lo + hi) // 2
        if eps_at(mid).upper <= target:
            hi = mid
        else:
            lo = mid
    at_sigma = eps_at(hi)
    miss = eps_at(hi - 1)
    return EpsCalibration(
        qq,
        n,
        target,
        d,
        direction,
        st,
        orders,
        hi * st,
        at_sigma,
        (hi - 1) * st,
        miss if miss.lower > target else None,
        time.perf_counter() - start,
    )
