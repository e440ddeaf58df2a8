"""What the lattice accountant would cost, estimated before it builds anything.

The lattice accountant (certdp.notions.pld) builds one lattice per step and composes it by
repeated squaring; its products grow with the spread of the composed loss, about sqrt(steps)
standard deviations of one step's loss, over the spacing h. A run whose products cannot fit the
caller's budget is better refused (or sent to RDP) at once than after minutes of squarings, so
:func:`pld_cost` predicts, from a few dozen loss-tail evaluations at 64 bits:

- the cells of one step's lattice at the first round's spacing (that of certdp.notions.pld);
- a lower estimate of the composed product's length: the larger of those cells and two standard
  deviations of the composed loss, sqrt(steps) x IQR / 1.349 (the standard deviation of a normal
  with that interquartile range) per side, in cells;
- the work units (certdp.enclose.work: one per product coefficient; each direction's two sides
  square about log2(steps) times) and the peak bytes of that product at the bits the fixed-point
  composition uses (certdp.notions.pld_fixed.bits_for).

Every figure is a float or integer estimate that only chooses what to refuse; none enters a
certified number. Being lower estimates, they refuse only runs that would pass the budget anyway.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from certdp.enclose import to_ball, workprec
from certdp.enclose.work import fmt_bytes, headroom, product_bytes, resident
from certdp.errors import BudgetExhausted, CertdpError, LimitExceeded
from certdp.pairs import PrivacyPair

#: ratio of a normal distribution's interquartile range to its standard deviation
IQR_PER_SD = 1.349


@dataclass(frozen=True)
class PldCost:
    """Estimates for one run of the lattice accountant (see the module docstring)."""

    h: Fraction
    cells: int
    product: int
    bits: int
    work: int
    memory: int


def _quantile_index(pair: PrivacyPair, h: Fraction, lo: int, hi: int, mass: float) -> int:
    """The least index k in [lo, hi] with P(L > kh) <= mass (bisection at 64 bits; steers only)."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        t = pair.loss_tail(to_ball(h * mid))
        lo, hi = (mid, hi) if t is not None and t[0] > mass else (lo, mid)
    return hi


def pld_cost(pair: PrivacyPair, delta: Fraction | None) -> PldCost | None:
    """Estimates for eps(delta) (``delta`` given) or delta(eps) of ``pair`` by the lattice
    accountant at its first round's spacing; None when the pair is not one the accountant takes.
    LimitExceeded (the lattice's own message) when one step's lattice at that spacing needs more
    than MAX_CELLS cells even at the fewest tail bits the run uses: the run's first round would
    refuse the same way, after building the other direction's lattices and products.

    Contract: integers and a spacing that only choose what to refuse (no enclosure).
    """
    from certdp.notions.pld import PROBE_FACTOR, auto_h, directions, resolution
    from certdp.notions.pld_fixed import bits_for
    from certdp.notions.pld_lattice import lattice_for
    from certdp.notions.pld_split import bulk_bits

    try:
        with workprec(64):
            comps = directions(pair)
            steps = sum(n for _, n in next(iter(comps.values())))
            floor, tail_bits = resolution(delta, steps)
            fewest = min(tail_bits, bulk_bits(delta, steps)) if delta is not None else tail_bits
            parts = [part for ps in comps.values() for part in ps]
            h = auto_h(parts, tail_bits) * PROBE_FACTOR
            cells, spread = 0, 0.0
            for p, n in parts:
                grid = p.loss_grid()
                if grid is not None and grid.atomic:  # a purely atomic loss may take a spacing above h
                    return None
                # a loss with atoms and a continuous part takes a spacing <= h (pld_grid.aligned_spacing):
                # its cells at h are a lower estimate
                lat = lattice_for(p, h, fewest)  # LimitExceeded: the first round refuses the same way
                cells = max(cells, lat.hi - lat.lo)
                q1 = _quantile_index(p, h, lat.lo, lat.hi, 0.75)
                q3 = _quantile_index(p, h, lat.lo, lat.hi, 0.25)
                spread += n * ((q3 - q1) / IQR_PER_SD) ** 2  # variances add over the steps
    except (LimitExceeded, BudgetExhausted):  # the lattice's own refusal, or a budget spent on the probes
        raise
    except (CertdpError, ArithmeticError, ValueError):
        return None
    product = max(cells, math.ceil(2 * math.sqrt(spread)))
    # a product of two factors in units of 2^-b holds 2b + log2(length) bits before it is rounded
    # (certdp.enclose.fixed._mul charges that width)
    bits = 2 * bits_for(floor)(1, product) + product.bit_length()
    # each direction's two sides square about log2(steps) times up to that length
    work = 2 * len(comps) * max(1, steps.bit_length()) * product
    return PldCost(h, cells, product, bits, work, product_bytes(product, bits))


def pld_cost_refusal(pair: PrivacyPair, delta: Fraction | None) -> tuple[str, bool] | None:
    """Why the lattice accountant would refuse ``pair`` or pass the active budgets
    (certdp.enclose.work: the caller's work limit and memory budget), by :func:`pld_cost`, with
    whether it is a budget (True) or a limit of the accountant (False); None if it may fit.

    Contract: a one-line reason and a flag, or None; computes nothing certified.
    """
    try:
        cost = pld_cost(pair, delta)
    except LimitExceeded as exc:
        return str(exc), False
    units, memory = headroom()
    if cost is None:
        return None
    where = f"a composed lattice of at least {cost.product} coefficients (h={cost.h}, {cost.cells} cells per step)"
    if memory is not None and cost.memory + resident() > memory:  # on top of what the process holds
        return (
            f"budget: {where} needs an estimated {fmt_bytes(cost.memory)}, above max-memory={fmt_bytes(memory)}",
            True,
        )
    if units is not None and cost.work > units:
        return f"budget: {where} needs at least {cost.work} work units, more than the {units} left", True
    return None
