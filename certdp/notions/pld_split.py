"""A lattice sized by the bulk of one step's loss (docs/math.md §10, "Bulk and tails"): fine cells
where the loss has almost all of its mass, coarse cells (a multiple of h wide, on the same grid)
in the long, light tails, and the n-fold composition as (B + T)^n >= B^n + n B^(n-1) T with the
k >= 2 terms bounded by their mass.

Why: at small q one step's loss is about q wide, but its tails reach losses of several units
before their mass drops below delta / n (q = 0.001, sigma = 0.8: [-0.001, 4] for the remove
direction): a fine lattice over the whole range needs hundreds of thousands of cells per step,
while the bulk needs a few thousand.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from certdp.enclose import Ball, to_ball
from certdp.errors import Unsupported, invalid
from certdp.notions.pld_lattice import LossLattice, lattice_for
from certdp.pairs import PrivacyPair

__all__ = [
    "SPLIT_MIN_CELLS",
    "TAIL_CELLS",
    "SplitLattice",
    "TailCells",
    "bulk_bits",
    "split_lattice",
    "tail_cells",
    "tail_pmf",
]

#: a lattice is split only when its full range has more cells than this (and 2x its bulk)
SPLIT_MIN_CELLS = 1 << 14

#: about how many coarse cells each tail gets (their Arb tails and both sides' masses: at 4096 about
#: a sixth of a CIFAR-10 eps; at 1024 its enclosure moved by 1e-12, the 10^5-step row's upper end
#: by 1e-9 relative, and 3-step, 20-step runs at delta 1e-10, 1e-12 not at all; 2026-12-05)
TAIL_CELLS = 1024

#: the full range's extent is measured up to this many fine cells (only its ends are searched)
MAX_EXTENT = 1 << 40


@dataclass(frozen=True)
class SplitLattice:
    """The bulk lattice (fine cells (point(k-1), point(k)], bulk.lo < k <= bulk.hi) and the coarse
    tail cells of ``stride`` fine steps from ``lo`` up to bulk.lo and from bulk.hi up to ``hi``
    (same h and offset): points lo + j stride and bulk.hi + j stride."""

    bulk: LossLattice
    lo: int
    hi: int
    stride: int

    def __post_init__(self) -> None:
        b = self.bulk
        if not (self.lo <= b.lo and b.hi <= self.hi and self.stride >= 1):
            raise invalid("lattice", (self.lo, self.hi), "must hold the bulk")
        if (b.lo - self.lo) % self.stride or (self.hi - b.hi) % self.stride:
            raise invalid("stride", self.stride, "must divide both tails")

    @property
    def h(self) -> Fraction:
        """Contract: the bulk's spacing (exact)."""
        return self.bulk.h

    @property
    def offset(self) -> Fraction:
        """Contract: the bulk's offset (exact)."""
        return self.bulk.offset

    def point(self, k: int) -> Fraction:
        """Contract: the loss offset + k h at index k, exact."""
        return self.bulk.point(k)

    def coarse_points(self) -> tuple[list[int], list[int]]:
        """Contract: the left tail's points lo, lo + s, ..., bulk.lo and the right tail's bulk.hi,
        ..., hi (fine-grid indices, exact)."""
        s = self.stride
        return list(range(self.lo, self.bulk.lo + 1, s)), list(range(self.bulk.hi, self.hi + 1, s))


def bulk_bits(delta: Fraction, steps: int) -> int:
    """Bits b such that a tail mass t <= 2^(1-b) (both tails) keeps the k >= 2 terms of
    (B + T)^n, at most (n t)^2 e^(n t) / 2, below delta 2^-25: b = ceil(log2 n) + 13 +
    ceil(log2(1/delta)/2) + 1.

    Contract: a positive int; only steers (the k >= 2 mass is bounded and counted either way).
    """
    scale = max(1, delta.denominator.bit_length() - delta.numerator.bit_length() + 1)
    return math.ceil(math.log2(max(steps, 1))) + 14 + math.ceil(scale / 2)


def split_lattice(
    pair: PrivacyPair, h: Fraction, tail_bits: int, bulk: int, offset: Fraction = Fraction(0)
) -> SplitLattice | None:
    """The bulk/tail lattice of ``pair`` at spacing h and ``offset``: the bulk from
    :func:`lattice_for` at ``bulk`` bits, the full range at ``tail_bits``, tails cut into about
    TAIL_CELLS coarse cells each; None when the full range has at most SPLIT_MIN_CELLS cells or
    at most twice the bulk's (one fine lattice is then as cheap).

    Contract: None or a valid SplitLattice; only steers tightness and speed (any cells are sound).
    """
    full = lattice_for(pair, h, tail_bits, offset=offset, max_cells=MAX_EXTENT)
    cells = full.hi - full.lo
    if cells <= SPLIT_MIN_CELLS:
        return None
    core = lattice_for(pair, h, bulk, offset=offset)  # LimitExceeded: the bulk alone is too wide
    if cells <= 2 * (core.hi - core.lo):
        return None
    s = max(1, math.ceil(max(core.lo - full.lo, full.hi - core.hi) / TAIL_CELLS))
    lo = core.lo - s * math.ceil((core.lo - full.lo) / s)
    hi = core.hi + s * math.ceil((full.hi - core.hi) / s)
    return SplitLattice(core, lo, hi, s)


#: the certified tails (P(L > l), Q(L > l)) at the coarse points of a split lattice: the left
#: tail's, the right tail's, and those at point(lo) and point(hi)
TailCells = tuple[list[tuple[Ball, Ball]], list[tuple[Ball, Ball]], tuple[Ball, Ball], tuple[Ball, Ball]]


def tail_cells(pair: PrivacyPair, lat: SplitLattice) -> TailCells:
    """Contract: balls containing the two tails of the loss at every coarse point of ``lat``
    (:meth:`SplitLattice.coarse_points`) and at point(lo) and point(hi) (``pair.loss_tails``);
    Unsupported for a pair without a loss distribution. Both sides of :func:`tail_pmf` share them."""
    left, right = lat.coarse_points()
    h, off = lat.bulk.h, lat.bulk.offset

    def tails_at(ks: list[int]) -> list[tuple[Ball, Ball]]:
        out = pair.loss_tails([to_ball(off + h * k) for k in ks])
        if any(t is None for t in out):
            raise Unsupported(f"{pair.mechanism}: no loss distribution, so no lattice accountant (use rdp)")
        return out  # type: ignore[return-value]

    tl = tails_at(left) if len(left) >= 2 else []
    tr = tails_at(right) if len(right) >= 2 else []
    return tl, tr, tails_at([lat.lo])[0], tails_at([lat.hi])[0]


def tail_pmf(
    pair: PrivacyPair, lat: SplitLattice, side: str, cells: TailCells | None = None
) -> tuple[list[tuple[int, Ball]], Ball]:
    """The tails' P-masses on the fine grid, as (index from lat.lo, mass) pairs, and p_inf.

    "upper": each coarse cell (a, b] is split into atoms at a and b keeping its P- and Q-mass
    (the mass splitting of certdp.notions.pld: both shares in [0, p]); the mass below point(lo)
    sits at point(lo); p_inf = P(L > point(hi)). "lower": each coarse cell is merged into one
    output (a post-processing) whose loss log(P(cell)/Q(cell)) lies in (a, b]; its P-mass sits at
    the highest grid point at or below that loss (certified from the ball's lower end; a when it
    cannot be shown), a dominated placement whose error is second order in the cell width (a
    cell's mass at a alone cost first order: attack finding); the mass above point(hi) sits at
    point(hi); the mass below point(lo) is dropped; p_inf = 0.

    Contract: with the bulk pmfs of the bulk lattice (without their end atoms), "upper" gives a
    dominating lattice pair of (P, Q) and "lower" a sub-measure whose composed delta is <= the
    pair's (docs/math.md §10, "Bulk and tails").
    """
    left, right = lat.coarse_points()
    h, off = lat.bulk.h, lat.bulk.offset
    tails_left, tails_right, at_lo, at_hi = cells if cells is not None else tail_cells(pair, lat)

    zero = to_ball(0)
    masses: list[tuple[int, Ball]] = []
    for ks, tl in ((left, tails_left), (right, tails_right)):
        if len(ks) < 2:
            continue
        for j in range(1, len(ks)):
            p = (tl[j - 1][0] - tl[j][0]).max(zero)
            w = (tl[j - 1][1] - tl[j][1]).max(zero)
            if side == "lower":
                masses.append((_merged_point(p, w, ks[j - 1], ks[j], h, off) - lat.lo, p))
                continue
            ea, eb = to_ball(-(off + h * ks[j - 1])).exp(), to_ball(-(off + h * ks[j])).exp()
            alpha_a = ((w - p * eb) / (ea - eb)).intersection(zero.union(p.upper()))
            masses.append((ks[j - 1] - lat.lo, alpha_a))
            masses.append((ks[j] - lat.lo, p - alpha_a))
    edge_lo, edge_hi = at_lo[0], at_hi[0]
    if side == "upper":
        masses.append((0, 1 - edge_lo))  # the cell (-inf, point(lo)]: its P-mass at point(lo)
        return masses, edge_hi
    if side != "lower":
        raise invalid("side", side, "must be lower or upper")
    masses.append((lat.hi - lat.lo, edge_hi))  # losses above point(hi), lowered to it
    return masses, zero


def _merged_point(p: Ball, w: Ball, a: int, b: int, h: Fraction, off: Fraction) -> int:
    """The highest grid index in [a, b] at or below the merged cell's loss log(p/w) (certified:
    from the ball's lower end), a when that cannot be shown (w not > 0, p not > 0)."""
    if not (p > 0 and w > 0):
        return a
    # floor of the lower end of (log(p/w) - off)/h, in Arb (an Enclosure per cell cost 0.1 s of a
    # CIFAR-10 epsilon): index k's point is then <= every loss in the ball
    x = ((p / w).log() - to_ball(off)) / to_ball(h)
    if not x.is_finite():
        return a
    k = int(x.lower().floor().unique_fmpz())
    return min(max(k, a), b)
