"""(eps, delta) from a CGF: the optimal conversion over orders (docs/math.md §3).

Source: arXiv:2610.02414 §3.2 and Lemma B.1.

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
from dataclasses import dataclass, field, replace
from fractions import Fraction

from certdp.enclose import (
    DEFAULT_TARGET,
    Ball,
    Enclosure,
    Target,
    certainly_le,
    current_prec,
    inf_convex,
    refine,
    to_ball,
    upper_float,
)
from certdp.enclose.ball import EXP_LIMIT
from certdp.errors import InvalidArgument, PrecisionExhausted, fmt_value, invalid
from certdp.notions.orders import order_grid, require_pair, require_target, t_ball
from certdp.notions.zcdp import rho as rho_of
from certdp.pairs import Composition, PrivacyPair, SubsampledGaussian
from certdp.pairs.params import Number, real

VIAS = ("rdp", "zcdp")
#: log of a delta so small that an Enclosure rounds it to [0, 2^-EXP_LIMIT] anyway.
_LOG_TINY_DELTA = -(EXP_LIMIT + 64) * math.log(2)
#: Default target for conversions: the upper end is the sound value; 1e-12 relative is plenty.
CONVERSION_TARGET = Target(rel_tol=1e-12, abs_tol=1e-30)


@dataclass(frozen=True)
class ConversionResult:
    """Certified infimum over orders of a conversion bound, clamped to the meaningful range.

    ``enclosure`` contains inf over the searched orders of the bound, clamped to [0, inf) for
    epsilon and to (0, 1] for delta: its upper end is a sound value (attained at ``order``).
    A negative epsilon bound means every epsilon >= 0 holds (delta(eps) is nonincreasing), so
    epsilon = 0; a delta bound above 1 is vacuous, so delta = 1. When a clamp moved an end,
    ``signed_infimum`` holds the unclamped enclosure (else None; a negative lower end of delta,
    which is ball rounding since delta = exp(inf G) > 0, is set to 0 without a note).
    ``warnings`` holds one-line reasons to read the number with care (a clamp, the largest order
    of a grid or a pair's order limit attained, via=zcdp on a subsampled pair). ``grid`` is
    ``real`` (all t > 0, certified search), ``real, order <= N`` (a pair with an order limit,
    certdp.pairs.base.PrivacyPair.max_t: t in (0, N - 1], and for epsilon also the pure-DP limit
    t -> inf when the loss is bounded), ``explicit`` or the name of the default integer grid,
    listed in ``orders``.

    ``repr`` reads ``ConversionResult(epsilon <= 1.2345678901234568, order=32, via=rdp)``;
    ``float(res)`` is the sound value rounded UP to a float (the upper end of ``enclosure``;
    inf if it exceeds the float range), so it is safe to use as the epsilon or delta.
    """

    quantity: str
    enclosure: Enclosure
    via: str
    order: float
    grid: str
    orders: tuple[Fraction, ...] | None = field(default=None)
    signed_infimum: Enclosure | None = field(default=None)
    warnings: tuple[str, ...] = field(default=())

    @property
    def sound(self) -> Fraction:
        """The sound (pessimistic) value: the upper end of the enclosure.

        Contract: the upper end: a value for which the guarantee holds.
        """
        return self.enclosure.upper

    def __float__(self) -> float:
        """Contract: a float >= the sound value (the upper end rounded up; inf past the float range)."""
        return self.enclosure.upper_float()

    def __repr__(self) -> str:
        grid = "" if self.grid == "real" else f", grid={self.grid}"
        notes = f", warnings={len(self.warnings)}" if self.warnings else ""
        return (
            f"ConversionResult({self.quantity} <= {self.enclosure.upper_str(MIN_REPR_DIGITS)}, "
            f"order={self.order:.8g}, via={self.via}{grid}{notes})"
        )


#: Significant digits of the sound value in ``repr(ConversionResult)`` (rounded up).
MIN_REPR_DIGITS = 17


def _clamp(res: ConversionResult, given: str) -> ConversionResult:
    """``res`` with its enclosure clamped (epsilon to [0, inf), delta to (0, 1]) and a warning.

    Sound: the bound delta(eps) <= c_t e^{K(t) - t eps} holds at every eps, and delta(eps) is
    nonincreasing, so a bound F(t) < 0 at delta gives (0, delta)-DP; delta <= 1 always holds.
    """
    enc = res.enclosure
    lo, hi = enc.lower, enc.upper
    notes: list[str] = []
    if res.quantity == "epsilon" and lo < 0:
        clamped = Enclosure.from_bounds(max(lo, Fraction(0)), max(hi, Fraction(0)), enc.prec_bits)
        if hi < 0:
            notes.append(
                f"the conversion bound is negative at delta={given} (infimum <= {enc.upper_str(6)}): "
                "every epsilon >= 0 holds; epsilon = 0"
            )
    elif res.quantity == "delta" and lo < 0 and hi <= 1:
        # delta = exp(inf G) > 0: a negative lower end is ball rounding, not information
        return replace(res, enclosure=Enclosure.from_bounds(0, hi, enc.prec_bits))
    elif res.quantity == "delta" and lo >= 1:
        # the grid search caps exp(G) at 1 (_exp_at_most_1): a lower end of 1 means G >= 0 at every order
        notes.append(
            f"the conversion bound is at least 1 at eps={given} on the searched orders (capped at 1: delta "
            "<= 1 always holds): delta = 1, no guarantee at this eps"
        )
        clamped = Enclosure.from_bounds(Fraction(1), Fraction(1), enc.prec_bits)
    elif res.quantity == "delta" and hi > 1:
        clamped = Enclosure.from_bounds(max(min(lo, Fraction(1)), Fraction(0)), min(hi, Fraction(1)), enc.prec_bits)
        if lo > 1:
            notes.append(
                f"the conversion bound exceeds 1 at eps={given} (infimum >= {enc.lower_str(6)}) on the "
                "searched orders: delta = 1, no guarantee at this eps"
            )
    else:
        return res
    return replace(res, enclosure=clamped, signed_infimum=enc, warnings=res.warnings + tuple(notes))


def _subsampled(pair: PrivacyPair) -> bool:
    parts = pair.parts if isinstance(pair, Composition) else ((pair, 1),)
    return any(isinstance(p, SubsampledGaussian) for p, _ in parts)


#: Why via=zcdp is loose on a subsampled Gaussian (item 5 of issue 13; numbers in the tests).
ZCDP_SUBSAMPLED_NOTE = (
    "via=zcdp is loose for subsampled-gaussian: its rho = sup_t K(t)/(t(t+1)) = 1/(2 sigma^2) per step "
    "is the un-subsampled Gaussian's, approached only as the order -> inf (K grows faster than "
    "quadratically in t: the ratio rises from about KL at small orders), so rho t(t+1) overstates K "
    "by far at the orders that set the result and the subsampling amplification is lost; "
    "via=rdp (--via rdp) is the tight choice"
)


def _notes(res: ConversionResult, pair: PrivacyPair, given: str) -> ConversionResult:
    """Clamp ``res`` and add the grid-edge and via=zcdp-on-subsampled warnings."""
    notes: list[str] = []
    if res.orders is not None and len(res.orders) > 1 and res.order == float(res.orders[-1]):
        top = fmt_value(res.order)
        notes.append(
            f"the optimal order {top} is the largest order searched: the true optimum may lie beyond it; "
            f"search larger orders too (orders=... / --orders, e.g. adding {fmt_value(2 * res.order)})"
        )
    if res.via == "zcdp" and _subsampled(pair):
        notes.append(ZCDP_SUBSAMPLED_NOTE)
    if notes:
        res = replace(res, warnings=res.warnings + tuple(notes))
    return _clamp(res, given)


def _log_ct(t: Ball) -> Ball:
    """log c_t = t log t - (1+t) log(1+t) (t > 0)."""
    return t * t.log() - (1 + t) * t.log1p()


def _cgf_function(pair: PrivacyPair, via: str, rho: Enclosure | None) -> Callable[[Ball], Ball]:
    if via == "rdp":

        def K(t: Ball) -> Ball:
            pair.check_order(t)  # a pair's order limit (LimitExceeded) holds for search points too
            return pair.cgf_ball(t)

        return K
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


#: below this exponent e^g is kept as it is (the signed infimum shows how far above 1 the bound is)
EXP_KEPT = 4096


def _exp_at_most_1(g: Ball) -> Ball:
    """e^g where g < EXP_KEPT, else a ball containing min(1, e^g) for every g in the ball:
    e^min(g, 0), never an e^g that overflows the enclosures (attack review: G ~ 1e6 at every order).
    Sound for delta either way: the hockey-stick divergence is at most 1, and _clamp caps the
    sound value at 1."""
    if g.upper() < EXP_KEPT:
        return g.exp()
    zero = to_ball(0)
    # exp is increasing: the hull of its values at the two ends (exp of a wide ball is far wider)
    return g.lower().min(zero).exp().union(g.upper().min(zero).exp())


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
    the bound itself: docs/math.md §3; proofs_checks ``ct_max``, ``fr_equals_cks``, ``log_ct_convex``.
    """
    require_pair(pair), require_target(target)
    _check_via(via)
    d = real("delta", delta, gt=0, lt=1)
    r = rho_of(pair) if via == "zcdp" else None
    K = _cgf_function(pair, via, r)

    def F(t: Ball) -> Ball:
        return (K(t) + _log_ct(t) - to_ball(d).log()) / t

    if _uses_grid(pair, via, orders):
        return _notes(_on_grid("epsilon", pair, orders, F, via, target), pair, fmt_value(delta))
    limit = pair.max_t() if via == "rdp" else None
    loss = pair.max_loss_ball() if limit is not None else None
    res = epsilon_from_cgf(K, d, via=via, target=target, max_t=limit, max_loss=loss)
    return _notes(res, pair, fmt_value(delta))


def epsilon_from_cgf(
    K: Callable[[Ball], Ball],
    delta: Number,
    *,
    via: str = "rdp",
    target: Target = CONVERSION_TARGET,
    max_t: Fraction | None = None,
    max_loss: Ball | None = None,
) -> ConversionResult:
    """Certified inf over all real t > 0 of F(t) = (K(t) + log c_t - log delta)/t for a CGF K.

    Contract: as :func:`epsilon` (real orders) for any K that is a CGF (convex, K(0) = 0,
    K >= 0) evaluated on balls; the head and tail bounds are those of :func:`epsilon`; the
    result is clamped to epsilon >= 0 as described in :class:`ConversionResult`. With ``max_t``
    (a pair's order limit) the infimum is over t in (0, max_t] only, together with the limit
    t -> inf when ``max_loss`` (D_inf) is given: F(t) -> D_inf there (K(t)/t -> D_inf,
    (log c_t - log delta)/t -> 0), so D_inf is a sound epsilon (pure DP) and enters the infimum.
    """
    if not callable(K):
        raise invalid("K", repr(K), "must be a callable CGF (ball -> ball)")
    require_target(target)
    _check_via(via)
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

    limit = None if max_t is None else float(max_t)

    def compute() -> Ball:
        tol = target.tolerance_for(abs(state.get("mag", 1.0))) / 4
        res = inf_convex(
            N, divide_by_t=True, head_bound=head, tail_bound=tail, tol=tol, start=state.get("t", 1.0), max_t=limit
        )
        value, state["t"] = res.value, res.argbest
        if limit is not None and max_loss is not None and max_loss.is_finite():
            if max_loss.upper() < value.upper():  # the pure-DP limit t -> inf is the better witness
                state["t"] = math.inf
            value = value.lower().min(max_loss.lower()).union(value.upper().min(max_loss.upper()))
        state["mag"] = upper_float(value)
        return value

    enc = refine(compute, target, what="epsilon")
    res = ConversionResult("epsilon", enc, via, state["t"] + 1, _real_grid(limit))
    return _clamp(_limit_note(res, limit), fmt_value(delta))


def _real_grid(limit: float | None) -> str:
    return "real" if limit is None else f"real, order <= {limit + 1:.8g}"


def _limit_note(res: ConversionResult, limit: float | None) -> ConversionResult:
    """A warning when a real-order search stopped at the pair's order limit."""
    if limit is None or res.order != limit + 1:
        return res
    note = (
        f"the optimal order {res.order:.8g} is the order limit of this pair: the infimum over all "
        "orders may be lower, beyond what certdp evaluates (see the pair's docstring)"
    )
    return replace(res, warnings=(*res.warnings, note))


def delta(
    pair: PrivacyPair,
    eps: Number,
    *,
    via: str = "rdp",
    orders: Iterable[Number] | None = None,
    target: Target = CONVERSION_TARGET,
) -> ConversionResult:
    """Certified delta at ``eps``: enclosure of exp(inf_t G(t)), G(t) = K(t) - t eps + log c_t.

    Contract: the enclosure contains exp of inf over the searched t of G (on an order grid, min(1,
    that): delta <= 1 always); its upper end is a sound delta. Real orders: certified search on the
    convex G, with G(0+) = 0. Head bound on (0, t0]: the secant of G through t0 and 2 t0, extended
    left, lies below G (convexity); its minimum on [0, t0] is at an end. Tail bound on [T, inf):
    the secant through T/2 and T, extended right; if its slope is not certainly >= 0 the tail is
    unbounded below, except when the pair's loss is bounded by D_inf <= eps, where G -> -inf and
    delta = 0 exactly (pure DP). Proof of the bound: docs/math.md §3; proofs_checks ``ct_max``,
    ``log_ct_convex``.
    """
    require_pair(pair), require_target(target)
    _check_via(via)
    e = real("eps", eps, ge=0)
    r = rho_of(pair) if via == "zcdp" else None
    K = _cgf_function(pair, via, r)
    eb = lambda: to_ball(e)  # noqa: E731 - rebuilt at each precision

    def G(t: Ball) -> Ball:
        return K(t) - t * eb() + _log_ct(t)

    if _uses_grid(pair, via, orders):
        # exp is increasing, so min over the grid of exp(G) = exp(min G); capped at 1 (delta <= 1
        # always): exp of a G near 1e6 at every order would leave the range of an Enclosure
        return _notes(
            _on_grid("delta", pair, orders, lambda t: _exp_at_most_1(G(t)), via, target), pair, fmt_value(eps)
        )

    loss = pair.max_loss_ball() if via == "rdp" else None
    kl = r.ball if r is not None else None  # via zcdp: K(t) = rho t(t+1), so K'(0) = rho
    limit = pair.max_t() if via == "rdp" else None
    res = delta_from_cgf(K, e, via=via, target=target, max_loss=loss, kl=kl, max_t=limit)
    return _notes(res, pair, fmt_value(eps))


def delta_from_cgf(
    K: Callable[[Ball], Ball],
    eps: Number,
    *,
    via: str = "rdp",
    target: Target = CONVERSION_TARGET,
    max_loss: Ball | None = None,
    kl: Callable[[], Ball] | None = None,
    max_t: Fraction | None = None,
) -> ConversionResult:
    """Certified exp(inf over all real t > 0 of K(t) - t eps + log c_t) for a CGF K.

    Contract: as :func:`delta` (real orders) for any CGF K evaluated on balls; ``max_loss``
    (an upper bound on the privacy loss, if finite) enables the pure-DP shortcut delta = 0.
    ``kl`` (a ball containing K'(0) = KL, evaluated at the working precision) adds the head
    bound G(t) >= t (B + log t) on (0, t0], B = KL - eps - 1 - t0 (K(t) >= KL t by convexity,
    log c_t >= t log t - t (1 + t0)), whose minimum over t > 0 is -e^{-B-1}: when KL >> eps the
    infimum sits at t ~ e^{-B-1}, below any search point, and delta is 1 - O(e^{-B}).
    A delta below 2^-(EXP_LIMIT + 64) (certdp.enclose.ball) is reported as [0, that bound]
    after a coarse search: the enclosure cannot hold smaller ends anyway. With ``max_t`` (a
    pair's order limit) the infimum is over t in (0, max_t] only.
    """
    if not callable(K):
        raise invalid("K", repr(K), "must be a callable CGF (ball -> ball)")
    require_target(target)
    _check_via(via)
    e = real("eps", eps, ge=0)
    eb = lambda: to_ball(e)  # noqa: E731 - rebuilt at each precision

    def G(t: Ball) -> Ball:
        return K(t) - t * eb() + _log_ct(t)

    if max_loss is not None and certainly_le(max_loss, to_ball(e)):
        return ConversionResult("delta", Enclosure.from_bounds(0, 0, 0), via, math.inf, "real")

    kl_at: dict[int, Ball] = {}

    def head(lo: float) -> Ball:
        t0 = to_ball(lo)
        a, b = G(t0), G(to_ball(2 * lo))
        slope = (b - a) / t0
        bound = (a - slope * t0).min(a)
        if kl is not None:
            prec = current_prec()
            if prec not in kl_at:
                kl_at[prec] = kl()
            if kl_at[prec].is_finite():
                B = kl_at[prec].lower() - eb() - 1 - t0
                # t (B + log t) decreases on (0, t0] when B + 1 + log t0 <= 0: its min is then at t0
                low = t0 * (B + t0.log()) if B + 1 + t0.log() <= 0 else -(-B - 1).exp()
                bound = bound.max(low)
        return bound

    def tail(hi: float) -> Ball:
        a, b = G(to_ball(hi / 2)), G(to_ball(hi))
        if not (b - a) >= 0:
            return to_ball("-inf")
        return b

    state: dict[str, float] = {}
    limit = None if max_t is None else float(max_t)

    def compute() -> Ball:
        # exp turns an absolute width w of inf G into a relative width of about w (and delta <= 1,
        # so an absolute width w as well): either tolerance serves, and one of them is > 0
        tol = max(target.rel_tol, target.abs_tol) / 4
        start = state.get("t", 1.0) or 1.0
        zero = to_ball(0)  # G(t) -> 0 as t -> 0+ (K(0) = 0, t log t -> 0): inf G <= 0, delta <= 1
        opts = {"head_bound": head, "tail_bound": tail, "start": start, "limit_at_zero": zero, "max_t": limit}
        try:
            res = inf_convex(G, divide_by_t=False, tol=tol, **opts)  # type: ignore[arg-type]
        except PrecisionExhausted:
            # a delta beyond the enclosure range needs no width: a coarse search settles it
            res = inf_convex(G, divide_by_t=False, tol=1e300, **opts)  # type: ignore[arg-type]
            if not res.value.upper() < _LOG_TINY_DELTA:
                raise
            state["t"] = res.argbest
            return to_ball(0).union(res.value.upper().exp())
        # the limit at t -> 0 is the best witness when no search point went below 0: order 1
        state["t"] = res.argbest if res.value.upper() < 0 else 0.0
        return res.value.exp()

    enc = refine(compute, target, what="delta")
    res = ConversionResult("delta", enc, via, state["t"] + 1, _real_grid(limit))
    return _clamp(_limit_note(res, limit), fmt_value(eps))


def classic_zcdp_epsilon(rho: Enclosure | Number, delta: Number) -> Enclosure:
    """Enclosure of rho + 2 sqrt(rho log(1/delta)) (Bun-Steinke; for comparison).

    Contract: contains the expression for every rho in the enclosure (monotone in rho); rho is
    an Enclosure or an exact number >= 0 (InvalidArgument otherwise).
    """
    d = real("delta", delta, gt=0, lt=1)
    if isinstance(rho, Enclosure):
        if rho.lower < 0:
            raise InvalidArgument(f"rho={rho} must be >= 0")
        rb = rho.ball
    else:
        r = real("rho", rho, ge=0)
        rb = lambda: to_ball(r)  # noqa: E731 - rebuilt at each precision
    return refine(lambda: rb() + 2 * (rb() * -to_ball(d).log()).sqrt(), DEFAULT_TARGET, what="epsilon")
