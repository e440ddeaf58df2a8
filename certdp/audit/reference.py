"""Certified references: the enclosure of the SAME quantity a peer reports (docs/audit.md).

Each reference is an exact interval [lower, upper] that contains the true value of one quantity
of DP-SGD (Poisson-subsampled Gaussian, add-or-remove neighbours: the larger of the remove and
add divergences), or one side of it when certdp can certify only that side:

* ``rdp``: D_alpha of the composition (certdp.notions.rdp, direction both);
* ``eps-rdp``: the RDP-to-(eps, delta) conversion a peer's RDP accountant applies, minimized over
  THAT peer's orders, with the true RDP values: ``cks`` is min_alpha D_alpha + log((alpha-1)/alpha)
  - (log delta + log alpha)/(alpha-1) (Canonne, Kamath, Steinke; dp_accounting, Opacus;
  certdp.notions.conversion_epsilon on an explicit grid), ``basic`` is min_alpha D_alpha + log(1/delta)/(alpha-1)
  (Mironov; autodp);
* ``eps-pld`` / ``delta-pld``: the exact eps(delta) / delta(eps) of the mechanism, by the lattice
  bounds of certdp.notions.pld (both ends proved); past their limits, only the upper side, from
  the RDP conversion on certdp's default orders;
* ``sigma-rdp`` / ``sigma-pld``: the smallest noise multiplier meeting (eps, delta) under the
  conversion above (peer's orders) or exactly (PLD): [a sigma proved to miss, a sigma proved to
  meet]; eps is nonincreasing in sigma (each Renyi divergence and the hockey-stick divergence are),
  so the smallest meeting sigma lies in that interval;
* ``eps-allocation``: the exact eps(delta) of random allocation (each record in 1 of t steps per
  epoch, E epochs; Feldman and Shenfeld, arXiv:2502.08202), both ends proved by
  certdp.notions.allocation_dp.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from fractions import Fraction

from certdp.calibrate.pld import calibrate_pld
from certdp.cert.limits import MIN_PLD_H
from certdp.enclose import Ball, Enclosure, Target, decimal_outward, inf_convex, refine, to_ball, workprec
from certdp.errors import BudgetExhausted, CertdpError
from certdp.notions import rdp
from certdp.notions.eps_delta import delta as rdp_delta
from certdp.notions.eps_delta import epsilon
from certdp.notions.pld import MAX_STEPS as MAX_PLD_STEPS
from certdp.notions.pld import pld_bounds
from certdp.pairs import PrivacyPair, SubsampledGaussian, compose
from certdp.pairs.params import exact_str

#: Accuracy of the RDP references: far below any difference a verdict reports.
REF_TARGET = Target(rel_tol=1e-15, abs_tol=1e-300)
#: Working precision of the lattice bounds (bits).
PLD_PREC = 128
#: sigma step of the PLD calibration reference (absolute): the interval's width.
SIGMA_PLD_STEP = Fraction(1, 10**4)
#: Relative width the RDP sigma interval is bisected down to.
SIGMA_RDP_REL = Fraction(1, 10**7)


@dataclass(frozen=True)
class Reference:
    """Certified ends of one quantity (None: that side is not certified), the quantity's
    description (what exactly was compared), the seconds it took, and why a side is missing."""

    quantity: str
    lower: Fraction | None
    upper: Fraction | None
    seconds: float
    reason: str = ""
    #: the enclosure is proved but not tight (random allocation with k > 1): a value inside it is
    #: consistent with it, not shown exact (certdp.audit.verdict)
    wide: bool = False

    def to_dict(self) -> dict[str, object]:
        """Contract: ends as outward-rounded decimal strings of 17 significant digits (lower down,
        upper up; certdp.enclose.decimal_outward), None for a side that is not certified."""
        return {
            "compared": self.quantity,
            "lower": None if self.lower is None else decimal_outward(self.lower, up=False),
            "upper": None if self.upper is None else decimal_outward(self.upper, up=True),
            **({"reason": self.reason} if self.reason else {}),
            **({"wide": True} if self.wide else {}),
        }


def _pair(q: Fraction, sigma: Fraction, steps: int) -> PrivacyPair:
    base = SubsampledGaussian(q, sigma, "both")
    return base if steps == 1 else compose(base, steps)


def _timed(quantity: str, run: Callable[[], tuple[Fraction | None, Fraction | None, str]]) -> Reference:
    start = time.perf_counter()
    try:
        lo, hi, reason = run()
    except BudgetExhausted:  # the command's own budget: the audit stops (exit 3), no row is judged
        raise
    except CertdpError as exc:  # a reference certdp cannot certify leaves the verdict inconclusive
        lo, hi, reason = None, None, f"certdp: {exc}"
    return Reference(quantity, lo, hi, time.perf_counter() - start, reason)


def rdp_reference(q: Fraction, sigma: Fraction, steps: int, order: Fraction) -> Reference:
    """Contract: [lower, upper] contains D_order of ``steps`` compositions of the subsampled Gaussian
    (max of remove and add; certdp.notions.rdp, docs/math.md §1 and §4)."""
    what = f"RDP D_alpha at alpha={exact_str(order)} of {steps} steps (max of remove and add)"

    def run() -> tuple[Fraction | None, Fraction | None, str]:
        enc = rdp(_pair(q, sigma, steps), order, REF_TARGET)
        return enc.lower, enc.upper, ""

    return _timed(what, run)


def _basic(pair: PrivacyPair, delta: Fraction) -> Enclosure:
    """Enclosure of inf over ALL real alpha > 1 of D_alpha + log(1/delta)/(alpha-1) (Mironov's
    conversion), i.e. inf_t (K(t) + A)/t with t = alpha - 1, A = log(1/delta) > 0.

    K + A is convex (K is a CGF), so certdp.enclose.inf_convex applies with the head bound A/t0 on
    (0, t0] (K >= 0) and the tail bound K(T)/T on [T, inf) (K(t)/t is nondecreasing: K convex,
    K(0) = 0; A/t > 0)."""
    state: dict[str, float] = {}

    def N(t: Ball) -> Ball:
        pair.check_order(t)
        return pair.cgf_ball(t) - to_ball(delta).log()

    def head(lo: float) -> Ball:
        return -to_ball(delta).log() / to_ball(lo)

    def tail(hi: float) -> Ball:
        hb = to_ball(hi)
        return pair.cgf_ball(hb) / hb

    def compute() -> Ball:
        tol = REF_TARGET.tolerance_for(state.get("mag", 1.0)) / 4
        res = inf_convex(N, divide_by_t=True, head_bound=head, tail_bound=tail, tol=tol, start=state.get("t", 1.0))
        state["t"], state["mag"] = res.argbest, abs(float(res.value.mid()))
        return res.value

    return refine(compute, REF_TARGET, what="epsilon")


def eps_rdp_reference(
    q: Fraction, sigma: Fraction, steps: int, delta: Fraction, orders: tuple[Fraction, ...], conversion: str
) -> Reference:
    """Contract: [lower, upper] contains the ``conversion`` bound with the true RDP values of the
    composition: "cks" minimized over ``orders`` (certdp.notions.epsilon's F_R on an explicit grid,
    docs/math.md §3; clamped at 0 as dp_accounting and Opacus do), "basic" over every real order
    > 1 (``orders`` unused; :func:`_basic`; autodp optimizes its order over the reals)."""
    if conversion == "cks":
        over = f"min over the peer's {len(orders)} orders"
        name = "Canonne-Kamath-Steinke"
    else:
        over, name = "inf over all real orders", "Mironov's basic"
    what = f"RDP-conversion epsilon at delta={exact_str(delta)} ({name} conversion, {over})"

    def run() -> tuple[Fraction | None, Fraction | None, str]:
        pair = _pair(q, sigma, steps)
        if conversion == "cks":
            enc = epsilon(pair, delta, orders=orders, target=REF_TARGET).enclosure
        else:
            enc = _basic(pair, delta)
        return enc.lower, enc.upper, ""

    return _timed(what, run)


#: Relative width the PLD references of a suite aim for: the lattice spacing is divided by 4 (at
#: most twice, and not below 2^-16) while the certified enclosure is wider than this. A single
#: claim asks for CLAIM_REL_WIDTH (it has the time).
PLD_REL_WIDTH = Fraction(1, 10**3)
CLAIM_REL_WIDTH = Fraction(1, 10**4)


def _pld(pair: PrivacyPair, rel_width: Fraction, **query: Fraction) -> tuple[Fraction, Fraction]:
    """[lower, upper] of eps(delta) or delta(eps) by the lattice bounds at the default spacing, then
    at spacings 4 and 16 times finer while the relative width exceeds ``rel_width``. Every run's
    ends are proved, so the result is the intersection: the largest lower and smallest upper end."""
    lo, hi, h = Fraction(-1), Fraction(10**9), None
    for _ in range(3):
        with workprec(PLD_PREC):
            res = pld_bounds(pair, h=h, **query)
        lo, hi = max(lo, res.enclosure.lower), min(hi, res.enclosure.upper)
        spacings = [Fraction(g["h"]) for g in res.grid.values() if isinstance(g, dict) and "h" in g]
        if hi <= 0 or (hi - lo) <= rel_width * hi or not spacings:
            break
        h = min(spacings) / 4
        if h < MIN_PLD_H:
            break
    return lo, hi


def _exact_or_rdp(
    what: str,
    pair: PrivacyPair,
    steps: int,
    rel_width: Fraction,
    query: dict[str, Fraction],
    rdp_upper: Callable[[], Fraction],
) -> Reference:
    """Both ends from the lattice bounds (:func:`_pld`); past their limits, only the upper end, from
    ``rdp_upper`` (an RDP conversion's sound value), with the reason."""

    def run() -> tuple[Fraction | None, Fraction | None, str]:
        if steps <= MAX_PLD_STEPS:
            try:
                lo, hi = _pld(pair, rel_width, **query)
                return lo, hi, ""
            except BudgetExhausted:  # the command's budget is spent: no fallback, the audit stops
                raise
            except CertdpError as exc:
                reason = f"lattice bounds refused ({exc}); upper side from the RDP conversion only"
        else:
            reason = f"steps={steps} > {MAX_PLD_STEPS} (the lattice accountant's limit): upper side from RDP only"
        return None, rdp_upper(), reason

    return _timed(what, run)


def eps_pld_reference(
    q: Fraction, sigma: Fraction, steps: int, delta: Fraction, rel_width: Fraction = PLD_REL_WIDTH
) -> Reference:
    """Contract: [lower, upper] contains the exact eps(delta) of the composition (certdp.notions.pld,
    docs/math.md §10: the lower end is a proved violation, the upper end a sound epsilon; :func:`_pld`
    refines the spacing). When the lattice bounds refuse (steps > 1e5, loss overflow), lower is None
    and upper is the RDP conversion's sound epsilon on certdp's default orders (docs/math.md §3)."""
    what = f"exact epsilon at delta={exact_str(delta)} (PLD lattice bounds, both ends proved)"
    pair = _pair(q, sigma, steps)
    return _exact_or_rdp(what, pair, steps, rel_width, {"delta": delta}, lambda: epsilon(pair, delta).enclosure.upper)


def delta_pld_reference(
    q: Fraction, sigma: Fraction, steps: int, eps: Fraction, rel_width: Fraction = PLD_REL_WIDTH
) -> Reference:
    """Contract: [lower, upper] contains the exact delta(eps) of the composition (eps = 0: the total
    variation distance, i.e. the membership-attack advantage); certdp.notions.pld, docs/math.md §10,
    refined as in :func:`_pld`. Past the lattice limits, lower is None and upper comes from the RDP
    conversion (docs/math.md §3)."""
    what = f"exact delta at eps={exact_str(eps)} (PLD lattice bounds, both ends proved)"
    pair = _pair(q, sigma, steps)
    return _exact_or_rdp(what, pair, steps, rel_width, {"eps": eps}, lambda: rdp_delta(pair, eps).enclosure.upper)


def eps_allocation_reference(sigma: Fraction, steps: int, epochs: int, delta: Fraction, k: int = 1) -> Reference:
    """Contract: [lower, upper] contains the exact eps(delta) of random allocation with the Gaussian
    mechanism: each record in ``k`` of ``steps`` steps per epoch, ``epochs`` epochs, add and remove
    neighbours (the larger); both ends proved by certdp.notions.allocation_dp.allocation_eps_bounds
    (docs/math.md, random allocation; 1 < k < M: the reduction's upper end and an additive
    statistic's lower end, a wide interval; k = M: the equal 1-step run, refined). When that module
    is not available, or refuses, both ends are None and the reason says so: the verdict is
    inconclusive, never a pass."""
    # k = M: the reduced run (1 step, M E epochs) is the run, so both ends are refined (not wide)
    is_wide = 1 < k < steps
    wide = "; k > 1: reduction upper end, statistic lower end, not refined" if is_wide else ""
    what = (
        f"exact epsilon at delta={exact_str(delta)} of random allocation ({k} of {steps} steps per epoch, "
        f"{epochs} epoch{'s' * (epochs != 1)}; add and remove, the larger{wide})"
    )

    def run() -> tuple[Fraction | None, Fraction | None, str]:
        try:
            from certdp.notions.allocation_dp import allocation_eps_bounds
        except ImportError as exc:
            return None, None, f"reference not available: certdp.notions.allocation_dp cannot be imported ({exc})"
        res = allocation_eps_bounds(sigma, steps, epochs, delta, direction="both", k=k)
        enc = getattr(res, "enclosure", res)  # a result object holding an Enclosure, or the Enclosure
        return Fraction(enc.lower), Fraction(enc.upper), ""

    ref = _timed(what, run)
    return replace(ref, wide=True) if is_wide else ref


def _decimal_mid(lo: Fraction, hi: Fraction) -> Fraction:
    """A short decimal strictly between lo < hi (so that the interval's ends print exactly)."""
    width = hi - lo
    digits = max(0, -math.floor(math.log10(width)) + 1)
    scale = 10**digits
    mid = Fraction(round((lo + hi) / 2 * scale), scale)
    return mid if lo < mid < hi else (lo + hi) / 2


def _short(x: Fraction, digits: int) -> Fraction:
    """x rounded to ``digits`` significant decimal digits (a short exact decimal; floats only pick
    the probe point, which needs no proof)."""
    return Fraction(f"{float(x):.{digits}g}")


def sigma_interval(
    meets: Callable[[Fraction], bool | None], guess: Fraction, rel_width: Fraction
) -> tuple[Fraction | None, Fraction | None, str]:
    """[a sigma where ``meets`` is False, a sigma where it is True], bisected to ``rel_width``.

    ``meets(sigma)`` is True only when meeting the target is certified, False only when missing it
    is, None when undecided. Contract: the returned ends are sigmas at which ``meets`` returned
    False and True (None for a side never established); with eps nonincreasing in sigma, the
    smallest meeting sigma lies in (lower, upper]."""
    lo: Fraction | None = None
    hi: Fraction | None = None
    factor = Fraction(1001, 1000)
    s = guess
    for _ in range(40):  # bracket: widen by factors 1.001, 1.002, 1.004, ... around the guess
        verdict = meets(s)
        if verdict is None:
            return lo, hi, f"undecided at sigma={exact_str(s)}"
        if verdict:
            hi = s if hi is None else min(hi, s)
        else:
            lo = s if lo is None else max(lo, s)
        if lo is not None and hi is not None:
            break
        # Probes rounded to 9 significant digits and factors to 6: exact products of 1001/1000
        # squared again and again grow to 100k-bit rationals, slow and unprintable (any probe
        # point is as good as another; only the verdicts at the probes are certified).
        s = _short(s / factor if verdict else s * factor, 9)
        factor = _short(factor * factor, 6) if factor < 4 else factor
    if lo is None or hi is None:
        return lo, hi, "no bracket found"
    while (hi - lo) > rel_width * hi:
        mid = _decimal_mid(lo, hi)
        verdict = meets(mid)
        if verdict is None:
            return lo, hi, f"undecided at sigma={exact_str(mid)}"
        lo, hi = (lo, mid) if verdict else (mid, hi)
    return lo, hi, ""


def sigma_rdp_reference(
    q: Fraction, steps: int, eps: Fraction, delta: Fraction, orders: tuple[Fraction, ...], conversion: str, guess: float
) -> Reference:
    """Contract: [lower, upper] contains the smallest sigma whose ``conversion`` epsilon over
    ``orders`` (true RDP values) is <= eps: at lower it is certified > eps, at upper <= eps
    (:func:`sigma_interval`; :func:`eps_rdp_reference` is the quantity)."""
    what = f"smallest sigma with RDP-conversion epsilon <= {exact_str(eps)} at delta={exact_str(delta)} (peer's orders)"

    def meets(s: Fraction) -> bool | None:
        ref = eps_rdp_reference(q, s, steps, delta, orders, conversion)
        if ref.upper is None or ref.lower is None:
            return None
        return True if ref.upper <= eps else False if ref.lower > eps else None

    start = _start(guess)
    return _timed(what, lambda: sigma_interval(meets, start, SIGMA_RDP_REL))


def _start(guess: float) -> Fraction:
    if not (math.isfinite(guess) and 1e-3 < guess < 1e4):
        guess = 1.0
    return Fraction(f"{guess:.6g}")


def sigma_pld_reference(q: Fraction, steps: int, eps: Fraction, delta: Fraction) -> Reference:
    """Contract: [lower, upper] contains the smallest sigma that makes the composition (eps, delta)-DP
    (exactly, not via RDP): upper is certified to meet it, lower is a proved violation when the
    refutation succeeded (else None); certdp.calibrate.pld.calibrate_pld with step 1e-4."""
    what = f"smallest sigma that is ({exact_str(eps)}, {exact_str(delta)})-DP (PLD calibration, step 1e-4)"

    def run() -> tuple[Fraction | None, Fraction | None, str]:
        cal = calibrate_pld(q, steps, eps, delta, step=SIGMA_PLD_STEP)
        if cal.refutation is None:
            return None, cal.sigma, f"violation at sigma={exact_str(cal.sigma_miss)} not proved: {cal.miss_reason}"
        return cal.sigma_miss, cal.sigma, ""

    return _timed(what, run)
