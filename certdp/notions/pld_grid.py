"""Which lattices a composition uses (docs/math.md §10): the default spacing, the two directions
of a subsampled Gaussian, the common grid of parts whose losses have atoms and the atom-aligned
lattice on it, and the tuned offsets of the parts without atoms. Only tightness depends on these
choices: every lattice gives sound bounds.
"""

from __future__ import annotations

import math
from fractions import Fraction

from certdp.enclose import current_prec
from certdp.errors import LimitExceeded
from certdp.notions.pld_lattice import MAX_CELLS, LossLattice, choose_offset, lattice_for
from certdp.pairs import Composition, PrivacyPair, SubsampledGaussian
from certdp.pairs.base import LossGrid

#: default lattice spacing (2^-11: the two-sided eps enclosure of DP-SGD settings such as q = 0.01,
#: sigma = 0.8, 500 steps is within 1e-4 relative; docs/math.md §10)
DEFAULT_H = Fraction(1, 2**11)

#: the default spacing is halved while one step's lattice has fewer cells than this (and h > MIN_AUTO_H)
AUTO_MIN_CELLS = 2048

#: the finest spacing the default chooses by itself
MIN_AUTO_H = Fraction(1, 2**20)


def auto_h(parts: list[tuple[PrivacyPair, int]], tail_bits: int) -> Fraction:
    """The default spacing: DEFAULT_H, halved while the widest part's lattice has fewer than
    AUTO_MIN_CELLS cells (down to MIN_AUTO_H). Why: the error of both bounds scales with h^2
    against the spread of one step's loss; where the losses are tiny (q = 0.001, sigma = 2: 149
    cells at 2^-11) a fixed h resolves eps to 16% only, and a finer lattice there is still small.
    Pairs whose loss is purely atomic choose their own spacing (:func:`aligned_spacing`) and are
    left out.

    Contract: a power of two in [MIN_AUTO_H, DEFAULT_H]; only steers tightness (no enclosure).
    """
    free = [p for p, _ in parts if (g := p.loss_grid()) is None or not g.atomic]
    h = DEFAULT_H
    while free and h > MIN_AUTO_H:
        widest = 0
        for p in free:
            try:
                lat = lattice_for(p, h, tail_bits)
            except LimitExceeded:  # wide enough (the lattice itself will say what it needs)
                return h
            widest = max(widest, lat.hi - lat.lo)
        if widest >= AUTO_MIN_CELLS:
            break
        h /= 2
    return h


def directions(pair: PrivacyPair) -> dict[str, list[tuple[PrivacyPair, int]]]:
    """The compositions whose delta curves the lattice bounds compare, by name: a subsampled
    Gaussian with direction ``both`` (alone or as a part) gives a "remove" and an "add"
    composition (the neighbouring relation is one for the whole run, so every such part takes
    the same direction); otherwise one composition, named after the direction of a single
    subsampled-Gaussian part, else "pair".

    Contract: lists of (pair, steps) whose compositions' largest delta curve is that of ``pair``.
    """
    parts = list(pair.parts) if isinstance(pair, Composition) else [(pair, 1)]
    both = any(isinstance(p, SubsampledGaussian) and p.direction == "both" for p, _ in parts)
    if not both:
        single = parts[0][0] if len(parts) == 1 else None
        return {getattr(single, "direction", "pair"): parts}

    def turned(d: str) -> list[tuple[PrivacyPair, int]]:
        def one(p: PrivacyPair) -> PrivacyPair:
            return SubsampledGaussian(p.q, p.sigma, d) if isinstance(p, SubsampledGaussian) else p

        return [(one(p) if getattr(p, "direction", None) == "both" else p, n) for p, n in parts]

    return {d: turned(d) for d in ("remove", "add")}


def _gcd(a: Fraction, b: Fraction) -> Fraction:
    """gcd of two rationals (>= 0, not both 0): gcd(a/b, c/d) = gcd(ad, cb)/(bd)."""
    return Fraction(math.gcd(a.numerator * b.denominator, b.numerator * a.denominator), a.denominator * b.denominator)


def common_grid(pairs: list[PrivacyPair]) -> LossGrid | None:
    """The coarsest grid that holds the atoms of every pair in ``pairs``: anchor that of the first,
    spacing the gcd of their spacings and of their anchors' differences (rationals, so it exists);
    None when some pair has no grid.

    Contract: None, or a LossGrid holding every atom of every pair (atomic iff all are).
    """
    grids = [p.loss_grid() for p in pairs]
    found = [g for g in grids if g is not None]
    if not found or len(found) < len(grids):
        return None
    anchor, spacing = found[0].anchor, Fraction(0)
    for g in found:
        spacing = _gcd(_gcd(spacing, g.spacing), abs(g.anchor - anchor))
    return LossGrid(spacing, anchor, atomic=all(g.atomic for g in found))


def _span(pair: PrivacyPair, h: Fraction, tail_bits: int) -> Fraction:
    """The loss range of one step's lattice at spacing h (an estimate that only steers)."""
    lat = lattice_for(pair, h, tail_bits)
    return (lat.hi - lat.lo) * h


def part_lattices(parts: list[tuple[PrivacyPair, int]], h: Fraction, tail_bits: int, tune: bool = True) -> list[Part]:
    """One lattice per part, all of one spacing (a product needs it). Without atoms: spacing h,
    each part with its own tuned offset (:func:`offset_lattice`; the offsets add). With atoms:
    the parts' common grid (:func:`common_grid` of the parts with atoms) sets the spacing and
    offset (:func:`aligned_spacing`; a part without atoms makes it a grid with a continuous part,
    so the spacing stays <= h, and takes a tuned offset on it). If that spacing needs more cells
    than MAX_CELLS (grids of very different scales), every part falls back to spacing h with a
    tuned offset, where atoms cost first order. ``tune`` False: offset 0 instead of a tuned one
    for the parts without atoms (for runs that need the upper bound only).

    Contract: (pair, steps, lattice) with a common spacing; only steers tightness (no enclosure).
    """
    gridded = [p for p, _ in parts if p.loss_grid() is not None]
    if gridded:
        grid = common_grid(gridded)
        assert grid is not None
        free = len(gridded) < len(parts)
        if free:
            grid = LossGrid(grid.spacing, grid.anchor, atomic=False)
        try:
            probe = max(h, min(grid.spacing, 2**20 * h))
            span = max(_span(p, probe, tail_bits) for p, _ in parts)
            spacing, offset = aligned_spacing(grid, h, span)
            return [
                (
                    p,
                    n,
                    lattice_for(p, spacing, tail_bits, offset=offset)
                    if p.loss_grid() is not None
                    else (offset_lattice(p, spacing, tail_bits) if tune else lattice_for(p, spacing, tail_bits)),
                )
                for p, n in parts
            ]
        except LimitExceeded:
            pass  # the fallback below
    if not tune:
        return [(p, n, lattice_for(p, h, tail_bits)) for p, n in parts]
    return [(p, n, offset_lattice(p, h, tail_bits)) for p, n in parts]


def atom_gap() -> Fraction:
    """How far below an atom of the loss an aligned lattice puts its point, in units of its spacing:
    2^-(prec/2) at the working precision (2^-64 at 128 bits, at least 2^-32), far above the balls'
    radii, so that an atom and its point compare decidedly. The lower bound lowers the atom by
    this much per step, and the upper bound moves about this fraction of its mass one cell up.

    Contract: a power of two in (0, 2^-32]; no enclosure.
    """
    return Fraction(1, 2 ** max(32, current_prec() // 2))


#: with atoms closer than h, an atomic loss is still put on its own grid up to this many cells
ATOMIC_CELLS = 1 << 14


def aligned_spacing(grid: LossGrid, h: Fraction, span: Fraction) -> tuple[Fraction, Fraction]:
    """(spacing, offset) of a lattice whose points sit :func:`atom_gap` spacings below the atoms of
    a loss whose atoms lie on ``grid`` (anchor + d Z), with spacing near h; ``span`` estimates the
    loss range (it only sets how many cells the lattice takes).

    A purely atomic loss takes the grid itself (both bounds are then exact up to the gap and the
    pruning: every cell holds one atom just above its left edge) while that needs at most
    MAX_CELLS cells when d >= h, or ATOMIC_CELLS cells when d < h; beyond, a multiple of d (every
    such atom is then a point, the others sit inside cells). A loss with a continuous part
    (Laplace) takes d / k <= h, with k = ceil(d/h), so every atom is a point, but at most
    MAX_CELLS / 2 cells (a coarser spacing than h when d/h is huge).

    Contract: spacing > 0 and offset in [0, spacing); no enclosure (any lattice is sound).
    """
    d = grid.spacing
    cells = span / d  # cells at spacing d
    if grid.atomic:
        if d >= h:
            m = math.ceil(cells / MAX_CELLS)
        else:  # at most max(ATOMIC_CELLS, the cells at h) cells, and a spacing <= h
            m = min(math.ceil(cells / max(ATOMIC_CELLS, math.floor(span / h))), math.floor(h / d))
        spacing = d * max(1, m)
    else:
        k = min(math.ceil(d / h), max(1, math.floor(MAX_CELLS // 2 / max(cells, Fraction(1)))))
        spacing = d / k
    return spacing, (grid.anchor - spacing * atom_gap()) % spacing


def tuned_lattice(pair: PrivacyPair, h: Fraction, tail_bits: int = 140, max_cells: int = 0) -> LossLattice:
    """The lattice of spacing h that certdp uses for ``pair``'s lower bounds: offset by
    :func:`choose_offset`, ends by :func:`lattice_for`. A pair whose loss has atoms
    (``loss_grid``) gets the lattice of :func:`part_lattices` instead (its spacing may differ
    from h).

    Contract: a valid LossLattice; its choice only steers tightness (no enclosure).
    """
    if pair.loss_grid() is not None:
        return part_lattices([(pair, 1)], h, tail_bits)[0][2]
    return offset_lattice(pair, h, tail_bits, max_cells)


def offset_lattice(pair: PrivacyPair, h: Fraction, tail_bits: int = 140, max_cells: int = 0) -> LossLattice:
    """The lattice of spacing exactly h with a tuned offset (:func:`choose_offset`), for parts of a
    composition that must share one spacing.

    Contract: a valid LossLattice of spacing h; its choice only steers tightness (no enclosure).
    """
    base = lattice_for(pair, h, tail_bits, max_cells=max_cells)  # refuses a huge range before the search
    return lattice_for(pair, h, tail_bits, offset=choose_offset(pair, h, base=base), max_cells=max_cells)


#: one part of a composition on its lattice: (pair, steps, lattice)
Part = tuple[PrivacyPair, int, LossLattice]
