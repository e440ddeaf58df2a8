"""Certified sigma calibration of random allocation to an (eps, delta) target (docs/math.md §9.8).

delta(eps) is non-increasing in sigma in both directions (docs/math.md §9.8, "Monotonicity in
sigma": adding Gaussian noise is a post-processing), so the sigmas meeting the target form a ray
[sigma*, inf). On the lattice of multiples of ``step`` (the one calibrate_tv uses), the answer
``sigma`` has a proved claim delta_upper(eps) <= delta, and ``sigma - step`` a proved violation
delta_lower(eps) > delta, when both are decided; otherwise the record states the proved interval:
the least lattice sigma meeting the target lies in (sigma_violated, sigma], with sigma_violated
the largest sigma at which a violation was proved (None: none was).

k > 1 (each record in k of the M steps): the calibration runs on the k = 1 pair of floor(M/k)
steps and k E epochs, which bounds k-of-M allocation from above (docs/math.md §9.8, "k > 1").
Its claim at ``sigma`` therefore holds for k-of-M allocation; its violations do not transfer (the
reduction goes one way). Violations come from the lower end of certdp.notions.allocation_k_lower
(an additive statistic's laws) instead: the largest lattice sigma below the claim at which it
proves delta_lower(eps) > delta is ``sigma_violated``, so the least lattice sigma meeting the
target lies in (sigma_violated, sigma]; ``miss_reason`` says why that interval is not one step.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import NamedTuple

from certdp.budget import Deadline, as_deadline
from certdp.cert.limits import MAX_RA_EPOCHS, MAX_RA_STEPS, at_most, calibration_step
from certdp.enclose import Enclosure, to_ball, workprec
from certdp.enclose.ball import readable_repr
from certdp.enclose.refine import Target
from certdp.errors import BudgetExhausted, InvalidArgument, LimitExceeded, PrecisionExhausted, prefixed
from certdp.notions import allocation_dp as adp
from certdp.notions.allocation_k_lower import K_LOWER_MAX_K, KLower
from certdp.notions.tv_certified import LatticeGrid
from certdp.pairs import RandomAllocation
from certdp.pairs.params import Number, exact_str, integer, real

Progress = Callable[[str, float], None]
#: halvings of the first grid tried before a sigma is declared undecided
MAX_HALVINGS = 4
#: float search: iterations, and the sigma range it brackets in
MAX_SEARCH = 40
SIGMA_RANGE = (0.05, 200.0)


#: k > 1: the violation search goes down to sigma / K_SEARCH_FACTOR
K_SEARCH_FACTOR = 8
#: k > 1: float bisection steps of the violation search (each builds the statistic's laws once)
K_SEARCH_STEPS = 14


class _KViolation(NamedTuple):
    """The largest proved violation of the k > 1 search and, at sigma - step, its delta lower end."""

    sigma: Fraction | None
    at_miss: Enclosure | None


def _k_violation(
    red: adp.KReduction,
    sigma: Fraction,
    step: Fraction,
    eps: Fraction,
    delta: Fraction,
    dirs: tuple[str, ...],
    deadline: Deadline,
) -> _KViolation:
    """The largest lattice sigma' < sigma (multiples of ``step``) at which the lower end of
    certdp.notions.allocation_k_lower proves delta(eps) > delta in one of ``dirs``, found by a
    float bisection on the statistic's float estimate (one power, the best at the claim), and its
    certified delta lower end when sigma' = sigma - step; (None, None) when none is proved down
    to sigma / K_SEARCH_FACTOR or the statistic is beyond its limits.

    Contract: a returned sigma' has a proved delta_lower(eps) > delta (a violation of the
    target; delta is non-increasing in sigma, docs/math.md §9.8, so no lattice sigma <= sigma'
    meets it); the Enclosure, when given, encloses [that lower end, 1]."""

    def build(s: Fraction, only: tuple[Fraction, ...] | None) -> KLower | None:
        deadline.check(f"the k > 1 violation search at sigma={exact_str(s)}")
        try:
            low = KLower.build(s, red.steps, red.epochs, red.k, float(eps) + 1.0, float(delta))
        except LimitExceeded:
            return None
        return replace(low, only=only)

    def proved(low: KLower) -> Fraction | None:
        for dn in dirs:
            with workprec(128):
                value = low.delta_lower(eps, dn)
                if value > to_ball(delta):  # certainly above: a proved violation
                    return Enclosure.from_ball(value, 128).lower
        return None

    if sigma - step <= 0:
        return _KViolation(None, None)
    first = build(sigma - step, None)
    if first is None:
        return _KViolation(None, None)
    # the power each direction's coarse tuning picks at eps; the bisection keeps the better one
    picks = [(first.tuned(dn, eps=float(eps))[0], dn) for dn in dirs]
    best = max(picks, key=lambda pd: replace(first, only=(pd[0],)).float_delta(float(eps), pd[1])[0])
    at = proved(first)
    if at is not None:
        return _KViolation(sigma - step, Enclosure.from_bounds(at, Fraction(1), 128))
    power = (best[0],)
    # float bisection on the lattice index: violated at lo (float), not at hi
    hi = math.floor((sigma - step) / step)
    lo = max(1, math.floor(sigma / K_SEARCH_FACTOR / step))

    def estimate(index: int) -> float:
        low = build(index * step, power)
        if low is None:
            return 0.0
        try:
            return max(low.float_delta(float(eps), dn)[0] for dn in dirs)
        except LimitExceeded:
            return 0.0

    if estimate(lo) <= float(delta):
        return _KViolation(None, None)
    for _ in range(K_SEARCH_STEPS):
        if hi - lo <= 1:
            break
        mid = (lo + hi) // 2
        if estimate(mid) > float(delta):
            lo = mid
        else:
            hi = mid
    # certify at lo, then a few lattice points below it (the float estimate may be a hair high)
    for index in (lo, lo - 1, lo - 2, (lo * 99) // 100):
        if index < 1:
            break
        low = build(index * step, power)
        if low is not None and proved(low) is not None:
            return _KViolation(index * step, None)
    return _KViolation(None, None)


#: halvings of sigma tried to bracket the least sigma from below when the walk down does not end
MAX_BRACKET = 6
#: doubling jumps up from the float root while its sigmas are proved to miss (after 8 single steps)
MAX_CLIMB = 12


class _Bisected(NamedTuple):
    """What :func:`_bisect_down` proved (field meanings in its docstring)."""

    sigma: Fraction
    claim: tuple[Fraction, Fraction]
    grid: LatticeGrid | None
    violated: Fraction | None
    miss_bounds: tuple[Fraction, Fraction] | None
    miss_grid: LatticeGrid | None
    reason: str | None


def _bisect_down(
    ev: _Evaluator,
    d: Fraction,
    st: Fraction,
    sigma: Fraction,
    claim: tuple[Fraction, Fraction],
    grid: LatticeGrid | None,
    violated: Fraction | None,
) -> _Bisected:
    """The least lattice sigma below ``sigma`` that the evaluator proves to meet the target, by
    bisection between ``sigma`` (meets) and a lower bracket (halving sigma while it meets, at most
    MAX_BRACKET times), with the largest proved violation seen: (sigma, claim, grid, violated,
    miss_bounds, miss_grid, reason).

    Contract: the returned sigma has a proved claim (its bounds and grid); miss_bounds is set
    only when sigma - step has a proved violation; violated is the largest sigma proved to
    violate (or the one given); reason says why sigma - step is not decided, else None."""
    hi = sigma / st
    assert hi.denominator == 1
    hi_k = int(hi)
    verdicts: dict[int, tuple[str, tuple[Fraction, Fraction] | None, LatticeGrid | None]] = {}

    def probe(k: int) -> str:
        nonlocal violated
        if k not in verdicts:
            verdicts[k] = ev.decide(k * st, d)
        verdict = verdicts[k][0]
        if verdict == "misses" and (violated is None or k * st > violated):
            violated = k * st
        return verdict

    if violated is not None and violated < sigma and (violated / st).denominator == 1:
        lo_k = int(violated / st)  # a proved violation: the least sigma lies above it
    else:
        lo_k = max(1, hi_k // 2)
        for _ in range(MAX_BRACKET):
            if lo_k >= hi_k or probe(lo_k) != "meets":
                break
            hi_k, lo_k = lo_k, max(1, lo_k // 2)
    while hi_k - lo_k > 1:
        mid = (lo_k + hi_k) // 2
        if probe(mid) == "meets":
            hi_k = mid
        else:
            lo_k = mid
    sigma = hi_k * st
    if hi_k in verdicts:
        _, bounds, found = verdicts[hi_k]
        assert bounds is not None
        claim, grid = bounds, found
    below = verdicts.get(hi_k - 1)
    if below is not None and below[0] == "misses":
        return _Bisected(sigma, claim, grid, violated, below[1], below[2], None)
    if hi_k - 1 < 1:
        return _Bisected(sigma, claim, grid, violated, None, None, "sigma - step is not positive")
    if below is None:
        probe(hi_k - 1)
        below = verdicts[hi_k - 1]
        if below[0] == "misses":
            return _Bisected(sigma, claim, grid, violated, below[1], below[2], None)
    return _Bisected(sigma, claim, grid, violated, None, None, _undecided(below[1]))


def _undecided(bounds: tuple[Fraction, Fraction] | None) -> str:
    """The miss_reason of an undecided sigma - step, with its last bounds when there are any."""
    if bounds is None:
        return "delta at sigma - step: no grid within the work limits"
    return (
        f"delta at sigma - step is not decided on grids within the work limits (last bounds "
        f"[{float(bounds[0]):.8g}, {float(bounds[1]):.8g}])"
    )


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
    #: the upper-side grid that proved the claim at sigma, and the lower-side grid that proved the
    #: violation at sigma_miss (None without one): a certificate records them (certdp.cert.write)
    grid: LatticeGrid | None = None
    miss_grid: LatticeGrid | None = None
    #: steps per epoch each record is used in; for k > 1 ``note`` says what is (not) proved and
    #: reduced_steps / reduced_epochs name the k = 1 run the bounds were computed on
    k: int = 1
    note: str | None = None
    reduced_steps: int | None = None
    reduced_epochs: int | None = None
    #: how delta was bounded: "lattice" (certdp.notions.allocation_dp; a certificate can record
    #: it), "closed form" (one step per epoch: the Gaussian's, exact; no grid to record), or for
    #: 1 < k < M "reduction: ..." (the reduced run's claim, the statistic's violations)
    bounds: str = "lattice"

    __repr__ = readable_repr

    def to_dict(self) -> dict[str, object]:
        """Contract: exact decimal strings of every field; bounds rounded outward."""
        rec: dict[str, object] = {
            "target": "eps-delta",
            "steps": self.steps,
            "epochs": self.epochs,
            "k": self.k,
            "one_sided": self.k > 1 and self.sigma_violated is None,
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
            "bounds": self.bounds,
        }
        if self.k > 1:
            rec["note"] = self.note
            rec["reduced"] = {"steps": self.reduced_steps, "epochs": self.reduced_epochs}
        return rec


#: precisions (bits) at which the closed form's delta is tried before a sigma is left undecided
ONE_STEP_PRECS = (64, 128, 256, 512, 1024)


def _one_step_calibration(
    epochs: int, eps: Fraction, d: Fraction, st: Fraction, direction: str, deadline: Deadline
) -> AllocationDpCalibration | None:
    """One step per epoch: the run is N(0, 1) vs N(mu, 1) with mu^2 = E / sigma^2 in both
    directions (docs/math.md §9.8, "One step"), so delta(eps) at each lattice sigma is the
    Gaussian's closed form (certdp.notions.gdp.gaussian_delta, mu^2 exact). A bisection on the
    multiples n * step with certified verdicts only: the claim at sigma is a proved
    delta_upper <= delta, the violation at sigma - step a proved delta_lower > delta (attack review
    50: the lattice left M = 2, k = 2, step 1e-9 undecided over 1000 steps after 259 s).

    Contract: as :func:`calibrate_eps_delta` for the one-step run; None where mu^2 leaves the
    closed form's range at a sigma the search needs (the lattice then calibrates)."""
    from certdp.notions.gdp import gaussian_delta

    start = time.perf_counter()
    count = 0

    def verdict(n: int) -> tuple[bool | None, Enclosure]:
        """True: delta_upper <= d proved at sigma = n step; False: delta_lower > d proved; None: neither."""
        nonlocal count
        mu_sq = Fraction(epochs) / (n * st) ** 2
        enc = Enclosure.from_bounds(Fraction(0), Fraction(1), 64)
        for prec in ONE_STEP_PRECS:
            deadline.check(f"the closed-form calibration at sigma={exact_str(n * st)}")
            count += 1
            # a loose width (half the bits): only a verdict is needed, and near delta = TV (small mu)
            # the closed form cancels about log2(1/delta) bits, so 2^(16 - prec) failed at every prec
            target = Target(rel_tol=2.0 ** -(prec // 2), abs_tol=0.0, start_prec=prec, max_prec=prec)
            try:
                enc = gaussian_delta(mu_sq, eps, target)
            except PrecisionExhausted:  # not to this width at this precision: the next one
                continue
            if enc.upper <= d:
                return True, enc
            if enc.lower > d:
                return False, enc
        return None, enc

    seen: dict[int, tuple[bool | None, Enclosure]] = {}
    hi, lo = 0, 0  # the least proved claim, the largest proved violation (0: none yet), in steps
    ties: list[int] = []  # undecided points: delta(n step) equals delta beyond 1024 bits there

    def probe(n: int) -> bool | None:
        nonlocal hi, lo
        if n not in seen:
            seen[n] = verdict(n)
        ok = seen[n][0]
        if ok is True:
            hi = n if hi == 0 else min(hi, n)
        elif ok is False:
            lo = max(lo, n)
        elif n not in ties:
            ties.append(n)
        return ok

    try:
        # the claim side doubles up from sigma = 1; delta is strictly decreasing in sigma, so at
        # most one tie point exists, and the lattice points beside it decide (attack review 51: a
        # tie at the first probe or at a midpoint gave up, leaving 91 s of lattice or 1000 steps)
        n = max(1, math.ceil(1 / st))
        while hi == 0:
            if probe(n) is None and probe(n + 1) is not True:
                return None
            n *= 2
        n = hi // 2
        while lo == 0 and n >= 1:
            if probe(n) is None and n > 1 and probe(n - 1) is None:
                return None
            n //= 2
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if mid in ties:
                break
            if probe(mid) is None:
                for beside in (mid + 1, mid - 1):
                    if lo < beside < hi:
                        probe(beside)
    except InvalidArgument:  # mu^2 outside the closed form's range (no cap on sigma / step otherwise)
        return None
    claim = seen[hi][1]
    miss = seen[lo][1] if lo >= 1 else None
    one_below = hi - lo == 1 and lo >= 1
    reason = None
    if lo == 0 and hi == 1:
        reason = "sigma is the first point of the step lattice: sigma - step = 0 adds no noise"
    elif not one_below:
        reason = (
            f"delta at sigma={exact_str(ties[0] * st)} equals the target beyond the closed form's "
            f"{ONE_STEP_PRECS[-1]} bits"
            if ties
            else "no violation is proved at any sigma above 0"
        )
    return AllocationDpCalibration(
        steps=1,
        epochs=epochs,
        epsilon=eps,
        delta=d,
        direction=direction,
        step=st,
        sigma=hi * st,
        delta_upper=claim,
        sigma_miss=(hi - 1) * st,
        delta_lower_at_miss=miss if one_below else None,
        miss_reason=reason,
        sigma_violated=lo * st if lo >= 1 else None,
        evaluations=count,
        seconds=time.perf_counter() - start,
        bounds="closed form",
    )


class _Evaluator:
    """Certified delta(eps) enclosures at a sigma, on the grids of allocation_dp (halvings h, eta)."""

    def __init__(
        self,
        m: int,
        e: int,
        eps: Fraction,
        dirs: tuple[str, ...],
        deadline: Deadline,
        progress: Progress | None,
        delta: Fraction = Fraction(1, 10**5),
    ):
        self.m, self.e, self.eps, self.dirs = m, e, eps, dirs
        self.deadline, self.progress = deadline, progress
        self.count = 0
        # the grids of allocation_eps_bounds below FIRST_DELTA: a TV slack of delta / 10 and a
        # first grid coarser by one halving per factor 4 (allocation_dp.first_halvings); at a
        # slack of 1e-6 the bounds at delta = 1e-11 were all far above delta and no sigma near the
        # least one was decided (M = 10, eps = 4: none in 137 s); at and above it, as before
        small = delta < adp.FIRST_DELTA
        self.slack = max(float(delta) / 10, 1e-9) if small else 1e-6
        self.first = adp.first_halvings(delta) - adp.FIRST_HALVINGS if small else 0
        #: (upper grid, lower grid) of the last enclosure
        self.grids: tuple[LatticeGrid, LatticeGrid] | None = None

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
        up, low = adp._lattices(pair, self.slack, float(self.eps), self.dirs, 128, ref, note, self.first + halvings)
        assert up.lat is not None
        with workprec(128):
            hi = Enclosure.from_ball(up.delta(self.eps, self.dirs), 128).upper
            # the lower grid recorded is that of the direction with the larger lower end (the add
            # direction's lower lattice, or the remove direction's down lattice)
            best: tuple[Fraction, LatticeGrid] | None = None
            for d in self.dirs:
                lat = low.remove if d == "remove" else low.lat
                assert lat is not None
                value = Enclosure.from_ball(low.delta(self.eps, (d,)), 128).lower
                if best is None or value > best[0]:
                    best = (value, lat.grid)
            assert best is not None
        self.grids = (up.lat.grid, best[1])
        return max(best[0], Fraction(0)), min(hi, Fraction(1))

    def decide(
        self, sigma: Fraction, delta: Fraction
    ) -> tuple[str, tuple[Fraction, Fraction] | None, LatticeGrid | None]:
        """("meets", bounds, upper grid) with upper <= delta proved, ("misses", bounds, lower
        grid) with lower > delta proved, or ("undecided", last bounds or None, None) after
        MAX_HALVINGS or at the work limits."""
        last = None
        for halvings in range(MAX_HALVINGS + 1):
            try:
                lo, hi = self.enclose(sigma, halvings)
            except (LimitExceeded, PrecisionExhausted):
                break
            last = (lo, hi)
            assert self.grids is not None
            if hi <= delta:
                return "meets", last, self.grids[0]
            if lo > delta:
                return "misses", last, self.grids[1]
        return "undecided", last, None


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
    closed_form: bool = True,
) -> AllocationDpCalibration:
    """Smallest sigma on the ``step`` lattice certified (eps, delta)-DP for random allocation, and a
    certified violation one step below.

    ``closed_form``: a run of one step per epoch (M = 1, k = M, or a k > 1 run reducing to one
    step) is calibrated by the Gaussian's closed form (``bounds`` "closed form"; no grid is
    recorded); False keeps the lattices, whose grids a certificate records.

    Contract: ``sigma`` has a proved delta_upper(eps) <= delta (certdp.notions.allocation_dp) in
    ``direction``; when ``delta_lower_at_miss`` is set, sigma - step has a proved
    delta_lower(eps) > delta, so no smaller lattice sigma meets the target (delta is
    non-increasing in sigma, docs/math.md §9.8); otherwise the least lattice sigma meeting it is
    in (sigma_violated, sigma] (``proved_interval``). The float search only proposes sigmas.
    1 < k < M (k <= M, else InvalidArgument): the claim is that of the k = 1 pair of floor(M/k)
    steps and k E epochs (an upper bound, docs/math.md §9.8); violations are those the lower end of
    certdp.notions.allocation_k_lower proves (``sigma_violated``; ``delta_lower_at_miss`` when at
    sigma - step; None and the reason in ``miss_reason`` when none is proved). k = M: the claim and
    the violation of the 1-step run of M E epochs, which is the run (KReduction.equal).
    """
    m, e = integer("steps", steps, ge=1), integer("epochs", epochs, ge=1)
    at_most("steps", m, MAX_RA_STEPS)
    at_most("epochs", e, MAX_RA_EPOCHS)
    red = adp.k_reduction(m, e, k)
    if red.k > 1:
        at_most("k*epochs", red.reduced_epochs, MAX_RA_EPOCHS)
        # one budget for the claim and the violation search (a number would restart it)
        deadline = as_deadline(max_seconds)
        try:
            res = calibrate_eps_delta(
                red.reduced_steps,
                red.reduced_epochs,
                epsilon,
                delta,
                step,
                direction=direction,
                progress=progress,
                max_seconds=deadline,
                closed_form=closed_form,
            )
        except (LimitExceeded, PrecisionExhausted, BudgetExhausted) as exc:
            # its message names the reduced run's steps and epochs: say whose setting that is
            raise prefixed(exc, red.names()) from None
    if red.equal:
        # k = M: the reduced run (1 step, M E epochs) is the run itself, so its claim and its
        # violation are both proved for the run (docs/math.md §9.8, "k = M")
        return replace(
            res, steps=m, epochs=e, k=red.k, note=red.note(), reduced_steps=1, reduced_epochs=red.reduced_epochs
        )
    if red.one_sided:
        # the reduced pair's violations and lower ends bound nothing for k-of-M allocation: dropped,
        # and searched for again with the k-of-M pair's own lower end
        eps_k, d_k = adp._check_eps(epsilon), real("delta", delta, gt=0, lt=1)
        try:
            violated_k, at_miss = _k_violation(
                red, res.sigma, res.step, eps_k, d_k, adp._directions(direction), deadline
            )
            ran_out = None
        except BudgetExhausted as exc:
            # the claim is proved already: keep it, one-sided, and say why no violation is given
            violated_k, at_miss, ran_out = None, None, str(exc).split(";")[0]
        if ran_out is not None:
            reason = f"k > 1: {ran_out} (the claim was proved before; no violation is searched further)"
        elif at_miss is not None:
            reason = None
        elif violated_k is None and red.k > K_LOWER_MAX_K:
            reason = f"k={red.k} > {K_LOWER_MAX_K}: no lower end is computed, so no violation is proved"
        elif violated_k is None:
            reason = (
                "k > 1: the statistic's lower end proves no violation down to sigma / "
                f"{K_SEARCH_FACTOR} (the reduction's upper end and that lower end are far apart)"
            )
        else:
            reason = (
                "k > 1: the reduction's upper end (the claim) and the statistic's lower end (the violation) "
                "are not tight enough to decide sigma - step (docs/math.md §9.8)"
            )
        return replace(
            res,
            steps=m,
            epochs=e,
            delta_upper=Enclosure.from_bounds(Fraction(0), res.delta_upper.upper, 128),
            delta_lower_at_miss=at_miss,
            miss_reason=reason,
            sigma_violated=violated_k,
            miss_grid=None,
            k=red.k,
            # not a Gaussian, nor a lattice of this run (attack review 51): say whose claim it is
            bounds=f"reduction: {res.bounds} claim of the reduced run, additive-statistic violations",
            seconds=deadline.elapsed(),  # the claim and the violation search together
            note=red.note(violated_k is not None),
            reduced_steps=red.reduced_steps,
            reduced_epochs=red.reduced_epochs,
        )
    dirs = adp._directions(direction)
    eps = real("epsilon", epsilon, ge=0)  # the lattice's own limit (MAX_EPS) is checked below
    d = real("delta", delta, gt=0, lt=1)
    st = calibration_step(step)
    deadline = as_deadline(max_seconds)
    # the closed form has no epsilon limit (attack review 51: eps 31 was refused as beyond "the
    # largest epsilon the lattice bounds attempt" on a path that builds no lattice)
    if m == 1 and closed_form and (one := _one_step_calibration(e, eps, d, st, direction, deadline)) is not None:
        return one
    eps = adp._check_eps(eps)
    start = time.perf_counter()
    ev = _Evaluator(m, e, eps, dirs, deadline, progress, d)
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
    grid: LatticeGrid | None = None
    jump = 1
    for tries in range(8 + MAX_CLIMB):  # the coarse root is close; a few steps up cover its error
        sigma = kk * st
        verdict, bounds, found = ev.decide(sigma, d)
        if verdict == "meets":
            claim, grid = bounds, found
            break
        if verdict == "misses" and (violated is None or sigma > violated):
            violated = sigma
        if tries >= 7:
            # still not proved to meet after 8 single steps: climb in doubling jumps (attack
            # review: M = 1, E = 10, eps = 4, delta = 1e-11 started 36 steps below the least sigma)
            jump *= 2
        kk += jump
    if claim is None:
        raise PrecisionExhausted(
            f"epsilon={exact_str(eps)}, delta={exact_str(d)}: no sigma near {b:.8g} could be certified on grids "
            "within the work limits"
        )
    miss_bounds: tuple[Fraction, Fraction] | None = None
    miss_grid: LatticeGrid | None = None
    reason: str | None = None
    # after a climb in jumps the least sigma may lie far below the claim: bisect at once
    walk = 0 if jump > 1 else 8
    for _ in range(walk):  # walk down while the sigma below also meets the target
        sigma_miss = sigma - st
        if sigma_miss <= 0:
            reason = "sigma - step is not positive"
            break
        verdict, bounds, found = ev.decide(sigma_miss, d)
        if verdict == "meets" and bounds is not None:
            sigma, claim, grid = sigma_miss, bounds, found
            continue
        if verdict == "misses" and bounds is not None:
            miss_bounds, miss_grid = bounds, found
            violated = sigma_miss if violated is None or sigma_miss > violated else violated
        else:
            reason = _undecided(bounds)
        break
    else:
        # no walk (a climb in jumps), or the float root was far above the least sigma (at small
        # delta it reads loose enclosures): bisect on the lattice with certified verdicts only
        sigma, claim, grid, violated, miss_bounds, miss_grid, reason = _bisect_down(
            ev, d, st, sigma, claim, grid, violated
        )
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
        grid=grid,
        miss_grid=miss_grid,
    )


#: the recorded ends of a certificate are multiples of 2^-END_BITS (exact dyadics)
END_BITS = 40
#: relative resolution of the bisection for the recorded ends
END_RESOLUTION = Fraction(1, 2**24)


@dataclass(frozen=True)
class CertificateEnds:
    """The ends a random-allocation (epsilon, delta) certificate records (certdp.cert.write
    hockey_check): ``claim`` is an epsilon <= the target at which the claim's grid proves
    delta_upper <= delta in every direction at sigma; ``refutation`` (None with ``reason``) an
    epsilon > the target at which the miss grid proves delta_lower > delta in one direction at
    sigma - step."""

    claim: Fraction
    refutation: Fraction | None
    reason: str | None


def _dyadic_floor(x: Fraction) -> Fraction:
    return Fraction(math.floor(x * 2**END_BITS), 2**END_BITS)


def _bisect(holds: Callable[[Fraction], bool], good: Fraction, bad: Fraction) -> Fraction:
    """A dyadic point where ``holds`` is True, moved from ``good`` toward ``bad`` (``holds`` is
    True at good) until the two are END_RESOLUTION apart relative (floats never decide)."""
    for _ in range(64):
        if abs(bad - good) <= max(abs(good), Fraction(1, 2**20)) * END_RESOLUTION:
            break
        mid = _dyadic_floor((good + bad) / 2)
        if mid in (good, bad):
            break
        if holds(mid):
            good = mid
        else:
            bad = mid
    return good


def _loosened_end(end: Fraction, relation: str, threshold: Fraction, holds: Callable[[Fraction], bool]) -> Fraction:
    """``end`` moved outward by certdp.cert.write.RECORD_SLACK relative (the margin for an
    auditor's certdp that differs in the last bits) when the moved end still decides the relation
    and is still proved on the same lattice, else ``end``."""
    from certdp.cert.write import RECORD_SLACK

    moved = end + abs(end) * RECORD_SLACK if relation == "<=" else end - abs(end) * RECORD_SLACK
    decides = moved <= threshold if relation == "<=" else moved > threshold
    return moved if decides and holds(moved) else end


def certificate_ends(res: AllocationDpCalibration) -> CertificateEnds:
    """The epsilon ends a certificate of ``res`` records, each proved on the lattice the verifier
    rebuilds (certdp.notions.allocation_dp.certificate_lattice of the recorded grid and target).

    Contract: ``claim`` is a dyadic eps <= res.epsilon with hockey_decide True on the upper-side
    lattice of res.grid at sigma (so the run is (claim, delta)-DP); ``refutation`` a dyadic eps in
    (res.epsilon, res.epsilon + CERT_EPS_MARGIN] with RefutationLattices.decide True on the lower-side
    lattices of res.miss_grid at sigma - step (a proved violation of (eps', delta) for every
    eps' <= refutation), or None with ``reason``; docs/math.md §9.8. PrecisionExhausted when the
    claim's grid does not prove the target (the calibration's lattice differs only in its
    threshold range, so this is not expected). k > 1: the claim on the reduction's k = 1 run
    (floor(M/k) steps, k E epochs; res.grid is its grid), which the verifier rebuilds from the
    recorded k; never a refutation (the reduction bounds from above only, and the violation the
    additive statistic proves is not a check certdp verify recomputes), except for k = M, whose
    reduced run is the run (KReduction.equal): its refutation is proved and recorded as for k = 1.
    """
    if res.grid is None:
        raise PrecisionExhausted("the calibration recorded no grid for its claim")
    dirs = adp._directions(res.direction)
    eps, d = res.epsilon, res.delta
    steps, epochs = (res.steps, res.epochs) if res.k == 1 else (res.reduced_steps, res.reduced_epochs)
    assert steps is not None and epochs is not None
    up = adp.certificate_lattice(RandomAllocation(steps, res.sigma, epochs), res.grid, "upper", eps)

    def meets(x: Fraction) -> bool:
        return adp.hockey_decide(up, x, d, dirs)[0]

    top = _dyadic_floor(eps)
    if not meets(top):
        raise PrecisionExhausted(
            f"epsilon={exact_str(eps)}: the claim's grid at sigma={exact_str(res.sigma)} does not prove delta_upper "
            "<= delta on the certificate lattice"
        )
    claim = Fraction(0) if meets(Fraction(0)) else _bisect(meets, top, Fraction(0))
    claim = _loosened_end(claim, "<=", eps, meets)
    if res.k != 1 and res.k != res.steps:
        found = (
            f"the additive statistic proves sigma={exact_str(res.sigma_violated)} violates the target"
            if res.sigma_violated is not None
            else "no violation was proved"
        )
        return CertificateEnds(
            claim,
            None,
            f"k={res.k} > 1: no refutation check (the reduction to k = 1 bounds from above only; {found}, "
            "by a lower end certdp verify does not recompute)",
        )
    if res.miss_grid is None:
        return CertificateEnds(claim, None, res.miss_reason or "no violation was proved at sigma - step")
    # the lattices are built once and kept for the bisection's every probe
    low = adp.RefutationLattices(RandomAllocation(steps, res.sigma_miss, epochs), res.miss_grid, eps)

    def violates(x: Fraction) -> bool:
        return low.decide(x, d, dirs)[0]

    start = top + Fraction(1, 2**END_BITS)  # the least dyadic of this resolution above eps
    if not violates(start):
        return CertificateEnds(
            claim, None, "delta_lower at sigma - step is not > delta just above epsilon on the certificate lattice"
        )
    ceiling = eps + adp.CERT_EPS_MARGIN
    refutation = (
        ceiling if violates(ceiling) and _dyadic_floor(ceiling) == ceiling else _bisect(violates, start, ceiling)
    )
    return CertificateEnds(claim, _loosened_end(refutation, ">", eps, violates), None)
