"""The zCDP-RDP information gap Gamma(t) = rho t(t+1) - K(t) >= 0 (arXiv:2610.02414; docs/math.md §2)."""

from __future__ import annotations

import math

from certdp.enclose import DEFAULT_TARGET, Ball, Enclosure, Target, refine, to_ball, upper_float
from certdp.errors import invalid
from certdp.notions.orders import require_pair, require_target, t_ball, t_of
from certdp.notions.zcdp import rho as rho_of
from certdp.pairs import PrivacyPair
from certdp.pairs.params import Number, real


def gap(
    pair: PrivacyPair, t: Number, target: Target = DEFAULT_TARGET, rho: Enclosure | Number | None = None
) -> Enclosure:
    """Enclosure of Gamma(t) = rho t(t+1) - K(t).

    Contract: contains Gamma(t) for the exact t. rho is the pair's proved closed form evaluated
    at each working precision, else a certified-search enclosure (or the one passed in) whose
    width is chosen from the gap's own size, so that t(t+1) width(rho) stays within the target.
    Under composition Gamma adds exactly when rho adds (K always adds). A given ``rho`` is an
    Enclosure or an exact number >= 0 (InvalidArgument otherwise); t lies in the range of
    certdp.notions.orders.
    """
    require_pair(pair), require_target(target)
    tt = t_of(t)
    t_ball(pair, tt)
    if rho is not None and not isinstance(rho, Enclosure):
        exact_rho = real("rho", rho, ge=0)
        rho = None
    else:
        exact_rho = None
    # t in [1e-100, 1e100] (t_of), so this float is in [1e-100, 2e200]: no underflow to 0
    weight = float(tt * (tt + 1))
    closed = rho is None and exact_rho is None and pair.rho_closed_form() is not None
    if not closed and rho is None and exact_rho is None:
        rough = rho_of(pair, Target(1e-10, 1e-30, target.start_prec, target.max_prec))
        est = upper_float(rough.ball() * t_ball(pair, tt) * (t_ball(pair, tt) + 1) - pair.cgf_ball(t_ball(pair, tt)))
        tol = target.tolerance_for(abs(est)) if math.isfinite(est) else target.abs_tol
        # the width asked of rho: a finite float in [1e-300, 1e300] whatever tol and t are
        want = min(max(tol / (8 * weight), 1e-300), 1e300)
        rho = rho_of(pair, Target(0.0, want, target.start_prec, target.max_prec))
    if isinstance(rho, Enclosure) and rho.lower < 0:
        raise invalid("rho", rho, "must be >= 0")

    def rho_ball() -> Ball:
        if exact_rho is not None:
            return to_ball(exact_rho)
        return pair.rho_closed_form() if closed else rho.ball()  # type: ignore[union-attr,return-value]

    def compute() -> Ball:
        tb = t_ball(pair, tt)
        return rho_ball() * tb * (tb + 1) - pair.cgf_ball(tb)

    return refine(compute, target, what="gap")
