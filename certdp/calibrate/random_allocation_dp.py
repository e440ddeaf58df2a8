"""Certified sigma calibration of random allocation to an (eps, delta) target (docs/math.md §9.8).

delta(eps) is non-increasing in sigma in both directions (docs/math.md §9.8, "Monotonicity in
sigma": adding Gaussian noise is a post-processing), so the sigmas meeting the target form a ray
[sigma*, inf). On the lattice of multiples of ``step`` (the one calibrate_tv uses), the answer
``sigma`` has a proved claim delta_upper(eps) <= delta, and ``sigma - step`` a proved violation
delta_lower(eps) > delta, when both are decided; otherwise the record states the proved interval:
the least lattice sigma meeting the target lies in (sigma_violated, sigma], with sigma_violated
the largest sigma at which a violation was proved (None: none was).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from certdp.budget import Deadline, as_deadline
from certdp.cert.limits import MAX_RA_EPOCHS, MAX_RA_STEPS, at_most, calibration_step
from certdp.enclose import Enclosure, workprec
from certdp.enclose.ball import readable_repr
from certdp.errors import LimitExceeded, PrecisionExhausted
from certdp.notions import allocation_dp as adp
from certdp.pairs import RandomAllocation
from certdp.pairs.params import Number, exact_str, integer, real

Progress = Callable[[str, float], None]
#: halvings of the first grid tried before a sigma is declared undecided
MAX_HALVINGS = 4
#: float search: iterations, and the sigma range it brackets in
MAX_SEARCH = 40
SIGMA_RANGE = (0.05, 200.0)


@dataclass(frozen=True)
class AllocationDpCalibration:
    """sigma meets the (eps, delta) target (proved delta_upper <= delta); sigma_miss = sigma - step
    misses it (proved delta_lower > delta) unless ``miss_reason`` says why not."""

    steps: int
    epochs: int
    epsilon: Fraction
    delta: Fraction
    direction: str
    step: Fraction
    sigma: Fraction
    delta_upper: Enclosure
    sigma_miss: Fraction
    delta_lower_at_miss: Enclosure | None
    miss_reason: str | None
    sigma_violated: Fraction | None
    evaluations: int
    seconds: float

    __repr__ = readable_repr

    def to_dict(self) -> dict[str, object]:
        """Contract: exact decimal strings of every field; bounds rounded outward."""
        return {
            "target": "eps-delta",
            "steps": self.steps,
            "epochs": self.epochs,
            "epsilon": exact_str(self.epsilon),
            "delta": exact_str(self.delta),
            "direction": self.direction,
            "step": exact_str(self.step),
            "sigma": exact_str(self.sigma),
            "delta_upper": self.delta_upper.upper_str(),
            "sigma_miss": exact_str(self.sigma_miss),
            "delta_lower_at_miss": None if self.delta_lower_at_miss is None else self.delta_lower_at_miss.lower_str(),
            "miss_reason": self.miss_reason,
            "sigma_violated": None if self.sigma_violated is None else exact_str(self.sigma_violated),
            "proved_interval": {
                "lower_open": None if self.sigma_violated is None else exact_str(self.sigma_violated),
                "upper": exact_str(self.sigma),
                "means": "the least sigma on the step lattice meeting the target is in (lower_open, upper] "
                "(lower_open null: no violation proved)",
            },
            "evaluations": self.evaluations,
            "seconds": round(self.seconds, 3),
        }


class _Evaluator:
    """Certified delta(eps) enclosures at a sigma, on the grids of allocation_dp (halvings h, eta)."""

    def __init__(
        self, m: int, e: int, eps: Fraction, dirs: tuple[str, ...], deadline: Deadline, progress: Progress | None
    ):
        self.m, self.e, self.eps, self.dirs = m, e, eps, dirs
        self.deadline, self.progress = deadline, progress
        self.count = 0

    def enclose(self, sigma: Fraction, halvings: int) -> tuple[Fraction, Fraction]:
        self.count += 1
        doing = f"bounding delta at sigma={exact_str(sigma)}"
        self.deadline.check(doing)

        def note(what: str, frac: float) -> None:
            self.deadline.check(doing)
            if self.progress is not None:
                self.progress(what, frac)

        pair = RandomAllocation(self.m, sigma, self.e)
        ref = adp._numeric_ref(pair)
        up, low = adp._lattices(pair, 1e-6, float(self.eps), self.dirs, 128, ref, note, halvings)
        with workprec(128):
            hi = Enclosure.from_ball(up.delta(self.eps, self.dirs), 128).upper
            lo = Enclosure.from_ball(low.delta(self.eps, self.dirs), 128).lower
        return max(lo, Fraction(0)), min(hi, Fraction(1))

    def decide(self, sigma: Fraction, delta: Fraction) -> tuple[str, tuple[Fraction, Fraction] | None]:
        """("meets", bounds) with upper <= delta proved, ("misses", bounds) with lower > delta
        proved, or ("undecided", last bounds or None) after MAX_HALVINGS or at the work limits."""
        last = None
        for halvings in range(MAX_HALVINGS + 1):
            try:
                lo, hi = self.enclose(sigma, halvings)
            except (LimitExceeded, PrecisionExhausted):
                break
            last = (lo, hi)
            if hi <= delta:
                return "meets", last
            if lo > delta:
                return "misses", last
        return "undecided", last


def calibrate_eps_delta(
    steps: Number,
    epochs: Number,
    epsilon: Number,
    delta: Number,
    step: Number = "1e-4",
    *,
    direction: str = "both",
    k: Number = 1,
    progress: Progress | None = None,
    max_seconds: Number | Deadline | None = None,
) -> AllocationDpCalibration:
    """Smallest sigma on the ``step`` lattice certified (eps, delta)-DP for random allocation, and a
    certified violation one step below.

    Contract: ``sigma`` has a proved delta_upper(eps) <= delta (certdp.notions.allocation_dp) in
    ``direction``; when ``delta_lower_at_miss`` is set, sigma - step has a proved
    delta_lower(eps) > delta, so no smaller lattice sigma meets the target (delta is
    non-increasing in sigma, docs/math.md §9.8); otherwise the least lattice sigma meeting it is
    in (sigma_violated, sigma] (``proved_interval``). The float search only proposes sigmas.
    """
    m, e = integer("steps", steps, ge=1), integer("epochs", epochs, ge=1)
    at_most("steps", m, MAX_RA_STEPS)
    at_most("epochs", e, MAX_RA_EPOCHS)
    adp._pair(1, m, e, k)  # refuses k > 1 with its reason
    dirs = adp._directions(direction)
    eps = adp._check_eps(epsilon)
    d = real("delta", delta, gt=0, lt=1)
    st = calibration_step(step)
    deadline = as_deadline(max_seconds)
    start = time.perf_counter()
    ev = _Evaluator(m, e, eps, dirs, deadline, progress)
    violated: Fraction | None = None

    def mid_log(sigma: float) -> float:
        """log of the midpoint of the coarse enclosure minus log delta (a float proposal)."""
        nonlocal violated
        s = Fraction(sigma)
        lo, hi = ev.enclose(s, 0)
        if lo > d and (violated is None or s > violated):
            violated = s
        return math.log(max(float((lo + hi) / 2), 1e-300)) - math.log(float(d))

    # bracket the root of delta(sigma) = delta (f > 0 at a, f <= 0 at b), then regula falsi in log delta
    a = b = 1.0
    fa = fb = mid_log(1.0)
    while fa <= 0 and a > SIGMA_RANGE[0]:
        b, fb = a, fa
        a /= 1.5
        fa = mid_log(a)
    while fb > 0 and b < SIGMA_RANGE[1]:
        a, fa = b, fb
        b *= 1.5
        fb = mid_log(b)
    if not (fa > 0 >= fb):
        raise PrecisionExhausted(
            f"epsilon={exact_str(eps)}, delta={exact_str(d)}: no sigma in [{SIGMA_RANGE[0]}, {SIGMA_RANGE[1]}] "
            "brackets the target"
        )
    for _ in range(MAX_SEARCH):
        if b - a <= 2 * float(st):
            break
        x = b - fb * (b - a) / (fb - fa)
        x = min(max(x, a + 0.05 * (b - a)), b - 0.05 * (b - a))  # keep inside: a guarded regula falsi
        fx = mid_log(x)
        if fx > 0:
            a, fa = x, fx
        else:
            b, fb = x, fx
    kk = math.ceil(Fraction(b) / st)
    claim: tuple[Fraction, Fraction] | None = None
    for _ in range(8):  # the coarse root is close; a few steps up cover its error
        sigma = kk * st
        verdict, bounds = ev.decide(sigma, d)
        if verdict == "meets":
            claim = bounds
            break
        if verdict == "misses" and (violated is None or sigma > violated):
            violated = sigma
        kk += 1
    if claim is None:
        raise PrecisionExhausted(
            f"epsilon={exact_str(eps)}, delta={exact_str(d)}: no sigma near {b:.8g} could be certified on grids "
            "within the work limits"
        )
    miss_bounds: tuple[Fraction, Fraction] | None = None
    reason: str | None = None
    for _ in range(8):  # walk down while the sigma below also meets the target
        sigma_miss = sigma - st
        if sigma_miss <= 0:
            reason = "sigma - step is not positive"
            break
        verdict, bounds = ev.decide(sigma_miss, d)
        if verdict == "meets" and bounds is not None:
            sigma, claim = sigma_miss, bounds
            continue
        if verdict == "misses" and bounds is not None:
            miss_bounds = bounds
            violated = sigma_miss if violated is None or sigma_miss > violated else violated
        else:
            reason = (
                f"delta at sigma - step is not decided on grids within the work limits (last bounds "
                f"[{float(bounds[0]):.8g}, {float(bounds[1]):.8g}])"
                if bounds is not None
                else "delta at sigma - step: no grid within the work limits"
            )
        break
    else:
        reason = "the walk down did not end within 8 steps"
    sigma_miss = sigma - st
    return AllocationDpCalibration(
        steps=m,
        epochs=e,
        epsilon=eps,
        delta=d,
        direction=direction,
        step=st,
        sigma=sigma,
        delta_upper=Enclosure.from_bounds(claim[0], claim[1], 128),
        sigma_miss=sigma_miss,
        delta_lower_at_miss=None if miss_bounds is None else Enclosure.from_bounds(*miss_bounds, 128),
        miss_reason=reason,
        sigma_violated=violated,
        evaluations=ev.count,
        seconds=time.perf_counter() - start,
    )
