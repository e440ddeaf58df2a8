"""Certified values of a smooth function at a run of nearby points by Taylor models.

Why: the lattice accountant needs the two loss tails at every lattice point (up to a few hundred
thousand per step), and one Arb evaluation of a tail costs about 17 us (two erfc at 3.4 us
each). On a block of points x_j = c + t_j the Taylor polynomial of degree D at the centre c,
with the Lagrange remainder bounded from the series at a ball W that holds the whole block,

    f(c + t) = sum_{k <= D} f^(k)(c)/k! t^k + f^(D+1)(xi)/(D+1)! t^(D+1),  xi in W,

gives every value from one polynomial evaluation (C-level Horner, about 1 us): Arb's series
functions enclose the coefficients f^(k)(xi)/k! for every xi in the ball they are given, so
|remainder| <= |coefficient D+1 at W| R^(D+1), R >= max |t_j| (docs/math.md §10, "Tails by
Taylor models"). A block whose remainder is not small against its values is halved; below
MIN_BLOCK points the caller evaluates the points one by one (and after failures in a row, more
of them before the next try).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from flint import arb, arb_poly, arb_series

from certdp.enclose.context import current_prec, workcap

__all__ = ["DEGREE", "MAX_BLOCK", "MIN_BLOCK", "Series", "series_expm1", "taylor_values"]

#: the degree of the Taylor polynomials
DEGREE = 24

#: points per block at most, and the fewest a block is halved to before the caller takes over
MAX_BLOCK = 256
MIN_BLOCK = 32

#: after failures in a row, up to this many points are left to the caller before the next try
MAX_SKIP = 512

#: a block is accepted when its remainder is at most 2^-(prec - SLACK_BITS) times the smaller
#: |value| at its two ends
SLACK_BITS = 8

Series = arb_series


def series_expm1(s: Series) -> Series:
    """e^s - 1 as a series whose constant term is Arb's expm1 of s's constant term (the series
    exp minus 1 would lose the bits of e^c - 1 near c = 0).

    Contract: encloses the Taylor coefficients of e^s - 1 (those of e^s, the constant term minus 1).
    """
    e = s.exp()
    coeffs = e.coeffs()
    coeffs[0] = s.coeffs()[0].expm1()
    return arb_series(coeffs, prec=len(e.coeffs()))


def _converging(coeffs: list[arb], radius: arb, prec: int) -> bool:
    """Whether the last term |c_D| R^D is small enough that the remainder test can pass (a float
    look at the centre's series; only steers)."""
    if len(coeffs) < DEGREE + 1 or not coeffs[DEGREE].is_finite() or not coeffs[0].is_finite():
        return False
    try:  # a spread of ~1e13 overflows the float power (attack review): no model there
        last = float(abs(coeffs[DEGREE]).mid()) * float(radius.mid()) ** DEGREE
    except OverflowError:
        return False
    return last <= float(abs(coeffs[0]).mid()) * 2.0 ** (-(prec - SLACK_BITS - 16))


def _model(
    fn: Callable[[Series], tuple[Series, ...] | None], points: Sequence[arb], lo: int, hi: int
) -> list[tuple[arb, ...]] | None:
    """fn at points[lo:hi] from one Taylor model at the middle point, or None when it fails."""
    mid = lo + (hi - lo) // 2
    c = points[mid]
    first, last = points[lo], points[hi - 1]
    # W and R from every point, not the ends alone: an unsorted run would leave points outside
    # them (attack review: e^5 was enclosed in a ball missing it)
    wide, radius = c, abs(first - c).upper()
    for x in points[lo:hi]:
        wide = wide.union(x)
        d = abs(x - c).upper()
        if d > radius:
            radius = d
    prec = current_prec()
    try:
        with workcap(DEGREE + 2):  # arb_series keeps ctx.cap terms (default 10): hold D + 2 of them
            at_c = fn(arb_series([c, 1], prec=DEGREE + 2))
            if at_c is None or not all(_converging(sc.coeffs(), radius, prec) for sc in at_c):
                return None  # (only saves the wide series where the model would fail anyway)
            at_w = fn(arb_series([wide, 1], prec=DEGREE + 2))
    except (ValueError, ZeroDivisionError):  # python-flint: "quotient would not be a power series"
        return None
    if at_w is None or len(at_c) != len(at_w):
        return None
    polys, rems = [], []
    for sc, sw in zip(at_c, at_w, strict=True):
        coeffs, top = sc.coeffs(), sw.coeffs()
        # a shorter series is refused, not padded with zeros: its missing terms are unknown
        if len(coeffs) < DEGREE + 1 or len(top) < DEGREE + 2:
            return None
        if not all(x.is_finite() for x in coeffs[: DEGREE + 1]) or not top[DEGREE + 1].is_finite():
            return None
        rem = abs(top[DEGREE + 1]).upper() * radius ** (DEGREE + 1)
        poly = arb_poly(coeffs[: DEGREE + 1])
        # relative to the smaller |value| at the block's ends (the smallest value of a monotone
        # function, such as a tail: at delta = 1e-300 tails of 1e-300 need all their bits); the
        # remainder is added either way, so this only decides the accuracy, never the enclosure
        ends = [abs(poly(first - c)).lower(), abs(poly(last - c)).lower()]
        scale = ends[0] if ends[0] < ends[1] else ends[1]
        if not (scale > 0 and rem <= scale * arb(2) ** (-(prec - SLACK_BITS))):
            return None
        polys.append(poly)
        rems.append(arb(0, rem.upper()))
    ts = [x - c for x in points[lo:hi]]
    columns = [[v + r for v in p.evaluate(ts, algorithm="iter")] for p, r in zip(polys, rems, strict=True)]
    return [tuple(col[j] for col in columns) for j in range(hi - lo)]


def taylor_values(
    fn: Callable[[Series], tuple[Series, ...] | None], points: Sequence[arb]
) -> list[tuple[arb, ...] | None]:
    """fn at each of ``points`` (close together; any order is sound, sorted runs give small
    blocks), by Taylor models on blocks of at most
    MAX_BLOCK points; None where a block failed (fn returned None, a coefficient was not finite,
    or the remainder stayed large down to MIN_BLOCK points).

    ``fn`` maps a series s (the variable x = centre + t) to a tuple of series built from s with
    arb_series arithmetic and functions (exp, log, erfc, :func:`series_expm1`, ...), or None when
    it does not apply there. It must be the same real-analytic expression at every point of the
    ball it is given (no branches on the value).

    Contract: each non-None entry is a tuple of balls, entry k containing fn's k-th function at
    that point, for points in any order: the Taylor polynomial at the block's centre plus a ball
    of the Lagrange remainder bound |c_{D+1}(W)| R^{D+1}, W the union of the block's points and R
    their largest distance to the centre (module docstring; docs/math.md §10, "Tails by Taylor
    models").
    """
    out: list[tuple[arb, ...] | None] = [None] * len(points)
    i, size, skip, streak = 0, MAX_BLOCK, MIN_BLOCK, 0
    while i < len(points):
        hi = min(len(points), i + size)
        got = _model(fn, points, i, hi) if hi - i >= MIN_BLOCK else None
        if got is not None:
            out[i:hi] = got
            i, skip, streak = hi, MIN_BLOCK, streak + 1
            if streak >= 2:  # grow after two successes in a row (not straight back to a size that failed)
                size, streak = min(2 * size, MAX_BLOCK), 0
        elif size > MIN_BLOCK and hi - i > MIN_BLOCK:
            size, streak = size // 2, 0
        else:
            # no model even on MIN_BLOCK points: leave the next points to the caller, more of them
            # after each failure in a row (a region where the series converge too slowly costs
            # two series per attempt, more than the points themselves)
            i, skip = i + skip, min(2 * skip, MAX_SKIP)
            size = 2 * MIN_BLOCK  # the next try starts small and doubles while it succeeds
    return out
