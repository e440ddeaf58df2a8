"""(eps, delta) from a CGF: the optimal conversion over orders (seed 000 Lemma B.1, MATH.md section 3).

delta_{P||Q}(eps) <= c_t exp(K(t) - t eps), c_t = t^t/(1+t)^{1+t}, for every t > 0. Hence

* eps(delta) = inf_{t>0} F(t), F(t) = (K(t) + log c_t - log delta)/t  ("rdp"; F_R), or the same
  with K(t) replaced by rho t(t+1) ("zcdp"; F_Z);
* delta(eps) = exp(inf_{t>0} G(t)), G(t) = K(t) - t eps + log c_t.

F_R equals the Balle et al. / Canonne-Kamath-Steinke conversion
U_alpha - (log delta + log alpha)/(alpha-1) + log((alpha-1)/alpha) with U_alpha = K(alpha-1)/(alpha-1).
Both numerators are convex in t: K is a CGF (convex), and log c_t = t log t - (1+t) log(1+t) has
second derivative 1/t - 1/(1+t) > 0. That is what makes the certified search second order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fractions import Fraction

from certdp.enclose import (
    DEFAULT_TARGET,
    Ball,
    Enclosure,
    Target,
    certainly_le,
    inf_convex,
    refine,
    to_ball,
    upper_float,
)
from certdp.errors import InvalidArgument, invalid
from certdp.notions.orders import order_grid, t_ball
from certdp.notions.zcdp import rho as rho_of
from certdp.pairs import PrivacyPair
from certdp.pairs.params import Number, real

VIAS = ("rdp", "zcdp")
#: Default target for conversions: the upper end is the sound value; 1e-12 relative is plenty.
CONVERSION_TARGET = Target(rel_tol=1e-12, abs_tol=1e-30)


@dataclass(frozen=True)
class ConversionResult:
    """Certified infimum over orders of a conversion bound.

    ``enclosure`` contains inf over the searched orders of the bound; its upper end is a sound
    value (attained at ``order``). ``grid`` is ``real`` (all t > 0, certified search),
    ``explicit`` or the name of the default integer grid, listed in ``orders``.
    """

    quantity: str
    enclosure: Enclosure
    via: str
    order: float
    grid: str
    orders: tuple[Fraction, ...] | None = field(default=None)

    @property
    def sound(self) -> Fraction:
        """The sound (pessimistic) value: the upper end of the enclosure.

        Contract: the upper end: a value for which the guarantee holds.
        """
        return self.enclosure.upper


def _log_ct(t: Ball) -> Ball:
    """log c_t = t log t - (1+t) log(1+t) (t > 0)."""
    return t * t.log() - (1 + t) * t.log1p()


def _cgf_function(pair: PrivacyPair, via: str, rho: Enclosure | None) -> Callable[[Ball], Ball]:
    if via == "rdp":
        return pair.cgf_ball
    assert rho is not None
    return lambda t: rho.ball() * t * (t + 1)


def _check_via(via: str) -> None:
    if via not in VIAS:
        raise invalid("via", via, "must be rdp or zcdp")


def _grid_min(values: list[tuple[Ball, Fraction]]) -> tuple[Ball, Fraction]:
    """Ball [min of lower ends, min of upper ends] and the order attaining the min upper end."""
    best_ball, best_t = values[0]
    lo = best_ball.lower()
    for v, t in values[1:]:
        if v.upper() < best_ball.upper():
            best_ball, best_t = v, t
        lo = lo.min(v.lower())
    return lo.union(best_ball.upper()), best_t


def _on_grid(
    quantity: str,
    pair: PrivacyPair,
    orders: Iterable[Number] | None,
    value_at: Callable[[Ball], Ball],
    via: str,
    target: Target,
) -> ConversionResult:
    """Certified min over a finite order grid of ``value_at(t)`` (monotone post-processing allowed)."""
    ts, grid = order_grid(pair, orders)
    info: dict[str, Fraction] = {}

    def compute() -> Ball:
        value, t_best = _grid_min([(value_at(t_ball(pair, t)), t) for t in ts])
        info["t"] = t_best
        return value

    enc = refine(compute, target, what=quantity)
    return ConversionResult(quantity, enc, via, float(info["t"] + 1), grid, tuple(t + 1 for t in ts))


def _uses_grid(pair: PrivacyPair, via: str, orders: Iterable[Number] | None) -> bool:
    return orders is not None or (via == "rdp" and (not pair.real_orders or pair.grid_by_default))


def epsilon(
    pair: PrivacyPair,
    delta: Number,
    *,
    via: str = "rdp",
    orders: Iterable[Number] | None = None,
    target: Target = CONVERSION_TARGET,
) -> ConversionResult:
    """Certified eps at ``delta``: enclosure of inf_t F(t) (F_R for via="rdp", F_Z for "zcdp").

    Contract: the enclosure contains inf over the searched t of F(t); its upper end is a sound
    epsilon: the pair (or composition) is (eps, delta)-DP in the direction(s) its CGF covers.
    Real orders: certified search (certdp.enclose.optimize.inf_convex) with head bound
    F(t) >= A/t0 + log t0 - t0 - 1 on (0, t0] (A = log(1/delta) > t0; uses K >= 0,
    log(t/(1+t)) >= log t - t and log(1+t)/t <= 1) and tail bound F(t) >= K(T)/T + log(c_T)/T on
    [T, inf) (K(t)/t nondecreasing, log(c_t)/t increasing: derivative log(1+t)/t^2). Proof of
    the bound itself: MATH.md section 3; proofs_checks ``ct_max``, ``fr_equals_cks``, ``log_ct_convex``.
    """
    _check_via(via)
    d = real("delta", delta, gt=0, lt=1)
    r = rho_of(pair) if via == "zcdp" else None
    K = _cgf_function(pair, via, r)

    def F(t: Ball) -> Ball:
        return (K(t) + _log_ct(t) - to_ball(d).log()) / t

    if _uses_grid(pair, via, orders):
        return _on_grid("epsilon", pair, orders, F, via, target)
    return epsilon_from_cgf(K, d, via=via, target=target)


def epsilon_from_cgf(
    K: Callable[[Ball], Ball], delta: Number, *, via: str = "rdp", target: Target = CONVERSION_TARGET
) -> ConversionResult:
    """Certified inf over all real t > 0 of F(t) = (K(t) + log c_t - log delta)/t for a CGF K.

    Contract: as :func:`epsilon` (real orders) for any K that is a CGF (convex, K(0) = 0,
    K >= 0) evaluated on balls; the head and tail bounds are those of :func:`epsilon`.
    """
    d = real("delta", delta, gt=0, lt=1)
    state: dict[str, float] = {}

    def N(t: Ball) -> Ball:
        return K(t) + _log_ct(t) - to_ball(d).log()

    def head(lo: float) -> Ball:
        lb, a = to_ball(lo), -to_ball(d).log()
        if not lb < a:  # the bound needs t0 < A, decided in ball arithmetic
            return to_ball("-inf")
        return a / lb + lb.log() - lb - 1

    def tail(hi: float) -> Ball:
        hb = to_ball(hi)
        return K(hb) / hb + _log_ct(hb) / hb

    def compute() -> Ball:
        tol = target.tolerance_for(abs(state.get("mag", 1.0))) / 4
        res = inf_convex(N, divide_by_t=True, head_bound=head, tail_bound=tail, tol=tol, start=state.get("t", 1.0))
        state["t"], state["mag"] = res.argbest, upper_float(res.value)
        return res.value

    enc = refine(compute, target, what="epsilon")
    return ConversionResult("epsilon", enc, via, state["t"] + 1, "real")


def delta(
    pair: PrivacyPair,
    eps: Number,
    *,
    via: str = "rdp",
    orders: Iterable[Number] | None = None,
    target: Target = CONVERSION_TARGET,
) -> ConversionResult:
    """Certified delta at ``eps``: enclosure of exp(inf_t G(t)), G(t) = K(t) - t eps + log c_t.

    Contract: the enclosure contains exp of inf over the searched t of G; its upper end is a
    sound delta. Real orders: certified search on the convex G, with G(0+) = 0. Head bound on
    (0, t0]: the secant of G through t0 and 2 t0, extended left, lies below G (convexity); its
    minimum on [0, t0] is at an end. Tail bound on [T, inf): the secant through T/2 and T,
    extended right; if its slope is not certainly >= 0 the tail is unbounded below, except
    when the pair's loss is bounded by D_inf <= eps, where G -> -inf and delta = 0 exactly
    (pure DP). Proof of the bound: MATH.md section 3; proofs_checks ``ct_max``, ``log_ct_convex``.
    """
    _check_via(via)
    e = real("eps", eps, ge=0)
    r = rho_of(pair) if via == "zcdp" else None
    K = _cgf_function(pair, via, r)
    eb = lambda: to_ball(e)  # noqa: E731 - rebuilt at each precision

    def G(t: Ball) -> Ball:
        return K(t) - t * eb() + _log_ct(t)

    if _uses_grid(pair, via, orders):
        # exp is increasing, so min over the grid of exp(G) = exp(min G)
        return _on_grid("delta", pair, orders, lambda t: G(t).exp(), via, target)

    loss = pair.max_loss_ball() if via == "rdp" else None
    return delta_from_cgf(K, e, via=via, target=target, max_loss=loss)


def delta_from_cgf(
    K: Callable[[Ball], Ball],
    eps: Number,
    *,
    via: str = "rdp",
    target: Target = CONVERSION_TARGET,
    max_loss: Ball | None = None,
) -> ConversionResult:
    """Certified exp(inf over all real t > 0 of K(t) - t eps + log c_t) for a CGF K.

    Contract: as :func:`delta` (real orders) for any CGF K evaluated on balls; ``max_loss``
    (an upper bound on the privacy loss, if finite) enables the pure-DP shortcut delta = 0.
    """
    e = real("eps", eps, ge=0)
    eb = lambda: to_ball(e)  # noqa: E731 - rebuilt at each precision

    def G(t: Ball) -> Ball:
        return K(t) - t * eb() + _log_ct(t)

    if max_loss is not None and certainly_le(max_loss, to_ball(e)):
        return ConversionResult("delta", Enclosure.from_bounds(0, 0, 0), via, math.inf, "real")

    def head(lo: float) -> Ball:
        a, b = G(to_ball(lo)), G(to_ball(2 * lo))
        slope = (b - a) / to_ball(lo)
        return (a - slope * to_ball(lo)).min(a)

    def tail(hi: float) -> Ball:
        a, b = G(to_ball(hi / 2)), G(to_ball(hi))
        if not (b - a) >= 0:
            return to_ball("-inf")
        return b

    state: dict[str, float] = {}

    def compute() -> Ball:
        # exp turns an absolute width w of inf G into a relative width of about w.
        tol = target.rel_tol / 4
        res = inf_convex(G, divide_by_t=False, head_bound=head, tail_bound=tail, tol=tol, start=state.get("t", 1.0))
        state["t"] = res.argbest
        return res.value.exp()

    enc = refine(compute, target, what="delta")
    return ConversionResult("delta", enc, via, state["t"] + 1, "real")


def classic_zcdp_epsilon(rho: Enclosure, delta: Number) -> Enclosure:
    """Enclosure of rho + 2 sqrt(rho log(1/delta)) (Bun-Steinke; for comparison).

    Contract: contains the expression for every rho in the enclosure (monotone in rho).
    """
    d = real("delta", delta, gt=0, lt=1)
    if rho.lower < 0:
        raise InvalidArgument(f"rho={rho} must be >= 0")
    return refine(lambda: rho.ball() + 2 * (rho.ball() * -to_ball(d).log()).sqrt(), DEFAULT_TARGET, what="epsilon")
