"""The lower side of the certified PLD accountant by merged cells (docs/math.md §10, "The lower
bound by merged cells").

Cut one step's outputs into the loss cells of a lattice and keep each cell's two masses
(P(cell), Q(cell)): the cell index is a post-processing of the output. Over n steps, index k of
the composed arrays holds every outcome whose cell indices add up to k, again a post-processing
(merging), so

    delta_n(eps) >= sum_k (P_k - e^eps Q_k)_+ >= sum_{k >= j} (P_k - e^eps Q_k)   for every j.

Nothing is rounded to a lattice point: the loss of a merged index is whatever its masses say, so
what is lost is only the Jensen term of merging (second order in h, about n h^2/24 of loss
variance), with no balancing, no offset search and no first-order loss at a hard edge of the loss
(the subsampled Gaussian's log(1 - q)). Composed indices may be merged further (coarsening), end
indices dropped from both arrays (a restriction), and P rounded down: each only lowers the sum.
The Q-masses are rounded down in fixed point with their floors counted (q_err), and e^eps q_err
is subtracted.

Measured against the balancing lower side at the same spacing (remove direction): CIFAR-10
(q = 256/50000, sigma = 1.1, 9766 steps, delta = 1e-5, h = 1.07e-4) 2.3931963 against 2.3930915
(upper end 2.3933046); q = 0.001, sigma = 0.8, 10^5 steps, delta = 1e-8 at h = 2^-15: 3.5178798
against 3.5177951.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from certdp.enclose import Ball, to_ball
from certdp.enclose.fixed_pair import (
    FixedPair,
    merge_times,
    pair_add,
    pair_from_masses,
    pair_mul,
    pair_power,
    pair_product,
    pair_scale,
)
from certdp.errors import InvalidArgument, invalid
from certdp.notions.pld_fixed import COARSE_FROM, _floats, _in_units, bits_for, reference_units
from certdp.notions.pld_lattice import Cells, LossLattice
from certdp.notions.pld_split import SplitLattice, TailCells

__all__ = [
    "MergedComposed",
    "MergedStep",
    "compose_merged",
    "compose_split_merged",
    "merged_step",
    "merged_tail_step",
    "q_extra_bits",
]


@dataclass(frozen=True)
class MergedStep:
    """One step's merged cells: P- and Q-masses (balls) at index ``offset + i``."""

    offset: int
    p: list[Ball]
    q: list[Ball]


def merged_step(lattice: LossLattice, cells: Cells, ends: bool = True) -> MergedStep:
    """One step's merged cells on ``lattice`` from its certified cell masses: cell
    (point(lo + i - 1), point(lo + i)] at index lo + i; with ``ends``, the outputs with loss
    <= point(lo) at index lo and those above point(hi) (with any mass at +inf) at index hi + 1.

    Contract: the balls contain the P- and Q-masses of a post-processing of the pair (the cell of
    the output's loss), provided the tails in ``cells`` are enclosed (docs/math.md §10)."""
    tails, p, w = cells
    zero = to_ball(0)
    first_p, first_q = (1 - tails[0][0], 1 - tails[0][1]) if ends else (zero, zero)
    ps, qs = [first_p, *p[1:]], [first_q, *w[1:]]
    if ends:
        ps.append(tails[-1][0])
        qs.append(tails[-1][1])
    return MergedStep(lattice.lo, ps, qs)


def merged_tail_step(lat: SplitLattice, cells: TailCells) -> MergedStep:
    """The tails of a split lattice as merged cells on its fine index grid: each coarse cell at
    one index (the fine point nearest below its float loss log(P/Q), within the cell; any index
    is sound, the choice only steers what later merges join it with), the outputs below point(lo)
    at index lo and those above point(hi) at index hi + 1.

    Contract: with :func:`merged_step` of the bulk (``ends=False``), the masses of one
    post-processing of the pair (every output in exactly one cell)."""
    left, right = lat.coarse_points()
    tails_left, tails_right, at_lo, at_hi = cells
    zero = to_ball(0)
    size = lat.hi - lat.lo + 2
    ps, qs = [zero] * size, [zero] * size
    h, off = float(lat.h), float(lat.offset)
    for ks, tl in ((left, tails_left), (right, tails_right)):
        for j in range(1, len(ks)):
            p = tl[j - 1][0] - tl[j][0]
            q = tl[j - 1][1] - tl[j][1]
            k = ks[j]
            pf, qf = float(p.mid()), float(q.mid())
            if pf > 0 and qf > 0:
                loss = math.log(pf / qf)
                if math.isfinite(loss):
                    k = min(max(math.floor((loss - off) / h), ks[j - 1] + 1), ks[j])
            ps[k - lat.lo] += p
            qs[k - lat.lo] += q
    ps[0] += 1 - at_lo[0]
    qs[0] += 1 - at_lo[1]
    ps[-1] += at_hi[0]
    qs[-1] += at_hi[1]
    return MergedStep(lat.lo, ps, qs)


def q_extra_bits(eps_hint: float) -> int | None:
    """Bits added to the units of the composition so that e^eps times the Q floors' error stays
    as small, relative to delta, as the upper side's error: ceil(eps_hint / ln 2) + 2 for the
    largest eps the lower end will be asked at (the upper end, or the eps of a delta(eps) query).

    None beyond MAX_EXTRA_BITS (eps above about 42): wider integers would slow every product (at
    q = 1, sigma = 0.5, 2000 steps, eps = 4568, they ran out of memory); the caller then takes the
    balancing lower side.

    Contract: an int in [2, MAX_EXTRA_BITS] or None; only tightness and speed depend on it."""
    if not math.isfinite(eps_hint) or eps_hint < 0:
        return 2
    bits = math.ceil(eps_hint / math.log(2)) + 2
    return bits if bits <= MAX_EXTRA_BITS else None


#: the most bits :func:`q_extra_bits` adds
MAX_EXTRA_BITS = 64


@dataclass(frozen=True)
class MergedComposed:
    """The composed merged pair of the lower side (certdp.enclose.fixed_pair.FixedPair)."""

    pair: FixedPair
    _guide: dict[str, object] = field(default_factory=dict, compare=False, repr=False)
    #: how many one-step indices each composed index merges (a power of two; 1: one spacing)
    scale: int = 1

    def _floats(self) -> tuple[np.ndarray, np.ndarray, float]:
        if "p" not in self._guide:
            n = self.pair.length()
            p = _floats(self.pair.p.coeffs(), self.bits)
            q = _floats(self.pair.q.coeffs(), self.bits)
            p = np.pad(p, (0, n - len(p)))
            q = np.pad(q, (0, n - len(q)))
            self._guide.update(p=p, q=q, err=self.pair.q.err * 2.0**-self.bits)
        g = self._guide
        return g["p"], g["q"], g["err"]  # type: ignore[return-value]

    @property
    def bits(self) -> int:
        """Contract: the units 2^-bits of the arrays."""
        return self.pair.bits

    def _suffix_sums(self, c: float) -> np.ndarray:
        """sum_{k >= j} (p_k - c q_k) for every j, in floats (only steers)."""
        p, q, _ = self._floats()
        with np.errstate(over="ignore", invalid="ignore"):
            return np.nan_to_num(np.cumsum((p - c * q)[::-1])[::-1], nan=-np.inf)

    def _best_start(self, c: float) -> int:
        """The j maximising sum_{k >= j} (p_k - c q_k) in floats (only steers)."""
        s = self._suffix_sums(c)
        return int(np.argmax(s)) if len(s) else 0

    def float_delta(self, eps: float) -> float:
        """Contract: a float estimate of :meth:`delta_lower` (only steers)."""
        c = math.exp(min(eps, 700.0))
        s = self._suffix_sums(c)
        best = float(s.max()) if len(s) else 0.0
        return max(best - c * self._floats()[2], 0.0)

    def delta_lower(self, eps: Fraction) -> Ball:
        """Contract: an exact ball <= delta_n(eps) of every pair whose merged sub-pair the arrays
        bound (module docstring), and >= 0: sum_{k >= j} p_k - e^eps (sum_{k >= j} q_k + q_err),
        in units 2^-bits, at the j the floats choose (any j is sound)."""
        c = to_ball(eps).exp()
        j = self._best_start(float(c.mid()) if eps < 700 else math.inf)
        sp, sq = self.pair.suffix(j)
        unit = to_ball(2) ** -self.bits
        value = (to_ball(sp) - c * to_ball(sq + self.pair.q.err)) * unit
        return value.lower().max(to_ball(0))

    def eps_guide(self, delta: float) -> float | None:
        """The float eps where :meth:`float_delta` crosses ``delta`` (None when it is <= delta at
        0). Contract: a float or None; only steers the certified search."""
        if self.float_delta(0.0) <= delta:
            return None
        lo, hi = 0.0, 1.0
        while self.float_delta(hi) > delta:
            lo, hi = hi, 2 * hi
            if hi > 700:
                return None
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if self.float_delta(mid) > delta else (lo, mid)
            if hi - lo <= 1e-13 * max(1.0, hi):
                break
        return lo


def _units(floor: Fraction, extra: int):  # type: ignore[no-untyped-def]
    base = bits_for(floor)

    def bits(copies: int, length: int) -> int:
        return base(copies, length) + extra

    return bits


def compose_merged(
    parts: list[tuple[MergedStep, int]],
    floor: Fraction,
    max_product: int | None = None,
    coarse: bool = True,
    extra_bits: int = 2,
) -> MergedComposed:
    """The composition of ``steps`` runs of each part's merged cells: each power by
    :func:`certdp.enclose.fixed_pair.pair_power` (one part may merge its partial powers onto
    coarser index grids, COARSE_FROM), then their product; every index grid of the parts must be
    one lattice (the indices add).

    Contract: delta_lower(eps) <= delta_n(eps) of the composition of the pairs whose cells the
    parts hold (module docstring); LimitExceeded before a product longer than ``max_product``.
    """
    if not parts:
        raise InvalidArgument("parts=[] must be non-empty")
    ref, allowance = reference_units(floor)
    units = _units(floor, extra_bits)
    powers = []
    for step, steps in parts:
        if steps < 1:
            raise invalid("steps", steps, "must be >= 1")
        b0 = units(steps, len(step.p))
        base = pair_from_masses(step.offset, step.p, step.q, b0)
        cf = COARSE_FROM if coarse and len(parts) == 1 else None
        power, scale = pair_power(base, steps, cf, _in_units(allowance, ref, b0), max_product, units)
        powers.append(power)
    res = pair_product(powers, _in_units(allowance, ref, powers[0].bits), max_product, units)
    return MergedComposed(res, scale=scale if len(parts) == 1 else 1)


def compose_split_merged(
    bulk: MergedStep,
    tail: MergedStep,
    steps: int,
    floor: Fraction,
    max_product: int | None = None,
    coarse: bool = True,
    extra_bits: int = 2,
) -> MergedComposed:
    """The ``steps``-fold composition of one step whose cells are ``bulk`` (fine) plus ``tail``
    (coarse cells, each merged into one index; the same index grid): the k = 0 and k = 1 terms of
    (B + T)^n, B^(n-1) (B + n T), which restrict the product to the event "at most one step in
    the tails" (the dropped terms only lower the sum, module docstring).

    Contract: as :func:`compose_merged`.
    """
    if steps < 1:
        raise invalid("steps", steps, "must be >= 1")
    ref, allowance = reference_units(floor)
    units = _units(floor, extra_bits)
    bits = units(steps, len(bulk.p) + len(tail.p))
    b = pair_from_masses(bulk.offset, bulk.p, bulk.q, bits)
    t = pair_from_masses(tail.offset, tail.p, tail.q, bits)
    if steps == 1:
        return MergedComposed(pair_add(b, t))
    cf = COARSE_FROM if coarse else None
    p1, scale = pair_power(b, steps - 1, cf, _in_units(allowance, ref, bits), max_product, units)
    both = pair_add(b, pair_scale(t, steps))
    if scale > 1:
        both = merge_times(both, scale.bit_length() - 1)
    res = pair_mul(p1, both, max_product, units(1, p1.length() + both.length()))
    return MergedComposed(res, scale=scale)
