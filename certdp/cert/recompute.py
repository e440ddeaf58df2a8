"""Recomputation of one validated check (certdp.cert.checks.Check) from its recorded method only:
the certified TV lattice bounds, the RDP conversion over recorded orders, or the PLD lattice
bounds on recorded lattices. Part of the verifier: it imports the enclosure core, the pairs and
the notions a check names, never calibration or search code.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from certdp.cert.checks import Check
from certdp.cert.limits import MAX_PLD_PRODUCT, MAX_RDP_PREC
from certdp.enclose import Enclosure, Target, workprec
from certdp.pairs.params import decimal_str


@dataclass(frozen=True)
class Recomputed:
    """Proved bounds of the checked quantity: lower <= value <= upper, where a side that was not
    computed is None (a PLD claim needs only the upper side, a PLD refutation the lower)."""

    lower: Fraction | None
    upper: Fraction | None
    shown_lower: str
    shown_upper: str

    @staticmethod
    def of(enc: Enclosure) -> Recomputed:
        """Contract: the two ends of ``enc`` (decimals rounded outward)."""
        return Recomputed(enc.lower, enc.upper, enc.lower_str(), enc.upper_str())


def recompute(check: Check) -> Recomputed:
    """Contract: lower <= the checked quantity <= upper (the ends that are not None), each proved
    by the certified code of the check's method on its recorded grid, orders or lattices."""
    params = check.mechanism.params
    if check.lattices is not None:
        return _pld(check)
    if check.grid is not None:
        from certdp.notions.tv_certified import LatticeGrid, tv_bound
        from certdp.pairs import RandomAllocation

        grid = LatticeGrid(**check.grid, prec=check.prec_bits)
        pair = RandomAllocation(params["steps"], params["sigma"], params["epochs"])
        return Recomputed.of(tv_bound(pair, grid, "upper" if check.method == "lattice-upper" else "lower").bound)
    from certdp.notions.eps_delta import epsilon
    from certdp.pairs import SubsampledGaussian, compose

    pair = compose(SubsampledGaussian(params["q"], params["sigma"], params["direction"]), check.mechanism.steps)
    # the verifier only needs to decide the relation: at most two doublings of the recorded precision
    top = min(4 * check.prec_bits, MAX_RDP_PREC)
    target = Target(rel_tol=1e-12, abs_tol=1e-30, start_prec=check.prec_bits, max_prec=max(top, check.prec_bits))
    return Recomputed.of(epsilon(pair, check.delta, orders=list(check.orders or ()), target=target).enclosure)


def _pld(check: Check) -> Recomputed:
    """The max over the recorded directions of eps_upper (pld-upper) or eps_lower (pld-lower):
    for the max over directions, every direction's upper bounds it from above, and any one
    direction's lower bounds it from below."""
    from certdp.notions.pld import LatticeBounds, LossLattice
    from certdp.pairs import SubsampledGaussian

    assert check.lattices is not None and check.prune_bits is not None and check.delta is not None
    params, side = check.mechanism.params, "upper" if check.method == "pld-upper" else "lower"
    values = []
    with workprec(check.prec_bits):
        for direction, (h, offset, lo, hi) in sorted(check.lattices.items()):
            pair = SubsampledGaussian(params["q"], params["sigma"], direction)
            floor = Fraction(1, 2**check.prune_bits)
            bounds = LatticeBounds(pair, check.mechanism.steps, LossLattice(h, lo, hi, offset), floor, MAX_PLD_PRODUCT)
            values.append(bounds.eps(side, check.delta))
    best = max(values)
    shown = decimal_str(best, "epsilon")
    return Recomputed(None, best, "", shown) if side == "upper" else Recomputed(best, None, shown, "")
