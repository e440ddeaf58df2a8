"""Certified sigma calibration of the Poisson-subsampled Gaussian to an (eps, delta) target (RDP)."""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from certdp.budget import Deadline, as_deadline
from certdp.cert.limits import MAX_SG_STEPS, MAX_SIGMA, MIN_SIGMA, calibration_step
from certdp.enclose import Enclosure
from certdp.enclose.ball import readable_repr
from certdp.errors import LimitExceeded, fmt_value
from certdp.notions import DEFAULT_INTEGER_ORDERS
from certdp.notions.eps_delta import epsilon
from certdp.pairs import SubsampledGaussian, compose
from certdp.pairs.params import Number, integer, real

#: Orders on each side of the best one that the search probes (each order costs a quadrature for
#: the add direction; the final claim and its refutation use every order).
WINDOW = 3

#: Largest sigma the search tries and the most steps it calibrates are the certificate verifier's
#: limits, so that every calibration can be written as a certificate that an auditor will check.
MAX_STEPS = MAX_SG_STEPS


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

    __repr__ = readable_repr


def calibrate_epsilon(
    q: Number,
    steps: Number,
    eps: Number,
    delta: Number,
    step: Number = "1e-6",
    direction: str = "both",
    max_seconds: Number | Deadline | None = None,
) -> EpsCalibration:
    """Smallest sigma on the ``step`` lattice whose certified RDP epsilon (over the default integer
    orders) is <= eps. Raises LimitExceeded when steps > MAX_STEPS or when even sigma = MAX_SIGMA
    misses the target (one certified probe, so the search never doubles without end).
    Contract: eps_at_sigma.upper <= eps, and eps_at_miss.lower > eps when set.
    eps(sigma) is non-increasing in sigma (each Renyi divergence is), so bisection on the lattice
    index is exact; every probe is a certified evaluation. ``max_seconds`` (None: no budget)
    bounds the wall time: certdp.budget.BudgetExhausted between probes once it has run out.
    """
    qq = real("q", q, gt=0, le=1)
    n = integer("steps", steps, ge=1)
    if n > MAX_STEPS:
        raise LimitExceeded(f"steps={n} exceeds the calibration limit {MAX_STEPS} (certificates record at most that)")
    target = real("epsilon", eps, gt=0)
    d = real("delta", delta, gt=0, lt=1)
    st = calibration_step(step)
    deadline = as_deadline(max_seconds)
    start = time.perf_counter()
    orders = tuple(DEFAULT_INTEGER_ORDERS)

    window = list(orders)  # the orders the search probes with; re-centred on the best one as it goes

    def eps_at(k: int, over: Sequence[int] = orders) -> Enclosure:
        deadline.check(f"probing sigma={fmt_value(k * st)}")
        pair = compose(SubsampledGaussian(qq, k * st, direction), n)
        res = epsilon(pair, d, orders=over)
        best = orders.index(round(res.order))
        window[:] = orders[max(0, best - WINDOW) : best + WINDOW + 1]
        return res.enclosure

    def meets(k: int, over: Sequence[int] = orders) -> bool:
        return eps_at(k, over).upper <= target

    def bisect(lo: int, hi: int, over: Sequence[int] | None) -> int:
        # invariant: hi meets the target over the probed orders; lo fails (or is 0: no noise)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if meets(mid, window if over is None else over):
                hi = mid
            else:
                lo = mid
        return hi

    top = math.floor(MAX_SIGMA / st)
    if not meets(top):  # one probe refuses an unreachable target instead of doubling for ever
        raise LimitExceeded(
            f"epsilon={fmt_value(eps)} is not certified even at sigma={MAX_SIGMA} (the calibration limit) "
            f"with q={fmt_value(q)}, steps={n}, delta={fmt_value(delta)}"
        )
    # a certificate records sigma >= MIN_SIGMA (above the pair's own smallest sigma): the lowest
    # index a search may probe, and its failing end below that (sigma = 0 fails every finite target)
    floor_k = math.ceil(MIN_SIGMA / st)
    floor_lo = floor_k if floor_k > 1 else 0
    lo = max(1, math.floor(Fraction(1, 10) / st))  # sigma = 0.1: a start that fails most targets
    hi = lo
    if meets(lo):
        if floor_lo and meets(floor_k):
            raise LimitExceeded(
                f"epsilon={fmt_value(eps)} is met even at sigma={fmt_value(floor_k * st)}, the smallest sigma "
                f"a calibration certifies (q={fmt_value(q)}, steps={n}, delta={fmt_value(delta)}): "
                "the target does not constrain sigma"
            )
        lo = floor_lo
    else:
        while not meets(hi):
            lo, hi = hi, min(hi * 2, top)
    # The search probes a window of orders around the current best one: the minimum over fewer
    # orders is >= the minimum over all, so "meets" on the window implies "meets" on all, and hi
    # stays a meeting sigma. Only the final pair is evaluated over all orders.
    hi = bisect(lo, hi, None)
    at_sigma = eps_at(hi)
    while not at_sigma.upper <= target:  # a refinement may differ by rounding: step up, all orders
        hi += 1
        at_sigma = eps_at(hi)
    # sigma - step = 0 is no mechanism: nothing to refute (hi - 1 >= floor_k otherwise: lo failed)
    miss = eps_at(hi - 1) if hi > 1 else None
    if miss is not None and miss.upper <= target:
        # the window missed the best order below hi: finish the search over all orders
        hi = bisect(floor_lo, hi - 1, orders)
        at_sigma = eps_at(hi)
        miss = eps_at(hi - 1) if hi > 1 else None
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
        miss if miss is not None and miss.lower > target else None,
        time.perf_counter() - start,
    )
