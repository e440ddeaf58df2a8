"""Certified two-sided bounds on the total variation of random allocation (arXiv:2610.09651 App. C.5).

Notation (docs/math.md §9.1): under Q every step value Y = exp(tX - t^2/2), t = 1/sigma, is
lognormal with P(Y <= y) = Phi((ln y + t^2/2)/t) and E[Y; Y <= y] = Phi((ln y - t^2/2)/t).
An epoch's likelihood ratio is L = S/M with S the sum of its M step values; Lambda is the product
of the E epoch ratios and TV = 1 - E_Q min(1, Lambda).

Upper bound (arXiv:2610.09651 Lemma C.5, mass splitting; docs/math.md §9.6). (i) Each Y is split between the ends of its
lattice cell [(k-1)h, kh] keeping its mean; (ii) S is then on hZ with masses p^M; (iii) each
epoch value S/M is split between the ends of its cell on the grid e^{j eta}, keeping its mean;
(iv) the grid indices add over epochs: b = r^E. Each split only lowers E min(1, Lambda) because
min(1, prod L_e) is concave in each coordinate; dropping any mass lowers it too. Hence
    TV <= 1 - sum_k b_k min(1, e^{k eta}) = A + (1 - sum_k b_k),   A = sum_{k<0} b_k (1 - e^{k eta}).

Lower bound (derived here; docs/math.md §9.7). Post-processing cannot raise TV, and the
likelihood ratio of a post-processed pair is the Q-conditional mean of Lambda given the output.
(i) Partition (0, inf) into cells (b_{k-1}, b_k]; each cell is assigned a lattice point u >= its
conditional mean (centred cells: u_k = kh with E[Y | cell] <= u_k verified in Arb; any other
cell: u = its right end rounded up to hZ, which is >= every point of the cell). (iii) The atoms
of S are swept in increasing order into groups (one boundary atom split at random) whose mean of
S/M is <= e^{j eta}. In detail: the output o = (o_1, ..., o_E) of the post-processing K has
Q-mass q_o and P-mass q_o Lbar_o, Lbar_o = E_Q[Lambda | o] = prod_e E_Q[L_e | o_e] (o_e depends
on epoch e and on independent coins only), so
    TV(P, Q) >= TV(PK, QK) = sum_o q_o (1 - Lbar_o)_+ >= sum_o q_o (1 - prod_e g(o_e))_+
for any grid values g(o_e) >= E_Q[L_e | o_e] >= 0: raising a conditional mean to its grid point
raises min(1, Lambda), i.e. lowers the bound, never the reverse. An outcome that is dropped
(above the cap or the sum range) is sent to a separate symbol; its term (q - P)_+ >= 0 is left
out. Hence
    TV >= sum_kept b_k (1 - min(1, e^{k eta})) = A.
Every mass above is an Arb ball; polynomial powers are rigorous (certdp.enclose.power_truncated).

Atoms below l_min. Scheme 1 drops them on both sides (sound: lost mass), which costs about
P(S/M < l_min) (1 - E[S/M | S/M < l_min]) on the lower side: a first-order loss once the lattice
puts atoms there (at M = 3, sigma = 0.5, h = 2^-9, l_min = 2^-8 it was 1.9e-4). Schemes 2 and 3
keep them and start the log grid at g_0 ~ l_min. Upper side: an atom v < g_0 is split between 0
and g_0 keeping its mean (mass v/g_0 at g_0): the cell [0, g_0] is one more cell of step (iii),
and the part at 0 (Lambda = 0, so min(1, Lambda) = 0) is counted with the lost mass, whose
contribution is taken as 0 anyway. Lower side: the sweep of step (iii) starts at the lowest atom,
so every atom below g_0 joins the first group, whose mean is certified <= g_0 like every group's
(it is completed from the atoms above g_0). For E = 1 neither costs anything (min(1, L) is linear
on [0, 1]); for E > 1 only the outcomes where the other epochs push Lambda past 1 / g_0 pay.

Scheme 2 (grids with scheme=2; scheme 1 is kept bit for bit for the certificates written with
it) changes three things, each inside the two arguments above. (a) Upper side: Y > cap is clamped
to cap and S/M > l_max to l_max instead of dropped: a pointwise lowering of Lambda, so
E min(1, Lambda) only decreases, and the cost is only the rare outcomes where a large value still
leaves Lambda < 1; cap and l_max can therefore be far smaller (tv_numeric.clamp_plan). The lower
side still drops them, which costs the same small amount. cap must be a multiple of h: the
clamped mass is P(Y > cap) placed at cap, which double-counts (cap, kh] if the last lattice point
kh is not cap (LatticeGrid refuses such grids). (b) Cells of Y widen in the upper tail
(P(Y > a) w^2 <= tail_k h^2; the last cell is cut at cap); any cell partition is valid for both
constructions. (c) Partial
sums are coarsened on the way to S (certdp.enclose.power_multires): mean-keeping spreads (upper)
or cells whose conditional mean is at most their point (lower), the same two arguments applied
to a partial sum, which enters Lambda linearly. The lower side also repairs a centred cell whose
Arb check fails by moving its right end left, instead of rounding the whole cell up.

Scheme 3 is scheme 2 with the epoch sum powered in two parts (certdp.enclose.power_two_scale):
each partial sum keeps a fine lattice below a split point and a coarse lattice (2^gap h) for the
rare larger values, and fine factors are moved to the coarse lattice in the cross terms. The
moves are mean-preserving spreads (upper side) or roundings up (lower side), the same two
arguments applied once more; the split only changes speed and tightness (_two_scale_plan).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TypeVar

import numpy as np
from scipy.special import ndtr, ndtri

from certdp.enclose import Ball, Enclosure, coarsened_powering, power_multires, power_two_scale, to_ball, workprec
from certdp.enclose.ball import readable_repr
from certdp.enclose.context import MAX_PREC, MIN_PREC
from certdp.errors import InvalidArgument, PrecisionExhausted, fmt_value, invalid
from certdp.pairs import RandomAllocation

Progress = Callable[[str, float], None]
#: Masses below this are dropped from the ends of every product (sound: dropped mass is lost
#: mass, accounted for by the kept total). Keeps Arb's products fast.
PRUNE_FLOOR = to_ball(2) ** -100
#: Scheme-2 coarsening of partial sums (see _doublings): each doubling of the spacing may add
#: about a quarter of the step rounding's variance; measured at M = 100: ~1.3x faster, bias +3%.
COARSEN_BETA = 0.25
#: Largest number of lattice cells (cap/h, l_max M/h) or log-grid points a grid may ask for: beyond
#: it the ball lists alone would not fit in memory, so such a grid is refused, not attempted.
MAX_POINTS = 1 << 26
#: seconds between the progress calls made inside one phase of tv_bound (each lets a caller's
#: deadline fire: certdp.calibrate.random_allocation checks it there); loops read the clock only
#: every TICK_EVERY iterations
TICK_SECONDS = 0.5
TICK_EVERY = 1024
Tick = Callable[[float], None]
_T = TypeVar("_T")


def _no_tick(frac: float) -> None:
    return None


def _ticker(note: Progress, what: str, lo: float, hi: float) -> Tick:
    """tick(frac): ``note(what, lo + frac (hi - lo))`` if TICK_SECONDS have passed since the last
    call (frac in [0, 1] is the progress inside the phase). Cheap: one clock read per call."""
    last = [time.perf_counter()]

    def tick(frac: float) -> None:
        now = time.perf_counter()
        if now - last[0] >= TICK_SECONDS:
            last[0] = now
            note(what, lo + min(max(frac, 0.0), 1.0) * (hi - lo))

    return tick


@dataclass(frozen=True)
class LatticeGrid:
    """The discretisation of one certified bound: lattice spacing ``h`` and ``cap`` for Y, the
    range [l_min, l_max] of the epoch ratio L = S/M (scheme 1 drops the atoms of S below l_min;
    schemes 2 and 3 start the log grid there and keep them), the log-grid spacing ``eta``, and the
    working precision. All are exact dyadic floats; h and eta are powers of two (eta <= 1), cap is
    a multiple of h, every field is finite, and a grid needing more than MAX_POINTS lattice cells
    or log-grid points is refused (InvalidArgument) before any work."""

    h: float
    cap: float
    l_min: float
    l_max: float
    eta: float
    prec: int = 128
    scheme: int = 1
    tail_k: float = 0.0
    coarsen: float = 0.0

    def __post_init__(self) -> None:
        # Every field is checked here, before any work: a float field that is off the lattice (cap
        # not a multiple of h) once made the scheme-2 upper bound count the mass in (cap, kh] twice.
        for name in ("h", "cap", "l_min", "l_max", "eta", "tail_k", "coarsen"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
                raise invalid(name, v, "must be a finite number")
        for name in ("h", "eta"):
            v = getattr(self, name)
            if not (v > 0 and math.frexp(v)[0] == 0.5):
                raise invalid(name, v, "must be a power of two (exact lattice points)")
        if self.eta > 1:
            raise invalid("eta", self.eta, "must be <= 1")
        if not self.cap > 0:
            raise invalid("cap", self.cap, "must be > 0")
        # h is a power of two, so cap / h is exact (or inf, refused by the size check below)
        if not (self.cap / self.h).is_integer():
            raise InvalidArgument(f"cap={fmt_value(self.cap)} must be a multiple of h={fmt_value(self.h)}")
        if not (0 < self.l_min < 1 < self.l_max):
            raise InvalidArgument(
                f"l_min={fmt_value(self.l_min)}, l_max={fmt_value(self.l_max)} need 0 < l_min < 1 < l_max"
            )
        if self.cap / self.h > MAX_POINTS:
            raise invalid("cap", self.cap, f"gives {self.cap / self.h:.3g} lattice cells of h; at most {MAX_POINTS}")
        if math.log(self.l_max / self.l_min) / self.eta > MAX_POINTS:
            raise invalid("eta", self.eta, f"gives more than {MAX_POINTS} log-grid points on [l_min, l_max]")
        if not isinstance(self.prec, int) or isinstance(self.prec, bool) or not MIN_PREC <= self.prec <= MAX_PREC:
            raise invalid("prec", self.prec, f"must be an integer in [{MIN_PREC}, {MAX_PREC}]")
        if isinstance(self.scheme, bool) or self.scheme not in (1, 2, 3):
            raise invalid("scheme", self.scheme, "must be 1, 2 or 3")
        for name in ("tail_k", "coarsen"):
            v = getattr(self, name)
            if not v >= 0:
                raise invalid(name, v, "must be finite and >= 0")
        if self.scheme == 1 and (self.tail_k or self.coarsen):
            raise InvalidArgument(f"scheme={self.scheme} has no tail_k or coarsen (schemes 2 and 3 only)")

    def to_dict(self) -> dict[str, float]:
        """Contract: the exact field values (scheme-1 grids omit the scheme-2 fields, as in
        certificates written before scheme 2 existed)."""
        d = asdict(self)
        if self.scheme == 1:
            del d["scheme"], d["tail_k"], d["coarsen"]
        return d


@dataclass(frozen=True)
class TVBound:
    """A certified one-sided bound: ``bound`` is an Enclosure whose upper end (side="upper") or
    lower end (side="lower") bounds TV; ``lost`` encloses the dropped mass."""

    side: str
    bound: Enclosure
    lost: Enclosure
    grid: LatticeGrid
    seconds: float

    __repr__ = readable_repr


def _phi(x: Ball) -> Ball:
    return (-x / to_ball(2).sqrt()).erfc() / 2


def _cdfs(y: float, t: Ball) -> tuple[Ball, Ball]:
    """(P(Y <= y), E[Y; Y <= y]) at an exact point y >= 0."""
    if y == 0:
        return to_ball(0), to_ball(0)
    ly = to_ball(y).log()
    half = t * t / 2
    return _phi((ly + half) / t), _phi((ly - half) / t)


def _step_masses_upper(t: Ball, h: float, cap: float, tick: Tick = _no_tick) -> list[Ball]:
    """Step (i) of the upper bound: masses at 0, h, ..., Kh (K = cap/h) of the mean-keeping split."""
    k_max = round(cap / h)
    hb = to_ball(h)
    p = [to_ball(0) for _ in range(k_max + 1)]
    f_prev, g_prev = to_ball(0), to_ball(0)
    for k in range(1, k_max + 1):
        if not k % TICK_EVERY:
            tick(k / k_max)
        f, g = _cdfs(k * h, t)
        m, mu = f - f_prev, g - g_prev
        p[k] += (mu - (k - 1) * hb * m) / hb
        p[k - 1] += (k * hb * m - mu) / hb
        f_prev, g_prev = f, g
    return p


def _y_above(y: float, t: float) -> float:
    """Float P(Y > y) (a heuristic input: it only chooses cell widths)."""
    return float(ndtr(-(math.log(y) + t * t / 2) / t)) if y > 0 else 1.0


def _cell_steps(p_above: float, tail_k: float) -> int:
    """Lattice steps (a power of two) of the next cell: the width w obeys P(Y > a) w^2 <= tail_k h^2.

    Scheme 2 only. A cell of width w adds at most mass * w^2 / 4 to the variance of Y, so the
    tail cells add about tail_k h^2 per octave of width, against h^2 / 6 from the bulk; any
    width is sound (only tightness depends on it).
    """
    if tail_k <= 0:
        return 1
    if p_above <= 0:
        return 1 << 30
    return 1 << max(0, min(30, math.floor(0.5 * math.log2(tail_k / p_above))))


def _step_masses_upper2(t: Ball, tf: float, grid: LatticeGrid, tick: Tick = _no_tick) -> list[Ball]:
    """Scheme-2 step (i) upper: mean-keeping split of Y on cells [a, b] with lattice ends (width
    from :func:`_cell_steps`), then Y > cap is clamped to cap. Clamping lowers Y pointwise, which
    lowers L and Lambda, so E min(1, Lambda) only decreases and the TV upper bound stays valid.
    The clamped mass is P(Y > k_max h), taken at the lattice end itself: with a cap off the
    lattice, P(Y > cap) would count the mass in (cap, k_max h] twice (LatticeGrid refuses such
    caps; this keeps the step right even so)."""
    h, k_max = grid.h, int(grid.cap / grid.h)
    hb = to_ball(h)
    p = [to_ball(0) for _ in range(k_max + 1)]
    f_prev, g_prev = to_ball(0), to_ball(0)
    ka = n = 0
    while ka < k_max:
        n += 1
        if not n % TICK_EVERY:
            tick(ka / k_max)
        kb = min(k_max, ka + _cell_steps(_y_above(ka * h, tf), grid.tail_k))
        f, g = _cdfs(kb * h, t)
        m, mu = f - f_prev, g - g_prev
        width = (kb - ka) * hb
        p[kb] += (mu - ka * hb * m) / width
        p[ka] += (kb * hb * m - mu) / width
        f_prev, g_prev, ka = f, g, kb
    p[k_max] += _phi(-((to_ball(k_max * h).log() + t * t / 2) / t))  # P(Y > k_max h), clamped to k_max h
    return p


def _centred_boundaries(
    t: float,
    h: float,
    cap: float,
    tail_k: float = 0.0,
    margin: float = 1e-13,
    tick: Tick = _no_tick,
    above: bool = False,
) -> tuple[list[float], list[bool], list[int]]:
    """Float heuristic for step (i) of the lower bound: cell right ends b, whether each cell was
    centred on its lattice point u = kh (E[Y | cell] ~ u), and k. Consecutive k differ by 1, or by
    :func:`_cell_steps` in the upper tail when tail_k > 0 (scheme 2). Cells of mass < 1e-11 are
    not centred: b = (k - 1/2)h below the bulk, b = kh above it (assigned to u = kh >= b).
    ``above``: each centred cell aims just ABOVE u (E[Y | cell] >= u; the remove direction's
    lower bound, :func:`_step_masses_down`)."""
    k_max = round(cap / h)
    ends: list[float] = []
    centred: list[bool] = []
    us: list[int] = []
    seen_bulk = False  # a flag, not any(centred): that rescanned the list for every tail cell
    a = 0.0
    k = 0

    def fg(y: float, sign: float) -> tuple[float, float]:
        """sign=+1: (P(Y <= y), E[Y; Y <= y]); sign=-1: (-P(Y > y), -E[Y; Y > y]). Differences
        of either form give the cell mass and moment; the tail that is small keeps float accuracy."""
        if y <= 0:
            return (0.0, 0.0) if sign > 0 else (-1.0, -1.0)
        ly = math.log(y)
        return sign * float(ndtr(sign * (ly + t * t / 2) / t)), sign * float(ndtr(sign * (ly - t * t / 2) / t))

    if tail_k == 0:  # scheme 1: exactly the float path of the certificates written with it
        ks = np.arange(1, k_max + 1)
        with np.errstate(divide="ignore"):
            cell_mass = ndtr((np.log(ks * h + h / 2) + t * t / 2) / t) - ndtr(
                (np.log(np.maximum(ks * h - h / 2, 1e-300)) + t * t / 2) / t
            )
    while True:
        if not (len(ends) + 1) % TICK_EVERY:
            tick(k / k_max)
        step = 1 if tail_k == 0 else _cell_steps(_y_above(a, t), tail_k)
        if tail_k > 0:  # scheme 2: the last tail cell ends at cap instead of being lost with the tail
            step = min(step, k_max - k)
        if k + step > k_max or step < 1:
            break
        k += step
        u, w = k * h, step * h
        if tail_k == 0:
            mass = float(cell_mass[k - 1])
        else:
            mass = fg(u + w / 2, -1.0)[0] - fg(max(u - w / 2, 0.0), -1.0)[0]
        # the lower side leaves cells of tiny mass uncentred (rounded up: TV cannot see them); the
        # down side centres them too, since the remove direction's delta at small delta lives there
        if not mass > (1e-280 if above else 1e-11) or a >= u:
            b = max(u if seen_bulk else u - h / 2, a)
            ends.append(b)
            centred.append(False)
            us.append(k)
            a = b
            continue
        sign = 1.0 if a <= math.exp(-t * t / 2) else -1.0  # lower tail below the median of Y
        fa, ga = fg(a, sign)
        # aim below u by more than the float error of the cell mean (about 1e-14 u |tail| / mass),
        # so that Arb certifies E[Y | cell] <= u; the bias this costs is about mass * margin
        aim = 2e-7 * h + margin * u * max(abs(fa), abs(ga)) / mass
        c = u + aim if above else u - aim
        b = max(a + h, u + w / 2)
        for _ in range(30):
            fb, gb = fg(b, sign)
            phi_b = (gb - ga) - c * (fb - fa)
            dens = math.exp(-((math.log(b) + t * t / 2) ** 2) / (2 * t * t)) / (b * t * math.sqrt(2 * math.pi))
            step_b = phi_b / ((b - c) * dens) if (b - c) * dens > 0 else 0.0
            nb = b - step_b
            if not a < nb < 1e300:  # also no overflow: a cell whose mean stays below u never closes
                nb = (a + b) / 2
            if abs(nb - b) <= 1e-15 * b:
                b = nb
                break
            b = nb
        ends.append(b)
        centred.append(True)
        us.append(k)
        seen_bulk = True
        a = b
    return ends, centred, us


def _step_masses_lower(
    t: Ball,
    tf: float,
    h: float,
    cap: float,
    tail_k: float = 0.0,
    scheme: int = 1,
    top: int | None = None,
    tick: Tick = _no_tick,
) -> list[Ball]:
    """Step (i) of the lower bound: lattice masses of the cell partition (module docstring).

    A cell rounded up beyond the lattice point ``top`` (the largest the epoch sum keeps, l_max M/h)
    is dropped (lost mass): the epoch sum would truncate it anyway, so this changes no result,
    but a huge cell end (h above the mean of Y makes the first cell unbounded) no longer grows
    the list without end.

    Scheme 2 aims closer to u (float margin 1e-15 instead of 1e-13: the margins' bias grows with
    the number of cells) and repairs a centred cell whose Arb check fails by moving its right
    end left (the mean falls at rate (b - u) density(b)); the repaired end is the next cell's
    start, and every cell is still checked in Arb."""
    ends, centred, us = _centred_boundaries(tf, h, cap, tail_k, 1e-13 if scheme == 1 else 1e-15, lambda x: tick(x / 2))
    k_top = round(cap / h) + 1
    p = [to_ball(0) for _ in range(k_top + 1)]
    f_prev, g_prev = to_ball(0), to_ball(0)
    a = 0.0
    for n, (k, b, ok) in enumerate(zip(us, ends, centred, strict=True)):
        if not (n + 1) % TICK_EVERY:
            tick(0.5 + n / (2 * len(us)))
        f, g = _cdfs(b, t)
        m, mu = f - f_prev, g - g_prev
        u = k * h
        tries = 4 if (ok and scheme >= 2) else 0
        while tries and not (mu <= to_ball(u) * m) and b > u:
            tries -= 1
            dens = math.exp(-((math.log(b) + tf * tf / 2) ** 2) / (2 * tf * tf)) / (b * tf * math.sqrt(2 * math.pi))
            excess = max(float((mu - to_ball(u) * m).upper()), 0.0)
            nb = b - max(2 * excess / (dens * (b - u)), 4e-16 * b) if dens > 0 else a
            if not a < nb < b:
                break
            b = nb
            f, g = _cdfs(b, t)
            m, mu = f - f_prev, g - g_prev
        if ok and (mu <= to_ball(u) * m):
            p[k] += m
        else:  # always valid: the right end rounded up to the lattice bounds every point
            j = math.ceil(b / h)
            if j * h < b:
                j += 1
            if top is not None and j > top:
                f_prev, g_prev, a = f, g, b
                continue
            while j >= len(p):  # never round down: grow the lattice instead
                p.append(to_ball(0))
            p[j] += m
        f_prev, g_prev, a = f, g, b
    return p


def _step_masses_down(
    t: Ball, tf: float, h: float, cap: float, tail_k: float = 0.0, top: int | None = None, tick: Tick = _no_tick
) -> list[Ball]:
    """Step (i) of the remove direction's lower bound (docs/math.md §9.8, "The remove direction's
    lower bound"): the cells of :func:`_centred_boundaries` aimed just above their points, each
    certified in Arb to have E[Y | cell] >= u (its mass at u), else put at the lattice point
    floor(a/h) h <= a, the cell's left end (every point of the cell is above it); the mass above
    the last cell is put at the last right end rounded down. Every value is thus lowered to a
    point at or below a conditional mean, and a point beyond ``top`` is lowered to ``top``.

    Contract: p[k] encloses the Q-mass put at kh by a post-processing of Y (cells) followed by a
    lowering to a point <= the conditional mean of each outcome; p sums to the total mass (none
    is dropped)."""
    ends, centred, us = _centred_boundaries(tf, h, cap, tail_k, 1e-13, lambda x: tick(x / 2), above=True)
    k_top = round(cap / h) + 1
    p = [to_ball(0) for _ in range(k_top + 1)]
    f_prev, g_prev = to_ball(0), to_ball(0)
    a = 0.0
    limit = len(p) - 1 if top is None else min(len(p) - 1, top)

    def put(j: int, m: Ball) -> None:
        p[min(max(j, 0), limit)] += m

    for n, (k, b, ok) in enumerate(zip(us, ends, centred, strict=True)):
        if not (n + 1) % TICK_EVERY:
            tick(0.5 + n / (2 * len(us)))
        f, g = _cdfs(b, t)
        m, mu = f - f_prev, g - g_prev
        if ok and (mu >= to_ball(k * h) * m):
            put(k, m)
        else:  # always valid: every point of (a, b] is >= a >= floor(a / h) h
            put(math.floor(a / h), m)
        f_prev, g_prev, a = f, g, b
    put(math.floor(a / h), 1 - f_prev)  # Y > a: lowered to a point <= a
    return p


def _doublings(beta: float) -> Callable[[int], int]:
    """Schedule of power_multires: the partial sum of 2^j steps gets spacing h 2^{c_j} with
    c_j = floor(log2(sqrt((2/3) beta 2^j))). Coarsening it adds at most (spacing^2/4) per copy and
    it has M/2^j copies in the epoch sum, so each doubling adds at most about beta M h^2 / 6 to
    Var S, against M h^2 / 6 from the step rounding. A heuristic: any schedule is sound."""

    def c(j: int) -> int:
        if beta <= 0:
            return 0
        return max(0, math.floor(0.5 * math.log2(2 / 3 * beta * 2**j)))

    return c


def _two_scale_plan(tf: float, h: float, side: str) -> tuple[int, Callable[[int], float]]:
    """(gap, split) for power_two_scale (scheme 3; a float heuristic, any choice is sound): a
    partial sum of k steps keeps the fine lattice below k + 8 sqrt(k) sd(Y) + q, q the (1 - eps)
    quantile of one Y, so about eps of its mass lives on the coarse lattice (2^gap h). The upper
    side's coarse moves are mean-preserving spreads (bias ~ eps (2^gap h)^2), the lower side's
    round up (bias ~ eps 2^gap h), hence the smaller eps and gap there."""
    eps, gap = (1e-5, 4) if side == "upper" else (1e-7, 3)
    sd = math.sqrt(math.expm1(min(tf * tf, 700.0)))  # capped: no overflow at tiny sigma (any split is sound)
    q = math.exp(tf * float(ndtri(1 - eps)) - tf * tf / 2)

    def split(k: int) -> float:
        return (k + 8 * math.sqrt(k) * sd + q) / h

    return gap, split


def _ticking(f: Callable[[int], _T], tick: Tick, calls: int) -> Callable[[int], _T]:
    """``f`` that also calls ``tick(n / calls)`` at its n-th call: the callbacks of the power
    routines run between their products, so the progress (and a deadline) is checked there."""
    n = [0]

    def g(k: int) -> _T:
        n[0] += 1
        tick(n[0] / calls)
        return f(k)

    return g


def _epoch_sum(
    p: list[Ball], m: int, grid: LatticeGrid, side: str, tf: float, tick: Tick = _no_tick
) -> tuple[int, list[Ball], float]:
    """Step (ii): masses of S = sum of M lattice steps, for S/M <= l_max; returns (i_min, masses,
    H): masses at (i_min + i) H (possibly none). Scheme 1 drops the mass below l_min here; schemes
    2 and 3 keep it (steps (iii) place it on the log grid). Above l_max the mass
    is dropped too, or (scheme 2, upper side) moved down to the top atom: a pointwise lowering of
    S, so E min(1, Lambda) only decreases. The moved mass is the lower end of
    (sum p)^M - sum(kept) - pruned, which is <= the true mass above l_max (the pruned bound
    covers every coefficient dropped below the top). With grid.coarsen > 0 (scheme 2) partial
    sums are coarsened on the way (certdp.enclose.power_multires: mean-keeping spreads for the
    upper side, cells with conditional mean <= their point for the lower side), so H >= h."""
    h = grid.h
    top = math.floor(grid.l_max * m / h)
    calls = 4 * m.bit_length() + 1  # about the callback calls of the power routines below
    if grid.scheme == 3:
        gap, split = _two_scale_plan(tf, h, side)
        off, s, dropped, d = power_two_scale(
            p,
            m,
            top,
            PRUNE_FLOOR,
            _ticking(_doublings(grid.coarsen), tick, calls),
            side == "upper",
            gap,
            _ticking(split, tick, calls),
            down=side == "down",
        )
    elif grid.coarsen > 0:
        doublings = _ticking(_doublings(grid.coarsen), tick, calls)
        off, s, dropped, d = power_multires(p, m, top, PRUNE_FLOOR, doublings, side == "upper", down=side == "down")
    else:  # power_pruned(p, m, top + 1, PRUNE_FLOOR), with a tick between the products
        off, s, dropped, _ = power_multires(p, m, top, PRUNE_FLOOR, _ticking(lambda j: 0, tick, calls), spread=True)
        d = 0  # lost mass is counted via the kept total
    big_h = h * 2**d
    i_max = top >> d
    if (grid.scheme >= 2 and side == "upper") or side == "down":
        # the mass above the top: lowered to the top atom (upper side: it lowers Lambda pointwise;
        # down side: a lowering, and its lower end is <= the true mass, the rest being dropped)
        total = to_ball(0)
        for x in p:
            total += x
        kept = to_ball(0)
        for x in s:
            kept += x
        above = (total**m - kept - dropped).lower()
        if not s or off > i_max:  # everything was pruned or lies above the top: the top atom alone
            off, s = i_max, [to_ball(0)]
        s = s + [to_ball(0)] * (i_max + 1 - off - len(s))
        if above > 0:
            s[-1] += above
    if grid.scheme >= 2 or side == "down":  # every atom is kept: the log-grid steps place those below l_min too
        return off, s, big_h
    i_min = math.ceil(grid.l_min * m / big_h)
    if off > i_min:  # everything below off was pruned: start there
        return off, s, big_h
    return i_min, s[i_min - off :], big_h


def _grid_points(eta: float, j_lo: int, j_hi: int) -> list[Ball]:
    return [to_ball(j * eta).exp() for j in range(j_lo, j_hi + 1)]


def _first_index_at_or_above(g: Ball, m: int, h: float) -> int:
    """Smallest integer i with i h / M >= g (g an enclosure of a grid point), decided exactly."""
    x = g * m / to_ball(h)
    lo = int(x.lower().ceil().unique_fmpz())
    hi = int(x.upper().ceil().unique_fmpz())
    if lo != hi and not x.is_exact():
        raise PrecisionExhausted("a lattice atom is too close to a grid point at this precision")
    return hi


def _log_grid_upper(
    i_min: int, s: list[Ball], m: int, h: float, eta: float, l_min: float | None = None, tick: Tick = _no_tick
) -> tuple[int, list[Ball]]:
    """Step (iii) upper: mean-keeping split of each atom L = ih/M onto e^{j eta}; returns (j_lo, r).

    With ``l_min`` (schemes 2 and 3) the grid starts just below max(l_min, lowest atom) and the
    atoms below its first point g_0 are split between 0 and g_0 keeping their mean (mass v/g_0 at
    g_0); the part at 0 is left out of r, i.e. counted as lost, which is exactly its contribution
    min(1, 0 * rest) = 0. Without ``l_min`` (scheme 1) the grid starts below the lowest atom."""
    if not s:  # no atom kept: all mass is lost (TV <= 1)
        return 0, []
    values = [(i_min + n) * h / m for n in range(len(s))]
    floor_v = values[0] if l_min is None else max(values[0], l_min)
    j_lo = math.floor(math.log(max(floor_v, 1e-300)) / eta) - 1
    j_hi = max(math.floor(math.log(max(values[-1], 1e-300)) / eta) + 2, j_lo + 1)
    g = _grid_points(eta, j_lo, j_hi)
    r = [to_ball(0) for _ in g]
    hm = to_ball(h) / m
    starts = [_first_index_at_or_above(x, m, h) - i_min for x in g]
    if (l_min is None and starts[0] > 0) or starts[-1] < len(s):
        raise PrecisionExhausted("upper bound: the log grid does not cover the kept atoms")
    n = max(starts[0], 0)
    if n > 0:  # atoms 0 <= v < g_0 (decided exactly): weights 1 - v/g_0 at 0 and v/g_0 at g_0
        v_sum = to_ball(0)
        for k in range(min(n, len(s))):
            v_sum += s[k] * ((i_min + k) * hm)
        r[0] += v_sum / g[0]
    for idx in range(len(g) - 1):
        if not (idx + 1) % TICK_EVERY:
            tick(n / len(s))
        lo, hi = g[idx], g[idx + 1]
        w_sum, v_sum = to_ball(0), to_ball(0)
        while n < min(starts[idx + 1], len(s)):  # atoms with g_idx <= v < g_idx+1
            w_sum += s[n]
            v_sum += s[n] * ((i_min + n) * hm)
            n += 1
        width = hi - lo
        r[idx] += (hi * w_sum - v_sum) / width
        r[idx + 1] += (v_sum - lo * w_sum) / width
    return j_lo, r


def _take_part(rest: Ball, w_sum: Ball, d_sum: Ball, gap: Ball) -> tuple[Ball, Ball, Ball]:
    """A group's share of the atom that would tip its balance d_sum = sum w (v - g_j) (gap = v - g_j,
    of the sign opposite to d_sum's): the fraction phi = -d_sum / (rest gap), lowered and shrunk
    by 2^-40 so that the balance keeps its sign, certified. Returns (w_sum, d_sum, rest) after it."""
    phi = (-d_sum / (rest * gap)).lower()
    phi = phi * (1 - to_ball(2) ** -40)  # strictly inside: keeps the group certified
    if not phi > 0:
        return w_sum, d_sum, rest
    taken = rest * phi
    return w_sum + taken, d_sum + taken * gap, rest - taken


def _log_grid_lower(
    i_min: int, s: list[Ball], m: int, h: float, eta: float, l_min: float | None = None, tick: Tick = _no_tick
) -> tuple[int, list[Ball]]:
    """Step (iii) lower: sweep atoms into groups with mean of S/M <= e^{j eta} (module docstring).

    With ``l_min`` (schemes 2 and 3) the grid starts at max(l_min, lowest atom), so every atom
    below its first point g_0 joins the first group (whose mean the sweep keeps <= g_0) instead
    of being dropped."""
    if not s:  # no atom kept: nothing on the grid (TV >= 0)
        return 0, []
    values = [(i_min + n) * h / m for n in range(len(s))]
    floor_v = values[0] if l_min is None else max(values[0], l_min)
    j_lo = math.floor(math.log(max(floor_v, 1e-300)) / eta)
    j_hi = max(math.floor(math.log(max(values[-1], 1e-300)) / eta) + 1, j_lo)
    g = _grid_points(eta, j_lo, j_hi)
    r = [to_ball(0) for _ in g]
    hm = to_ball(h) / m
    n = 0
    rest = s[0]  # unassigned mass of atom n
    for idx, gj in enumerate(g):
        if not (idx + 1) % TICK_EVERY:
            tick(n / len(s))
        w_sum, d_sum = to_ball(0), to_ball(0)  # weight and sum of w (v - g_j): group mean <= g_j iff d_sum <= 0
        while n < len(s):
            v = (i_min + n) * hm
            d = rest * (v - gj)
            if (d_sum + d) <= 0:
                w_sum += rest
                d_sum += d
                n += 1
                rest = s[n] if n < len(s) else to_ball(0)
                continue
            # take a fraction phi of the atom so that d_sum + phi * rest (v - g_j) <= 0, certified
            if v > gj and d_sum <= 0:
                w_sum, d_sum, rest = _take_part(rest, w_sum, d_sum, v - gj)
            break
        if not (d_sum <= 0):
            raise PrecisionExhausted("lower bound: a group mean is not certified below its grid point")
        r[idx] += w_sum
        if n >= len(s):
            break
    return j_lo, r


def _log_grid_down(
    i_min: int, s: list[Ball], m: int, h: float, eta: float, l_min: float | None = None, tick: Tick = _no_tick
) -> tuple[int, list[Ball]]:
    """Step (iii) of the remove direction's lower bound: :func:`_log_grid_lower` mirrored. Atoms
    are swept from the top down into groups whose mean of S/M is certified >= e^{j eta} (a
    group takes atoms while sum w (v - g_j) >= 0, and a fraction of the first atom that would
    break it); what is left below the lowest grid point, max(l_min, lowest atom), is dropped.

    Contract: r[i] is the Q-mass of the outcomes of a post-processing of S/M whose conditional
    mean is >= e^{(j_lo + i) eta}, restricted to kept outcomes (docs/math.md §9.8)."""
    if not s:
        return 0, []
    values = [(i_min + n) * h / m for n in range(len(s))]
    floor_v = values[0] if l_min is None else max(values[0], l_min)
    j_lo = math.floor(math.log(max(floor_v, 1e-300)) / eta)
    j_hi = max(math.floor(math.log(max(values[-1], 1e-300)) / eta), j_lo)
    g = _grid_points(eta, j_lo, j_hi)
    r = [to_ball(0) for _ in g]
    hm = to_ball(h) / m
    n = len(s) - 1
    rest = s[n]  # unassigned mass of atom n
    for idx in range(len(g) - 1, -1, -1):
        if not (len(g) - idx) % TICK_EVERY:
            tick(1 - n / len(s))
        gj = g[idx]
        w_sum, d_sum = to_ball(0), to_ball(0)  # group mean >= g_j iff d_sum = sum w (v - g_j) >= 0
        while n >= 0:
            if rest.is_zero():  # the coarse part written on the fine lattice is mostly zeros
                n -= 1
                rest = s[n] if n >= 0 else to_ball(0)
                continue
            v = (i_min + n) * hm
            d = rest * (v - gj)
            if (d_sum + d) >= 0:
                w_sum += rest
                d_sum += d
                n -= 1
                rest = s[n] if n >= 0 else to_ball(0)
                continue
            # take a fraction phi of the atom so that d_sum + phi * rest (v - g_j) >= 0, certified
            if v < gj and d_sum >= 0:
                w_sum, d_sum, rest = _take_part(rest, w_sum, d_sum, v - gj)
            break
        if not (d_sum >= 0):
            raise PrecisionExhausted("lower bound: a group mean is not certified above its grid point")
        r[idx] += w_sum
        if n < 0:
            break
    return j_lo, r


def _combine(j_lo: int, r: list[Ball], e: int, eta: float, tick: Tick = _no_tick) -> tuple[Ball, Ball, Ball]:
    """Step (iv): (A_low, A_up, kept) with A = sum_{k<0} b_k (1 - e^{k eta}), b = r^E: A_low
    sums the unpruned coefficients, A_up adds the pruned mass (each term is <= b_k); kept = (sum r)^E."""
    total = to_ball(0)
    for x in r:
        total += x
    kept = total**e
    k_lo = e * j_lo
    if k_lo >= 0 or not r:
        return to_ball(0), to_ball(0), kept
    # power_pruned(r, e, -k_lo, PRUNE_FLOOR), with a tick between the products
    calls = 2 * e.bit_length() + 1
    off, b, dropped, _ = power_multires(r, e, -k_lo - 1, PRUNE_FLOOR, _ticking(lambda j: 0, tick, calls), spread=True)
    acc = to_ball(0)  # b[i]: mass at k = k_lo + off + i < 0
    for i, mass in enumerate(b):
        if not (i + 1) % TICK_EVERY:
            tick(1.0)
        acc += mass * (-(to_ball((k_lo + off + i) * eta).expm1()))
    return acc, acc + dropped, kept


def epoch_grid_masses(
    pair: RandomAllocation, grid: LatticeGrid, side: str, progress: Progress | None = None
) -> tuple[int, list[Ball]]:
    """Steps (i)-(iii) of the module docstring: (j_lo, r), r[i] the mass of one epoch's ratio at
    the grid point e^{(j_lo + i) eta} (upper side: after the mean-keeping splits; lower side: after
    the grouping post-processing). Call inside ``workprec(grid.prec)``; :func:`tv_bound` and the
    hockey-stick bounds of certdp.notions.allocation_dp share it.

    Contract: side="upper": for every g concave and nondecreasing in each epoch factor with
    g >= 0, E_Q g(L_1, ..., L_E) >= sum over the E-fold product of r of g at the grid points
    (mass outside r is lost; it includes, for schemes 2 and 3, the part split onto L = 0);
    side="lower": r is the law of grid values g(o_e) >= E_Q[L_e | o_e] of a post-processing of
    one epoch, restricted to kept outcomes; side="down": for every g >= 0 convex and
    nondecreasing in each epoch factor, E_Q g(L_1, ..., L_E) >= the sum over the E-fold product of
    r of g at the grid points (values lowered to points at or below conditional means of
    post-processings, and pointwise; mass is only dropped). Proof: module docstring (docs/math.md
    §9.6-9.8).
    """
    if side not in ("upper", "lower", "down"):
        raise InvalidArgument(f"side={side} must be upper, lower or down")
    if grid.l_max * pair.steps / grid.h > MAX_POINTS:
        raise invalid("l_max", grid.l_max, f"gives more than {MAX_POINTS} epoch-sum atoms l_max M/h at M={pair.steps}")
    note = progress or (lambda what, frac: None)
    t = 1 / to_ball(pair.sigma)
    # each phase also calls note(phase, frac) from inside its loops, every TICK_SECONDS or so
    note("step lattice", 0.0)
    tick = _ticker(note, "step lattice", 0.0, 0.3)
    tf = 1 / float(pair.sigma)
    if side == "upper":
        if grid.scheme == 1:
            p = _step_masses_upper(t, grid.h, grid.cap, tick)
        else:
            p = _step_masses_upper2(t, tf, grid, tick)
    elif side == "down":
        top = math.floor(grid.l_max * pair.steps / grid.h)  # as in _epoch_sum
        p = _step_masses_down(t, tf, grid.h, grid.cap, grid.tail_k if grid.scheme >= 2 else 0.0, top, tick)
    else:
        top = math.floor(grid.l_max * pair.steps / grid.h)  # as in _epoch_sum
        tail_k = grid.tail_k if grid.scheme >= 2 else 0.0
        p = _step_masses_lower(t, tf, grid.h, grid.cap, tail_k, grid.scheme, top, tick)
    note("epoch sum", 0.3)
    i_min, s, big_h = _epoch_sum(p, pair.steps, grid, side, tf, _ticker(note, "epoch sum", 0.3, 0.7))
    note("log grid", 0.7)
    tick = _ticker(note, "log grid", 0.7, 0.85)
    l_min = None if grid.scheme == 1 else grid.l_min  # scheme 1: bit for bit as written
    if side == "upper":
        return _log_grid_upper(i_min, s, pair.steps, big_h, grid.eta, l_min, tick)
    if side == "down":
        # the grid starts at l_min on every scheme (what the verifier's work limits count; attack
        # review: a scheme-1 grid started at the lowest atom, e^-10, 2.6e6 points instead of ~0)
        return _log_grid_down(i_min, s, pair.steps, big_h, grid.eta, grid.l_min, tick)
    return _log_grid_lower(i_min, s, pair.steps, big_h, grid.eta, l_min, tick)


def tv_bound(pair: RandomAllocation, grid: LatticeGrid, side: str, progress: Progress | None = None) -> TVBound:
    """Certified bound on TV(P^E, Q^E) of random allocation on ``grid``.

    Contract: side="upper": TV <= bound.upper; side="lower": TV >= bound.lower. Proof: module
    docstring (arXiv:2610.09651 Lemma C.5 for the upper side; post-processing for the lower side).
    Every dropped mass is accounted for (``lost``; schemes 2 and 3 count there, on the upper
    side, the part of the atoms below the log grid that is split onto L = 0). Any valid grid gives
    a sound bound, possibly trivial (upper 1, lower 0) when no atom is kept. Raises
    PrecisionExhausted when a grid comparison cannot be decided at ``grid.prec`` bits, and
    InvalidArgument when l_max M/h exceeds MAX_POINTS (refused before any work).
    """
    if side not in ("upper", "lower"):
        raise InvalidArgument(f"side={side} must be upper or lower")
    start = time.perf_counter()
    note = progress or (lambda what, frac: None)
    with workprec(grid.prec):
        j_lo, r = epoch_grid_masses(pair, grid, side, progress)
        note("epochs", 0.85)
        a_low, a_up, kept = _combine(j_lo, r, pair.epochs, grid.eta, _ticker(note, "epochs", 0.85, 1.0))
        lost = 1 - kept
        value = a_up + lost if side == "upper" else a_low
        note("done", 1.0)
        return TVBound(
            side,
            Enclosure.from_ball(value, grid.prec),
            Enclosure.from_ball(lost, grid.prec),
            grid,
            time.perf_counter() - start,
        )


def auto_grid(
    pair: RandomAllocation, slack: float, prec: int = 128, ref: object = None, side: str = "upper"
) -> LatticeGrid:
    """Scheme-3 grid whose predicted rounding error is below half (upper side) or 0.6 (lower
    side) of ``slack`` (float heuristic; any grid is sound).

    The rounding bias of either scheme is second order, about B (h/h0)^2 at eta/eta0 = h/h0,
    with B measured on the numeric reference grid (h0, eta0) (``ref``, an approx_tv_lattice
    result at this sigma, computed when not given); the lower side's bias is about half the upper
    side's (measured at M = 100, E = 10: 1.26e-8 against 2.67e-8 predicted). h and eta are rounded down to powers of two
    (exact dyadic). cap and l_max come from tv_numeric.clamp_plan at this slack; tail cells
    widen with P(Y > a) w^2 <= tail_k h^2, tail_k = slack M sqrt(E v) / (100 E) (v the variance
    of one epoch's ratio). The log grid starts at l_min = max(2^-8, 1 - 9 sd) (the atoms below it
    are kept: module docstring, "Atoms below l_min").

    Contract: a valid LatticeGrid (soundness never depends on the choice; only tightness).
    """
    from certdp.notions.tv_numeric import ApproxTV, approx_tv_lattice, clamp_plan

    if not slack > 0:
        raise InvalidArgument(f"slack={slack} must be > 0")
    m, e, sigma = pair.steps, pair.epochs, float(pair.sigma)
    t = 1 / sigma
    num = ref if isinstance(ref, ApproxTV) else approx_tv_lattice(m, e, pair.sigma)
    bias0 = max(num.coarse - num.value, 1e-12)
    frac, side_factor = (0.5, 1.0) if side == "upper" else (0.6, 0.5)
    scale = min(1.0, math.sqrt(frac * slack / (side_factor * bias0)))
    h = 2.0 ** math.floor(math.log2(num.grid["h"] * scale))
    eta = 2.0 ** math.floor(math.log2(num.grid["eta"] * scale))
    cap, l_max = clamp_plan(m, e, sigma, slack)
    cap = h * math.ceil(cap / h)
    v = math.expm1(t * t) / m
    l_min = max(2.0**-8, 1 - 9 * math.sqrt(v))
    tail_k = float(f"{slack * m * math.sqrt(e * v) / (100 * e * h * h):.3g}")
    return LatticeGrid(
        h=h, cap=cap, l_min=l_min, l_max=l_max, eta=eta, prec=prec, scheme=3, tail_k=tail_k, coarsen=COARSEN_BETA
    )


def longest_product(steps: int, sigma: float, grid: LatticeGrid, side: str) -> int:
    """Length of the longest polynomial product that :func:`tv_bound` forms in its epoch sum
    (step ii) on ``grid``: the driver of its time and memory (about 0.35 KB per coefficient at
    128 bits). A float work estimate for the verifier's limits, not a certified quantity.

    Contract: every product of step (ii) has at most this many coefficients. Schemes 1 and 2
    multiply partial sums truncated at top = l_max M / h (or the step lattice, if longer): at most
    2 (max(top, cap/h) + 1). Scheme 3 multiplies fine parts cut at split(M) / h
    (_two_scale_plan) and coarse parts of at most top / 2^gap + 1 points.
    """
    top = math.floor(grid.l_max * steps / grid.h) + 1
    cells = round(grid.cap / grid.h) + 1
    if grid.scheme != 3:
        return 2 * max(top, cells)
    gap, split = _two_scale_plan(1 / float(sigma), grid.h, side)
    fine = min(math.ceil(split(steps)) + 1, top)
    coarse = max(top, cells) // (1 << gap) + 2
    return 2 * max(fine, coarse)


def largest_product(steps: int, sigma: float, grid: LatticeGrid, side: str) -> int:
    """Length of the longest polynomial product of step (ii) on ``grid`` as power_two_scale forms
    it: its schedule (certdp.enclose.coarsened_powering) run on lengths (fine parts cut at
    split(k) / 2^d, truncated at top / 2^d; the coarsening doublings of :func:`_doublings` halve
    them, ignoring pruning and offsets, which only shorten). Tighter than :func:`longest_product`
    when M is large (the partial sums are coarsened); for schemes 1 and 2 it is
    :func:`longest_product`. Peak memory grows with it (certdp.cert.limits.grid_work). A float
    work estimate, not a certified quantity.

    Contract: an upper estimate of the length of every product of step (ii) on scheme 3 (>= 1).
    """
    if grid.scheme != 3:
        return longest_product(steps, sigma, grid, side)
    gap, split = _two_scale_plan(1 / float(sigma), grid.h, side)
    doublings = _doublings(grid.coarsen)
    top = math.floor(grid.l_max * steps / grid.h)
    longest = 1

    def settle(k: int, d: int, length: int) -> tuple[int, int, int]:
        return k, d, max(1, min(length, math.ceil(split(k) / (1 << d)), top // (1 << d) + 1))

    def halve(a: tuple[int, int, int]) -> tuple[int, int, int]:
        return settle(a[0], a[1] + 1, a[2] // 2 + 1)

    def mul(a: tuple[int, int, int], b: tuple[int, int, int]) -> tuple[int, int, int]:
        nonlocal longest
        longest = max(longest, a[2] + b[2] - 1)
        return settle(a[0] + b[0], a[1], a[2] + b[2] - 1)

    coarsened_powering(settle(1, 0, round(grid.cap / grid.h) + 1), steps, doublings, halve, mul)
    coarse = 2 * ((max(top, round(grid.cap / grid.h)) + 1) // (1 << gap) + 2)  # as in longest_product
    return max(longest, coarse)


def step_cells(sigma: float, grid: LatticeGrid, limit: int) -> int:
    """Number of cells of the step lattice (step i) on ``grid``, counted up to ``limit + 1``: cap/h
    for scheme 1, fewer for schemes 2 and 3 whose tail cells widen (:func:`_cell_steps`). A float
    work estimate for the verifier's limits, not a certified quantity.

    Contract: min(limit + 1, the number of cells of the upper side's partition); the lower side's
    partition widens by the same rule from nearby starts, so its count is about the same.
    """
    k_max = round(grid.cap / grid.h)
    if grid.scheme == 1 or grid.tail_k <= 0:
        return min(k_max, limit + 1)
    tf = 1 / float(sigma)
    count = ka = 0
    while ka < k_max and count <= limit:
        ka = min(k_max, ka + _cell_steps(_y_above(ka * grid.h, tf), grid.tail_k))
        count += 1
    return count
