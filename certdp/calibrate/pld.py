"""Certified sigma calibration of DP-SGD (the Poisson-subsampled Gaussian, n steps) by the lattice
(PLD) bounds of certdp.notions.pld, with a PROVED refutation one step below.

The claim: at sigma, eps_upper <= eps for every direction (so the mechanism is (eps, delta)-DP).
The refutation: at sigma - step, eps_lower > eps for one direction, i.e. delta(eps) > delta is
proved for that pair: sigma - step is NOT (eps, delta)-DP, so no sound accountant whatever could
certify it. (The RDP calibration's refutation only says that its own accountant cannot.)

Untrusted search, trusted check: floats and coarse lattices propose sigma; only certified lattice
bounds at the recorded lattices decide, and the verifier recomputes them from the certificate.
"""

from __future__ import annotations

import gc
import math
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

from certdp.budget import Deadline, as_deadline
from certdp.cert.limits import (
    MAX_MERGED_THRESHOLD,
    MAX_PLD_CELLS,
    MAX_PLD_H,
    MAX_PLD_PRODUCT,
    MAX_PLD_SPLIT_RANGE,
    MAX_SIGMA,
    MIN_PLD_H,
    MIN_SIGMA,
    calibration_step,
)
from certdp.enclose import workprec
from certdp.enclose.ball import readable_repr
from certdp.enclose.checkpoint import checkpoints
from certdp.errors import BudgetExhausted, LimitExceeded, PrecisionExhausted, fmt_value
from certdp.notions import DEFAULT_INTEGER_ORDERS
from certdp.notions.cost import afford_round
from certdp.notions.eps_delta import epsilon
from certdp.notions.pld import (
    COARSE_FACTOR,
    LatticeBounds,
    LossLattice,
    _pow2_floor,
    lattice_for,
    resolution,
    tuned_lattice,
)
from certdp.notions.pld import MAX_CALIBRATION_STEPS as MAX_PLD_STEPS
from certdp.notions.pld_float import FloatEstimate, float_eps
from certdp.notions.pld_lattice import choose_offset
from certdp.notions.pld_split import SplitLattice, bulk_bits, split_lattice
from certdp.pairs import SubsampledGaussian, compose
from certdp.pairs.params import Number, exact_str, integer, real

#: lattice spacing of the decisive evaluations: at 2^-12 the two-sided eps enclosure of typical
#: DP-SGD settings is within about 2e-5 relative, below what a sigma step of 1e-5 moves eps
CALIBRATION_H = Fraction(1, 2**12)


def default_h(step: Fraction) -> Fraction:
    """The lattice spacing a calibration with this sigma step needs: CALIBRATION_H at step 1e-5,
    and since the bounds' error is second order in h, a factor 2 in h per factor 4 in the step
    (step 0.01: 2^-7), within [2^-14, 2^-6].

    Contract: a power of two in [2^-14, 2^-6]; no enclosure (it only steers tightness).
    """
    doublings = round(math.log2(float(step) / 1e-5) / 2)
    return Fraction(1, 2 ** max(6, min(14, 12 - doublings)))


#: eps_upper and eps_lower resolve eps on the grid 2^-40 Z
EPS_RESOLUTION = Fraction(1, 2**40)

#: most cells of a coarse probe's lattice (a probe only steers; the DP-SGD settings of the issue
#: need at most 11k at 8 x 2^-12)
COARSE_CELLS = 1 << 14

#: what a budget refusal of the calibration suggests asking for instead (calibrate has no
#: --rel-width, and its refutation refines below any --h: attack review, the eps command's advice
#: named flags that failed here)
CALIBRATE_LESS_WORK = "a larger --step (the refutation one step below then needs a coarser lattice)"

#: default sigma step between claim and refutation for the PLD calibration
PLD_STEP = "1e-5"

#: the finest spacing the refinement near the target uses (the verifier's MIN_PLD_H)
MIN_REFINE_H = MIN_PLD_H

#: the powers of every certified probe move to coarser lattices as they spread (decided on exact
#: integers, so `certdp verify` rebuilds the same ones from the certificate's coarsen_powers):
#: CIFAR-10 at 2^-15 (the refutation of (3, 1e-5)), the lower end 5.1 s -> 2.4 s and the upper
#: 2.8 s -> 1.7 s, each end moved by about 1e-7
COARSEN_POWERS = True

#: working precision of the lattice bounds (bits)
PLD_PREC = 128

#: lattices (with their cells and composed sides) a calibration keeps for reuse
CACHED_LATTICES = 8


@dataclass(frozen=True)
class SideResult:
    """One direction at one sigma: its lattice and the certified eps ends [lower, upper] there
    (None where that side was not computed)."""

    direction: str
    lattice: LossLattice | SplitLattice
    lower: Fraction | None
    upper: Fraction | None

    __repr__ = readable_repr


@dataclass(frozen=True)
class PldCalibration:
    """sigma is certified (every direction's eps_upper <= eps on ``claim``'s lattices); at
    sigma_miss = sigma - step, ``refutation`` proves eps_lower > eps for one direction (None, with
    ``miss_reason``, when the lattice bounds are not tight enough to prove it)."""

    q: Fraction
    steps: int
    eps: Fraction
    delta: Fraction
    direction: str
    step: Fraction
    h: Fraction
    prec_bits: int
    prune_floor: Fraction
    sigma: Fraction
    claim: list[SideResult]
    sigma_miss: Fraction
    refutation: list[SideResult] | None
    miss_reason: str | None
    seconds: float
    probes: dict[str, int] = field(default_factory=dict)
    #: the lower-bound construction of the refutation (and of every lower end here): "merged"
    #: cells (certdp.notions.pld_merged, units sized for eps) or "balanced" lattice points
    lower: str = "balanced"
    #: whether the recorded bounds coarsened their powers as they spread (certdp.enclose.fixed)
    coarsen_powers: bool = False

    __repr__ = readable_repr

    @property
    def eps_upper(self) -> Fraction:
        """Contract: the certified eps at sigma, the max over directions of the upper ends."""
        return max(s.upper for s in self.claim if s.upper is not None)


def _directions(direction: str) -> list[str]:
    if direction not in ("remove", "add", "both"):
        raise LimitExceeded(f"direction={direction!r} must be remove, add or both")  # pragma: no cover
    return ["remove", "add"] if direction == "both" else [direction]


def calibrate_pld(
    q: Number,
    steps: Number,
    eps: Number,
    delta: Number,
    step: Number = PLD_STEP,
    direction: str = "both",
    h: Fraction | None = None,
    max_seconds: Number | Deadline | None = None,
    progress: Callable[[str], None] | None = None,
) -> PldCalibration:
    """Smallest sigma on the ``step`` lattice whose certified PLD eps (every direction) is <= eps,
    and the proved violation at sigma - step.

    Search: a coarse lattice (h x COARSE_FACTOR) brackets and solves eps_upper(sigma) = eps by the
    Illinois method in floats; at h, a Newton step with the coarse slope proposes the grid sigma.
    From there :func:`_predicted_finish` estimates eps and the lattices' error from both ends on h
    and h/2 and tries one claim probe and one refutation probe at the spacings that should decide
    them; where it does not decide, certified evaluations move sigma by galloping steps until sigma
    meets the target and sigma - step does not. Near the target the lattice is then halved (down to
    MIN_REFINE_H) until sigma - step is decided: its violation proved (the refutation), or the
    target proved there on the finer lattice (sigma - step becomes the claim, and the walk goes on).
    When neither is proved at the finest lattice, ``miss_reason`` says so and names a proved
    violation further below (sigma - 2^j step), i.e. the interval that holds the least sigma. The
    other direction is shown to meet the target on the coarse lattice when it can (at the claim's h
    otherwise).
    Every decision is a certified evaluation; floats only propose.

    ``h`` None: :func:`default_h` of the step. ``progress`` (None: silent) is called with a short
    text before each certified probe (``remove direction, sigma=1.41469, h=2^-12: upper bound``),
    for a status line; it only observes and never changes the search.

    Contract: for each SideResult in ``claim``, eps_upper <= eps is proved on its lattice (so
    sigma gives (eps, delta)-DP in every listed direction); if ``refutation`` is set, its
    direction's eps_lower > eps is proved at sigma_miss (delta(eps) > delta there). Raises
    LimitExceeded for targets out of the calibration range, BudgetExhausted past ``max_seconds``
    (checked between probes and between the products of each composition).
    """
    began = time.perf_counter()
    qq = real("q", q, gt=0, le=1)
    n = integer("steps", steps, ge=1)
    if n > MAX_PLD_STEPS:
        raise LimitExceeded(f"steps={n} exceeds {MAX_PLD_STEPS}, the most the PLD calibration composes: use --via rdp")
    target = real("epsilon", eps, gt=0)
    if target < EPS_RESOLUTION:
        raise LimitExceeded(
            f"epsilon={fmt_value(eps)} is below {EPS_RESOLUTION} = 2^-40, the resolution of the lattice "
            "accountant's epsilon search"
        )
    # a lattice resolves eps only to a fraction of its spacing: for a small target the default
    # spacing shrinks with it (attack review: epsilon = 0.001 at q = 0.01, 1000 steps was refused
    # as "not met even at sigma = 10000" by a 2^-9 lattice; it is met near sigma = 1500)
    h = _spacing_for(target, default_h(calibration_step(step))) if h is None else h
    d = real("delta", delta, gt=0, lt=1)
    st = calibration_step(step)
    dirs = _directions(direction)
    deadline = as_deadline(max_seconds)
    probes = {"coarse": 0, "fine": 0}
    floor, tail_bits = resolution(d, n)

    # the most recent lattices only: each holds its cells and composed sides (tens of MB at fine h;
    # an unbounded cache reached 6.7 GB over a 10^4-step table row), and the search revisits
    # only the last few sigmas; a dropped one is recomputed, identically
    cache: OrderedDict[tuple[Fraction, str, Fraction, bool], LatticeBounds] = OrderedDict()

    steer_bits = bulk_bits(d, n)
    # the lower ends by merged cells (docs/math.md §10): second order with no edge loss, and on the
    # upper side's own lattice (no offset search, no second lattice); its units are sized for the
    # target, which the verifier reads from the check's threshold (the same integers). Past
    # MAX_MERGED_THRESHOLD the units would be too wide: the balancing on tuned lattices
    lower_kind = "merged" if target <= MAX_MERGED_THRESHOLD else "balanced"

    def bounds(sigma: Fraction, d_name: str, hh: Fraction, tuned: bool) -> LatticeBounds:
        """Upper bounds use the lattice of offset 0 (the split is second order at any offset);
        lower bounds the tuned one (choose_offset), which costs a float search per sigma. A fine
        probe (hh <= h) takes the bulk/tail lattice of certdp.notions.pld_split where it pays: fine
        cells only where one step's loss has its mass (the long light tails in coarse cells; at
        q = 256/50000 and 2^-16 a plain lattice has 213k cells, a split one 107k). The
        certificate records it, and the verifier and the recheck kernel rebuild it."""
        tuned = tuned and lower_kind == "balanced"  # merged cells need no tuned offset
        key = (sigma, d_name, hh, tuned)
        if not tuned and (sigma, d_name, hh, True) in cache:
            # a tuned lattice at this sigma and h is there already: its cells serve the upper side
            # too (sound at any offset), instead of a second lattice's tails
            key = (sigma, d_name, hh, True)
        if key in cache:
            cache.move_to_end(key)
        else:
            deadline.check(f"probing sigma={fmt_value(sigma)}")
            # refused before it is built when its estimate passes the budgets left (issue 39: a
            # probe at sigma = 1 with q = 0.5 and 10^5 steps ran to the time budget)
            while True:
                try:
                    afford_round(compose(SubsampledGaussian(qq, sigma, d_name), n), d, hh, CALIBRATE_LESS_WORK)
                    break
                except LimitExceeded as exc:  # a budget, not an input error: exit 3 with how far it got
                    if cache:
                        # the budget counts what the process holds: the kept lattices go first
                        # (q = 0.05, 10^4 steps, eps = 1: 1.6 GB of them stopped the 2^-20 probe)
                        cache.popitem(last=False)
                        gc.collect()
                        continue
                    raise BudgetExhausted(
                        f"the calibration stopped before probing sigma={_short(sigma)} at h={_power_text(hh)} "
                        f"after {probes['coarse']} coarse and {probes['fine']} fine probes: {exc}"
                    ) from None
            probes["coarse" if hh > h else "fine"] += 1
            pair = SubsampledGaussian(qq, sigma, d_name)
            cells = COARSE_CELLS if hh > h else 0  # coarse probes only steer: refuse big lattices early
            spl = None if hh > h else _split_lattice(pair, hh, tail_bits, steer_bits, tuned)
            # one spacing throughout and the verifier's product limit: what a certificate records is
            # proved as `certdp verify` recomputes it, and a lattice it cannot recompute is refused
            # here (attack review: a q = 1, 256-step refutation needed 5.1e6-coefficient products)
            how = {
                "coarsen": COARSEN_POWERS,
                "lower": lower_kind,
                "units_eps": target if lower_kind == "merged" else None,
            }
            if spl is not None:
                cache[key] = LatticeBounds(pair, n, spl.bulk, floor, MAX_PLD_PRODUCT, split=spl, **how)
            else:
                lattice = (
                    tuned_lattice(pair, hh, tail_bits, cells)
                    if tuned
                    else lattice_for(pair, hh, tail_bits, max_cells=cells)
                )
                cache[key] = LatticeBounds(pair, n, lattice, floor, MAX_PLD_PRODUCT, **how)
            while len(cache) > CACHED_LATTICES:
                cache.popitem(last=False)
        return cache[key]

    reported: set[tuple[Fraction, str, Fraction, str]] = set()

    def probe(sigma: Fraction, d_name: str, hh: Fraction, side: str) -> Fraction:
        if progress is not None and (sigma, d_name, hh, side) not in reported:  # repeats are cached, instant
            reported.add((sigma, d_name, hh, side))
            progress(f"{d_name} direction, sigma={_short(sigma)}, h={_power_text(hh)}: {side} bound")
        b = bounds(sigma, d_name, hh, side == "lower")
        end = b.eps(side, d)
        if hh <= h:  # a probe a certificate may record: the recheck kernel must be able to form it
            _kernel_fits(b, side)
        return end

    def eps_up(sigma: Fraction, d_name: str, hh: Fraction) -> Fraction:
        return probe(sigma, d_name, hh, "upper")

    def eps_low(sigma: Fraction, d_name: str, hh: Fraction) -> Fraction:
        return probe(sigma, d_name, hh, "lower")

    # a coarse bound that already decides a direction is what the certificate records for it: its
    # spacing must stay within what a verifier accepts (at --h 2^-6 the factor 8 would give 1/8)
    coarse_h = max(h, min(h * COARSE_FACTOR, MAX_PLD_H, _pow2_floor(target / COARSE_RESOLUTION)))
    # the smallest sigma on the step lattice that a certificate records
    k_min = max(1, math.ceil(MIN_SIGMA / st))
    s_min = k_min * st

    def floor_meets() -> bool:
        """Whether sigma = s_min already meets the target, decided by RDP (cheap even where the
        loss lattice would be huge; RDP's eps is >= the true one): then the target does not
        constrain sigma (k_min > 1), or the first lattice point is the answer (k_min = 1)."""
        pair = compose(SubsampledGaussian(qq, s_min, direction), n)
        meets = epsilon(pair, d, orders=DEFAULT_INTEGER_ORDERS).enclosure.upper <= target
        if meets and k_min > 1:
            raise LimitExceeded(
                f"epsilon={fmt_value(eps)} is met even at sigma={fmt_value(s_min)}, the smallest sigma a calibration "
                f"certifies (q={fmt_value(q)}, steps={n}, delta={fmt_value(delta)}): the target does not constrain "
                "sigma"
            )
        return bool(meets)

    # the budget is also checked inside each composition (between its products), not only between
    # probes: one probe at a fine h can take minutes
    with workprec(PLD_PREC), checkpoints(lambda: deadline.check("composing a PLD lattice")):
        # the float plan (certdp.notions.pld_float): where eps crosses the target and the spacings
        # that decide it, from float estimates of the merged cells; then one claim and one
        # refutation probe (CIFAR-10 at (8, 1e-5): 17 certified probes, 14 s, became ...). The
        # certified search below takes over when it does not decide
        claim_h, hh, refutation, reason, low_miss = h, h, None, None, Fraction(0)
        finish = None
        plan = None
        if lower_kind == "merged":
            plan = _float_plan(qq, n, d, dirs, target, st, k_min, h, tail_bits, deadline)
        if plan is not None:
            main, k, estimates = plan
            finish = _planned_finish(
                lambda kk, at: eps_up(kk * st, main, at),
                lambda kk, at: eps_low(kk * st, main, at),
                k,
                target,
                estimates,
                h,
            )
        if finish is None:
            sigma0 = _affordable_start(qq, n, d, dirs, coarse_h)
            # the decisive direction: the larger coarse eps at the start (the other is checked at the
            # end); a start whose coarse lattice cannot be formed (a fine spacing for a small target)
            # moves up, where lattices are smaller
            while True:
                try:
                    first = {dn: eps_up(sigma0, dn, coarse_h) for dn in dirs}
                    break
                except LimitExceeded as exc:
                    sigma0 *= 4
                    if sigma0 > MAX_SIGMA:
                        raise LimitExceeded(
                            f"no sigma up to {MAX_SIGMA} has a coarse lattice at h={exact_str(coarse_h)} ({exc}): "
                            "calibrate with --via rdp"
                        ) from None
            main = max(dirs, key=first.__getitem__)

            def coarse(sigma: float) -> float:
                return float(eps_up(Fraction(sigma).limit_denominator(10**12), main, coarse_h)) - float(target)

            sigma_c, slope = _solve(coarse, float(target), float(s_min), float(MAX_SIGMA), floor_meets, float(sigma0))
            k = max(k_min, math.ceil(Fraction(sigma_c) / st))
            if k > k_min:  # Newton step from the coarse root with the coarse slope (slope < 0)
                newton = (k * st + (eps_up(k * st, main, h) - target) / Fraction(-slope)) / st
                # within 2% of the coarse root: the fine and coarse lattices differ by far less, so a
                # longer step means a bad slope (the walk below then starts from the coarse root)
                k = max(k_min, math.ceil(min(max(newton, k * Fraction(49, 50)), k * Fraction(51, 50))))
            # the predicted finish: the step where eps crosses the target and the spacings that decide
            # it, from both sides at h and h/2 (second order in h), then one claim and one refutation
            # probe (CIFAR-10 at (3, 1e-5): 19 fine probes became 6); the walk and refinement below
            # take over when it does not decide
            claim_h, hh, refutation, reason, low_miss = h, h, None, None, Fraction(0)
            finish, guesses = None, [k]
            if k > k_min and slope < 0:
                finish = _predicted_finish(
                    lambda kk, at: eps_up(kk * st, main, at),
                    lambda kk, at: eps_low(kk * st, main, at),
                    k,
                    k_min,
                    h,
                    target,
                    -slope * float(st),
                    guesses,
                )
            if finish is None:
                # the walk starts from the prediction's last estimate (q = 0.001, 10^6 steps, eps = 1:
                # the coarse root 52.6 against about 6.18; galloping down from it took ~600 probes)
                k = guesses[-1]
                k = _gallop(lambda kk: eps_up(kk * st, main, h) <= target, k, k_min, max(k, math.floor(MAX_SIGMA / st)))
        if finish is not None:  # the plan's or the prediction's probes: the claim, and maybe the refutation
            k, claim_h, hh, proved_miss = finish
            if proved_miss is not None:
                low_miss = proved_miss
                refutation = [SideResult(main, _recorded(bounds((k - 1) * st, main, hh, True)), low_miss, None)]
        sigma = k * st
        if sigma < MIN_SIGMA or sigma > MAX_SIGMA:
            raise LimitExceeded(
                f"the calibrated sigma={fmt_value(sigma)} is outside [{MIN_SIGMA}, {MAX_SIGMA}], the range a "
                "certificate records"
            )
        # near the target, refine the lattice until the step below is decided: proved violated, or
        # proved to meet the target on the finer lattice (then it is the new claim and the walk goes on)
        formed = h  # the finest spacing whose lower end was formed near the target
        while k > k_min and refutation is None:
            below = (k - 1) * st
            try:
                low_miss = eps_low(below, main, hh)
                formed = min(formed, hh)
                if low_miss > target:
                    # the lower end is what a refutation proves; its upper side at this fine h (a
                    # second power, a third of a CIFAR-10 calibration's time) is not formed
                    refutation = [SideResult(main, _recorded(bounds(below, main, hh, True)), low_miss, None)]
                    break
                if eps_up(below, main, hh) <= target:
                    # the finer lattice proves the target further down: gallop to where it stops
                    # (single steps took thousands of probes from a claim far above the least)
                    k = _gallop(lambda kk, at=hh: eps_up(kk * st, main, at) <= target, k - 1, k_min, k)
                    claim_h = hh
                    continue
            except LimitExceeded as exc:
                reason = f"the lattice at h = {hh} cannot be formed ({exc})"
                formed = min(formed, max(2 * hh, MIN_REFINE_H)) if hh < formed else formed
                break
            if hh / 2 < MIN_REFINE_H:
                break
            hh = max(MIN_REFINE_H, _next_h(hh, low_miss, eps_up(below, main, hh), target))
        sigma = k * st

        # the claim's lower end is informative only (the claim is the upper end): a coarse tuned lattice
        def proved_upper(d_name: str, hh: Fraction) -> tuple[LossLattice | SplitLattice, Fraction]:
            # the upper end and the lattice it was proved on, from ONE LatticeBounds: the cache
            # may serve a tuned lattice for an upper bound (attack finding: with coarse_h = h the
            # claim recorded the plain lattice but its upper end came from the tuned one, which
            # the recorded lattice could not re-prove)
            up = eps_up(sigma, d_name, hh)
            return _recorded(bounds(sigma, d_name, hh, False)), up

        main_lattice, main_up = proved_upper(main, claim_h)
        claim = [SideResult(main, main_lattice, eps_low(sigma, main, coarse_h), main_up)]
        for other in dirs:
            if other != main:  # coarse if that proves it, else at the claim's h
                oh = coarse_h if eps_up(sigma, other, coarse_h) <= target else claim_h
                other_lattice, other_up = proved_upper(other, oh)
                if other_up > target:
                    raise PrecisionExhausted(
                        f"direction {other} does not meet epsilon={fmt_value(target)} at sigma={fmt_value(sigma)} "
                        f"(the {main} direction does): calibrate that direction alone"
                    )
                claim.append(SideResult(other, other_lattice, None, other_up))
        if k == k_min:  # nothing a certificate could record below
            reason = (
                "sigma - step = 0 is no noise at all: there is no smaller sigma on the step lattice to refute"
                if k == 1
                else f"sigma - step = {fmt_value(sigma - st)} is below {fmt_value(MIN_SIGMA)}, the smallest sigma a "
                "certificate records"
            )
        if refutation is None and k > k_min:
            # further below the violation is larger: the finest spacing that was formed (or twice the
            # one that was not) proves it a few steps down (q = 0.05, 10^4 steps, eps = 1: at the
            # calibration's own h only 1024 steps below); a spacing that does not form is counted
            # as not proved by _proved_miss
            proved = _proved_miss(lambda s_: eps_low(s_, main, formed) > target, sigma, st, k - k_min)
            where = (
                f"the violation is proved at sigma = {fmt_value(proved)}, so the least sigma lies in "
                f"({fmt_value(proved)}, {fmt_value(sigma)}]"
                if proved is not None
                else "no violation is proved within 1024 steps below"
            )
            reason = (
                f"at sigma - step = {fmt_value(sigma - st)} the {main} direction's certified eps_lower "
                f"{fmt_value(low_miss)} is not > {fmt_value(target)} and its eps_upper is not <= it at the finest "
                f"h = {hh}: {reason or 'the lattice bounds are not tight enough there'}; {where}"
            )
    return PldCalibration(
        q=qq,
        steps=n,
        eps=target,
        delta=d,
        direction=direction,
        step=st,
        h=h,
        prec_bits=PLD_PREC,
        prune_floor=floor,
        sigma=sigma,
        claim=claim,
        sigma_miss=sigma - st,
        refutation=refutation,
        miss_reason=reason,
        seconds=time.perf_counter() - began,
        probes=probes,
        lower=lower_kind,
        coarsen_powers=COARSEN_POWERS,
    )


#: the float plan: the fraction of each gap (target - eps(sigma), eps(sigma - step) - target) that
#: a decisive probe's modelled error may take, and the upper end's error coefficient over the
#: merged lower end's (measured: CIFAR-10 at (8, 1e-5), 2450 against 1250 on 2^-11 .. 2^-14)
PLAN_SAFETY = 0.9
PLAN_UPPER_RATIO = 2.0
#: the fine float estimates agree to this fraction of one sigma step's fall in eps
PLAN_TOLERANCE = 0.02
#: retries of a decisive probe at a finer spacing (each from the error it measured)
PLAN_RETRIES = 3


def _float_plan(
    q: Fraction,
    n: int,
    delta: Fraction,
    dirs: list[str],
    target: Fraction,
    st: Fraction,
    k_min: int,
    h: Fraction,
    tail_bits: int,
    deadline: Deadline | None = None,
) -> tuple[str, int, dict[int, FloatEstimate]] | None:
    """(decisive direction, k, float estimates at k and k - 1): k is the least step with the float
    estimate of eps(k step) <= target (certdp.notions.pld_float.float_eps: merged cells in floats on
    two spacings, Richardson), after a log-log secant search for the root on 4h. The decisive
    direction is the one with the larger estimate there; k is then settled on spacings from 2h
    down, until two extrapolations agree within PLAN_TOLERANCE of one step's fall in eps.
    None where an estimate fails or the root
    leaves [MIN_SIGMA, MAX_SIGMA] or k - 1 < k_min.

    Contract: floats only (no enclosure); it chooses where the certified probes go.
    """
    t, df = float(target), float(delta)

    def est(
        sigma: Fraction, d_name: str, hh: Fraction, tol: float | None = None, finest: Fraction = MIN_REFINE_H
    ) -> FloatEstimate | None:
        if deadline is not None:  # BudgetExhausted past max-seconds, as between certified probes
            deadline.check("steering the calibration by float estimates")
        return float_eps(SubsampledGaussian(q, sigma, d_name), n, df, hh, tail_bits, tol, finest)

    power = -1.5  # eps ~ sigma^power near the root: the last secant of the root search

    def root(d_name: str, x: float) -> float | None:
        nonlocal power
        search_h = min(MAX_PLD_H, 4 * h)
        prev = None
        for _ in range(40):
            if not float(MIN_SIGMA) <= x <= float(MAX_SIGMA):
                return None
            e = est(Fraction(x).limit_denominator(10**12), d_name, search_h)
            if e is None:
                return None
            if prev is not None and prev[0] != x and e.eps != prev[1]:
                secant = math.log(e.eps / prev[1]) / math.log(x / prev[0])
                power = secant if -6 < secant < -0.05 else power
            prev = (x, e.eps)
            # within a factor 2: a float estimate far below the root is slow (q = 0.005, 1000 steps,
            # eps = 8: from sigma = 1 a factor 1/8 reached sigma = 0.23, eps = 103, 11 s)
            step = min(2.0, max(0.5, (t / e.eps) ** (1 / power)))
            if abs(step - 1) < 1e-6:  # the settling on finer estimates takes it from here
                return x
            x *= step
        return None

    main, x = dirs[0], root(dirs[0], 1.0)
    if x is None:
        return None
    # the fine estimates must agree to a fraction of one step's fall in eps (eps ~ sigma^-1.5)
    tol = PLAN_TOLERANCE * 1.5 * t * float(st) / x
    for other in dirs[1:]:  # the other direction decides where its estimate is larger
        at = Fraction(x).limit_denominator(10**12)
        e_main, e_other = est(at, main, 4 * h), est(at, other, 4 * h)
        if e_main is None or e_other is None:
            return None
        if e_other.eps > e_main.eps:
            main, x = other, root(other, x)
            if x is None:
                return None
    k = max(k_min + 1, math.ceil(Fraction(x) / st))

    def settle(k: int, tolerance: float | None, rounds: int) -> tuple[int, FloatEstimate] | None:
        """The least k by the estimates at this tolerance: jumps by the local power law eps ~
        sigma^power (its exponent from the last two estimates: at q = 0.001, 10^4 steps, eps = 1
        it was -3.6, and -1.5 overshot further each jump), then the estimate at k."""
        nonlocal power
        last: tuple[int, FloatEstimate] | None = None
        for _ in range(rounds):
            e = est(k * st, main, 2 * h, tolerance)
            if e is None:
                return None
            if last is not None and last[0] != k and last[1].eps != e.eps:
                secant = math.log(e.eps / last[1].eps) / math.log(k / last[0])
                power = secant if -8 < secant < -0.05 else power
            last = (k, e)
            nxt = max(k_min + 1, math.ceil(k * (t / e.eps) ** (1 / power) - 1e-9))
            if nxt == k:
                return k, e
            k = nxt
        return None

    # the coarse root may be many steps off (q = 0.001, 10^4 steps, eps = 1: 0.7423 against
    # 0.7407 at 4h = 2^-8, a lattice coarser than one step's loss): settle k on cheap estimates
    # (2h and h), then on estimates that agree within ``tol`` (finer spacings; each costs more)
    cheap = settle(k, None, 16)
    if cheap is None:
        return None
    fine = settle(cheap[0], tol, 6)
    if fine is None:
        return None
    k, e_k = fine
    # eps one step below by the local power law (second order in 1/k: far below a step's fall)
    e_below = FloatEstimate(e_k.eps * ((k - 1) / k) ** power, e_k.lower_coeff)
    if not e_k.eps <= t < e_below.eps or k - 1 < k_min:
        return None
    return main, k, {k: e_k, k - 1: e_below}


def _planned_finish(
    up: Callable[[int, Fraction], Fraction],
    low: Callable[[int, Fraction], Fraction],
    k: int,
    target: Fraction,
    estimates: dict[int, FloatEstimate],
    h: Fraction,
) -> tuple[int, Fraction, Fraction, Fraction | None] | None:
    """(k, h_claim, h_refutation, eps_lower at k - 1) when the certified probes ``up(k, h_claim)
    <= target`` and ``low(k - 1, h_refutation) > target`` were proved; (k, h_claim, the last
    refutation spacing, None) when only the claim was; None when the claim was not (the caller's
    certified search takes over). Each probe's spacing is the largest power of two (at most h,
    at least MIN_REFINE_H) whose modelled error (the float estimate's lower coefficient, times
    PLAN_UPPER_RATIO for the upper end) is at most PLAN_SAFETY of its gap; a probe that misses is
    retried on the spacing its own measured error asks for (at least halved), PLAN_RETRIES times.

    Contract: a result's claim and refutation are certified probes; floats only choose them.
    """
    t = float(target)
    e_k, e_below = estimates[k], estimates[k - 1]
    gaps = (t - e_k.eps, e_below.eps - t)
    if min(gaps) <= 0:
        return None
    coeff = max(e_k.lower_coeff, e_below.lower_coeff, 1e-300)

    def spacing(gap: float, a: float) -> Fraction | None:
        x = h
        while a * float(x) ** 2 > PLAN_SAFETY * gap:
            x /= 2
            if x < MIN_REFINE_H:
                return None
        return x

    def decide(
        probe: Callable[[Fraction], Fraction], ok: Callable[[Fraction], bool], gap: float, a: float, centre: float
    ) -> tuple[Fraction | None, Fraction | None]:
        at = spacing(gap, a)
        last = at
        for _ in range(PLAN_RETRIES + 1):
            if at is None:
                return None, last
            last = at
            try:
                end = probe(at)
            except LimitExceeded:
                return None, last
            if ok(end):
                return end, at
            a = max(a, abs(float(end) - centre) / float(at) ** 2)
            nxt = spacing(gap, a)
            at = None if nxt is None else min(nxt, at / 2)
        return None, last

    claim, h_claim = decide(lambda x: up(k, x), lambda v: v <= target, gaps[0], PLAN_UPPER_RATIO * coeff, e_k.eps)
    if claim is None or h_claim is None:
        return None
    miss, h_miss = decide(lambda x: low(k - 1, x), lambda v: v > target, gaps[1], coeff, e_below.eps)
    return k, h_claim, h_miss or h_claim, miss


#: the predicted finish aims each decisive probe's modelled error at this fraction of its gap
PREDICT_SAFETY = 1.0

#: rounds of the prediction's secant iteration, and how many steps from its last evaluation a
#: predicted k may lie (a linear step over 64 sigma steps of 1e-5 relative errs by ~1e-3 of
#: one step's drop in eps)
PREDICT_ROUNDS = 8
PREDICT_NEAR = 64


def _predicted_finish(
    up: Callable[[int, Fraction], Fraction],
    low: Callable[[int, Fraction], Fraction],
    k0: int,
    k_min: int,
    h: Fraction,
    target: Fraction,
    drop: float,
    guesses: list[int] | None = None,
) -> tuple[int, Fraction, Fraction, Fraction | None] | None:
    """(k, h_claim, h_refutation, eps_lower at k - 1) when ``up(k, h_claim) <= target`` and
    ``low(k - 1, h_refutation) > target`` were proved by the two certified probes this predicts;
    (k, h_claim, the finest spacing tried below, None) when only the claim was (the caller's
    refinement then goes on from there); else None (nothing is claimed: the caller's walk and
    refinement decide).

    First the Newton step k0 itself: up(k0, h) and low(k0 - 1, h) may already decide. Then floats
    steer: both ends at a step k on spacings h and h/2 give, each side being second order in h
    (docs/math.md §10), Richardson estimates of eps(k) and of each side's error coefficient (where
    they are not yet second order, the finer enclosure's midpoint and half-width). eps is taken as
    a power of sigma: the exponent of the coarse slope ``drop`` (eps's fall per step), else -1,
    then the log-log secant of the fine estimates; the least k with eps(k) <= target is estimated
    again there (each jump within a factor of 4) until it lies within PREDICT_NEAR steps (at most
    PREDICT_ROUNDS estimates). Where the two sides' estimates disagree by more than a quarter of
    one step's fall, the estimates move to spacings h/2 and h/4, and so on. The gaps g1 = target -
    eps(k) and g2 = eps(k - 1) - target, less that disagreement, then set each decisive probe's
    spacing: the largest power of two (at most h, at least MIN_REFINE_H) whose modelled error is at
    most PREDICT_SAFETY of its gap (rounding down to a power of two leaves up to 4x more), and once
    more at half that spacing if it missed.

    ``guesses`` (if given) receives each predicted k, so that a caller's walk can start from the
    last one when this returns None.

    Contract: a result's claim and refutation are certified probes (``up`` and ``low``); the
    prediction only chooses them. LimitExceeded of a probe gives None.
    """
    finest = MIN_REFINE_H
    if h / 2 < finest or not drop > 0:
        return None
    t, he, k_at = float(target), h, k0
    seen: tuple[int, float] | None = None  # the last estimate, for the next secant
    # eps against sigma as a power law (log-log secants): the coarse slope's exponent when it is
    # plausible, else eps ~ 1/sigma (at q = 0.05, 10^4 steps, eps = 1 the coarse root was 42.5
    # against 18.68, and a linear step from its slope went to sigma = 0.0011)
    power = -drop * k0 / t
    power = power if -4 < power < -0.2 else -1.0
    try:
        # the Newton step may have landed: then h decides both at once (q = 0.01, 500 steps, eps
        # = 3: two probes instead of six)
        if k0 - 1 >= k_min and up(k0, h) <= target and (miss := low(k0 - 1, h)) > target:
            return k0, h, h, miss
        while True:
            for _ in range(PREDICT_ROUNDS):
                ends = (up(k_at, he), low(k_at, he), up(k_at, he / 2), low(k_at, he / 2))
                estimate = _richardson(*(float(x) for x in ends), float(he / 2))
                if estimate is None:
                    return None
                est, unsure, au, al = estimate
                if seen is not None and seen[0] != k_at:
                    secant = math.log(est / seen[1]) / math.log(k_at / seen[0])
                    power = secant if -4 < secant < -0.05 else power
                seen = (k_at, est)
                # the least k with est (k / k_at)^power <= t, each jump within a factor of 4
                k = math.ceil(k_at * math.exp(math.log(t / est) / power) - 1e-9)
                k = min(max(k, k_at // 4, k_min + 1), 4 * k_at)
                # near enough, or within what these estimates can tell apart (then the finer
                # spacings below sharpen them: at 10^6 steps, q = 0.001, the estimates on 2^-12 and
                # 2^-13 moved k by +-0.05 in sigma from round to round)
                if abs(k - k_at) <= max(PREDICT_NEAR, 2 * unsure * k_at / (-power * t)):
                    break
                k_at = k
                if guesses is not None:
                    guesses.append(k)  # where the caller's walk starts if this does not decide
            else:
                return None
            drop = -power * t / k_at  # eps's fall per step near k_at
            # the two sides' estimates must agree to a fraction of one step's drop, else estimate
            # again on finer spacings (at h = 2^-10, a step of 1e-4 for CIFAR-10: 2.5e-3 apart
            # against a drop of 4e-4 per step)
            if unsure <= drop / 4:
                break
            he /= 2
            if he / 2 < finest:
                return None
        g1 = t - est * (k / k_at) ** power
        gaps = (g1 - unsure, drop - g1 - unsure)
        if k - 1 < k_min or min(gaps) <= 0:
            return None
        spacing = [
            _pow2_floor(min(h, Fraction(math.sqrt(PREDICT_SAFETY * g / a))))
            for g, a in zip(gaps, (au, al), strict=True)
        ]
        # the model is rough (the lower side is not cleanly second order): a probe that misses is
        # retried once at half its spacing before the caller's walk takes over
        h_claim = next((x for x in (spacing[0], spacing[0] / 2) if x >= finest and up(k, x) <= target), None)
        if h_claim is None:
            return None
        h_miss, miss = spacing[1], None
        for at in (spacing[1], spacing[1] / 2):
            if at >= finest:
                h_miss, lower = at, low(k - 1, at)
                if lower > target:
                    return k, h_claim, h_miss, lower
    except LimitExceeded:
        return None
    return k, h_claim, h_miss, miss


def _richardson(u1: float, l1: float, u2: float, l2: float, h2: float) -> tuple[float, float, float, float] | None:
    """(estimate, unsure, a_upper, a_lower) from the two ends (u1, l1) on spacing 2 h2 and (u2, l2)
    on h2: each side second order in h, so eu = u2 - (u1 - u2)/3 and el = l2 + (l2 - l1)/3,
    estimate their mean and unsure half their gap; where that is not consistent (the lower side's
    balancing jumps between spacings) the finer enclosure's midpoint and half-width. a_upper and
    a_lower are each side's error over h2^2; None when either is not positive or the estimate is
    not (no power law to fit). Floats: it only steers :func:`_predicted_finish`.

    Contract: floats, no enclosure."""
    eu, el = u2 - (u1 - u2) / 3, l2 + (l2 - l1) / 3
    est, unsure = (eu + el) / 2, abs(eu - el) / 2
    if not (l2 < est < u2 and unsure < (u2 - l2) / 2):
        est, unsure = (u2 + l2) / 2, (u2 - l2) / 2
    au, al = (u2 - est) / h2**2, (est - l2) / h2**2
    return (est, unsure, au, al) if au > 0 and al > 0 and est > 0 else None


def _split_lattice(
    pair: SubsampledGaussian, h: Fraction, tail_bits: int, bulk: int, tuned: bool
) -> SplitLattice | None:
    """The bulk/tail lattice of ``pair`` at spacing h (certdp.notions.pld_split.split_lattice, bulk
    at ``bulk`` bits), its offset tuned on the bulk for a lower bound (choose_offset); None where
    one plain lattice is as cheap. Only steers: every lattice gives sound bounds.

    Contract: None or a valid SplitLattice of spacing h within the verifier's cell and range limits
    (LimitExceeded beyond them, as a plain lattice past MAX_CELLS); no enclosure."""
    spl = split_lattice(pair, h, tail_bits, bulk)
    if spl is not None and tuned:
        spl = split_lattice(pair, h, tail_bits, bulk, offset=choose_offset(pair, h, base=spl.bulk))
    if spl is not None:  # a certificate records it: within the verifier's limits (certdp.cert.checks)
        b = spl.bulk
        cells = (b.hi - b.lo) + (b.lo - spl.lo) // spl.stride + (spl.hi - b.hi) // spl.stride
        if cells > MAX_PLD_CELLS or spl.hi - spl.lo > MAX_PLD_SPLIT_RANGE:
            raise LimitExceeded(
                f"h={exact_str(h)}: the split lattice of {pair.mechanism} has {cells} cells over {spl.hi - spl.lo} "
                f"fine ones, beyond a certificate's {MAX_PLD_CELLS} and {MAX_PLD_SPLIT_RANGE}"
            )
    return spl


#: the independent recheck kernel (recheck/recheck.py) composes at one spacing and prunes more
#: finely than certdp: its longest product, estimated as the final composed length in one-step
#: indices times this margin, must stay within its limit (measured: q = 0.05, sigma = 18.68232,
#: 10^4 steps, a refutation at 2^-20: 551859 composed indices of 8 one-step ones, 4.41M, where
#: the kernel's product reached 4.58M)
KERNEL_MARGIN = 1.25


def _kernel_fits(bounds: LatticeBounds, side: str) -> None:
    """LimitExceeded when the recheck kernel could not form the composition that ``bounds`` formed
    with coarsened powers: its final length in one-step indices (the composed length times the
    coarsening factor), times KERNEL_MARGIN, beyond MAX_PLD_PRODUCT. Only limits what a
    certificate records; the bound itself is sound.

    Contract: returns None or raises LimitExceeded; no enclosure."""
    length = bounds.span(side)
    if length is not None and length * KERNEL_MARGIN > MAX_PLD_PRODUCT:
        raise LimitExceeded(
            f"the {side} side's composition spans {length} one-step indices: the independent recheck kernel, "
            f"which composes at one spacing, could not form it within {MAX_PLD_PRODUCT} coefficients"
        )


def _recorded(bounds: LatticeBounds) -> LossLattice | SplitLattice:
    """The lattice a certificate records for these bounds: the split one when they have one."""
    return bounds.split if bounds.split is not None else bounds.lattice


def _gallop(meets: Callable[[int], bool], k: int, k_min: int, k_max: int) -> int:
    """:func:`_gallop_proved` with a probe whose lattice cannot be formed (LimitExceeded: lattices
    grow as sigma shrinks) counted as not proved to meet (attack review: a walk down from a claim
    reached sigma = 0.001, whose lattice refused, and that refusal ended the calibration).

    Contract: as :func:`_gallop_proved`; every returned k met the target by a certified probe.
    """

    def proved(kk: int) -> bool:
        try:
            return meets(kk)
        except LimitExceeded:
            return False

    return _gallop_proved(proved, k, k_min, k_max)


#: the finest spacing the default gives a target eps: eps / CALIBRATION_RESOLUTION (a power of two)
CALIBRATION_RESOLUTION = 1024

#: and the coarse search's: eps / COARSE_RESOLUTION
COARSE_RESOLUTION = 128

#: the smallest target, in cells of the finest recordable lattice
MIN_TARGET_CELLS = 16


def _spacing_for(target: Fraction, h: Fraction) -> Fraction:
    """The default spacing ``h`` of the step, made at most target / CALIBRATION_RESOLUTION (a power
    of two) but not below MIN_PLD_H, the finest spacing a certificate records; PrecisionExhausted
    when the target is below MIN_TARGET_CELLS such spacings (no recordable lattice resolves it).
    Only steers (any spacing is sound).

    Contract: a power of two in [MIN_PLD_H, h] when h is one; no enclosure.
    """
    if target < MIN_TARGET_CELLS * MIN_PLD_H:
        raise PrecisionExhausted(
            f"epsilon={fmt_value(target)} is below {MIN_TARGET_CELLS} cells of the finest lattice a certificate "
            f"records (h={exact_str(MIN_PLD_H)}): the lattice calibration cannot resolve it (--via rdp gives a "
            "sound but looser sigma)"
        )
    return max(MIN_PLD_H, min(h, _pow2_floor(target / CALIBRATION_RESOLUTION)))


def _gallop_proved(meets: Callable[[int], bool], k: int, k_min: int, k_max: int) -> int:
    """The least k' >= k_min found with meets(k') proved and meets(k' - 1) not (k' = k_min when
    it meets): from k, steps of 1, 2, 4, ... toward the change of ``meets``, then bisection.

    Why: a walk of single steps from a poor start took thousands of probes (q = 0.01, 10^4
    steps, eps = 1: the coarse root was 8.45 at a lattice far coarser than one step's losses, and
    the walk went down by 1e-4 per probe). The answer is only as good as ``meets`` is monotone
    (eps_upper in sigma nearly is); every returned k meets the target by a certified probe.

    Contract: meets(result) was True; result == k_min or meets(result - 1) was False;
    LimitExceeded when not even k_max meets.
    """
    if meets(k):
        hi, j = k, 1  # meets(hi); search down for a failing lo
        while True:
            lo = max(k_min, hi - j)
            if lo == hi:
                return hi  # hi == k_min
            if not meets(lo):
                break
            hi, j = lo, 2 * j
    else:
        lo, j = k, 1  # not meets(lo); search up for a meeting hi
        while True:
            hi = min(lo + j, k_max)
            if meets(hi):
                break
            if hi == k_max:
                raise LimitExceeded(f"the target is not met even at the largest sigma on the step lattice (k={k_max})")
            lo, j = hi, 2 * j
    while hi - lo > 1:  # not meets(lo), meets(hi)
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if meets(mid) else (mid, hi)
    return hi


def _next_h(h: Fraction, lower: Fraction, upper: Fraction, target: Fraction) -> Fraction:
    """The next spacing near the target (only steers): the enclosure [lower, upper] at h straddles
    the target; its width is second order in h, so the spacing that shrinks it below the distance
    of its midpoint to the target, halved for safety, is h sqrt(gap / (2 width)): the largest
    power of two below that, between h/8 and h/2 (a probe 4x finer costs 4x the cells; a jump of
    more than 8x would pass the cell limits on the way).

    Contract: a power of two in [h/8, h/2] when h is a power of two; no enclosure."""
    width = upper - lower
    gap = abs((lower + upper) / 2 - target)
    if width <= 0 or gap <= 0:
        return h / 8
    ratio = math.sqrt(float(gap) / (2 * float(width)))
    nxt = h / 2
    while nxt > h / 8 and nxt / 2 >= h * Fraction(ratio).limit_denominator(2**20):
        nxt /= 2
    return nxt


def _proved_miss(violated: Callable[[Fraction], bool], sigma: Fraction, st: Fraction, room: int) -> Fraction | None:
    """The sigma nearest below ``sigma`` found, at sigma - 2^j step (j = 1..10, at most ``room``
    steps), whose violation is proved (``violated``), or None: the proved end of the interval
    that holds the least sigma when the step below itself is not decided."""
    j = 2
    while j <= min(room, 1024):
        try:
            if violated(sigma - j * st):
                return sigma - j * st
        except LimitExceeded:  # the lattice there does not fit: no proved end
            return None
        j *= 2
    return None


def _short(sigma: Fraction) -> str:
    """sigma for a progress text: exact on the step lattice (1.41469), 6 digits for a float probe."""
    text = exact_str(sigma)
    return text if len(text) <= 12 else f"{float(sigma):.6g}"


def _power_text(h: Fraction) -> str:
    """h for a progress text: 2^-12 for a power of two (every lattice spacing here), else its value."""
    if h.numerator == 1 and not h.denominator & (h.denominator - 1):
        return f"2^-{h.denominator.bit_length() - 1}"
    return exact_str(h)


def _affordable_start(q: Fraction, n: int, delta: Fraction, dirs: list[str], h: Fraction) -> Fraction:
    """Where the search starts: sigma = 1, or the first of 4, 16, ... whose coarse probes fit the
    budgets left by the cost estimate (certdp.notions.cost; lattices shrink as sigma grows, so a
    larger sigma is cheaper), so that a first probe never runs to the time budget; LimitExceeded
    (naming --via rdp) when none up to MAX_SIGMA fits. Only steers the search.

    Contract: a power of 4 in [1, MAX_SIGMA]; computes nothing certified.
    """
    sigma, reason = Fraction(1), ""
    while sigma <= MAX_SIGMA:
        try:
            for d_name in dirs:
                afford_round(compose(SubsampledGaussian(q, sigma, d_name), n), delta, h, CALIBRATE_LESS_WORK)
            return sigma
        except LimitExceeded as exc:
            reason = str(exc)
        sigma *= 4
    raise LimitExceeded(
        f"no sigma up to {MAX_SIGMA} can be probed within the budgets ({reason}); calibrate with --via rdp"
    )


def _solve(f, target: float, lo_lim: float, hi_lim: float, floor_meets, start: float = 1.0) -> tuple[float, float]:  # noqa: ANN001
    """A root of the decreasing float function f (eps(sigma) - target) to 1e-4 relative, by
    bracketing from sigma = ``start`` (power-law steps) and the Illinois method on (log sigma, log eps);
    returns (root, slope at the root). Floats
    only: the result proposes, certified evaluations decide. LimitExceeded (naming epsilon) when
    the root lies outside [lo_lim, hi_lim] or where the lattice cannot be formed; there (lattices
    grow as 1/sigma^2) it first asks ``floor_meets()`` whether lo_lim meets the target already,
    and if so returns lo_lim."""
    a = start
    fa = f(a)
    b, fb = a, fa
    while fa * fb > 0:  # step toward the sign change
        a, fa = b, fb
        # a power-law guess eps ~ sigma^-1.5 a little past the root (so that it brackets it), within
        # a factor 4 (measured at q = 0.01, 500 steps, (3, 1e-5): 0.72 from 1, instead of halving to
        # 0.5, whose lattice is 2x larger)
        ratio = min(4.0, max(0.25, (max(fb + target, 1e-300) / target) ** (1 / 1.5)))
        b = b * ratio * (1.03 if fb > 0 else 0.97)
        if b > hi_lim:
            # undecided, not bad input: the true eps at hi_lim may be below the target while the
            # search lattice's bound is not (second attack review: 2e-4 at q = 0.01, 1000 steps)
            raise PrecisionExhausted(
                f"epsilon={target:g} is not proved at any sigma up to {hi_lim:g} (the calibration limit) by the "
                f"search's lattice (its upper bound at sigma={a:g} is {fb + target:.6g}): the target is below what "
                f"it resolves at this delta, or not met below sigma={hi_lim:g}; `certdp eps subsampled-gaussian "
                f"--sigma {hi_lim:g} ...` shows the enclosure there"
            )
        if b <= lo_lim:
            if a <= lo_lim:  # the floor meets the target: the first lattice point is the answer
                return lo_lim, -1.0
            b = lo_lim
        try:
            fb = f(b)
        except LimitExceeded as exc:
            if floor_meets():  # raises when the target does not constrain sigma at all
                return lo_lim, -1.0
            raise LimitExceeded(
                f"epsilon={target:g} needs sigma below {a:g}, where the lattice accountant cannot run ({exc}); "
                "calibrate with --via rdp"
            ) from None

    # Illinois on (log sigma, log eps): eps(sigma) is close to a power law there, so the secant
    # steps land near the root (measured at q = 0.01, 500 steps, (3, 1e-5): 13 -> 9 coarse probes)
    def log_ratio(value: float) -> float:
        return math.log(max(value + target, 1e-300) / target)

    xa, xb, ga, gb = math.log(a), math.log(b), log_ratio(fa), log_ratio(fb)
    pa, pb = (a, fa), (b, fb)  # the last two probes in (sigma, f), for the slope
    for _ in range(60):
        xc = xb - gb * (xb - xa) / (gb - ga) if gb != ga else (xa + xb) / 2
        c = math.exp(xc)
        fc = f(c)
        gc = log_ratio(fc)
        pa, pb = pb, (c, fc)
        if gc * gb < 0:  # the root lies between b and c
            xa, ga = xb, gb
        else:  # between a and c: keep a and halve its value (Illinois: no stale end)
            ga /= 2
        xb, gb = xc, gc
        if abs(xb - xa) <= 1e-4 or fc == 0:
            break
    root = math.exp(xb)
    # the secant of the last two probes, unless they sit so close that their difference is the
    # lattice's noise (measured: q = 0.005, 10^4 steps, eps = 1: probes 1e-5 apart gave a slope
    # of the wrong sign, and the Newton step went from 4.33 to the smallest sigma); then the
    # power law eps ~ sigma^-1.5 at the root
    power = -1.5 * target / root
    slope = (pb[1] - pa[1]) / (pb[0] - pa[0]) if pb[0] != pa[0] else power
    # the secant when the probes are far enough apart, or when it agrees with the power law to a
    # factor 4 (close probes usually give the best local slope; a noise slope does not agree)
    if not (abs(pb[0] - pa[0]) >= 1e-3 * root or 4 * power <= slope <= power / 4):
        slope = power
    return root, min(slope, -1e-300)
