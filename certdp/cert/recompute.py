"""Recomputation of one validated check (certdp.cert.checks.Check) from its recorded method only:
the certified TV lattice bounds, the RDP conversion over recorded orders, or the PLD lattice
bounds on recorded lattices. Part of the verifier: it imports the enclosure core, the pairs and
the notions a check names, never calibration or search code.

:func:`prove_end` decides whether the ONE number a check records (format v2: the upper end of a
``<=`` check, the lower end of a ``>`` check) is proved by the check's method.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from certdp.cert.checks import Check
from certdp.cert.limits import MAX_PLD_PRODUCT, MAX_RDP_PREC
from certdp.enclose import Enclosure, Target, to_ball, workprec
from certdp.errors import LimitExceeded


@dataclass(frozen=True)
class EndProof:
    """Whether a recorded end is proved: ``status`` is "proved", "false" (the method's bound lies
    beyond it: the recorded number is not what the method proves) or "undecided" (the recomputed
    ball straddles it at this precision); ``recomputed`` says what was recomputed, in words."""

    status: str
    recomputed: str


def prove_end(check: Check, end: Fraction) -> EndProof:
    """Decide whether the recorded end ``end`` of ``check`` is proved by its method.

    Contract: status "proved" only if the checked quantity is <= ``end`` (relation ``<=``: the
    upper end) or >= ``end`` (relation ``>``: the lower end), proved by the certified code of the
    check's method on its recorded grid, orders or lattices; PLD and hockey checks are decided
    exactly at ``end`` (delta_upper(end) <= delta for every direction, or delta_lower(end) > delta
    for one).
    """
    if check.lattices is not None:
        return _pld(check, end)
    if check.method in ("hockey-upper", "hockey-lower"):
        return _hockey(check, end)
    enc = _enclosure(check)
    if check.relation == "<=":
        if enc.upper <= end:
            return EndProof("proved", f"recomputed upper {enc.upper_str()} <= recorded upper")
        status = "false" if enc.lower > end else "undecided"
        return EndProof(status, f"recomputed [{enc.lower_str()}, {enc.upper_str()}] is not below the recorded upper")
    if enc.lower >= end:
        return EndProof("proved", f"recomputed lower {enc.lower_str()} >= recorded lower")
    status = "false" if enc.upper < end else "undecided"
    return EndProof(status, f"recomputed [{enc.lower_str()}, {enc.upper_str()}] is not above the recorded lower")


def _enclosure(check: Check) -> Enclosure:
    """The recomputed bound of a TV (lattice) or RDP check: the lattice upper or lower bound of
    TV (a ball around the bound) or the enclosure of the RDP-conversion epsilon."""
    params = check.mechanism.params
    if check.grid is not None:
        from certdp.notions.tv_certified import LatticeGrid, tv_bound
        from certdp.pairs import RandomAllocation

        grid = LatticeGrid(**check.grid, prec=check.prec_bits)
        pair = RandomAllocation(params["steps"], params["sigma"], params["epochs"])
        return tv_bound(pair, grid, "upper" if check.method == "lattice-upper" else "lower").bound
    from certdp.notions.eps_delta import epsilon
    from certdp.pairs import SubsampledGaussian, compose

    pair = compose(SubsampledGaussian(params["q"], params["sigma"], params["direction"]), check.mechanism.steps)
    # the verifier only needs to decide the recorded end: at most two doublings of the recorded precision
    top = min(4 * check.prec_bits, MAX_RDP_PREC)
    target = Target(rel_tol=1e-12, abs_tol=1e-30, start_prec=check.prec_bits, max_prec=max(top, check.prec_bits))
    return epsilon(pair, check.delta, orders=list(check.orders or ()), target=target).enclosure


def _pld(check: Check, end: Fraction) -> EndProof:
    """pld-upper: the mechanism is (end, delta)-DP iff every direction is, so each direction's
    delta_upper(end) must be <= delta; pld-lower: eps(delta) > end as soon as one direction's
    delta_lower(end) > delta (delta_n is nonincreasing in eps), by the recorded lower construction
    (balanced lattice points, or merged cells)."""
    from certdp.notions.pld import LatticeBounds, LossLattice
    from certdp.notions.pld_split import SplitLattice
    from certdp.pairs import SubsampledGaussian

    assert check.lattices is not None and check.prune_bits is not None and check.delta is not None
    params, side = check.mechanism.params, "upper" if check.method == "pld-upper" else "lower"
    shown: list[str] = []
    # the powers coarsened as they spread when the check says so (decided on exact integers, so
    # the same integers as the calibration's), else one spacing throughout; a merged refutation's
    # units are sized for the threshold, as the calibration sized them
    how: dict[str, object] = {"coarsen": check.coarsen_powers}
    if check.lower == "merged":
        how.update(lower="merged", units_eps=check.threshold)
    with workprec(check.prec_bits):
        d = to_ball(check.delta)
        for direction, (h, offset, lo, hi, *split) in sorted(check.lattices.items()):
            pair = SubsampledGaussian(params["q"], params["sigma"], direction)
            floor = Fraction(1, 2**check.prune_bits)
            try:
                if split:  # fine bulk cells, coarse tail cells (certdp.notions.pld_split)
                    b_lo, b_hi, stride = split
                    spl = SplitLattice(LossLattice(h, b_lo, b_hi, offset), lo, hi, stride)
                    bounds = LatticeBounds(
                        pair, check.mechanism.steps, spl.bulk, floor, MAX_PLD_PRODUCT, split=spl, **how
                    )
                else:
                    lattice = LossLattice(h, lo, hi, offset)
                    bounds = LatticeBounds(pair, check.mechanism.steps, lattice, floor, MAX_PLD_PRODUCT, **how)
                ball = bounds.delta(side, end)
            except LimitExceeded as exc:
                # name the lattice and direction whose powers outgrew the limit; verify prefixes the check
                raise LimitExceeded(f"method/lattices/{direction} ({direction} direction): {exc}") from None
            enc = Enclosure.from_ball(ball, check.prec_bits)
            if side == "upper":
                shown.append(f"delta_upper {enc.upper_str()} ({direction})")
                if not bool(ball <= d):
                    return EndProof("false", f"{shown[-1]} at the recorded upper is not <= delta")
            else:
                shown.append(f"delta_lower {enc.lower_str()} ({direction})")
                if bool(ball > d):
                    return EndProof("proved", f"{shown[-1]} at the recorded lower is > delta")
    if side == "upper":
        return EndProof("proved", f"{', '.join(shown)} at the recorded upper: <= delta")
    return EndProof("false", f"{', '.join(shown)} at the recorded lower: none is > delta")


def _hockey(check: Check, end: Fraction) -> EndProof:
    """hockey-upper: random allocation is (end, delta)-DP iff every direction is, so each
    direction's delta_upper(end) must be <= delta; hockey-lower: eps(delta) > end as soon as one
    direction's delta_lower(end) > delta. Both on the recorded grid's lattice kept up to the
    threshold + 1 (allocation_dp.certificate_lattice), which bounds only ends up to there; a
    refutation may also be proved by the remove direction's down lattice on the same grid
    (allocation_dp.RefutationLattices). A claim with k > 1 is computed on the reduction's k = 1 run
    (docs/math.md §9.8, "k > 1")."""
    from certdp.notions.allocation_dp import CERT_EPS_MARGIN, RefutationLattices, certificate_lattice, hockey_decide
    from certdp.notions.tv_certified import LatticeGrid
    from certdp.pairs import RandomAllocation

    assert check.grid is not None and check.delta is not None
    if end > check.threshold + CERT_EPS_MARGIN:
        return EndProof("false", f"the recorded end is beyond threshold + {CERT_EPS_MARGIN}, the lattice's range")
    params, side = check.mechanism.params, "upper" if check.method == "hockey-upper" else "lower"
    # k > 1: the k = 1 run of the reduction (floor(M/k) steps, k E epochs), which bounds k-of-M
    # allocation from above; checks.py admits only hockey-upper checks with k
    steps, epochs = check.mechanism.lattice_run()
    pair = RandomAllocation(steps, params["sigma"], epochs)
    grid = LatticeGrid(**check.grid, prec=check.prec_bits)
    dirs = ("remove", "add") if params["direction"] == "both" else (params["direction"],)
    if side == "upper":
        holds, shown = hockey_decide(certificate_lattice(pair, grid, side, check.threshold), end, check.delta, dirs)
    else:  # the lower lattice, then the remove direction's down lattice (writer and verifier alike)
        holds, shown = RefutationLattices(pair, grid, check.threshold).decide(end, check.delta, dirs)
    if holds:
        return EndProof("proved", f"{shown} at the recorded {side}")
    return EndProof("false", f"{shown} at the recorded {side}")
