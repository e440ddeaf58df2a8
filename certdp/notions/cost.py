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
- the work units (certdp.enclose.work: one per product coefficient) and peak bytes of that
  product at the bits the fixed-point composition uses (certdp.notions.pld_fixed.bits_for).

Every figure is a float or integer estimate that only chooses what to refuse; none enters a
certified number. Being lower estimates, they refuse only runs that would pass the budget anyway.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from certdp.enclose import to_ball, workprec
from certdp.enclose.work import fmt_bytes, headroom, product_bytes
from certdp.errors import CertdpError
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
    accountant at its first round's spacing; None when the pair is not one the accountant takes
    or the lattice itself refuses (it says why, quickly, when it runs).

    Contract: integers and a spacing that only choose what to refuse (no enclosure).
    """
    from certdp.notions.pld import PROBE_FACTOR, auto_h, directions, resolution
    from certdp.notions.pld_fixed import bits_for, fixed_bits
    from certdp.notions.pld_lattice import lattice_for

    try:
        with workprec(64):
            comps = directions(pair)
            steps = sum(n for _, n in next(iter(comps.values())))
            floor, tail_bits = resolution(delta, steps)
            parts = [part for ps in comps.values() for part in ps]
            h = auto_h(parts, tail_bits) * PROBE_FACTOR
            cells, spread = 0, 0.0
            for p, n in parts:
                lat = lattice_for(p, h, min(tail_bits, 64))
                cells = max(cells, lat.hi - lat.lo)
                q1 = _quantile_index(p, h, lat.lo, lat.hi, 0.75)
                q3 = _quantile_index(p, h, lat.lo, lat.hi, 0.25)
                spread += n * ((q3 - q1) / IQR_PER_SD) ** 2  # variances add over the steps
    except (CertdpError, ArithmeticError, ValueError):
        return None
    product = max(cells, math.ceil(2 * math.sqrt(spread)))
    bits = bits_for(floor)(1, product) + fixed_bits(floor)[0] // 8
    return PldCost(h, cells, product, bits, product, product_bytes(product, bits))


def pld_cost_refusal(pair: PrivacyPair, delta: Fraction | None) -> str | None:
    """Why the lattice accountant would pass the active budgets (certdp.enclose.work: the
    caller's work limit and memory budget) on ``pair``, by :func:`pld_cost`; None if it may fit or
    no budget is active.

    Contract: a one-line reason or None; computes nothing certified.
    """
    units, memory = headroom()
    if units is None and memory is None:
        return None
    cost = pld_cost(pair, delta)
    if cost is None:
        return None
    where = f"a composed lattice of at least {cost.product} coefficients (h={cost.h}, {cost.cells} cells per step)"
    if memory is not None and cost.memory > memory:
        return f"{where} needs an estimated {fmt_bytes(cost.memory)}, above max-memory={fmt_bytes(memory)}"
    if units is not None and cost.work > units:
        return f"{where} needs at least {cost.work} work units, more than the {units} left in the work budget"
    return None
