"""What the lattice accountant would cost, estimated before it builds anything.

The lattice accountant (certdp.notions.pld) builds one lattice per step, composes it by binary
powering with pruning (certdp.enclose.fixed.fixed_power), and refines the spacing until the
enclosure's relative width reaches ``rel_width`` (rounds at h1 = PROBE_FACTOR x auto_h, then at
:func:`certdp.notions.pld.refined_h` of the width reached). :func:`pld_cost` predicts the whole
run, from one step's lattice ends (a few dozen 64-bit probes) and one step's loss moments (a few
hundred float evaluations of its tail):

- **lengths**: a product in the powering of m steps keeps about
  min(m (c - 1) + 1, c + 2 z sqrt(m) s/h) coefficients after pruning, with c one step's cells,
  s one step's loss standard deviation under P and z = sqrt(2 ln 2 (f - 8)) standard deviations
  down to the prune floor 2^-f (certdp.notions.pld.resolution); each product of the powering is
  simulated (:func:`_powering`), two sides per direction, the other direction of ``both`` at the
  coarse spacing (once);
- **rounds**: the second-order width model of the refinement, absolute width about
  WIDTH_CONSTANT x n h^2 / S with S = sqrt(n) s, relative to eps ~ S^2/2 + z_delta S (the Gaussian
  regime), steps the spacings as pld_bounds does, with its limits (MAX_REFINE_PRODUCT,
  MIN_REFINE_H, MAX_REFINE_ROUNDS);
- **work** (units of certdp.enclose.work: one per product coefficient and per cell), the longest
  product and its **memory** at the bits the fixed-point composition uses, and **seconds** at an
  optimistic rate (SECONDS_PER_COEFF_LIMB: faster than this project's machines, so that a run
  refused by time would pass the budget on them too).

Calibrated against the units the work meter counted on a spread of inputs (q in [1e-5, 1],
sigma in [0.3, 50], steps 1..10^6, delta 1e-300..0.1; tests/test_pld_cost_estimate.py holds the
measured table): the estimate of a whole run is within a factor of 4 of what it counts
(before, only the first round's two standard deviations were counted: 13 to 230 times below).
Every figure is a float or integer that only chooses what to refuse; none enters a certified
number.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

from certdp.enclose import to_ball, workprec
from certdp.enclose.work import fmt_bytes, headroom, product_bytes, resident, seconds_left
from certdp.errors import BudgetExhausted, CertdpError, LimitExceeded, fmt_value
from certdp.pairs import PrivacyPair

#: absolute eps width of one round at spacing h, over n h^2 / S (measured 0.84 to 1.8 where the
#: width is second order in h; the lower side's balancing near a hard edge of the loss is worse).
#: With eps guessed from the Gaussian regime (below the true eps at tiny delta) 1.0 put the
#: predicted spacings within a factor 1.3 of the refinement's on the measured table
WIDTH_CONSTANT = 1.0

#: units of a round over the simulated powering's (measured 1.1 to 2.9, median 1.7, on single
#: rounds at the probe spacing: the lower side's own spacing and offset search, the split
#: lattice's tails, a direction the coarse ranking does not show dominated, the cells' masses)
ROUND_FACTOR = 1.4

#: optimistic seconds per product coefficient per 64-bit limb of its bits, and per coefficient
#: (FLINT's products on this project's 2-core machine, unloaded: about 0.25 us per limb plus
#: 0.15 us; halved, so that a refusal by time holds on a machine twice as fast)
SECONDS_PER_COEFF_LIMB = 0.12e-6
SECONDS_PER_COEFF = 0.08e-6

#: units a round counts whatever its size: the probes of the lattices' ends, the offset searches'
#: evaluations, the eps search's checkpoints (measured: 1e3 to 3e4 units on runs of one step)
ROUND_OVERHEAD = 8000

#: points per side of zero of the float quadrature of one step's loss moments
MOMENT_POINTS = 160

#: a spacing counts as fitting the product limit when its predicted longest product is at most
#: this multiple of the limit (the product model was 4-5% above the counted products near the
#: limit: q = 0.001, sigma = 6.188176, 10^6 steps, delta = 1e-10: 2.07e6 vs 1.98e6 at h = 9 2^-22,
#: 4.65e6 vs 4.45e6 at 2^-20)
PRODUCT_SLACK = 1.05

#: share of the second-order width model that a round's width is granted at least, on top of
#: what the lower side's balancing leaves (the model was 0.84 to 1.8 of the measured widths;
#: see WIDTH_CONSTANT)
H2_FLOOR = 0.8

#: the target counts as out of reach only when every spacing the products allow is predicted to
#: leave at least this multiple of it (the prediction was 1.1 to 4.3 times below the widths
#: measured: see :func:`pld_reach_refusal`)
REACH_MARGIN = 1.25

#: a refusal suggests this multiple of the predicted width as the --rel-width to pass
SUGGEST_FACTOR = 8

#: the lower side's balancing is probed only when the spacings between the finest that fits and
#: the coarsest the second-order floor allows span at most this factor (three octaves)
PROBE_BAND = 8


@dataclass(frozen=True)
class PldCost:
    """Estimates for one run of the lattice accountant (see the module docstring): the first
    round's spacing ``h`` and one step's ``cells`` there, the longest ``product`` (coefficients)
    at ``bits``, the whole run's ``work`` (units), peak ``memory`` (bytes) and optimistic
    ``seconds``, and the spacings of the rounds predicted."""

    h: Fraction
    cells: int
    product: int
    bits: int
    work: int
    memory: int
    seconds: float = 0.0
    rounds: tuple[Fraction, ...] = field(default=())
    #: the refinement model (eps(delta) without h only, else None / 0): the target width, the
    #: finest spacing whose predicted products fit MAX_REFINE_PRODUCT (x PRODUCT_SLACK), the
    #: second-order width's scale (width ~ WIDTH_CONSTANT x width_scale x h^2), the steps, the
    #: composed loss's standard deviation S and the eps guessed for it (S^2/2 + z_delta S)
    goal: Fraction | None = None
    fit_h: Fraction | None = None
    width_scale: float = 0.0
    steps: int = 0
    eps_guess: float = 0.0
    spread: float = 0.0


def _tail(pair: PrivacyPair, x: float) -> float | None:
    """P(L > x) in floats (the pair's float tail, else its 64-bit ball's midpoint)."""
    t = pair.loss_tail_float(x)
    if t is not None:
        return t[0]
    with workprec(64):
        b = pair.loss_tail(to_ball(Fraction(x)))
    return None if b is None else float(b[0].mid())


def loss_sd(pair: PrivacyPair, lo: float, hi: float) -> float | None:
    """The standard deviation under P of one step's loss L, from its tail on [lo, hi] (the
    lattice's ends: what lies beyond is below 2^-tail_bits), by E[L^2] = int_0^hi 2x P(L > x) dx
    + int_lo^0 2|x| P(L <= x) dx and E[L] likewise, in floats on geometric grids (the bulk of a
    subsampled loss at small q sits within q of 0, its tails far out). None when the tail is not
    available or not finite.

    Contract: a float >= 0 or None; only chooses what to refuse (no enclosure).
    """
    moments = [0.0, 0.0]  # E[L], E[L^2]
    for end, sign in ((hi, 1.0), (lo, -1.0)):
        reach = abs(end)
        if not reach > 0:
            continue
        xs = [reach * 10.0 ** (-18 + 18 * i / (MOMENT_POINTS - 1)) for i in range(MOMENT_POINTS)]
        prev: tuple[float, float] | None = None
        for x in xs:
            t = _tail(pair, sign * x)
            if t is None or not math.isfinite(t):
                return None
            mass = t if sign > 0 else max(0.0, 1.0 - t)  # P(L > x), or P(L <= -x)
            if prev is not None:
                dx = x - prev[0]
                moments[0] += sign * dx * (mass + prev[1]) / 2
                moments[1] += dx * (x * mass + prev[0] * prev[1])
            prev = (x, mass)
    var = moments[1] - moments[0] ** 2
    return math.sqrt(var) if var > 0 else math.sqrt(max(moments[1], 0.0))


def _powering(cells: int, sd_cells: float, n: int, z: float) -> tuple[int, int]:
    """(units, longest product) of the binary powering of a one-step pmf of ``cells`` cells to
    its n-th power, as certdp.enclose.fixed.fixed_power forms it: every product of an m-step and
    an m'-step power has their lengths' sum less one coefficients, and the result keeps
    min(m'' (cells - 1) + 1, cells + 2 z sqrt(m'') sd_cells) of them (m'' = m + m'; pruning)."""

    def kept(m: int) -> int:
        return min(m * (cells - 1) + 1, cells + math.ceil(2 * z * math.sqrt(m) * sd_cells))

    units = longest = 0
    cur_m, cur, acc_m, acc = 1, kept(1), 0, 0
    while n:
        if n & 1:
            if acc:
                units += acc + cur - 1
                longest = max(longest, acc + cur - 1)
                acc_m += cur_m
                acc = kept(acc_m)
            else:
                acc_m, acc = cur_m, cur
        n >>= 1
        if n:
            units += 2 * cur - 1
            longest = max(longest, 2 * cur - 1)
            cur_m *= 2
            cur = kept(cur_m)
    return units, longest


def _z_of_delta(delta: Fraction) -> float:
    """About the normal quantile z with P(N > z) = delta (sqrt(2 l - ln(4 pi l)), l = ln(1/delta))."""
    ln = (delta.denominator.bit_length() - delta.numerator.bit_length()) * math.log(2)
    ln = max(ln, 0.7)
    return math.sqrt(max(2 * ln - math.log(4 * math.pi * ln), 0.25))


@dataclass(frozen=True)
class _Part:
    """One direction's one-step lattice at the first spacing h1, for the model."""

    steps: int
    full: int  # cells of the whole range (tail bits)
    bulk: int  # cells of the bulk (the split lattice's fine part), = full when not split
    sd: float  # one step's loss standard deviation under P (loss units)


def pld_cost(
    pair: PrivacyPair,
    delta: Fraction | None,
    *,
    h: Fraction | None = None,
    rel_width: Fraction | None = None,
) -> PldCost | None:
    """Estimates for eps(delta) (``delta`` given) or delta(eps) of ``pair`` by the lattice
    accountant (one round at ``h`` when given, else the refinement to ``rel_width``, default
    certdp.notions.pld.DEFAULT_REL_WIDTH; delta(eps) without either: one lattice at auto_h);
    None when the pair is not one the accountant takes (or its loss has atoms only). LimitExceeded
    (the lattice's own message) when one step's lattice at the first spacing needs more than
    MAX_CELLS cells even at the fewest tail bits the run uses: the run's first round would
    refuse the same way, after building the other direction's lattices and products.

    Contract: integers, floats and spacings that only choose what to refuse (no enclosure).
    """
    from certdp.notions.pld import (
        COARSE_FACTOR,
        DEFAULT_REL_WIDTH,
        MAX_REFINE_PRODUCT,
        MAX_REFINE_ROUNDS,
        MIN_REFINE_H,
        PROBE_FACTOR,
        _pow2_floor,
        auto_h,
        directions,
        refined_h,
        resolution,
    )
    from certdp.notions.pld_fixed import bits_for, reference_units
    from certdp.notions.pld_lattice import lattice_for
    from certdp.notions.pld_split import MAX_EXTENT, SPLIT_MIN_CELLS, TAIL_CELLS, bulk_bits

    try:
        with workprec(64):
            comps = directions(pair)
            steps = sum(n for _, n in next(iter(comps.values())))
            floor, tail_bits = resolution(delta, steps)
            fewest = min(tail_bits, bulk_bits(delta, steps)) if delta is not None else tail_bits
            every = [part for ps in comps.values() for part in ps]
            base_h = auto_h(every, tail_bits)
            h1 = h if h is not None else base_h * (PROBE_FACTOR if delta is not None else 1)
            model: dict[str, list[_Part]] = {}
            for name, ps in comps.items():
                model[name] = []
                for p, n in ps:
                    grid = p.loss_grid()
                    if grid is not None and grid.atomic:  # a purely atomic loss may take a spacing above h
                        return None
                    # the bulk at the fewest bits: LimitExceeded here is the first round's refusal
                    bulk = lattice_for(p, h1, fewest)
                    if len(ps) == 1 and delta is not None and grid is None:  # a split lattice if it pays
                        full = lattice_for(p, h1, tail_bits, max_cells=MAX_EXTENT)
                        fc, bc = full.hi - full.lo, bulk.hi - bulk.lo
                        if not (fc > SPLIT_MIN_CELLS and fc > 2 * bc):
                            full = lattice_for(p, h1, tail_bits)  # one plain lattice (its limit applies)
                            fc = bc = full.hi - full.lo
                    else:
                        full = lattice_for(p, h1, tail_bits)
                        fc = bc = full.hi - full.lo
                    sd = loss_sd(p, float(h1 * full.lo), float(h1 * full.hi))
                    if sd is None:
                        return None
                    model[name].append(_Part(n, fc, bc, sd))
    except (LimitExceeded, BudgetExhausted):  # the lattice's own refusal, or a budget spent on the probes
        raise
    except (CertdpError, ArithmeticError, ValueError, OverflowError):
        return None

    f, _ = reference_units(floor)
    z = math.sqrt(2 * math.log(2) * max(f - 8, 1))
    units_of = bits_for(floor)

    def side(parts: list[_Part], hh: Fraction) -> tuple[int, int]:
        """(units, longest product) of one side of one direction at spacing hh."""
        scale = float(h1 / hh)
        units = longest = 0
        lengths = []
        for part in parts:
            bulk = max(2, math.ceil(part.bulk * scale))
            full = max(bulk, math.ceil(part.full * scale))
            split = full > bulk
            u, top = _powering(bulk, part.sd / float(hh), part.steps - 1 if split else part.steps, z)
            length = min(top, full + 2 * math.ceil(z * math.sqrt(part.steps) * part.sd / float(hh)))
            if split:  # B^(n-1) B and B^(n-1) T, T spanning the whole range (certdp.notions.pld_fixed)
                u += 2 * length + bulk + full + 2 * TAIL_CELLS
                top = max(top, length + full)
            units += u + full  # the cells' masses
            longest = max(longest, top)
            lengths.append(length)
        acc = lengths[0]
        for length in lengths[1:]:  # the product of the parts' powers, one factor at a time
            units += acc + length
            longest = max(longest, acc + length)
            acc += length
        return units, longest

    names = list(model)

    def round_cost(hh: Fraction, first: bool) -> tuple[int, int]:
        costs = {name: side(model[name], hh) for name in names}
        main = max(names, key=lambda k: costs[k][0])
        # its upper and lower sides; the merged lower side composes two arrays (P and Q) on wide
        # lattices below eps of about 40 (certdp.notions.pld.MERGED_MIN_CELLS, pld_merged.q_extra_bits)
        wide = bool(model[main]) and math.ceil(model[main][0].full * float(h1 / hh)) >= _merged_min_cells()
        # (2.5, not 3: it has no offset search or balancing, which the model's side includes;
        # measured 1.0x to 2.2x the balanced run's work on the estimate tests' table)
        sides = 2.5 if _merged_lower() and wide and eps_guess <= MERGED_MAX_EPS else 2
        units, longest = math.ceil(sides * costs[main][0]), costs[main][1]
        units = math.ceil(units * ROUND_FACTOR) + ROUND_OVERHEAD
        if first and len(names) > 1:  # every direction's upper side on the coarse lattice ranks them, once
            for name in names:
                u, top = side(model[name], hh * COARSE_FACTOR)
                units, longest = units + u, max(longest, top)
        return units, longest

    # the rounds of the refinement, as pld_bounds steps them
    spacings = [h1]
    goal = fit_h = None
    scale = eps_guess = spread = 0.0
    n_all = 0
    if h is None and delta is not None:
        goal = DEFAULT_REL_WIDTH if rel_width is None else rel_width
        main_parts = max(model.values(), key=lambda ps: max(p.sd * math.sqrt(p.steps) for p in ps))
        spread = math.sqrt(sum(p.steps * p.sd**2 for p in main_parts)) or 1e-300
        eps_guess = spread**2 / 2 + _z_of_delta(delta) * spread
        n_all = sum(p.steps for p in main_parts)

        def width(hh: Fraction) -> Fraction:
            return Fraction(min(1.0, WIDTH_CONSTANT * n_all * float(hh) ** 2 / spread / eps_guess))

        hh, w = h1, width(h1)
        while w > goal and len(spacings) < MAX_REFINE_ROUNDS:
            nxt = refined_h(hh, w, goal)
            while round_cost(nxt, False)[1] > MAX_REFINE_PRODUCT and nxt * 4 / 3 <= hh * 15 / 16:
                nxt = nxt * 4 / 3  # the refinement backs off towards the last spacing
            if nxt < MIN_REFINE_H or round_cost(nxt, False)[1] > MAX_REFINE_PRODUCT:
                break  # it stops there (PrecisionExhausted, after the rounds so far)
            spacings.append(nxt)
            hh, w = nxt, width(nxt)
        scale = n_all / spread / eps_guess
        # anchored at a power of two, so that the spacings the reach refusal probes do not move with
        # the refinement's safety factor (attack review, session 3: they did, and a refusal stopped firing)
        fit_h = _finest_fit(
            _pow2_floor(spacings[-1]), lambda hh: round_cost(hh, False)[1], MAX_REFINE_PRODUCT, MIN_REFINE_H
        )
    work = longest = 0
    for i, hh in enumerate(spacings):
        u, top = round_cost(hh, i == 0)
        work, longest = work + u, max(longest, top)
    cells = max(p.full for ps in model.values() for p in ps)
    # a product of two factors in units of 2^-b holds 2b + log2(length) bits before it is rounded
    # (certdp.enclose.fixed._mul charges that width)
    bits = 2 * units_of(1, longest) + longest.bit_length()
    limbs = (bits + 63) // 64
    seconds = work * (SECONDS_PER_COEFF + SECONDS_PER_COEFF_LIMB * limbs)
    return PldCost(
        h1,
        cells,
        longest,
        bits,
        work,
        product_bytes(longest, bits),
        seconds,
        tuple(spacings),
        goal,
        fit_h,
        scale,
        n_all,
        eps_guess,
        spread,
    )


def _finest_fit(start: Fraction, product: Callable[[Fraction], int], limit: int, finest: Fraction) -> Fraction | None:
    """The finest spacing on the refinement's grid (steps of 3/4 or 4/3, four significant bits)
    from ``start`` whose predicted longest ``product`` is at most PRODUCT_SLACK x ``limit``, not
    below ``finest``; None when none fits up to 2^12 x ``start`` (the products only shrink with
    a coarser spacing)."""
    from certdp.notions.pld import _dyadic_floor

    fits = lambda hh: product(hh) <= limit * PRODUCT_SLACK  # noqa: E731
    hh = start
    if not fits(hh):
        for _ in range(40):  # about 2^16 in steps of 4/3
            hh = _dyadic_floor(hh * 4 / 3)
            if fits(hh):
                return hh
        return None
    for _ in range(80):
        nxt = _dyadic_floor(hh * 3 / 4)
        if nxt < finest or not fits(nxt):
            break
        hh = nxt
    return hh


def _lower_leave(pair: PrivacyPair, h: Fraction, steps: int, eps: float, below: float) -> list[tuple[Fraction, float]]:
    """(spacing, predicted relative eps the lower side gives away by its balancing) for the
    spacings below ``below`` that the lower side may take at round spacing h
    (certdp.notions.pld._lower_spacing's: h (1 + k/8), k = 0..LOWER_COARSER): ``steps`` times
    the float imbalance per step of the tuned offset (certdp.notions.pld_lattice.tuned_offset)
    over ``eps``. Float steering only."""
    from certdp.notions.pld import LOWER_COARSER, _dyadic_floor
    from certdp.notions.pld_lattice import lattice_for, tuned_offset
    from certdp.notions.pld_split import MAX_EXTENT

    out = []
    spacings = [h, *(_dyadic_floor(h * (8 + k) / 8) for k in range(1, LOWER_COARSER + 1))]
    for hc in dict.fromkeys(sp for sp in spacings if sp >= h and float(sp) < below):
        _, imbalance = tuned_offset(pair, hc, base=lattice_for(pair, hc, 40, max_cells=MAX_EXTENT))
        out.append((hc, steps * max(imbalance, 0.0) / eps))
    return out


def _gaussian_eps(mu: float, delta: float) -> float | None:
    """The eps at ``delta`` of the Gaussian mechanism of sensitivity/noise ``mu`` (delta(eps) =
    Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)), in floats by bisection; None when delta is
    not a positive float or the answer is 0. Why: the refusal's relative widths divide by eps, and
    z_delta S (pld_cost's guess) is far above it where delta is not small against S (sigma = 1e4,
    q = 0.01, 1000 steps: 1.3e-4 against 5.7e-6)."""
    if not (mu > 0 and 0 < delta < 1):
        return None

    def over(eps: float) -> bool:  # delta(eps) > delta
        a, b = mu / 2 - eps / mu, -mu / 2 - eps / mu
        return 0.5 * math.erfc(-a / math.sqrt(2)) - math.exp(eps) * 0.5 * math.erfc(-b / math.sqrt(2)) > delta

    # e^eps overflows past 709: a larger eps is left to the run (its refusals name what it reached)
    lo, hi = 0.0, min(mu * mu / 2 + mu * math.sqrt(2 * math.log(1 / delta)) + 1, 700.0)
    if not over(lo) or over(hi):
        return None
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if over(mid) else (lo, mid)
    return hi


def pld_reach_refusal(pair: PrivacyPair, delta: Fraction, cost: PldCost) -> str | None:
    """Why the refinement to ``cost.goal`` cannot reach it within the product limit
    (MAX_REFINE_PRODUCT), by the estimate ``cost`` of :func:`pld_cost` and a probe of the lower
    side's balancing; None when it may (then the run decides, as before).

    Why: the second-order width model of :func:`pld_cost` misses the lower side's balancing,
    which near a hard edge of the loss gives away a first-order share per step that n steps
    multiply (certdp.notions.pld._lower_spacing): measured, q = 0.001, sigma = 6.188176, 10^6
    steps, delta = 1e-10, the lower ends left 3.9e-4, 1.2e-3 and 7e-4 of eps at h = 2^-17, 9 2^-22
    and 10 2^-23 (the model: 3.5e-4, 2.8e-5, 8.7e-6), so the run stopped at relative width 3.9e-4
    after 170e6 work units, most of them in rounds whose products passed the limit of 2^22. A
    round at spacing h is predicted to leave at least H2_FLOOR times the second-order model plus
    steps x the float imbalance per step of the lower side's tuned offset at h (the run measured
    1.1 to 2.6 times that sum, at 9 2^-22 and 10 2^-23), over the guessed eps; the lower side's
    coarser spacings count as rounds of their own (q = 0.01, sigma = 5, 10^6 steps, delta = 1e-5:
    predicted 1.4e-4, the run ended at 6.0e-4 after 175e6 units; eps by the Gaussian mechanism of
    the same spread, :func:`_gaussian_eps`). The refusal holds only when every spacing from
    the finest whose products fit the limit (PRODUCT_SLACK) up to where H2_FLOOR x the model alone
    reaches REACH_MARGIN x goal is predicted to leave more than REACH_MARGIN x goal, and those
    spacings span at most PROBE_BAND (else the limit leaves room and the run decides). Both
    directions are probed; the smaller prediction counts. On the benchmark rows that reach the
    target (q = 0.001, sigma = 0.8, 10^5 and 10^6 steps, delta = 1e-8) the prediction stays 7 to
    80 times below it.

    Contract: a one-line reason naming rel-width and a --rel-width that fits, or None; float
    steering only, computes nothing certified.
    """
    from certdp.notions.pld import MAX_REFINE_PRODUCT, _retunable, directions

    if cost.goal is None or cost.fit_h is None or cost.eps_guess <= 0 or cost.width_scale <= 0:
        return None
    if _merged_lower():
        return None  # no balancing: the merged lower side is second order like the upper one (it
        # reaches B2 of tests/test_cost_product_limit.py, which the balancing could not)
    comps = directions(pair)
    if not all(_retunable(parts, delta) for parts in comps.values()):
        return None  # the lower side keeps the round's lattice: the model of pld_cost stands
    # eps by the Gaussian mechanism of the same spread (pld_cost's Gaussian regime, solved)
    eps = _gaussian_eps(cost.spread, float(delta))
    if eps is None:
        return None
    bar = float(cost.goal) * REACH_MARGIN
    share = H2_FLOOR * WIDTH_CONSTANT * cost.width_scale * cost.eps_guess / eps
    top = math.sqrt(bar / share)  # coarser spacings leave more than bar by the second-order share alone
    fit = float(cost.fit_h)
    if not fit < top <= fit * PROBE_BAND:
        # the limit leaves room; or the second-order model alone puts the target past the finest
        # spacing that fits, where that model was never measured (a tiny eps such as sigma = 1e6,
        # or a target of 1e-8): the run decides, and its refusal names what it reached
        return None
    best = math.inf
    try:
        with workprec(64):
            for parts in comps.values():
                pr, _ = parts[0]
                start = cost.fit_h
                while float(start) < top:
                    for hc, leave in _lower_leave(pr, start, cost.steps, eps, top):
                        best = min(best, leave + share * float(hc) ** 2)
                        if best <= bar:
                            return None  # a spacing that may reach the target: the run decides
                    start *= 2
    except (CertdpError, ArithmeticError, ValueError, OverflowError):
        return None
    if not bar < best < 1:  # nothing probed, or a prediction past what a relative width can be
        return None
    # the run's widths were 2.1 and 4.3 times the prediction (above): 8 times it is a width the
    # first rounds reach, and a width that is still missed is refused by the run with what it reached
    fits = SUGGEST_FACTOR * best
    digits = max(0, 1 - math.floor(math.log10(fits)))
    accept = math.ceil(fits * 10**digits) / 10**digits
    return (
        f"{REACH_PREFIX}rel-width={fmt_value(cost.goal)} is out of reach of the lattice accountant: its products fit "
        f"the limit of 2^{MAX_REFINE_PRODUCT.bit_length() - 1} coefficients down to h={float(cost.fit_h):.3g}, "
        f"and every spacing from there to h={top:.3g} is predicted to leave a relative width of at least "
        f"{best:.2g} (the lower side's balancing over {cost.steps} steps); pass --rel-width {accept:g} or larger, "
        "or --via rdp for a sound upper bound at once"
    )


#: how the reason of :func:`pld_reach_refusal` starts (the caller raises PrecisionExhausted with
#: the rest: the target, not a budget, is what does not fit)
REACH_PREFIX = "precision: "


#: what a budget refusal of eps or delta suggests asking for instead (calibrate passes its own)
LESS_WORK = "a larger --rel-width or a coarser --h"


def pld_cost_refusal(
    pair: PrivacyPair,
    delta: Fraction | None,
    *,
    h: Fraction | None = None,
    rel_width: Fraction | None = None,
    less_work: str = LESS_WORK,
) -> tuple[str, bool] | None:
    """Why the lattice accountant would refuse ``pair``, could not reach the target width within
    its product limit (:func:`pld_reach_refusal`: eps(delta) without ``h``; the reason starts with
    REACH_PREFIX, flagged True), or would pass the active budgets (certdp.enclose.work: the
    caller's work limit, memory budget and time budget), by :func:`pld_cost` (``h``,
    ``rel_width`` as it takes them), with whether it is a budget or the target (True) or a limit
    of the accountant (False); None if it may fit. A budget's reason names what to pass
    instead: --via rdp (a sound upper bound at once), a larger budget, or ``less_work`` (the
    command's own flags that ask for less).

    Contract: a one-line reason and a flag, or None; computes nothing certified.
    """
    try:
        cost = pld_cost(pair, delta, h=h, rel_width=rel_width)
    except LimitExceeded as exc:
        return str(exc), False
    if cost is None:
        return None
    if delta is not None and h is None:
        # a target the products cannot reach is refused before any lattice is built (issue 39)
        reach = pld_reach_refusal(pair, delta, cost)
        if reach is not None:
            return reach, True
    units, memory = headroom()
    seconds = seconds_left()
    finest = min(cost.rounds, default=cost.h)
    where = (
        f"the lattice accountant's estimate ({len(cost.rounds)} round(s) down to h={float(finest):.3g}, "
        f"{cost.cells} cells per step at h={cost.h}, a longest product of {cost.product} coefficients at "
        f"{cost.bits} bits)"
    )
    instead = "; --via rdp answers at once with a sound upper bound"
    finer = less_work
    if memory is not None and cost.memory + resident() > memory:  # on top of what the process holds
        return (
            f"budget: {where} needs about {fmt_bytes(cost.memory)}, above max-memory={fmt_bytes(memory)}"
            f"{instead} (or pass a larger --max-memory, or {finer})",
            True,
        )
    if units is not None and cost.work > units:
        return (
            f"budget: {where} needs about {cost.work} work units, more than the {units} left{instead} "
            f"(or ask for {finer})",
            True,
        )
    if seconds is not None and cost.seconds > seconds:
        return (
            f"budget: {where} needs about {cost.work} work units, at least {cost.seconds:.0f} s even on a fast "
            f"machine, more than the {max(seconds, 0):.0f} s left of max-seconds{instead} (or pass a larger "
            f"--max-seconds, or {finer})",
            True,
        )
    return None


def afford_round(pair: PrivacyPair, delta: Fraction | None, h: Fraction, less_work: str = LESS_WORK) -> None:
    """Raise LimitExceeded (the budget's reason) when one more round of the refinement at spacing
    ``h`` would pass an active budget by :func:`pld_cost` (the refinement then backs off to a
    coarser spacing, or stops with the sound enclosure it has and the --rel-width that accepts
    it). Why: the width model of :func:`pld_cost` cannot foresee a refinement that keeps missing
    its width (measured, q = 0.001, sigma = 5, 10^5 steps: six rounds up to 2.6e6 coefficients,
    seven times the estimate); each round is checked again with what is left of the budgets.

    Contract: returns None or raises LimitExceeded; computes nothing certified.
    """
    if headroom() == (None, None) and seconds_left() is None:
        return  # no budget is active (the Python API outside any meter): nothing to check against
    over = pld_cost_refusal(pair, delta, h=h, less_work=less_work)
    if over is not None and over[1]:
        raise LimitExceeded(f"the round at h={h}: {over[0]}")


#: above this eps guess the merged lower side gives way to the balancing (pld_merged.q_extra_bits)
MERGED_MAX_EPS = 40.0


def _merged_min_cells() -> int:
    """certdp.notions.pld.MERGED_MIN_CELLS (the merged lower side's rule)."""
    from certdp.notions import pld  # it imports this module

    return pld.MERGED_MIN_CELLS


def _merged_lower() -> bool:
    """Whether eps and delta queries take the merged lower side (certdp.notions.pld.LOWER_SIDE)."""
    from certdp.notions import pld  # it imports this module

    return pld.LOWER_SIDE == "merged"
