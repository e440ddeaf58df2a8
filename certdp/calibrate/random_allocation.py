"""Certified sigma calibration of random allocation to a TV target (arXiv:2610.09651; docs/math.md §9)."""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

from certdp.budget import Deadline, as_deadline
from certdp.cert.limits import MAX_RA_EPOCHS, MAX_RA_STEPS, at_most, calibration_step, grid_work
from certdp.enclose import Enclosure
from certdp.enclose.ball import readable_repr
from certdp.enclose.checkpoint import checkpoints
from certdp.errors import LimitExceeded, PrecisionExhausted, fmt_value
from certdp.notions.tv_certified import LatticeGrid, TVBound, auto_grid, tv_bound
from certdp.notions.tv_closed_form import sigma_closed_form
from certdp.notions.tv_numeric import approx_exact_sigma, approx_tv_lattice
from certdp.pairs import RandomAllocation
from certdp.pairs.params import Number, exact_str, integer, real

Progress = Callable[[str, float], None]
MAX_REFINES = 2
#: Smallest TV target calibrate accepts (the sigma it needs is far beyond the lattice limits).
MIN_TV = Fraction(1, 10**12)


@dataclass(frozen=True)
class CalibrationResult:
    """sigma_hi meets the target (certified TV upper bound <= lambda); sigma_miss = sigma_hi - step
    misses it (certified TV lower bound > lambda) unless ``miss_reason`` says why not."""

    steps: int
    epochs: int
    tv: Fraction
    step: Fraction
    sigma: Fraction
    tv_upper: Enclosure
    grid: LatticeGrid
    sigma_miss: Fraction
    tv_lower_at_miss: Enclosure | None
    miss_grid: LatticeGrid | None
    miss_reason: str | None
    exact_sigma: float
    closed_form_sigma: Enclosure
    seconds: float
    attempts: list[dict[str, object]] = field(default_factory=list)

    __repr__ = readable_repr

    def to_dict(self) -> dict[str, object]:
        """Contract: exact decimal strings of every field; bounds rounded outward."""
        return {
            "steps": self.steps,
            "epochs": self.epochs,
            "tv": exact_str(self.tv),
            "step": exact_str(self.step),
            "sigma": exact_str(self.sigma),
            "tv_upper": self.tv_upper.upper_str(),
            "grid": self.grid.to_dict(),
            "sigma_miss": exact_str(self.sigma_miss),
            "tv_lower_at_miss": None if self.tv_lower_at_miss is None else self.tv_lower_at_miss.lower_str(),
            "miss_grid": None if self.miss_grid is None else self.miss_grid.to_dict(),
            "miss_reason": self.miss_reason,
            "exact_sigma": f"{self.exact_sigma:.10g}",
            "closed_form_sigma": self.closed_form_sigma.upper_str(),
            "seconds": round(self.seconds, 3),
            "attempts": self.attempts,
        }


def _certify(
    pair: RandomAllocation,
    lam: Fraction,
    side: str,
    numeric: object,
    log: list[dict[str, object]],
    progress: Progress | None,
    deadline: Deadline,
) -> TVBound | None:
    """Try grids predicted to reach the numeric slack, refining up to MAX_REFINES times; None if it fails.
    The deadline is checked at each progress phase of each certified bound."""
    doing = f"certifying the {side} TV bound at sigma={exact_str(pair.sigma)}"

    def note(what: str, frac: float) -> None:
        deadline.check(doing)
        if progress is not None:
            progress(what, frac)

    slack = abs(float(lam) - numeric.value)  # type: ignore[attr-defined]
    grid = auto_grid(pair, max(slack, 1e-12), ref=numeric, side=side)
    for attempt in range(MAX_REFINES + 1):
        try:
            grid_work(pair.steps, pair.epochs, float(pair.sigma), grid, side)
        except LimitExceeded as exc:
            if attempt == 0:  # not even the first grid is affordable: say which input asks for it
                raise LimitExceeded(
                    f"tv={exact_str(lam)} at sigma={exact_str(pair.sigma)} needs a {side}-side grid beyond the "
                    f"work limits: {exc}"
                ) from None
            log.append({"sigma": exact_str(pair.sigma), "side": side, "grid": grid.to_dict(), "error": str(exc)})
            return None
        try:
            res = tv_bound(pair, grid, side, note)
        except PrecisionExhausted as exc:
            log.append({"sigma": exact_str(pair.sigma), "side": side, "grid": grid.to_dict(), "error": str(exc)})
            res = None
        if res is not None:
            ok = res.bound.upper <= lam if side == "upper" else res.bound.lower > lam
            log.append(
                {
                    "sigma": exact_str(pair.sigma),
                    "side": side,
                    "grid": grid.to_dict(),
                    "bound": res.bound.upper_str() if side == "upper" else res.bound.lower_str(),
                    "certified": ok,
                    "seconds": round(res.seconds, 3),
                }
            )
            if ok:
                return res
        grid = dataclasses.replace(grid, h=grid.h / 2, eta=grid.eta / 2)
    return None


def calibrate_tv(
    steps: Number,
    epochs: Number,
    tv: Number,
    step: Number = "1e-6",
    progress: Progress | None = None,
    max_seconds: Number | Deadline | None = None,
) -> CalibrationResult:
    """Smallest sigma on the ``step`` lattice certified to keep TV(P^E, Q^E) <= tv, and a certified
    miss one step below.

    Contract: ``sigma`` has a certified TV upper bound <= tv (certdp.notions.tv_certified, upper
    side) and, when ``tv_lower_at_miss`` is set, sigma - step has a certified TV lower bound > tv,
    so no smaller sigma on the lattice meets the target (TV is non-increasing in sigma,
    docs/math.md §9.5). The float search (exact sigma) only proposes; nothing it returns is trusted.
    ``max_seconds`` (None: no budget) bounds the wall time: the search stops with
    certdp.budget.BudgetExhausted between evaluations once it has run out.
    """
    m, e = integer("steps", steps, ge=1), integer("epochs", epochs, ge=1)
    # a calibration is written as a certificate; one the verifier refuses to recompute is useless
    at_most("steps", m, MAX_RA_STEPS)
    at_most("epochs", e, MAX_RA_EPOCHS)
    lam = real("tv", tv, gt=0, lt=1)
    if lam < MIN_TV:  # float searches below would underflow; such a sigma exceeds the limits anyway
        raise LimitExceeded(f"tv={fmt_value(tv)} is below {fmt_value(MIN_TV)}, the smallest calibration target")
    st = calibration_step(step)
    deadline = as_deadline(max_seconds)
    start = time.perf_counter()
    closed = sigma_closed_form(m, e, lam)
    with checkpoints(lambda: deadline.check("searching sigma (numeric TV)")):
        guess = approx_exact_sigma(m, e, lam, step=float(st), tick=deadline.check)
    k = math.ceil(Fraction(guess.sigma) / st)
    log: list[dict[str, object]] = []
    upper: TVBound | None = None
    for _ in range(4):  # the numeric root is good to << step; a few steps up cover its error
        sigma = k * st
        pair = RandomAllocation(m, sigma, e)
        doing = f"checking sigma={exact_str(sigma)} numerically"
        deadline.check(doing)
        with checkpoints(lambda doing=doing: deadline.check(doing)):
            numeric = approx_tv_lattice(m, e, sigma)
        if numeric.value < float(lam):
            upper = _certify(pair, lam, "upper", numeric, log, progress, deadline)
            if upper is not None:
                break
        k += 1
    if upper is None:
        raise PrecisionExhausted(f"tv={exact_str(lam)}: no sigma near {guess.sigma:.8g} could be certified")
    sigma_miss = sigma - st
    miss_pair = RandomAllocation(m, sigma_miss, e)
    doing = f"checking sigma - step={exact_str(sigma_miss)} numerically"
    deadline.check(doing)
    with checkpoints(lambda: deadline.check(doing)):
        miss_numeric = approx_tv_lattice(m, e, sigma_miss)
    miss_slack = miss_numeric.value - float(lam)
    lower: TVBound | None = None
    reason: str | None = None
    if miss_slack <= 0:
        reason = f"numeric TV at sigma - step is {miss_numeric.value:.10g} <= tv: the miss does not hold numerically"
    else:
        try:
            lower = _certify(miss_pair, lam, "lower", miss_numeric, log, progress, deadline)
        except LimitExceeded as exc:  # the claim stands; only its refutation is out of reach
            lower, reason = None, f"the refutation's lower-side grid is beyond the work limits: {exc}"
        if lower is None and reason is None:
            reason = f"numeric slack {miss_slack:.2e} too small for the grids tried ({MAX_REFINES + 1} refinements)"
    return CalibrationResult(
        steps=m,
        epochs=e,
        tv=lam,
        step=st,
        sigma=sigma,
        tv_upper=upper.bound,
        grid=upper.grid,
        sigma_miss=sigma_miss,
        tv_lower_at_miss=None if lower is None else lower.bound,
        miss_grid=None if lower is None else lower.grid,
        miss_reason=reason,
        exact_sigma=guess.sigma,
        closed_form_sigma=closed,
        seconds=time.perf_counter() - start,
        attempts=log,
    )
