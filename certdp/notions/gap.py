"""The zCDP-RDP information gap Gamma(t) = rho t(t+1) - K(t) >= 0 (seed 000, MATH.md section 1)."""

from __future__ import annotations

from certdp.enclose import DEFAULT_TARGET, Ball, Enclosure, Target, refine, upper_float
from certdp.notions.orders import t_ball, t_of
from certdp.notions.zcdp import rho as rho_of
from certdp.pairs import PrivacyPair
from certdp.pairs.params import Number


def gap(pair: PrivacyPair, t: Number, target: Target = DEFAULT_TARGET, rho: Enclosure | None = None) -> Enclosure:
    """Enclosure of Gamma(t) = rho t(t+1) - K(t).

    Contract: contains Gamma(t) for the exact t. rho is the pair's proved closed form evaluated
    at each working precision, else a certified-search enclosure (or the one passed in) whose
    width is chosen from the gap's own size, so that t(t+1) width(rho) stays within the target.
    Under composition Gamma adds exactly when rho adds (K always adds).
    """
    tt = t_of(t)
    t_ball(pair, tt)
    weight = float(tt * (tt + 1))
    closed = rho is None and pair.rho_closed_form() is not None
    if not closed and rho is None:
        rough = rho_of(pair, Target(1e-10, 1e-30, target.start_prec, target.max_prec))
        est = upper_float(rough.ball() * t_ball(pair, tt) * (t_ball(pair, tt) + 1) - pair.cgf_ball(t_ball(pair, tt)))
        want = target.tolerance_for(abs(est)) / (8 * weight)
        rho = rho_of(pair, Target(0.0 if want > 0 else 1e-30, max(want, 1e-300), target.start_prec, target.max_prec))

    def rho_ball() -> Ball:
        return pair.rho_closed_form() if closed else rho.ball()  # type: ignore[union-attr,return-value]

    def compute() -> Ball:
        tb = t_ball(pair, tt)
        return rho_ball() * tb * (tb + 1) - pair.cgf_ball(tb)

    return refine(compute, target, what="gap")
