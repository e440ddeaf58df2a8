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

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction

from certdp.budget import Deadline, as_deadline
from certdp.cert.limits import MAX_SG_STEPS, MAX_SIGMA, MIN_SIGMA, calibration_step
from certdp.enclose import workprec
from certdp.errors import LimitExceeded, PrecisionExhausted, fmt_value
from certdp.notions.pld import COARSE_FACTOR, LatticeBounds, LossLattice, lattice_for, resolution, tuned_lattice
from certdp.pairs import SubsampledGaussian
from certdp.pairs.params import Number, integer, real

#: lattice spacing of the decisive evaluations: at 2^-12 the two-sided eps enclosure of typical
#: DP-SGD settings is within about 2e-5 relative, below what a sigma step of 1e-5 moves eps
CALIBRATION_H = Fraction(1, 2**12)

#: default sigma step between claim and refutation for the PLD calibration
PLD_STEP = "1e-5"

#: working precision of the lattice bounds (bits)
PLD_PREC = 128


@dataclass(frozen=True)
class SideResult:
    """One direction at one sigma: its lattice and the certified eps ends [lower, upper] there
    (None where that side was not computed)."""

    direction: str
    lattice: LossLattice
    lower: Fraction | None
    upper: Fraction | None


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
    sigma: Fraction
    claim: list[SideResult]
    sigma_miss: Fraction
    refutation: list[SideResult] | None
    miss_reason: str | None
    seconds: float
    probes: dict[str, int] = field(default_factory=dict)

    @property
    def eps_upper(self) -> Fraction:
        """The certified eps at sigma (the max over directions of the upper ends)."""
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
    h: Fraction = CALIBRATION_H,
    max_seconds: Number | Deadline | None = None,
) -> PldCalibration:
    """Smallest sigma on the ``step`` lattice whose certified PLD eps (every direction) is <= eps,
    and the proved violation at sigma - step.

    Search: a coarse lattice (h x COARSE_FACTOR) brackets and solves eps_upper(sigma) = eps by
    the Illinois method in floats; at h, a Newton step with the coarse slope proposes the grid
    sigma, which certified evaluations then move by single steps until sigma meets the target and
    sigma - step does not. The other direction is shown to meet the target on the coarse lattice
    when it can (refined at h otherwise). Every decision is a certified evaluation; floats only
    propose.

    Contract: for each SideResult in ``claim``, eps_upper <= eps is proved on its lattice (so
    sigma gives (eps, delta)-DP in every listed direction); if ``refutation`` is set, its
    direction's eps_lower > eps is proved at sigma_miss (delta(eps) > delta there). Raises
    LimitExceeded for targets out of the calibration range, BudgetExhausted past ``max_seconds``.
    """
    start = time.perf_counter()
    qq = real("q", q, gt=0, le=1)
    n = integer("steps", steps, ge=1)
    if n > MAX_SG_STEPS:
        raise LimitExceeded(f"steps={n} exceeds the calibration limit {MAX_SG_STEPS}")
    target = real("epsilon", eps, gt=0)
    d = real("delta", delta, gt=0, lt=1)
    st = calibration_step(step)
    dirs = _directions(direction)
    deadline = as_deadline(max_seconds)
    probes = {"coarse": 0, "fine": 0}
    floor, tail_bits = resolution(d, n)

    cache: dict[tuple[Fraction, str, Fraction, bool], LatticeBounds] = {}

    def bounds(sigma: Fraction, d_name: str, hh: Fraction, tuned: bool) -> LatticeBounds:
        """Upper bounds use the plain lattice (offset 0: the split is second order at any offset);
        lower bounds the tuned one (choose_offset), which costs a float search per sigma."""
        key = (sigma, d_name, hh, tuned)
        if key not in cache:
            deadline.check(f"probing sigma={fmt_value(sigma)}")
            probes["coarse" if hh != h else "fine"] += 1
            pair = SubsampledGaussian(qq, sigma, d_name)
            lattice = tuned_lattice(pair, hh, tail_bits) if tuned else lattice_for(pair, hh, tail_bits)
            cache[key] = LatticeBounds(pair, n, lattice, floor)
        return cache[key]

    def eps_up(sigma: Fraction, d_name: str, hh: Fraction) -> Fraction:
        return bounds(sigma, d_name, hh, False).eps("upper", d)

    def eps_low(sigma: Fraction, d_name: str, hh: Fraction) -> Fraction:
        return bounds(sigma, d_name, hh, True).eps("lower", d)

    coarse_h = h * COARSE_FACTOR
    with workprec(PLD_PREC):
        # the decisive direction: the larger coarse eps at sigma = 1 (the other is checked at the end)
        main = max(dirs, key=lambda dn: eps_up(Fraction(1), dn, coarse_h))

        def coarse(sigma: float) -> float:
            return float(eps_up(Fraction(sigma).limit_denominator(10**12), main, coarse_h)) - float(target)

        sigma_c, slope = _solve(coarse, float(target), float(MIN_SIGMA), float(MAX_SIGMA))
        k = math.ceil(Fraction(sigma_c) / st)
        # Newton step from the coarse root with the coarse slope (eps decreases in sigma: slope < 0)
        k = max(1, math.ceil((k * st + (eps_up(k * st, main, h) - target) / Fraction(-slope)) / st))
        while True:  # certified probes decide: sigma meets the target, sigma - step does not
            if eps_up(k * st, main, h) <= target:
                # a proved violation one step below ends the walk (and is the refutation)
                if k > 1 and eps_low((k - 1) * st, main, h) <= target and eps_up((k - 1) * st, main, h) <= target:
                    k -= 1
                    continue
                break
            k += 1
        sigma = k * st
        if sigma < MIN_SIGMA or sigma > MAX_SIGMA:
            raise LimitExceeded(
                f"the calibrated sigma={fmt_value(sigma)} is outside [{MIN_SIGMA}, {MAX_SIGMA}], the range a "
                "certificate records"
            )
        # the claim's lower end is informative only (the claim is the upper end): a coarse tuned lattice
        claim = [
            SideResult(
                main, bounds(sigma, main, h, False).lattice, eps_low(sigma, main, coarse_h), eps_up(sigma, main, h)
            )
        ]
        for other in dirs:
            if other != main:  # coarse if that proves it, else at h
                hh = coarse_h if eps_up(sigma, other, coarse_h) <= target else h
                if eps_up(sigma, other, hh) > target:
                    raise PrecisionExhausted(
                        f"direction {other} does not meet epsilon={fmt_value(target)} at sigma={fmt_value(sigma)} "
                        f"(the {main} direction does): calibrate that direction alone"
                    )
                claim.append(SideResult(other, bounds(sigma, other, hh, False).lattice, None, eps_up(sigma, other, hh)))
        low_miss = eps_low(sigma - st, main, h)
        refutation, reason = None, None
        if low_miss > target:
            refutation = [SideResult(main, bounds(sigma - st, main, h, True).lattice, low_miss, None)]
        else:
            reason = (
                f"at sigma - step = {fmt_value(sigma - st)} the {main} direction's certified eps_lower "
                f"{fmt_value(low_miss)} is not > {fmt_value(target)} at h = {h}: the lattice bounds are not "
                "tight enough to prove the violation (a finer h or a larger step would)"
            )
    return PldCalibration(
        qq,
        n,
        target,
        d,
        direction,
        st,
        h,
        PLD_PREC,
        sigma,
        claim,
        sigma - st,
        refutation,
        reason,
        time.perf_counter() - start,
        probes,
    )


def _solve(f, target: float, lo_lim: float, hi_lim: float) -> tuple[float, float]:  # noqa: ANN001
    """A root of the decreasing float function f (eps(sigma) - target) to 1e-6 relative, by
    bracketing from sigma = 1 and the Illinois method; returns (root, slope at the root). Floats
    only: the result proposes, certified evaluations decide."""
    a = 1.0
    fa = f(a)
    b, fb = a, fa
    while fa * fb > 0:  # expand by factors of 2 toward the sign change
        a, fa = b, fb
        b = b * 2 if fb > 0 else b / 2
        if not lo_lim / 2 <= b <= hi_lim * 2:
            raise LimitExceeded(f"epsilon={target} is not met for sigma in [{lo_lim}, {hi_lim}]")
        fb = f(b)
    for _ in range(60):
        c = b - fb * (b - a) / (fb - fa)
        fc = f(c)
        if fc * fb < 0:  # the root lies between b and c
            a, fa = b, fb
        else:  # between a and c: keep a and halve its value (Illinois: no stale end)
            fa /= 2
        b, fb = c, fc
        if abs(b - a) <= 1e-4 * abs(b) or fc == 0:
            break
    slope = (fb - fa) / (b - a) if b != a else -1.0
    return b, slope
