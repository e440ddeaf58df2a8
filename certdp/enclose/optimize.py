"""Certified one-dimensional global optimisation on balls (branch and bound) and certified roots.

Floats choose the search points (exact dyadic numbers); every bound is a ball computed from
ball evaluations, so the final enclosure is rigorous whatever points the heuristics chose.

Two problem shapes cover certdp's needs, and both use only point evaluations plus convexity:

* :func:`sup_cgf_ratio`: sup_{t>0} K(t) / (t (t+1)) for a CGF K (convex, K(0) = 0).
  On [a, b], convexity gives K(t) <= l(t), the chord through (a, K(a)) and (b, K(b)). The
  maximum of g(t) = l(t)/(t(t+1)) = (alpha + beta t)/(t^2 + t) over [a, b] is at a, at b, or
  at a critical point, where g' = 0 forces g(t*) = beta/(2 t* + 1) and
  beta t*^2 + 2 alpha t* + alpha = 0. The chord error is second order in b - a.
* :func:`inf_convex` : inf_{t>0} N(t)/t (or N(t)) for a convex N. On [a, b] the secant through
  (a', a) with a' < a lies below N on [a, inf), and the secant through (b, b') with b' > b lies
  below N on (0, b]. Each line over t is alpha/t + beta, monotone, so its minimum over [a, b]
  is at an end. Also second order.

Ends of the half-line are covered by caller-supplied bounds (``head`` on (0, lo], ``tail`` on
[hi, inf)); without them a search over (0, inf) is not certified.
"""

from __future__ import annotations

import collections
import heapq
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from flint import arb, arb_series

from certdp.enclose.ball import lower_float, upper_float
from certdp.enclose.checkpoint import checkpoint
from certdp.enclose.context import workcap
from certdp.errors import InvalidArgument, LimitExceeded, PrecisionExhausted

Func = Callable[[arb], arb]
EndBound = Callable[[float], arb]

MAX_EVALS = 20000
MIN_T = 1e-300
MAX_T = 1e300
#: the curvature cover of sup_cgf_ratio's head: at most this many pieces, and this many halvings in a row
MAX_COVER_PIECES = 32
MAX_COVER_MISSES = 3


@dataclass(frozen=True)
class SearchResult:
    """Enclosure of a global sup/inf and the work that produced it.

    ``value`` contains the exact sup (inf); ``argbest`` is the point whose evaluation gave the
    best witness (a heuristic location, not certified); ``domain`` is the searched [lo, hi]
    (outside it the head/tail bounds applied); ``evaluations`` counts point evaluations.
    """

    value: arb
    argbest: float
    domain: tuple[float, float]
    evaluations: int


class _Cache:
    def __init__(self, f: Func) -> None:
        self.f = f
        self.values: dict[float, arb] = {}

    def __call__(self, t: float) -> arb:
        v = self.values.get(t)
        if v is None:
            checkpoint()  # a caller's budget may stop the search between evaluations
            v = self.f(arb(t))
            if not v.is_finite():
                raise PrecisionExhausted(f"evaluation at t={t!r} is not finite")
            self.values[t] = v
        return v


def _exact(x: arb) -> Fraction:
    """Exact value of an exact ball (heap keys must order exactly, not to a float ulp)."""
    if not x.is_finite():
        return Fraction(10) ** 400 * (1 if x > 0 else -1)
    man, exp = x.mid().man_exp()
    return Fraction(int(man)) * Fraction(2) ** int(exp)


def _split(a: float, b: float) -> float | None:
    m = math.sqrt(a * b) if b > 2 * a else 0.5 * (a + b)
    return m if a < m < b else None


def _geometric_grid(lo: float, hi: float) -> list[float]:
    pts = [lo]
    while pts[-1] < hi:
        pts.append(min(pts[-1] * 4, hi))
    return pts


def _bisect_until_done(
    heap: list[tuple[Fraction, float, float, arb]],
    push: Callable[[float, float], None],
    unfinished: Callable[[arb], bool],
    evaluations: Callable[[], int],
    max_evals: int,
    label: str,
    tol: float,
) -> None:
    """Split the worst interval until the heap top is within tolerance (shared B&B loop)."""
    while heap and unfinished(heap[0][3]):
        _, a, b, _ = heapq.heappop(heap)
        m = _split(a, b)
        if m is None or evaluations() > max_evals:
            raise PrecisionExhausted(
                f"{label}: width tol={tol:g} not reached after {evaluations()} evaluations near t={a:.6g}"
            )
        push(a, m)
        push(m, b)


def _chord_ratio_upper(a: float, b: float, ka: arb, kb: arb) -> arb:
    """Upper bound of K(t)/(t(t+1)) over [a, b] from the chord of a convex K (module doc)."""
    A, B = arb(a), arb(b)
    beta = (kb - ka) / (B - A)
    alpha = ka - beta * A
    ga = ka / (A * (A + 1))
    gb = kb / (B * (B + 1))
    best = ga.max(gb)
    span = A.union(B)
    disc = alpha * alpha - alpha * beta
    crit: list[arb] = []
    if disc < 0:
        pass  # no real critical point
    elif beta.contains(0) or disc.contains(0) or not disc.is_finite():
        crit.append(span)  # cannot locate: every critical value is beta/(2t+1), t in [a, b]
    else:
        root = disc.sqrt()
        for cand in ((-alpha + root) / beta, (-alpha - root) / beta):
            if cand.overlaps(span):
                inter = cand.intersection(span) if cand.overlaps(span) else span
                crit.append(inter)
    for t in crit:
        best = best.max(beta / (2 * t + 1))
    return best


def _finish(lower: arb, upper: arb) -> arb:
    return lower.lower().union(upper.upper())


def sup_cgf_ratio(
    K: Func,
    *,
    head_witness: arb,
    tail_bound: EndBound,
    tail_witness: arb | None = None,
    curvature: Callable[[float, float], arb | None] | None = None,
    global_upper: arb | None = None,
    tol: float,
    max_evals: int = MAX_EVALS,
    max_t: float | None = None,
) -> SearchResult:
    """Enclose rho = sup_{t>0} K(t) / (t (t+1)) for a cumulant generating function K.

    ``global_upper`` (v), when given, must bound the ratio for every t > 0; every bound below
    (tail, head, chords) is replaced by its minimum with v. A ratio that stays within tol of its
    sup over a long range (a near-Gaussian pair, e.g. a subsampled Gaussian at q = 1 - 1e-20)
    would otherwise need chords of relative length ~sqrt(tol).

    ``max_t`` (a pair's order limit) keeps every evaluation of K at t <= max_t: the part of the
    half-line beyond it is then covered by ``tail_bound(max_t)`` alone (LimitExceeded when that is
    not within ``tol`` of the witness: no precision would change it).

    ``curvature(a, b)``, when given, bounds sup_{a<=t<=b} K''(t) from above (or is None). The head
    then uses it in two ways (docs/math.md §2):

    * *cover*: with w = best + tol >= KL, if K'' <= 2 w on every piece of a partition of [0, T0],
      then K(t) <= w t(t+1) on [0, T0] (F = w t(t+1) - K has F(0) = 0, F'(0) = w - KL >= 0 and
      F'' >= 0), so the ratio is <= w there and no chord is needed below T0. A ratio that stays
      within a small fraction of its sup KL over a long range (a near-Gaussian pair) is settled by
      a few pieces where chords would need hundreds of points at the tolerance;
    * else, on one piece (0, lo] with C = curvature(0, lo): K(t) <= KL t + C t^2/2, so the ratio
      is at most (KL + C t/2)/(1 + t), a monotone function of t (so its larger end value).

    Contract: the result contains the sup, provided that (i) K is the CGF of a privacy loss
    (convex, K(0) = 0, K(t)/t nondecreasing: Renyi divergence grows with the order;
    docs/math.md §1), (ii) ``head_witness`` <= lim_{t->0} K(t)/(t(t+1)) (KL, or a lower bound;
    with ``curvature`` it must contain KL = K'(0)), (iii) ``tail_bound(T)`` >= sup_{t>=T}
    K(t)/(t(t+1)), (iv) ``tail_witness`` (if given) <= limsup_{t->inf} of the ratio, (v)
    ``global_upper`` (if given) >= the sup, and (vi) ``curvature(a, b)`` (if not None) >=
    sup_{[a,b]} K''. Without a curvature bound the head (0, lo] is bounded by
    K(lo)/lo >= K(t)/t >= ratio.
    Raises PrecisionExhausted if the width ``tol`` is not reached within ``max_evals``.
    """
    if not tol > 0:
        raise InvalidArgument(f"tol={tol} must be > 0")
    cache = _Cache(K)

    def capped(x: arb) -> arb:
        return x if global_upper is None else x.min(global_upper)

    def ratio(t: float) -> arb:
        tt = arb(t)
        return cache(t) / (tt * (tt + 1))

    best = head_witness
    argbest = 0.0
    if tail_witness is not None and tail_witness.lower() > best.lower():
        best, argbest = tail_witness, math.inf

    def above_target(x: arb) -> bool:
        """True unless x.upper() <= best.lower() + tol is certain (ball comparison)."""
        return not (x.upper() <= best.lower() + tol)

    # The far end first: T grows by 4 until the tail bound is settled, with a probe of the ratio
    # at each T (a sup approached as t -> inf, with no tail witness, is found only by probes out
    # there). No probe goes beyond the first T where the tail is settled: K at huge t can be
    # costly (integral pairs).
    hi = 4.0 if max_t is None else min(4.0, max_t)
    while True:
        r = ratio(hi)
        if r.lower() > best.lower():
            best, argbest = r, hi
        if not above_target(capped(tail_bound(hi))):
            break
        if hi == max_t:  # no precision would settle it: refuse now
            raise LimitExceeded(
                f"sup: the tail bound at the order limit t={max_t:g} is not within tol={tol:g} of the "
                "witness: the sup beyond it cannot be certified without evaluating larger orders"
            )
        hi = hi * 4 if max_t is None else min(hi * 4, max_t)
        if hi > MAX_T:
            raise PrecisionExhausted(f"sup: tail bound not within tol={tol:g} of the witness for any t <= {MAX_T:g}")

    def above_capped(x: arb) -> bool:
        return above_target(capped(x))

    def probe_powers_of_four(above: float) -> None:
        """Probes for a better witness at 4^k in (above, hi] (a sup at a finite order)."""
        nonlocal best, argbest
        k = -6
        while 4.0**k <= hi:
            if 4.0**k > above:
                r = ratio(4.0**k)
                if r.lower() > best.lower():
                    best, argbest = r, 4.0**k
            k += 1

    lo, head_up = 0.0, best
    if curvature is not None:
        head_up = arb(best.lower()) + tol  # an exact ball: the bound the cover proves
        lo = _curvature_cover(head_witness, head_up, curvature, hi)
    probe_powers_of_four(lo)  # below a cover's end the head bound already holds
    if lo == 0.0:
        head = _curvature_head(head_witness, curvature, above_capped) if curvature is not None else None
        if head is not None:
            lo, head_up = head
        else:
            lo = 1.0 / 4096
            while above_capped(cache(lo) / arb(lo)):
                if 2 * (cache(lo) / arb(lo)).rad() + 2 * best.rad() > tol:
                    # K(lo)/lo only falls towards KL as lo shrinks, while its radius does not: the
                    # balls alone are wider than tol, so no smaller lo settles it at this precision
                    raise PrecisionExhausted(f"sup: head bound K(t)/t at t={lo:g} is wider than tol={tol:g}")
                lo /= 64
                if lo < MIN_T or len(cache.values) > max_evals:
                    raise PrecisionExhausted(
                        f"sup: head bound K(t)/t not within tol={tol:g} of the witness for any t >= {MIN_T:g}"
                    )
            head_up = cache(lo) / arb(lo)
    head_up, tail_up = capped(head_up), capped(tail_bound(hi))

    pts = _geometric_grid(lo, hi)
    heap: list[tuple[Fraction, float, float, arb]] = []

    def push(a: float, b: float) -> None:
        nonlocal best, argbest
        for t in (a, b):
            r = ratio(t)
            if r.lower() > best.lower():
                best, argbest = r, t
        ub = capped(_chord_ratio_upper(a, b, cache(a), cache(b)))
        heapq.heappush(heap, (-_exact(ub.upper()), a, b, ub))

    for a, b in itertools.pairwise(pts):
        push(a, b)
    _bisect_until_done(heap, push, above_target, lambda: len(cache.values), max_evals, "sup", tol)
    upper = head_up.max(tail_up)
    for item in heap:
        upper = upper.max(item[3])
    return SearchResult(_finish(best, upper.max(best)), argbest, (lo, hi), len(cache.values))


def _curvature_cover(kl: arb, w: arb, curvature: Callable[[float, float], arb | None], limit: float) -> float:
    """The end T0 of a partition 0 = t_0 < .. < t_n = T0 <= limit with curvature(t_i, t_{i+1}) <=
    2 w on every piece (0.0 if none, or if KL <= w is not certain): then K(t) <= w t(t+1) on
    [0, T0] (see sup_cgf_ratio).

    Pieces start at 1/16 and double after a success. A failed piece is halved, and the pieces
    then run to the failed end before growing again, so that the data a pair computed at that
    end is used (pairs cache it per order). The cover ends after MAX_COVER_MISSES failures in a
    row or MAX_COVER_PIECES pieces: it only has to reach where chords are cheap."""
    if not kl <= w:
        return 0.0
    two_w = 2 * w
    a, h, misses, failed_end = 0.0, 1.0 / 16, 0, math.inf
    for _ in range(MAX_COVER_PIECES):
        if a >= limit or misses > MAX_COVER_MISSES:
            break
        b = min(a + h, limit)
        c = curvature(a, b)
        if c is None:
            break
        if c <= two_w:
            a, misses = b, 0
            if a >= failed_end:  # back at the failed end: free to grow again
                failed_end = math.inf
            h = min(2 * h, failed_end - a)
        else:
            failed_end, h, misses = b, h / 2, misses + 1
    return a


def _curvature_head(
    kl: arb, curvature: Callable[[float, float], arb | None], above_target: Callable[[arb], bool]
) -> tuple[float, arb] | None:
    """(lo, bound) with bound >= sup_{0<t<=lo} K(t)/(t(t+1)) from K'' <= curvature(0, lo) (see
    sup_cgf_ratio), for the largest lo in 1/4, 1/64, ... that settles the head; None if none does."""
    if above_target(arb(kl.upper())):
        return None  # every bound below is >= KL's upper end: none can settle the head
    lo = 0.25
    while lo > 1e-9:
        c = curvature(0.0, lo)
        if c is None or not c.is_finite():
            return None
        k = arb(kl.upper())
        bound = k.max((k + arb(c.upper()) * lo / 2) / (1 + arb(lo)))
        if not above_target(bound):
            return lo, bound
        lo /= 16
    return None


def _secant_lower(
    a: float, b: float, na: arb, nb: arb, left: tuple[float, arb] | None, right: tuple[float, arb] | None, by_t: bool
) -> arb:
    """Lower bound of N(t)/t (by_t) or N(t) over [a, b] from secant extensions (module doc)."""
    A, B = arb(a), arb(b)
    da, db = (A, B) if by_t else (arb(1), arb(1))
    bounds: list[arb] = []
    if left is not None:
        ap, nap = left
        slope = (na - nap) / (A - arb(ap))
        bounds.append((na / da).min((na + slope * (B - A)) / db))
    if right is not None:
        bp, nbp = right
        slope = (nbp - nb) / (arb(bp) - B)
        bounds.append(((nb - slope * (B - A)) / da).min(nb / db))
    if not bounds:
        raise InvalidArgument("secant bound needs a point on at least one side")
    out = bounds[0]
    for x in bounds[1:]:
        out = out.max(x)
    return out


def inf_convex(
    N: Func,
    *,
    divide_by_t: bool,
    head_bound: EndBound,
    tail_bound: EndBound,
    tol: float,
    start: float = 1.0,
    max_evals: int = MAX_EVALS,
    limit_at_zero: arb | None = None,
    max_t: float | None = None,
) -> SearchResult:
    """Enclose inf_{t>0} N(t)/t (``divide_by_t``) or inf_{t>0} N(t), for a convex function N.

    Contract: the result contains the infimum, provided that N is convex on (0, inf),
    ``head_bound(lo)`` <= inf over (0, lo] and ``tail_bound(hi)`` <= inf over [hi, inf) of the
    objective, and ``limit_at_zero`` (if given) contains lim_{t->0+} of the objective (the
    infimum is at most that limit, so it serves as a witness). The upper end is attained (up to
    the ball radius) at ``argbest``, or approached as t -> 0 when the limit is the best witness,
    so any caller may use it as a sound value of the objective. With ``max_t`` the infimum is over
    (0, max_t] only (no evaluation beyond it; ``tail_bound`` is then not used once the grid
    reaches max_t). Proof of the interval bounds: module docstring. Raises PrecisionExhausted if
    the width ``tol`` is not reached within ``max_evals``.
    """
    if not tol > 0:
        raise InvalidArgument(f"tol={tol} must be > 0")
    cache = _Cache(N)

    def obj(t: float) -> arb:
        v = cache(t)
        return v / arb(t) if divide_by_t else v

    best = obj(start)
    argbest = start
    # The objective is unimodal (N convex; for N(t)/t, t N' - N is nondecreasing, so the derivative
    # changes sign once), so the probes on each side of start stop at the first certified
    # increase: no evaluation at t ~ 4^8 start where it cannot help (integral pairs are slow there).
    if max_t is not None and start > max_t:
        start = max_t
        best = obj(start)
        argbest = start
    for side in (1, -1):
        prev = best
        for k in range(1, 9):
            t = start * 4.0 ** (side * k)
            if max_t is not None and t > max_t:
                break
            v = obj(t)
            if v.upper() < best.upper():
                best, argbest = v, t
            if v.lower() > prev.upper():
                break
            prev = v
    if limit_at_zero is not None and limit_at_zero.upper() < best.upper():
        best = limit_at_zero  # argbest stays a search point: the grid below starts near it

    def below_target(x: arb) -> bool:
        """True unless x.lower() >= best.upper() - tol is certain (ball comparison)."""
        return not (x.lower() >= best.upper() - tol)

    def probe(t: float) -> None:
        nonlocal best, argbest
        v = obj(t)
        if v.upper() < best.upper():
            best, argbest = v, t

    # The ends of the domain: grow [lo, hi] by factors of 4 until the head and tail bounds are
    # within tol of the best value, evaluating the objective at each new end as well. The
    # infimum may lie far beyond the first probes (t* ~ 1e5 for a bounded loss near its pure-DP
    # limit); without those evaluations the best value stays above the tail bound's limit and
    # the domain would grow for ever.
    hi = argbest * 16 if max_t is None else min(argbest * 16, max_t)
    while hi != max_t:
        probe(hi)
        if not below_target(tail_bound(hi)):
            break
        hi *= 4
        if max_t is not None and hi >= max_t:
            hi = max_t
        if hi > MAX_T:
            raise PrecisionExhausted(f"inf: tail bound not within tol={tol:g} for any t <= {MAX_T:g}")
    lo = min(argbest / 4, start / 4096)
    while below_target(head_bound(lo)):
        probe(lo)
        lo /= 4
        if lo < MIN_T:
            raise PrecisionExhausted(f"inf: head bound not within tol={tol:g} for any t >= {MIN_T:g}")
    # with max_t the domain ends there: nothing beyond it enters the infimum
    head_lo, tail_lo = head_bound(lo), (tail_bound(hi) if hi != max_t else arb("inf"))
    pts = _geometric_grid(lo, hi)
    pos = {t: i for i, t in enumerate(pts)}  # only the initial grid; later points use a - (b - a)
    heap: list[tuple[Fraction, float, float, arb]] = []

    def neighbour(t: float, step: float, side: int) -> tuple[float, arb] | None:
        i = pos.get(t)
        if i is not None and 0 <= i + side < len(pts):
            p = pts[i + side]
        else:
            p = t + side * step
            if not (lo <= p <= hi):
                return None
        return p, cache(p)

    def push(a: float, b: float) -> None:
        nonlocal best, argbest
        for t in (a, b):
            v = obj(t)
            if v.upper() < best.upper():
                best, argbest = v, t
        left = neighbour(a, b - a, -1) if a > lo else None
        right = neighbour(b, b - a, +1) if b < hi else None
        if left is None and right is None:
            left = (a / 2, cache(a / 2))
        lb = _secant_lower(a, b, cache(a), cache(b), left, right, divide_by_t)
        heapq.heappush(heap, (_exact(lb.lower()), a, b, lb))

    for a, b in itertools.pairwise(pts):
        push(a, b)
    _bisect_until_done(heap, push, below_target, lambda: len(cache.values), max_evals, "inf", tol)
    lower = head_lo.min(tail_lo)
    for item in heap:
        lower = lower.min(item[3])
    return SearchResult(_finish(lower.min(best), best), argbest, (lo, hi), len(cache.values))


def root_increasing(f: Func, lo: arb, hi: arb, *, tol: float, max_iter: int = 400, straddle_ok: bool = False) -> arb:
    """Enclose the root of a strictly increasing f on [lo, hi] by certified bisection.

    Contract: if f is continuous and strictly increasing on [lo, hi] (the caller proves this) and
    f(lo) < 0 < f(hi) is certified here, the result contains the unique root. Points are exact
    dyadic midpoints. Raises InvalidArgument if an end has the wrong sign (certified),
    PrecisionExhausted if the sign at an end is undecided at this precision (so that
    certdp.enclose.refine retries at a higher one) or f(mid) straddles 0 before the width ``tol``
    is met; with
    ``straddle_ok`` the current bracket is returned instead (still an enclosure of the root:
    useful when f itself carries an input ball, so that the root is a set).
    """
    a, b = lo.mid(), hi.mid()
    fa, fb = f(a), f(b)
    if not (fa < 0):
        cls = InvalidArgument if fa >= 0 else PrecisionExhausted  # wrong sign, or undecided here
        raise cls(f"root bracket lo={lower_float(a):.17g}: f(lo) < 0 is not certified")
    if not (fb > 0):
        cls = InvalidArgument if fb <= 0 else PrecisionExhausted
        raise cls(f"root bracket hi={upper_float(b):.17g}: f(hi) > 0 is not certified")
    for _ in range(max_iter):
        if upper_float(b - a) <= tol:
            return a.union(b)
        m = ((a + b) / 2).mid()
        fm = f(m)
        if fm < 0:
            a = m
        elif fm > 0:
            b = m
        elif fm.is_zero():
            return m
        elif straddle_ok:
            return a.union(b)
        else:
            raise PrecisionExhausted(f"root: f straddles 0 at width {upper_float(b - a):.3g} (target {tol:g})")
    raise PrecisionExhausted(f"root: width {upper_float(b - a):.3g} above tol={tol:g} after {max_iter} steps")


def _derivative_on(f: Func, box: arb) -> arb | None:
    """Enclosure of f'(box) by first-order Taylor arithmetic (arb_series), or None if f cannot
    take a series argument. Contract: contains f'(x) for every x in the box."""
    try:
        with workcap(2):
            out = f(arb_series([box, 1]))
            d = out[1] if isinstance(out, arb_series) else arb(0)  # constant f: derivative 0
    except (TypeError, AttributeError, ValueError):
        return None
    return d if d.is_finite() else None


def sup_interval(
    f: Func,
    a: float,
    b: float,
    *,
    tol: float,
    tail_bound: EndBound | None = None,
    max_evals: int = MAX_EVALS,
) -> SearchResult:
    """Enclose sup f over [a, b], or over [a, inf) when ``b`` is inf and ``tail_bound`` is given.

    Contract: ``f(ball)`` must contain f(x) for every x in the ball (any composition of Arb
    operations does). On each sub-box the upper bound is the smaller of the interval evaluation
    and the mean-value form f(m) + |f'(box)| r (when f also accepts an arb_series, which gives
    f'(box); this makes the bound second order near a maximum). Evaluation at exact midpoints
    gives lower bounds; branch and bound stops when they are ``tol`` apart. For a
    half-line, ``tail_bound(T)`` must bound sup f over [T, inf); T grows until the tail is
    within ``tol`` of the best value. Raises PrecisionExhausted past ``max_evals``.
    """
    if not (math.isfinite(a) and a < b):
        raise InvalidArgument(f"interval=[{a}, {b}] must be non-empty with a finite left end")
    tail_up: arb | None = None
    best = f(arb(a)).union(f(arb(a)))
    argbest = a
    evals = 1
    if math.isinf(b):
        if tail_bound is None:
            raise InvalidArgument("b=inf needs a tail_bound: a sup over a half-line is not certified without one")
        b = max(2 * abs(a), 1.0) + a
        while True:
            mid = f(arb(b))
            evals += 1
            if mid.lower() > best.lower():
                best, argbest = mid, b
            tail_up = tail_bound(b)
            if tail_up.upper() <= best.lower() + tol:
                break
            b = a + 4 * (b - a)
            if b > MAX_T:
                raise PrecisionExhausted(f"sup: tail bound not within tol={tol:g} for any T <= {MAX_T:g}")
    heap: list[tuple[Fraction, float, float, arb]] = []

    def push(lo: float, hi: float) -> None:
        nonlocal best, argbest, evals
        m = 0.5 * (lo + hi)
        v = f(arb(m))
        evals += 2
        if v.lower() > best.lower():
            best, argbest = v, m
        ball = arb(lo).union(arb(hi))
        box = f(ball)
        d = _derivative_on(f, ball)
        if d is not None:
            # the float m need not be the exact centre: use the exact larger half-width
            r = (arb(hi) - arb(m)).max(arb(m) - arb(lo))
            mv = v + abs(d).upper() * r * arb(0, 1)  # arb(0, 1) is the ball [-1, 1]
            box = mv if not box.is_finite() else box.intersection(mv) if box.overlaps(mv) else mv
        ub = box.upper() if box.is_finite() else arb("inf")
        heapq.heappush(heap, (-_exact(ub), lo, hi, box))

    push(a, b)
    while heap and not (heap[0][3].upper() <= best.lower() + tol):
        _, lo, hi, _ = heapq.heappop(heap)
        m = 0.5 * (lo + hi)
        if not (lo < m < hi) or evals > max_evals:
            raise PrecisionExhausted(f"sup: width tol={tol:g} not reached after {evals} evaluations near x={lo:.6g}")
        push(lo, m)
        push(m, hi)
    upper = best
    for item in heap:
        upper = upper.max(item[3])
    if tail_up is not None:
        upper = upper.max(tail_up)
    return SearchResult(_finish(best, upper), argbest, (a, b), evals)


def inf_interval(
    f: Func,
    a: float,
    b: float,
    *,
    tol: float,
    tail_bound: EndBound | None = None,
    max_evals: int = MAX_EVALS,
) -> SearchResult:
    """Enclose inf f over [a, b] (or [a, inf) with ``tail_bound(T)`` <= inf f over [T, inf)).

    Contract: as :func:`sup_interval` applied to -f.
    """
    neg_tail = (lambda T: -tail_bound(T)) if tail_bound is not None else None
    res = sup_interval(lambda x: -f(x), a, b, tol=tol, tail_bound=neg_tail, max_evals=max_evals)
    return SearchResult(-res.value, res.argbest, res.domain, res.evaluations)


@dataclass(frozen=True)
class PositivityResult:
    """Outcome of :func:`certify_positive`: ``verdict`` is "positive" (f > 0 on every piece),
    "negative_somewhere" (f(witness) < 0 certified) or "undecided"; ``pieces`` sub-boxes used."""

    verdict: str
    pieces: int
    witness: float | None


def _taylor2_lower(f: Func, m: arb, box: arb, r: arb) -> arb | None:
    """Lower bound of f on the box m +- r by second-order Taylor: f(m) - |f'(m)| r - |f''(box)/2| r^2
    (Lagrange remainder), from arb_series; None if f cannot take a series argument."""
    try:
        with workcap(3):
            at_m = f(arb_series([m, 1]))
            on_box = f(arb_series([box, 1]))
            if not (isinstance(at_m, arb_series) and isinstance(on_box, arb_series)):
                return None
            c0, c1 = at_m[0], at_m[1]
            c2 = on_box[2]
    except (TypeError, AttributeError, ValueError):
        return None
    low = c0 - abs(c1).upper() * r - abs(c2).upper() * r * r
    return low if low.is_finite() else None


def certify_positive(f: Func, a: arb, b: arb, *, max_pieces: int = 100_000) -> PositivityResult:
    """Decide f > 0 on [a, b] by adaptive bisection (three-valued).

    Contract: verdict "positive" only if every sub-box B has a certified lower bound > 0, taken
    as the larger of the interval evaluation f(B) and the second-order Taylor form
    f(m) - |f'(m)| r - |f''(B)/2| r^2 (Taylor arithmetic, when f accepts an arb_series; the
    Lagrange remainder makes it a bound); "negative_somewhere" only
    if f(w) < 0 is certified at an exact point w; otherwise "undecided" after ``max_pieces``.
    """
    queue = collections.deque([(a, b)])  # breadth first: a negative midpoint is found early
    pieces = 0
    while queue:
        lo, hi = queue.popleft()
        pieces += 1
        if pieces > max_pieces:
            return PositivityResult("undecided", pieces, lower_float(lo))
        box = lo.union(hi)
        m = ((lo + hi) / 2).mid()
        fm = f(m)
        if fm < 0:
            return PositivityResult("negative_somewhere", pieces, float(m))
        low = f(box)
        r = (hi - m).max(m - lo)
        taylor = _taylor2_lower(f, m, box, r)
        if taylor is not None:
            low = taylor if not low.is_finite() else low.lower().max(taylor.lower())
        if low > 0:
            continue
        queue.extend([(lo, m), (m, hi)])
    return PositivityResult("positive", pieces, None)
