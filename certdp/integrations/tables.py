"""Tables of certified noise multipliers for a grid of DP-SGD settings (``certdp table sigma``).

Each cell is a PLD calibration (certdp.calibrate.pld.calibrate_pld; docs/math.md §10): sigma on
the ``step`` lattice whose certified epsilon upper bound meets the target in every direction
(the claim), and at sigma - step a certified lower bound above the target when the lattice
bounds are tight enough (the refutation: that sigma is proved not to give the guarantee). The
cells are independent tasks of the sweep engine (certdp.sweep.engine): in this process, on Dask's
multiprocessing scheduler (``jobs`` > 1), or on a Dask cluster (``scheduler``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from certdp.calibrate.pld import calibrate_pld
from certdp.enclose import decimal_outward
from certdp.errors import CertdpError, InvalidArgument, LimitExceeded, fmt_value
from certdp.pairs.params import exact_str, integer, real
from certdp.sweep.engine import TaskDone, run_tasks

#: Most cells of one table (each is a calibration of 5-60 s).
MAX_CELLS = 100

#: Most worker processes.
MAX_JOBS = 8


@dataclass(frozen=True)
class SigmaRow:
    """One certified calibration: sigma meets (epsilon, delta) after ``steps`` steps at rate ``q``
    (``epsilon_upper`` is its certified epsilon, the largest over the directions), and
    ``sigma_miss`` = sigma - step is proved to miss it when ``epsilon_lower_at_miss`` is set."""

    q: Fraction
    steps: int
    epsilon: Fraction
    delta: Fraction
    step: Fraction
    sigma: Fraction | None  # None: the calibration failed (miss_reason says why)
    epsilon_upper: Fraction | None
    sigma_miss: Fraction | None
    epsilon_lower_at_miss: Fraction | None
    miss_reason: str
    seconds: float

    def to_dict(self) -> dict[str, object]:
        """Contract: exact decimal strings of the inputs and sigmas; the certified epsilon ends
        rounded outward (upper up, lower down) to 10 significant digits."""
        return {
            "q": exact_str(self.q),
            "steps": self.steps,
            "epsilon": exact_str(self.epsilon),
            "delta": exact_str(self.delta),
            "step": exact_str(self.step),
            "sigma": None if self.sigma is None else exact_str(self.sigma),
            "epsilon_upper": None if self.epsilon_upper is None else decimal_outward(self.epsilon_upper, True, 10),
            "sigma_miss": None if self.sigma_miss is None else exact_str(self.sigma_miss),
            "epsilon_lower_at_miss": None
            if self.epsilon_lower_at_miss is None
            else decimal_outward(self.epsilon_lower_at_miss, up=False, digits=10),
            "miss_reason": self.miss_reason,
            "seconds": self.seconds,
        }


def number_list(name: str, text: str, *, integral: bool = False, **bounds: object) -> list[Fraction]:
    """Contract: the comma-separated values of ``text``, validated (InvalidArgument naming
    ``name``), deduplicated and sorted; integers when ``integral``."""
    parts = [p.strip() for p in str(text).split(",") if p.strip()]
    if not parts:
        raise InvalidArgument(f"{name}={fmt_value(text)} must list at least one value")
    if integral:
        return sorted({Fraction(integer(name, p, ge=1)) for p in parts})
    return sorted({real(name, p, **bounds) for p in parts})  # type: ignore[arg-type]


def _cell_task(cell: tuple[Fraction, int, Fraction, Fraction, Fraction, str]) -> SigmaRow:
    return _cell(*cell)


def _cell(q: Fraction, steps: int, eps: Fraction, delta: Fraction, step: Fraction, direction: str) -> SigmaRow:
    start = time.perf_counter()
    try:
        cal = calibrate_pld(q, steps, eps, delta, step=step, direction=direction)
    except CertdpError as exc:  # one setting out of range must not cost the others: the row says why
        return SigmaRow(
            q, steps, eps, delta, step, None, None, None, None, str(exc), round(time.perf_counter() - start, 3)
        )
    uppers = [side.upper for side in cal.claim if side.upper is not None]
    lows = [side.lower for side in cal.refutation or () if side.lower is not None]
    return SigmaRow(
        q,
        steps,
        eps,
        delta,
        step,
        cal.sigma,
        max(uppers),
        cal.sigma_miss,
        max(lows) if lows else None,
        cal.miss_reason or "",
        round(time.perf_counter() - start, 3),
    )


def sigma_table(
    qs: Sequence[Fraction],
    steps: Sequence[int],
    epsilons: Sequence[Fraction],
    delta: Fraction,
    *,
    step: object = "1e-4",
    direction: str = "both",
    jobs: int = 1,
    scheduler: str | None = None,
    progress: Callable[[str, float], None] | None = None,
) -> list[SigmaRow]:
    """Certified sigma for every (q, steps, epsilon) of the grid, in grid order.

    Contract: for each row, calibrate_pld's contract: the certified epsilon at ``sigma`` is at
    most ``epsilon`` in every direction (``epsilon_upper`` is the largest certified upper end), and
    when ``epsilon_lower_at_miss`` is set, the epsilon at ``sigma_miss`` is proved > ``epsilon``.
    LimitExceeded for more than MAX_CELLS cells; a cell whose calibration raises (or whose Dask
    worker is lost) gets sigma None and the error in ``miss_reason``. ``scheduler`` is a
    certdp.sweep.engine scheduler (default: serial for one job, else Dask's processes).
    """
    st = real("step", step, gt=0)  # type: ignore[arg-type]
    cells = [(q, n, e) for q in qs for n in steps for e in epsilons]
    if len(cells) > MAX_CELLS:
        raise LimitExceeded(f"the table has {len(cells)} cells, more than {MAX_CELLS}: split it")
    if not 1 <= jobs <= MAX_JOBS:
        raise InvalidArgument(f"jobs={jobs} must be in [1, {MAX_JOBS}]")
    rows: dict[int, SigmaRow] = {}

    def tick() -> None:
        if progress is not None:
            progress(f"{len(rows)} of {len(cells)} settings certified", len(rows) / len(cells))

    items = [(q, n, e, delta, st, direction) for q, n, e in cells]

    def done(task: TaskDone) -> None:
        if task.error is not None:  # the worker died or the task could not run: this row says why
            q, n, e = cells[task.index]
            rows[task.index] = SigmaRow(q, n, e, delta, st, None, None, None, None, task.error, 0.0)
        else:
            rows[task.index] = task.value
        tick()

    tick()
    sched = scheduler or ("serial" if jobs == 1 else "processes")
    run_tasks(_cell_task, items, done, scheduler=sched, workers=None if "://" in sched else min(jobs, len(cells)))
    return [rows[i] for i in range(len(cells))]


def sigma_markdown(rows: Sequence[SigmaRow], title: str = "") -> str:
    """Contract: a Markdown table with one line per row: the setting, the certified sigma and
    its certified epsilon (upper end, rounded up), and the refutation at sigma - step (the
    certified lower end, rounded down, or the reason it is not proved)."""
    lines = [f"{title}\n" if title else ""]
    lines.append("| q | steps | target (ε, δ) | certified σ | ε(σ) ≤ | σ − step | ε(σ − step) ≥ |")
    lines.append("|---|---|---|---|---|---|---|")
    for r in rows:
        d = r.to_dict()
        miss = d["epsilon_lower_at_miss"] if d["epsilon_lower_at_miss"] is not None else "not proved"
        if d["sigma"] is None:
            lines.append(
                f"| {d['q']} | {d['steps']} | ({d['epsilon']}, {d['delta']}) | failed: {d['miss_reason']} | | | |"
            )
            continue
        lines.append(
            f"| {d['q']} | {d['steps']} | ({d['epsilon']}, {d['delta']}) | **{d['sigma']}** | {d['epsilon_upper']} "
            f"| {d['sigma_miss']} | {miss} |"
        )
    return "\n".join(lines).lstrip("\n") + "\n"
