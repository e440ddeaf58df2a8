"""Certified LOWER ends of delta (and eps) of k-of-M random allocation, any k (docs/math.md §9.8,
"k > 1: the lower end").

The pair of one epoch (Feldman and Shenfeld, arXiv:2502.08202): Q = N(0, I_M) without the record,
P = C(M, k)^-1 sum_{|S| = k} N(1_S / sigma, I_M) with it. Any event A gives
delta_{P||Q}(eps) >= P(A) - e^eps Q(A) (and delta_{Q||P}(eps) >= Q(A) - e^eps P(A)), so the laws of
any statistic of the output bound delta from below. The statistic here:

1. each coordinate x_i is cut into cells by the value of e^{lam x_i} (lam = p / sigma): index
   a(x) = min(floor(e^{lam x} / eta), A), whose masses under N(0, 1) and N(1/sigma, 1) are
   Gaussian cell probabilities (Arb);
2. the indices are added over the M coordinates, merging partial sums two-to-one when they grow
   long (certdp.enclose.marked): one deterministic function F of the epoch's output. Its law under
   Q is the z^0 coefficient of (mu + z nu)^M, under P the z^k coefficient over C(M, k);
3. each value of F is put in a loss bin by a float estimate of log(P/Q) (any assignment is a
   post-processing), and the E epochs' bins are composed as merged cells
   (certdp.notions.pld_merged: bins add, P rounded down, Q up).

With p = 1 the sum of e^{x_i / sigma} is, for k = 1, the likelihood ratio itself (up to constants),
so nothing but the cells' rounding is lost; for k > 1 the likelihood ratio is the elementary
symmetric polynomial e_k of those values and the sum is not sufficient: the lower end is sound at
every setting but may lie well below the true eps (measured in the note of docs/math.md §9.8).
The upper end for k > 1 stays the decomposition bound of certdp.notions.allocation_dp.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

from certdp.enclose import Ball, to_ball, workprec
from certdp.enclose.marked import marked_power
from certdp.errors import InvalidArgument, LimitExceeded, invalid
from certdp.notions.pld_merged import MergedComposed, MergedStep, compose_merged, q_extra_bits
from certdp.pairs.params import Number, integer, real

__all__ = ["K_LOWER_MAX_K", "KLower"]

#: (P down, P up, Q down, Q up, bits) of one epoch's statistic
Laws = tuple[list[int], list[int], list[int], list[int], int]

#: the largest k the lower end is computed for: the marked power forms (k + 1)(k + 2) / 2 products
#: per step of the powering
K_LOWER_MAX_K = 16
#: cells of one coordinate (indices 0..A): the resolution of e^{lam x} is its cap / A
COORD_CELLS = 1 << 13
#: the top cell starts where one coordinate alone has likelihood ratio CAP_MARGIN e^eps_max
CAP_MARGIN = 4.0
#: the statistic's index is merged two-to-one while a partial sum is longer than this
STAT_MAX_LEN = 1 << 15
#: spacing of the loss bins of one epoch, and their range beyond [-BIN_MARGIN, eps_max + BIN_MARGIN]
BIN_H = 2.0**-10
BIN_MARGIN = 8.0
#: the longest product the epochs' composition may form
MAX_PRODUCT = 1 << 22
#: bits of the units beyond log2(1/delta)
UNIT_MARGIN_BITS = 64
#: the statistic's powers (p in lam = p / sigma; 0: x itself) the tuning pass tries for 1 < k < M,
#: and its cells per coordinate (a coarse statistic: it only ranks them). k = 1 takes p = 1 alone
#: (the sum is the likelihood ratio), k = M p = 0 alone (the sum of the x_i is sufficient: a
#: Gaussian shift). Measured (sigma = 1, delta = 1e-5, remove): k = 2 of 10 best at 1/2, k = 2 of
#: 100 at 7/8, k = 5 of 10 at 1/4
TUNE_POWERS = tuple(Fraction(i, 8) for i in range(8, -1, -1))
TUNE_CELLS = 1 << 10
#: the linear statistic's lowest cell boundary (x below it is one cell: N(0, 1) mass < 1e-15), and
#: its cap's least reach beyond a marked coordinate's mean
LINEAR_LOW = -8.0
LINEAR_REACH = 8.0


def _phi_lower_tail(x: Ball) -> Ball:
    """P(N(0,1) <= x) as a ball (Arb's erfc: no cancellation for x < 0)."""
    return (-x / to_ball(2).sqrt()).erfc() / 2


def _phi_upper_tail(x: Ball) -> Ball:
    """P(N(0,1) > x) as a ball (no cancellation for x > 0)."""
    return (x / to_ball(2).sqrt()).erfc() / 2


def _cell_masses(bounds: list[Ball], shift: Ball) -> list[Ball]:
    """Masses of N(shift, 1) on (-inf, b_1), [b_1, b_2), ..., [b_A, inf) for increasing boundary
    balls b_j. Each boundary gets one tail, the one it lies in (upper tail right of the mean,
    lower tail left of it), and a cell right of the mean is a difference of upper tails: no
    cancellation in the small masses."""
    z = [b - shift for b in bounds]
    right = [v.mid() > 0 for v in z]
    tail = [_phi_upper_tail(v) if r else _phi_lower_tail(v) for v, r in zip(z, right, strict=True)]

    def cdf(i: int) -> Ball:
        return 1 - tail[i] if right[i] else tail[i]

    def sf(i: int) -> Ball:
        return tail[i] if right[i] else 1 - tail[i]

    out = [cdf(0)]
    for j in range(1, len(z)):
        # both ends right of the mean (z increases): a difference of upper tails
        out.append(sf(j - 1) - sf(j) if right[j - 1] else cdf(j) - cdf(j - 1))
    out.append(sf(len(z) - 1))
    # an exact mass is >= 0: a ball reaching below 0 keeps only its part >= 0
    return [m.max(to_ball(0)) if m.lower() < 0 else m for m in out]


@dataclass
class KLower:
    """The lower-end machinery of one setting (sigma, M steps, E epochs, k), built lazily per
    direction and statistic power; ``eps_max`` (a float, the upper end or a bound on the eps that
    will be asked) sets the cells' cap and the composition's units (steering only)."""

    sigma: Fraction
    steps: int
    epochs: int
    k: int
    eps_max: float
    delta_hint: float = 1e-5
    prec: int = 128
    #: the statistic powers to try (None: :meth:`powers`' default choice)
    only: tuple[Fraction, ...] | None = None
    _laws: dict[tuple[Fraction, int], Laws] = field(default_factory=dict, repr=False)
    _composed: dict[tuple[Fraction, str, int], MergedComposed] = field(default_factory=dict, repr=False)

    @classmethod
    def build(
        cls, sigma: Number, steps: Number, epochs: Number, k: Number, eps_max: float, delta_hint: float = 1e-5
    ) -> KLower:
        """Contract: validated inputs (InvalidArgument naming the parameter; LimitExceeded for k >
        K_LOWER_MAX_K); no enclosure is formed yet."""
        s = real("sigma", sigma, gt=0)
        m = integer("steps", steps, ge=1)
        e = integer("epochs", epochs, ge=1)
        kk = integer("k", k, ge=1)
        if kk > m:
            raise invalid("k", kk, f"must be <= steps={m}")
        if kk > K_LOWER_MAX_K:
            raise LimitExceeded(f"k={kk}: the statistic's lower end is computed for k <= {K_LOWER_MAX_K}")
        if not (math.isfinite(eps_max) and eps_max >= 0):
            raise InvalidArgument(f"eps_max={eps_max} must be a finite float >= 0")
        return cls(s, m, e, kk, float(eps_max), float(delta_hint))

    def powers(self) -> tuple[Fraction, ...]:
        """Contract: the candidate statistic powers (``only`` when set, else TUNE_POWERS; k = 1:
        (1,), k = M: (0,)); steering only."""
        if self.only is not None:
            return self.only
        if self.k == 1:
            return (Fraction(1),)
        if self.k == self.steps:
            return (Fraction(0),)
        return TUNE_POWERS

    def _epoch_laws(self, p: Fraction, cells: int = COORD_CELLS) -> Laws:
        """(P down, P up, Q down, Q up, bits): the epoch statistic F's laws (module docstring)
        rounded down and up, in units of 2^-bits, one entry per value of F."""
        if (p, cells) in self._laws:
            return self._laws[(p, cells)]
        sig = float(self.sigma)
        lam = p / self.sigma
        # the cap: a coordinate there alone has likelihood ratio e^{x/sigma - 1/(2 sigma^2)} k / M
        # of CAP_MARGIN e^eps_max: the outcomes above it are lumped in one cell, which they all
        # join anyway (steering only; any cap is sound)
        log_y = self.eps_max + math.log(self.steps / self.k) + math.log(CAP_MARGIN)
        x_cap = sig * (log_y + 1.0 / (2.0 * sig * sig))
        if p == 0:  # the linear statistic: cells of x itself, from LINEAR_LOW up to the cap, which
            # covers a marked coordinate's bulk (a query at eps = 0 puts the cap near 1/sigma)
            x_cap = max(x_cap, 1.0 / sig + LINEAR_REACH)
            eta = Fraction((x_cap - LINEAR_LOW) / cells).limit_denominator(1 << 40)
        else:
            cap = math.exp(min(float(lam) * x_cap, 600.0))
            eta = Fraction(cap / cells).limit_denominator(1 << 40) or Fraction(1, 1 << 40)
        # units: what the floors drop (< 1 unit per coefficient and product) stays far below delta
        bits = max(64, math.ceil(-math.log2(max(self.delta_hint, 1e-300))) + UNIT_MARGIN_BITS)
        with workprec(self.prec):
            if p == 0:
                low, step = to_ball(LINEAR_LOW), to_ball(eta)
                bounds = [low + j * step for j in range(1, cells + 1)]
            else:
                lam_b, log_eta = to_ball(lam), to_ball(eta).log()
                bounds = [(to_ball(j).log() + log_eta) / lam_b for j in range(1, cells + 1)]
            mu = _cell_masses(bounds, to_ball(0))
            nu = _cell_masses(bounds, 1 / to_ball(self.sigma))
        k = self.k
        laws = marked_power(mu, nu, self.steps, k, bits, STAT_MAX_LEN, MAX_PRODUCT, up_degrees=k + 1)
        choose = math.comb(self.steps, k)
        p_down = [c // choose for c in laws.rows_down[k]]  # floor: still <= the exact P-law
        p_up = [-(-c // choose) for c in laws.rows_up[k]]  # ceiling: still >= it
        q_down, q_up = laws.rows_down[0], laws.rows_up[0]
        n = max(map(len, (p_down, p_up, q_down, q_up)))
        out = tuple(v + [0] * (n - len(v)) for v in (p_down, p_up, q_down, q_up))
        self._laws[(p, cells)] = (*out, bits)  # type: ignore[assignment]
        return self._laws[(p, cells)]

    def _step(self, p: Fraction, direction: str, cells: int = COORD_CELLS) -> MergedStep:
        """One epoch's loss bins: the numerator law (P for remove, Q for add) rounded down, the
        other rounded up, as the merged cells need (certdp.notions.pld_merged); each value of F
        goes to the bin of a float estimate of its log-ratio (a post-processing)."""
        p_down, p_up, q_down, q_up, bits = self._epoch_laws(p, cells)
        num, den = (p_down, q_up) if direction == "remove" else (q_down, p_up)
        lo_bin = -math.ceil(BIN_MARGIN / BIN_H)
        hi_bin = math.ceil((self.eps_max + BIN_MARGIN) / BIN_H)
        ps = [0] * (hi_bin - lo_bin + 1)
        qs = [0] * (hi_bin - lo_bin + 1)
        for a, b in zip(num, den, strict=True):
            if a <= 0:
                idx = lo_bin
            elif b <= 0:
                idx = hi_bin
            else:
                idx = min(hi_bin, max(lo_bin, math.floor((math.log(a) - math.log(b)) / BIN_H)))
            ps[idx - lo_bin] += a
            qs[idx - lo_bin] += b
        unit = to_ball(2) ** -bits
        return MergedStep(lo_bin, [to_ball(v) * unit for v in ps], [to_ball(v) * unit for v in qs])

    def composed(self, p: Fraction, direction: str, cells: int = COORD_CELLS) -> MergedComposed:
        """Contract: the merged cells of the E epochs' bins (certdp.notions.pld_merged); its
        delta_lower(eps) <= delta(eps) in ``direction`` (module docstring); ``cells`` per
        coordinate (fewer: a cheaper, coarser statistic, as sound)."""
        if direction not in ("remove", "add"):
            raise invalid("direction", direction, "must be remove or add")
        key = (p, direction, cells)
        if key not in self._composed:
            floor = Fraction(1, 2 ** (max(1, math.ceil(-math.log2(max(self.delta_hint, 1e-300)))) + 40))
            step = self._step(p, direction, cells)
            with workprec(self.prec):
                self._composed[key] = compose_merged(
                    [(step, self.epochs)], floor, MAX_PRODUCT, extra_bits=q_extra_bits(self.eps_max) or 64
                )
        return self._composed[key]

    def tuned(self, direction: str, eps: float | None = None, delta: float | None = None) -> tuple[Fraction, ...]:
        """The statistic power to use for one query: for 1 < k < M (and no ``only``), the p of
        TUNE_POWERS whose coarse statistic (TUNE_CELLS cells per coordinate) gives the largest
        float lower end (of eps at ``delta``, or of delta at ``eps``); else :meth:`powers`.

        Contract: a tuple of powers; steering only (every power gives a sound lower end).
        Measured (sigma = 1, delta = 1e-5, remove): k = 2 of 100 at p = 7/8 gives eps >= 1.2011
        against 1.1714 at p = 1, the best of the fixed candidates."""
        if self.only is not None or self.k in (1, self.steps):
            return self.powers()

        def score(p: Fraction) -> float:
            try:
                comp = self.composed(p, direction, TUNE_CELLS)
            except LimitExceeded:
                return -1.0
            if delta is not None:
                return comp.eps_guide(delta) or 0.0
            assert eps is not None
            return comp.float_delta(eps)

        return (max(self.powers(), key=score),)

    def float_delta(self, eps: float, direction: str) -> tuple[float, Fraction]:
        """(float estimate of delta_lower, the power attaining it). Contract: floats only; they
        steer searches, never a certified value."""
        out = (0.0, self.powers()[0])
        for p in self.powers():
            try:
                out = max(out, (self.composed(p, direction).float_delta(eps), p))
            except LimitExceeded:  # this power's statistic is past the limits: it steers nothing
                continue
        return out

    def delta_lower(self, eps: Fraction, direction: str) -> Ball:
        """Contract: an exact ball >= 0 and <= delta(eps) in ``direction`` (remove: P||Q, add:
        Q||P) of E epochs of k-of-M allocation at sigma: the best over the powers of :meth:`tuned`
        (0 when every one is past the work limits)."""
        best = to_ball(0)
        for p in self.tuned(direction, eps=float(eps) if eps < 700 else 700.0):
            try:
                comp = self.composed(p, direction)
            except LimitExceeded:  # past the limits: this power proves nothing (0 is a lower end)
                continue
            with workprec(self.prec):
                best = best.max(comp.delta_lower(eps))
        return best

    def eps_lower(self, delta: Fraction, direction: str) -> Fraction:
        """Contract: a dyadic eps >= 0 with delta_lower(eps) > delta proved in ``direction`` (every
        eps' <= it is a proved violation of (eps', delta)-DP), or 0 when none is proved."""
        best = Fraction(0)
        for p in self.tuned(direction, delta=float(delta)):
            try:
                comp = self.composed(p, direction)
            except LimitExceeded:  # past the limits: this power proves nothing
                continue
            guide = comp.eps_guide(float(delta))
            if guide is None or guide <= float(best):
                continue
            for back in (1e-9, 1e-7, 1e-5, 1e-3, 1e-2):
                cand = _dyadic_down(guide * (1 - back))
                if cand <= best:
                    break
                with workprec(self.prec):
                    if comp.delta_lower(cand) > to_ball(delta):
                        best = cand
                        break
        return best


def _dyadic_down(x: float) -> Fraction:
    """x >= 0 rounded down to 30 significant bits (a short exact eps to certify at)."""
    if x <= 0:
        return Fraction(0)
    e = math.floor(math.log2(x)) - 30
    return Fraction(math.floor(x / 2.0**e)) * Fraction(2) ** e
