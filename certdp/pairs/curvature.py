"""Upper bounds of K''(t) over an interval of orders from tilted second moments (docs/math.md §1,
property 5).

For a pair with N_c(t) = E_P[e^{tL}(L - c)^2] (``tilted_square_moment``) and any constant c,

    K''(t) = Var_t(L) <= E_t[(L - c)^2] = N_c(t) e^{-K(t)},

where E_t is the tilted law e^{tL - K(t)} dP. On [a, b] both factors have cheap one-sided bounds
from data at the two ends:

* log N_c is convex in t (N_c is a Laplace transform of the positive measure (L - c)^2 dP;
  Hölder), so log N_c(t) lies below its chord l(t) through the ends;
* K is convex, so K(t) >= T_a(t) = K(a) + K'(a)(t - a) and K(t) >= T_b(t) = K(b) - K'(b)(b - t).

Hence log K''(t) <= min(l - T_a, l - T_b)(t), a concave piecewise-linear function of t whose
maximum over [a, b] is at a, at b, or where T_a = T_b. The slack is second order in b - a
(the tangents' and the chord's errors) plus (K'(t) - c)^2 with c the mean slope: this is what lets
the rho search prove K'' <= 2 w over long ranges (certdp.enclose.optimize.sup_cgf_ratio).

K'(t) = M1/M0 (M_k = E_P[e^{tL} L^k]) comes from the same moments: N_c = M0 c^2 - 2 M1 c + M2 is
a quadratic in c, so two moments at c1 != c2 and M0 = e^{K(t)} give M1 and N_c at every c
(proofs_checks ``tilted_log_convexity``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from certdp.enclose import Ball, to_ball, upper_float

#: (t, c) -> ball containing N_c(t) = E_P[e^{tL}(L - c)^2]
MomentFunc = Callable[[Ball, Ball], Ball]


@dataclass(frozen=True)
class TiltedPoint:
    """Tilted-law data at one order t: K(t), K'(t), and N_c(t) for every c (module docstring).

    ``m0`` = e^{K(t)}, ``m1`` = E_P[e^{tL} L], ``n1`` = N_{c1}(t)."""

    t: Fraction
    k: Ball
    slope: Ball
    m0: Ball
    m1: Ball
    c1: Ball
    n1: Ball

    def second_moment(self, c: Ball) -> Ball:
        """Contract: contains N_c(t) = N_{c1}(t) + (c - c1)(M0 (c + c1) - 2 M1) (a quadratic in c;
        proofs_checks ``tilted_log_convexity``)."""
        return self.n1 + (c - self.c1) * (self.m0 * (c + self.c1) - 2 * self.m1)


def _dyadic(x: float) -> Fraction:
    """An exact dyadic number near x (a centre for the moments; any value is sound)."""
    return Fraction(x) if math.isfinite(x) else Fraction(0)


def tilted_point(t: Fraction, k: Ball, centre: float, moment: MomentFunc) -> TiltedPoint:
    """Tilted data at t from K(t) (``k``; 0 at t = 0) and two moments, N_{c1}(t) and N_{c1 + d}(t).

    c1 is ``centre`` (a float estimate of K'(t)) and d is a power of two near sqrt(N_{c1}/M0)
    (N_c/M0 = Var_t(L) + (K'(t) - c)^2): the two moments then differ by a sizeable fraction of
    their value, so that recovering M1 from their difference does not cancel. The choices only
    steer accuracy, not soundness.

    Contract: ``slope`` contains K'(t) = M1/M0 and ``second_moment(c)`` contains N_c(t), with
    M1 = (M0 (c1 + c2) - (N_{c1} - N_{c2})/(c1 - c2))/2 (module docstring), provided ``k``
    contains K(t) and ``moment`` encloses N_c(t).
    """
    tb, m0 = to_ball(t), k.exp()
    c1 = to_ball(_dyadic(centre))
    n1 = moment(tb, c1)
    scale = math.sqrt(max(upper_float(n1 / m0), 0.0))
    d = Fraction(2) ** round(math.log2(scale)) if 2.0**-500 < scale < 2.0**500 else Fraction(1)
    c2 = c1 + to_ball(d)
    n2 = moment(tb, c2)
    m1 = (m0 * (c1 + c2) - (n1 - n2) / (c1 - c2)) / 2
    return TiltedPoint(t, k, m1 / m0, m0, m1, c1, n1)


def curvature_on(pa: TiltedPoint, pb: TiltedPoint) -> Ball | None:
    """Upper bound of K'' on [a, b] from the tilted data at its ends (module docstring).

    Contract: upper end >= sup_{a <= t <= b} K''(t) when not None (None when a moment ball is
    not > 0, so that its log is undefined), provided pa and pb satisfy TiltedPoint's contract,
    a < b (proofs_checks ``tilted_log_convexity``; docs/math.md §1, property 5).
    """
    a, b = to_ball(pa.t), to_ball(pb.t)
    c = to_ball(_dyadic(upper_float((pa.slope + pb.slope) / 2)))
    na, nb = pa.second_moment(c), pb.second_moment(c)
    if not (na > 0 and nb > 0):
        return None
    la, lb = na.log(), nb.log()
    sa, sb = to_ball(pa.slope.lower()), to_ball(pb.slope.upper())  # sa <= K'(a), sb >= K'(b)

    def chord(t: Ball) -> Ball:
        return la + (lb - la) * (t - a) / (b - a)

    def tangent_a(t: Ball) -> Ball:
        return pa.k + sa * (t - a)

    def tangent_b(t: Ball) -> Ball:
        return pb.k - sb * (b - t)

    def g(t: Ball) -> Ball:
        return (chord(t) - tangent_a(t)).min(chord(t) - tangent_b(t))

    best = g(a).max(g(b))
    slopes = sa - sb
    span = a.union(b)
    if slopes.contains(0):
        # the tangents may be parallel: the larger of the two lines' end maxima bounds min(.,.)
        best = best.max(chord(span) - tangent_a(span))
    else:
        cross = (pb.k - pa.k - sb * b + sa * a) / slopes  # where tangent_a = tangent_b
        if cross.overlaps(span):
            at = cross.intersection(span)
            best = best.max(chord(at) - tangent_a(at))
    return best.exp()
