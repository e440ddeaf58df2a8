"""The composition step of the certified PLD accountant in exact fixed point (docs/math.md §10,
"Exact fixed-point composition"): each part's one-step lattice pmf is rounded to integers in
units of 2^-bits (up for the dominating pair, down for the dominated one), raised to its power
and multiplied in fmpz_poly with directed rounding (certdp.enclose.fixed), and delta(eps) is summed from the integers.

eps(delta) is first located in floats (a guide only), then proved at a dyadic eps next to it in
ball arithmetic; when the proof fails there, the search falls back to a certified bisection.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from certdp.enclose import Ball, to_ball
from certdp.enclose.fixed import (
    FixedPoly,
    coarsen_up,
    fixed_add,
    fixed_mul,
    fixed_power,
    fixed_power_coarsening,
    fixed_product,
    fixed_scale,
    to_units,
    weighted_tail,
)
from certdp.errors import InvalidArgument, PrecisionExhausted, invalid
from certdp.notions.pld_lattice import LatticePmf

__all__ = ["FixedComposed", "bits_for", "compose_fixed", "compose_split", "reference_units"]

#: the partial powers move to a 2x coarser lattice when (2 R)^2 <= 2^j / COARSE_FROM
#: (certdp.enclose.fixed.fixed_power_coarsening): each move adds about 1/COARSE_FROM of the
#: one-step lattice's own error (docs/math.md §10, "Coarsening the partial powers"); None: never
COARSE_FROM: int | None = 64

#: the lower side's threshold (balanced groups lose more than splitting: measured at q = 0.001,
#: sigma = 0.8, 10^6 steps, remove, its lower eps moved by -2.0e-4 at 64, -2.8e-5 at 256 and
#: -4.3e-6 at 1024, against 12.4209569 at one spacing; 3.9 s against 6.9 s at 1024)
LOWER_COARSE_FROM = 1024

#: eps(delta) answers lie on the grid EPS_GRID Z (exact dyadics)
EPS_GRID = Fraction(1, 2**40)

#: below this delta the float guide underflows: the search is a certified bisection
GUIDE_MIN_DELTA = Fraction(1, 10**280)

#: how far (relative) the first certified try sits beyond the float guide's eps
GUIDE_MARGIN = 2.0**-40


def reference_units(floor: Fraction) -> tuple[int, int]:
    """(f, allowance) for a prune floor 2^-f (certdp.notions.pld.resolution; f = log2(1/delta)
    + FLOOR_BITS at an eps(delta) query): the reference units 2^-f (the one-step pmfs and every product
    take their own units from :func:`bits_for`) and the per-end prune allowance of 2^8 floors in
    them.

    Contract: bits >= 1 and allowance >= 1; only tightness and speed depend on them.
    """
    f = max(1, floor.denominator.bit_length() - floor.numerator.bit_length())
    return f, 1 << 8


def _in_units(amount: int, from_bits: int, to_bits: int) -> int:
    """An amount in units of 2^-from_bits in units of 2^-to_bits (rounded down: an allowance)."""
    return amount << (to_bits - from_bits) if to_bits >= from_bits else amount >> (from_bits - to_bits)


def bits_for(floor: Fraction) -> Callable[[int, int], int]:
    """The units of a fixed-point polynomial of ``length`` coefficients of which the composition
    holds ``copies``: 2^-b with b = max(64, bit length of copies x length + f - 8), for a prune
    floor 2^-f.

    Why: every product is rounded down (the upper side counts what the floors drop, under one unit
    per coefficient, in its error), and a polynomial's rounding reaches the composition times its
    copies: copies x length x 2^-b <= 2^-(f - 8) = delta 2^-32 per product at f = log2(1/delta) + 40
    (2^-26 at the + 34 of a default-width eps), so the rounding moves delta by about 2^-26 (2^-20) of
    itself in all (2^-24 per product was visible in tests asking for
    widths of 1e-8). Early squarings (many copies, short) get more bits, the
    last long products fewer; FLINT multiplies coefficients of up to about 70 bits much faster than
    wider ones (measured, 10^5 coefficients: 0.14 s at 64 to 70 bits, 0.22 s at 76 to 97 bits;
    squares 0.09 s against 0.15 to 0.2 s). The one-step pmf is rounded once, at the bits of its
    n copies (its ceiling's excess is in the composition n times).

    Contract: a function returning ints >= 64; only tightness and speed depend on it.
    """
    f = max(1, floor.denominator.bit_length() - floor.numerator.bit_length())

    def bits(copies: int, length: int) -> int:
        return max(64, (max(copies, 1) * max(length, 1)).bit_length() + f - 8)

    return bits


@dataclass(frozen=True)
class FixedComposed:
    """The composed lattice pmf of one side: ``coeffs[i] / 2^bits`` at the loss
    ``shift + (base + i) h``; ``suffix[i]`` = sum_{k >= i} coeffs[k] (exact ints); for the upper
    side ``err`` (units) bounds the mass the coefficients may miss and ``inf_term`` (a ball)
    encloses 1 - prod (1 - p_inf)^n, both counted at g = 1."""

    side: str
    h: Fraction
    shift: Fraction
    base: int
    bits: int
    coeffs: list[int]
    suffix: list[int]
    err: int
    inf_term: Ball
    _guide: dict[str, object] = field(default_factory=dict, compare=False, repr=False)

    def loss(self, j: int) -> Fraction:
        """Contract: the loss of index j, shift + (base + j) h, exact."""
        return self.shift + self.h * (self.base + j)

    def first_above(self, eps: Fraction) -> int:
        """Contract: the least index whose loss is > eps (exact), clamped to [0, len(coeffs)]."""
        j = math.floor((eps - self.shift) / self.h) - self.base + 1
        return min(max(j, 0), len(self.coeffs))

    def _sum_above(self, eps: Fraction) -> Ball:
        """sum_{loss_k > eps} c_k (1 - e^{eps - loss_k}) / 2^bits, enclosed."""
        j = self.first_above(eps)
        if j >= len(self.coeffs):
            return to_ball(0)
        unit = to_ball(2) ** -self.bits
        s0 = to_ball(self.suffix[j]) * unit
        ratio = to_ball(-self.h).exp()
        s1 = weighted_tail(self.coeffs, j, ratio) * unit
        return s0 - to_ball(eps - self.loss(j)).exp() * s1

    def delta_upper(self, eps: Fraction) -> Ball:
        """Contract: an exact ball >= delta_n(eps) of every pair the composed lattice pair bounds
        (the dominating side; module docstring of certdp.enclose.fixed for ``err``)."""
        if self.side != "upper":
            raise InvalidArgument("delta_upper needs the upper side")
        total = self._sum_above(eps) + to_ball(self.err) * to_ball(2) ** -self.bits + self.inf_term
        return total.upper()

    def delta_lower(self, eps: Fraction) -> Ball:
        """Contract: an exact ball <= delta_n(eps) of the pair (the dominated side), >= 0."""
        if self.side != "lower":
            raise InvalidArgument("delta_lower needs the lower side")
        return self._sum_above(eps).lower().max(to_ball(0))

    def _float_guide(self) -> tuple[np.ndarray, np.ndarray, float]:
        """(losses, f at every loss point, the constant part) in floats: f(l_j) is the float
        estimate of delta at eps = l_j (only steers)."""
        if "f" not in self._guide:
            c = _floats(self.coeffs, self.bits)
            losses = float(self.shift) + float(self.h) * (self.base + np.arange(len(c)))
            ref = float(losses[-1]) if len(c) else 0.0
            w = c * np.exp(np.clip(ref - losses, -700.0, 700.0))  # e^{-(l - ref)}: overflow-safe range
            s0 = np.cumsum(c[::-1])[::-1]
            s1 = np.cumsum(w[::-1])[::-1]
            # f(l_j) sums the indices above j: suffix sums shifted by one
            s0n = np.append(s0[1:], 0.0)
            s1n = np.append(s1[1:], 0.0)
            f = s0n - np.exp(np.clip(losses - ref, -700.0, 700.0)) * s1n
            const = 0.0
            if self.side == "upper":
                const = self.err * 2.0**-self.bits + float(self.inf_term.upper().mid())
            self._guide.update(losses=losses, f=f + const, s0=s0, s1=s1, ref=ref, const=const)
        g = self._guide
        return g["losses"], g["f"], g["const"]  # type: ignore[return-value]

    def eps_guide(self, delta: float) -> float | None:
        """The float eps where the float estimate of delta crosses ``delta`` (None: at eps <= the
        first loss, or no crossing).

        Contract: a float or None; no enclosure (it only steers the certified search)."""
        losses, f, const = self._float_guide()
        if len(losses) == 0 or f[0] <= delta:
            return None
        above = np.nonzero(f <= delta)[0]
        if len(above) == 0:
            return None
        j = int(above[0])  # f(l_{j-1}) > delta >= f(l_j): the root lies in (l_{j-1}, l_j]
        g = self._guide
        s0, s1, ref = g["s0"], g["s1"], g["ref"]  # type: ignore[index]
        # on (l_{j-1}, l_j] the sum runs over k >= j: s0[j] + const - e^{eps - ref} s1[j] = delta
        if s1[j] <= 0:
            return float(losses[j])
        arg = (s0[j] + const - delta) / s1[j]
        if not arg > 0:
            return float(losses[j])
        return min(max(ref + math.log(arg), float(losses[j - 1]) if j else -math.inf), float(losses[j]))


def _composed(side: str, h: Fraction, shift: Fraction, res: FixedPoly, inf_term: Ball) -> FixedComposed:
    """The FixedComposed of a composed polynomial: its coefficients and their exact suffix sums."""
    if not inf_term.is_finite():  # p_inf's ball reaches 1 (a lattice below the losses): 1 - prod (1 - p_inf)^n <= 1
        inf_term = to_ball(1)
    coeffs = res.coeffs() or [0]
    suffix = [0] * (len(coeffs) + 1)
    run = 0
    for i in range(len(coeffs) - 1, -1, -1):
        run += coeffs[i]
        suffix[i] = run
    return FixedComposed(side, h, shift, res.offset, res.bits, coeffs, suffix, res.err, inf_term)


def _floats(coeffs: list[int], bits: int) -> np.ndarray:
    """coeffs / 2^bits as floats: float() of each int in C, then one exact power-of-two scaling
    (0 below the float range); the per-int path for coefficients past the float range."""
    try:
        raw = np.fromiter(map(float, coeffs), dtype=float, count=len(coeffs))
    except OverflowError:
        return np.array([_to_float(v, bits) for v in coeffs], dtype=float)
    return np.ldexp(raw, -bits)


def _to_float(v: int, bits: int) -> float:
    """v / 2^bits as a float (0 below the float range; exact ints of any size)."""
    sh = max(0, v.bit_length() - 60)
    return math.ldexp(float(v >> sh), sh - bits)


def compose_fixed(
    side: str,
    parts: list[tuple[LatticePmf, int]],
    floor: Fraction,
    max_product: int | None = None,
    coarse: bool = True,
) -> FixedComposed:
    """The composition of ``steps`` runs of each lattice pmf in ``parts`` (one spacing), in fixed
    point with the rounding direction of ``side``. ``coarse``: one part moves its partial powers
    to coarser lattices (COARSE_FROM, both sides; the result's h is then a multiple of the
    lattice's).

    Contract: "upper": delta_upper(eps) >= delta_n(eps) of the composed dominating lattice pair
    (sum c_k g(l_k) + err + 1 - prod (1 - p_inf)^n; certdp.enclose.fixed's contract); "lower":
    delta_lower(eps) <= delta_n of the composed dominated sub-measure. LimitExceeded before a
    product longer than ``max_product`` coefficients is formed.
    """
    if side not in ("upper", "lower"):
        raise invalid("side", side, "must be lower or upper")
    if not parts:
        raise InvalidArgument("parts=[] must be non-empty")
    up = side == "upper"
    ref, allowance = reference_units(floor)
    units = bits_for(floor)
    h = parts[0][0].lattice.h
    powers, shift, log_keep, scale = [], Fraction(0), to_ball(0), 1
    for pmf, steps in parts:
        if steps < 1:
            raise invalid("steps", steps, "must be >= 1")
        if pmf.lattice.h != h:
            raise invalid("h", pmf.lattice.h, f"must equal the first part's h={h} (one spacing per composition)")
        b0 = units(steps, len(pmf.coeffs))
        base = FixedPoly.from_units(pmf.lattice.lo, to_units(pmf.coeffs, b0, up), b0)
        if coarse and len(parts) == 1 and COARSE_FROM is not None:  # one part: it may coarsen
            cf = COARSE_FROM if up else max(COARSE_FROM, LOWER_COARSE_FROM)
            power, scale = fixed_power_coarsening(
                base, steps, h, cf, _in_units(allowance, ref, b0), max_product, units, up
            )
            powers.append(power)
        else:
            powers.append(fixed_power(base, steps, up, _in_units(allowance, ref, b0), max_product, units))
        shift += steps * pmf.lattice.offset
        if up:
            log_keep += steps * (-pmf.p_inf).log1p()
    res = fixed_product(powers, up, _in_units(allowance, ref, powers[0].bits), max_product, units)
    # offsets: each power's offset is steps x lo (+ pruning); the product adds them
    return _composed(side, h * scale, shift, res, (-log_keep.expm1()) if up else to_ball(0))


def compose_split(
    side: str,
    bulk: LatticePmf,
    tail: list[tuple[int, Ball]],
    tail_lo: int,
    p_inf: Ball,
    steps: int,
    floor: Fraction,
    max_product: int | None = None,
    coarse: bool = True,
) -> FixedComposed:
    """The ``steps``-fold composition of one step whose lattice pmf is ``bulk`` (fine cells, no end
    atoms) plus ``tail`` ((index from tail_lo, mass) on the same grid) plus p_inf at +inf:
    (B + T)^n = sum_k C(n, k) B^(n-k) T^k. The k = 0 and k = 1 terms are formed (B^n and
    n B^(n-1) T); the k >= 2 terms, all >= 0, are dropped by the lower side and counted by the
    upper side at g = 1 with their mass sum_{k>=2} C(n,k) |B|^(n-k) |T|^k <= (n t)^2 e^(n t) / 2,
    t >= |T| (|B| <= 1: B + T + p_inf is a sub-probability).

    ``coarse``: as in :func:`compose_fixed`.

    Contract: as :func:`compose_fixed` for the pmf bulk + tail (docs/math.md §10, "Bulk and tails").
    """
    if side not in ("upper", "lower"):
        raise invalid("side", side, "must be lower or upper")
    if steps < 1:
        raise invalid("steps", steps, "must be >= 1")
    up = side == "upper"
    ref, allowance = reference_units(floor)
    units = bits_for(floor)
    h = bulk.lattice.h
    bits = units(steps, len(bulk.coeffs) + len(tail))
    b = FixedPoly.from_units(bulk.lattice.lo, to_units(bulk.coeffs, bits, up), bits)
    dense = [to_ball(0)] * (max((i for i, _ in tail), default=0) + 1)
    for i, m in tail:
        dense[i] = dense[i] + m
    t = FixedPoly.from_units(tail_lo, to_units(dense, bits, up), bits)
    scale = 1
    if steps == 1:
        res = fixed_add(b, t)
    else:
        # the lower side stays on one spacing here: B + n T (one step's pmf) is not smooth enough
        # near a hard edge of the loss for balanced groups, and writing a moved B^(n-1) back on the
        # fine lattice made the last product as long as without moving (measured: MNIST 1.43 s
        # against 1.24 s, 10^5 steps 5.56 s against 5.30 s)
        if coarse and up and COARSE_FROM is not None:
            p1, scale = fixed_power_coarsening(
                b, steps - 1, h, COARSE_FROM, _in_units(allowance, ref, bits), max_product, units, up
            )
        else:
            p1 = fixed_power(b, steps - 1, up, _in_units(allowance, ref, bits), max_product, units)
        # B^n + n B^(n-1) T = B^(n-1) (B + n T): one product (two cost 0.1 s more at CIFAR-10 scale);
        # B + n T is exact, so its product's floors are counted once, not n times. When B^(n-1)
        # moved to a coarser lattice, B + n T is split onto it too (one more splitting, of one copy)
        both = fixed_add(b, fixed_scale(t, steps))
        if scale > 1:
            both = coarsen_up(both, h, scale)
        res = fixed_mul(p1, both, up, max_product, units(1, p1.poly.length() + both.poly.length()))
        if up:  # the k >= 2 terms, counted at g = 1
            x = to_ball(steps) * to_ball(t.total()) * to_ball(2) ** -bits
            k2 = (x * x * x.exp() / 2).upper() * to_ball(2) ** res.bits
            res = FixedPoly(res.offset, res.poly, res.bits, res.err + int(k2.ceil().unique_fmpz()))
    inf_term = (-(steps * (-p_inf).log1p()).expm1()) if up else to_ball(0)
    return _composed(side, h * scale, steps * bulk.lattice.offset, res, inf_term)


def eps_upper_fixed(composed: FixedComposed, delta: Fraction, tol: Fraction = EPS_GRID) -> Fraction:
    """The smallest eps found, on the grid tol Z, with delta_upper(eps) <= delta proved.

    Contract: delta_n(eps) <= delta at the returned eps (FixedComposed.delta_upper);
    PrecisionExhausted when no eps <= 2^20 is proved.
    """
    d = to_ball(delta)

    def ok(e: Fraction) -> bool:
        return bool(composed.delta_upper(e) <= d)

    if ok(Fraction(0)):
        return Fraction(0)
    guess = composed.eps_guide(float(delta)) if delta > GUIDE_MIN_DELTA else None
    if guess is not None and math.isfinite(guess) and guess > 0:
        step = max(abs(guess) * GUIDE_MARGIN, float(tol))
        for _ in range(9):
            cand = Fraction(math.ceil((guess + step) / float(tol))) * tol
            if cand > 0 and ok(cand):
                below = Fraction(math.floor((guess - step) / float(tol))) * tol
                if below <= 0 or not ok(below):  # the guide is right: cand is within 2 steps of the least
                    return cand
                break  # the guide is off (eps is well below it): bisect
            step *= 16
    return _search_up(ok, tol)


def _bisect(pred: object, lo: Fraction, hi: Fraction, tol: Fraction, at_hi: bool) -> tuple[Fraction, Fraction]:
    """Narrow [lo, hi] on the grid tol Z keeping pred(hi) == at_hi != pred(lo)."""
    while hi - lo > tol:
        mid = Fraction(math.floor((lo + hi) / 2 / tol)) * tol
        if mid <= lo:
            break
        lo, hi = (lo, mid) if pred(mid) == at_hi else (mid, hi)  # type: ignore[operator]
    return lo, hi


def _search_up(ok: object, tol: Fraction) -> Fraction:
    """Doubling then bisection from 0 (the guide failed)."""
    hi = Fraction(1)
    while not ok(hi):  # type: ignore[operator]
        hi *= 2
        if hi > 2**20:
            raise PrecisionExhausted("no eps <= 2^20 is proved (the tail mass alone exceeds delta)")
    return _bisect(ok, Fraction(0), hi, tol, True)[1]


def eps_lower_fixed(composed: FixedComposed, delta: Fraction, tol: Fraction = EPS_GRID) -> Fraction:
    """The largest eps found, on the grid tol Z, with delta_lower(eps) > delta proved (0 when not
    even eps = 0 is).

    Contract: delta_n(eps) > delta at the returned eps when it is > 0 (FixedComposed.delta_lower).
    """
    d = to_ball(delta)

    def bad(e: Fraction) -> bool:
        return bool(composed.delta_lower(e) > d)

    if not bad(Fraction(0)):
        return Fraction(0)
    guess = composed.eps_guide(float(delta)) if delta > GUIDE_MIN_DELTA else None
    if guess is not None and math.isfinite(guess) and guess > 0:
        step = max(abs(guess) * GUIDE_MARGIN, float(tol))
        for _ in range(9):
            cand = Fraction(math.floor((guess - step) / float(tol))) * tol
            if cand <= 0:
                break
            if bad(cand):
                above = Fraction(math.ceil((guess + step) / float(tol))) * tol
                if not bad(above):  # the guide is right: cand is within 2 steps of the largest
                    return cand
                break  # the guide is off: bisect
            step *= 16
    lo, hi = Fraction(0), Fraction(1)
    while bad(hi):
        lo, hi = hi, hi * 2
        if hi > 2**20:
            return lo
    return _bisect(bad, lo, hi, tol, False)[0]
