"""Work units and memory estimates: a machine-independent meter for the expensive steps.

A wall-time budget (certdp.budget.Deadline) depends on the machine and its load, so it cannot
say in a test whether a computation is bounded. Work units can: every step whose cost grows
with the input spends units *before* it runs, through :func:`spend`:

- one unit per lattice cell whose masses are built (a loss-tail evaluation each) and per probe
  of a lattice's ends (certdp.notions.pld_lattice);
- one unit per coefficient of every polynomial product, charged before the product is formed
  (certdp.enclose.fixed, certdp.enclose.lattice: :func:`product_cost`);
- one unit per cooperative checkpoint (an evaluation of an order search, a quadrature batch, a
  power step: certdp.enclose.checkpoint).

Inside ``with metered(limit, memory):`` a spend that would take the count past ``limit`` raises
BudgetExhausted (exit code 3) before the work, naming what it was about to do and how far the
run got; and :func:`product_cost` / :func:`afford_memory` refuse a step whose *estimated* peak
memory exceeds ``memory`` bytes, also before it runs. Outside any block nothing is counted.
Blocks nest (a test's small budget around the CLI's default one): every active meter counts,
outermost first. The state is a context variable, so threads and tasks have their own.

Work of bounded size (a few thousand loss-tail evaluations choosing an offset, float guides, an
eps search over a built composition) is not metered: it does not grow with the input's reach.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from certdp.errors import BudgetExhausted

#: estimated peak bytes per coefficient of a product of ``bits``-bit integers or balls: FLINT holds
#: both factors, the product and its transform workspace (about 3x the operands' limbs), and
#: every coefficient has a fixed cost besides its limbs (an fmpz or an arb of 48 bytes). Measured
#: (q = 0.01, sigma = 1, 1000 steps, delta = 1e-300: products of up to ~10^5 coefficients at
#: ~1100 bits peaked at 0.56 GB RSS with the process's ~0.15 GB): an overestimate by design.
BYTES_PER_COEFF_FIXED = 48
PRODUCT_COPIES = 6


def product_bytes(length: int, bits: int) -> int:
    """Contract: an estimate (integers; no enclosure) of the peak bytes a product of ``length``
    coefficients of ``bits`` bits takes while it is formed."""
    return PRODUCT_COPIES * length * (BYTES_PER_COEFF_FIXED + (max(bits, 64) + 63) // 64 * 8)


@dataclass
class WorkMeter:
    """Units spent so far, the limit (None: count only), the memory budget in bytes (None: none),
    and what the last spend was for (a budget message says how far the run got)."""

    limit: int | None = None
    memory: int | None = None
    used: int = 0
    doing: str = "starting"
    name: str = "work budget"
    #: wall-time budget in seconds from ``started`` (None: none): read only by estimates that
    #: refuse a step up front (certdp.notions.cost), never to stop a step (certdp.budget does)
    seconds: float | None = None
    started: float = 0.0

    def refuse(self, units: int, doing: str) -> BudgetExhausted:
        """Contract: the one-line BudgetExhausted for a spend of ``units`` that does not fit, with
        ``meter`` set to this meter (a caller that gave a step a share of the work catches its own)."""
        exc = BudgetExhausted(
            f"{self.name} of {self.limit} work units would be passed: {self.used} spent (last: {self.doing}), "
            f"{units} more needed for {doing}; no answer (raise the budget, or ask for less: a coarser --h, "
            "a larger --rel-width, --via rdp)"
        )
        exc.meter = self  # type: ignore[attr-defined]
        return exc


_METERS: ContextVar[tuple[WorkMeter, ...]] = ContextVar("certdp_work_meters", default=())


def spend(units: int, doing: str) -> None:
    """Count ``units`` of work about to be done for ``doing`` on every active meter.

    Contract: returns (and counts) only if no active meter's limit would be passed; otherwise
    raises BudgetExhausted before counting anything, so the work is not started.
    """
    meters = _METERS.get()
    for m in meters:
        if m.limit is not None and m.used + units > m.limit:
            raise m.refuse(units, doing)
    for m in meters:
        m.used += units
        m.doing = doing


def tick() -> None:
    """Count one unit (a cooperative checkpoint: one evaluation or step of a search) on every
    active meter, keeping its ``doing``.

    Contract: as :func:`spend` for one unit.
    """
    meters = _METERS.get()
    for m in meters:
        if m.limit is not None and m.used + 1 > m.limit:
            raise m.refuse(1, "the next evaluation")
    for m in meters:
        m.used += 1


def resident() -> int:
    """Contract: the bytes this process holds in memory now (resident set, /proc/self/statm), or
    0 where the platform does not say; an observation that only chooses what to refuse."""
    try:
        with open("/proc/self/statm", "rb") as f:
            pages = int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return 0
    import os

    return pages * os.sysconf("SC_PAGE_SIZE")


def afford_memory(nbytes: int, doing: str) -> None:
    """Raise BudgetExhausted when ``nbytes`` (an estimate of a step's peak memory) on top of what
    the process holds now (:func:`resident`) exceeds the memory budget of an active meter.

    Contract: returns only if every active memory budget is at least ``nbytes`` plus the resident
    bytes (read only when a memory budget is active); counts nothing.
    """
    budgets = [m for m in _METERS.get() if m.memory is not None]
    if not budgets:
        return
    held = resident()
    for m in budgets:
        if m.memory is not None and nbytes + held > m.memory:
            # Whole MiB, the total rounded up and the budget down, so the sum reads as over the budget
            # (1.0GiB against a 1.03GiB total read as equal).
            mib = 1 << 20
            raise BudgetExhausted(
                f"max-memory={fmt_bytes(m.memory)}: the next step ({doing}) needs about {-(-nbytes // mib)}MiB on "
                f"top of the {-(-held // mib)}MiB already held, {-(-(nbytes + held) // mib)}MiB in all, more than "
                f"the {m.memory // mib}MiB budget (after {m.used} work units; last: {m.doing}); no answer (pass a "
                "larger --max-memory, or ask for less: a coarser --h, a larger --rel-width, --via rdp)"
            )


def product_cost(length: int, bits: int, what: str = "a polynomial product") -> None:
    """Check and count a product of ``length`` coefficients at ``bits`` bits before it is formed.

    Contract: returns only if the memory estimate :func:`product_bytes` is within every active
    memory budget and ``length`` units fit every active work limit (then they are counted).
    """
    doing = f"{what} of {length} coefficients at {bits} bits"
    afford_memory(product_bytes(length, bits), doing)
    spend(length, doing)


def spent() -> int:
    """Contract: the units counted by the innermost active meter (0 outside any)."""
    meters = _METERS.get()
    return meters[-1].used if meters else 0


def current() -> WorkMeter | None:
    """Contract: the innermost active meter, or None."""
    meters = _METERS.get()
    return meters[-1] if meters else None


def seconds_left() -> float | None:
    """Contract: the least wall time (seconds, time.monotonic) any active meter with a time budget
    still has, or None when none has one; an observation that only chooses what to refuse."""
    now = time.monotonic()
    left = [m.seconds - (now - m.started) for m in _METERS.get() if m.seconds is not None]
    return min(left) if left else None


def headroom() -> tuple[int | None, int | None]:
    """Contract: (the fewest units any active meter still allows, the least memory budget of any
    active meter), each None when no active meter sets one."""
    units = [m.limit - m.used for m in _METERS.get() if m.limit is not None]
    memory = [m.memory for m in _METERS.get() if m.memory is not None]
    return (min(units) if units else None), (min(memory) if memory else None)


@contextmanager
def metered(
    limit: int | None = None, memory: int | None = None, name: str = "work budget", seconds: float | None = None
) -> Iterator[WorkMeter]:
    """Within the block, work is counted on a new meter with ``limit`` units and ``memory`` bytes
    (None: no limit), and ``seconds`` of wall time (None: none) that estimates may read
    (:func:`seconds_left`); yields the meter.

    Contract: only adds counting and refusals (BudgetExhausted); values computed are unchanged.
    """
    meter = WorkMeter(limit, memory, name=name, seconds=seconds, started=time.monotonic())
    token = _METERS.set((*_METERS.get(), meter))
    try:
        yield meter
    finally:
        _METERS.reset(token)


def fmt_bytes(n: int) -> str:
    """Contract: ``n`` bytes as a short text in MiB or GiB (1 decimal), for messages."""
    if n >= 1 << 30:
        return f"{n / (1 << 30):.1f}GiB"
    return f"{n / (1 << 20):.1f}MiB"
