"""The zCDP parameter rho = sup_{t>0} K(t)/(t(t+1)) as a certified supremum (docs/math.md §2)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from certdp.enclose import (
    DEFAULT_TARGET,
    Ball,
    Enclosure,
    Target,
    current_prec,
    refine,
    sup_cgf_ratio,
    upper_float,
    workprec,
)
from certdp.errors import PrecisionExhausted, Unsupported, invalid
from certdp.notions.orders import require_pair, require_target
from certdp.pairs import PrivacyPair


@dataclass(frozen=True)
class RhoResult:
    """rho with how it was certified: ``closed-form`` (proof in the pair's docstring) or
    ``search`` (branch and bound; ``argmax`` is where the sup was approached: a float t, 0.0 for
    t -> 0, inf for t -> inf). ``repr`` shows the sound (upper) value in decimal; ``float(res)``
    is that upper end rounded up."""

    enclosure: Enclosure
    method: str
    argmax: float | None
    evaluations: int

    def __float__(self) -> float:
        """Contract: a float >= the upper end of rho's enclosure (rounded up; a sound rho)."""
        return self.enclosure.upper_float()

    def __repr__(self) -> str:
        where = "" if self.argmax is None else f", argmax={self.argmax:.8g}"
        return f"RhoResult(rho <= {self.enclosure.upper_str(17)}, method={self.method}{where})"


def _search(pair: PrivacyPair, target: Target) -> tuple[Ball, float, int]:
    if not pair.real_orders:
        raise Unsupported(
            f"mechanism={pair.mechanism}: a certified sup over real orders needs a CGF at real orders (this "
            "mechanism has integer orders only)"
        )
    kl = pair.kl_ball()
    tail_witness = pair.ratio_tail_witness()
    tail = pair.ratio_tail_bound

    def tail_bound(T: float) -> Ball:
        b = tail(T)
        if b is None:
            raise Unsupported(f"{pair.mechanism}: no tail bound for t -> inf, so rho cannot be certified")
        return b

    mag = max(upper_float(kl), upper_float(tail_witness) if tail_witness is not None else 0.0)
    tol = target.tolerance_for(mag) / 4

    def K(t: Ball) -> Ball:
        pair.check_order(t)  # a pair's order limit (LimitExceeded) holds for search points too
        return pair.cgf_ball(t)

    prec = current_prec()

    def curvature(a: float, b: float) -> Ball | None:
        # A quarter of the precision (at least 32 bits): the head's curvature cover only has to
        # separate K'' from 2 rho by a margin far above 2^-(prec/4) (a closer call leaves the rest
        # to the chords, still sound); for integral pairs this makes its moments cheap.
        with workprec(max(32, prec // 4)):
            try:
                return pair.curvature_upper(a, b)
            except PrecisionExhausted:
                return None  # a moment out of reach at this precision ends the cover (chords remain)

    res = sup_cgf_ratio(
        K,
        head_witness=kl,
        tail_bound=tail_bound,
        tail_witness=tail_witness,
        curvature=curvature,
        global_upper=pair.ratio_upper_bound(),
        tol=tol,
        max_t=None if pair.max_t() is None else float(pair.max_t()),  # type: ignore[arg-type]
    )
    return res.value, res.argbest, res.evaluations


def rho_detail(pair: PrivacyPair, target: Target = DEFAULT_TARGET, *, method: str = "auto") -> RhoResult:
    """rho with its method. ``method``: ``auto`` (closed form when proved, else search),
    ``closed-form`` or ``search``.

    Contract: the enclosure contains rho(P, Q) = sup_{t>0} K(t)/(t(t+1)). Closed forms are proved
    in the pairs' ``rho_closed_form`` docstrings; the search is certified by
    certdp.enclose.optimize.sup_cgf_ratio (chord bounds from convexity of K; at the head a
    curvature cover from the pair's curvature_upper, or the bound K(t0)/t0; the pair's tail
    bound; docs/math.md §2).
    """
    require_pair(pair), require_target(target)
    if method not in ("auto", "closed-form", "search"):
        raise invalid("method", method, "must be auto, closed-form or search")
    if method != "search" and pair.rho_closed_form() is not None:
        enc = refine(pair.rho_closed_form, target, what="rho")  # type: ignore[arg-type]
        arg = float("inf") if pair.rho_attained_at_infinity else None
        return RhoResult(enc, "closed-form", arg, 0)
    if method == "closed-form":
        raise Unsupported(f"{pair.mechanism}: no proved closed form for rho; use method=search")
    info: dict[str, object] = {}

    def compute() -> Ball:
        value, arg, evals = _search(pair, target)
        info.update(arg=arg, evals=evals)
        return value

    enc = refine(compute, _search_target(target), what="rho")
    return RhoResult(enc, "search", info["arg"], info["evals"])  # type: ignore[arg-type]


#: bits above log2(1/rel_tol) that the search's balls need: its tolerance is a quarter of the
#: target's, and chords, ratios and KL each lose a few bits to rounding
SEARCH_GUARD_BITS = 12


def _search_target(target: Target) -> Target:
    """The target with its start precision raised to log2(1/rel_tol) + SEARCH_GUARD_BITS: below
    that, balls alone are wider than the search's tolerance, so a round there is always lost
    (with the default 2^-60 every search used to fail at 64 bits before succeeding at 128)."""
    if target.rel_tol <= 0:
        return target
    need = math.ceil(-math.log2(target.rel_tol)) + SEARCH_GUARD_BITS
    return replace(target, start_prec=min(max(target.start_prec, need), target.max_prec))


def rho(pair: PrivacyPair, target: Target = DEFAULT_TARGET) -> Enclosure:
    """Enclosure of the zCDP parameter rho of the pair. Contract: as :func:`rho_detail`."""
    return rho_detail(pair, target).enclosure
