"""Sampling with replacement (a batch of b independent uniform draws from n records, substitution
neighbours): the pairs that bound it from above and below (docs/math.md §12.6).

The record enters the batch K ~ Binomial(b, 1/n) times, with pi_k = P(K = k) and
eta = P(K >= 1) = 1 - (1 - 1/n)^b. With noise s relative to the norm bound C of one record, k
copies move the sum by at most 2kC; in units of 2C that is a shift k with noise s/2, i.e. shift 1
with noise s/(2k).

* Upper (dominates both orders, every dataset): the labelled mixture over k >= 1 of the
  subsampled pairs ((1 - eta) N(0) + eta N(1), N(0)) at noise s/(2k), label k with weight
  pi_k/eta (advanced joint convexity, docs/math.md §12.6). Labels above ``kmax`` are cut (fewer
  labels cost less: a label k's loss reaches about 1/(2 (s/2k)^2), so the lattice grows as k^2): the
  upper pair keeps labels 1..kmax (weights renormalised) and every step adds at most the cut mass
  ``tail`` to delta (``tail`` >= P(K > kmax | K >= 1), exact rational); eta is rounded up to a
  dyadic (a larger rate dominates).
* Lower (is dominated by the pair of an extremal dataset): sum_k pi_k N(k, (s/2)^2) against
  N(0, (s/2)^2), with the shifts above ``klow`` lowered to klow and the weights rounded down onto
  shift 0 (lowering a shift never raises delta, docs/math.md §12.6). Laplace: every shift >= 1
  lowered to 1, i.e. the subsampled Laplace pair at a rate rounded down from eta.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from certdp.enclose import Ball, Enclosure, to_ball, workprec
from certdp.errors import InvalidArgument, LimitExceeded, invalid
from certdp.pairs.base import PrivacyPair
from certdp.pairs.gaussian_shifts import GaussianShifts
from certdp.pairs.labelled import MAX_LABELS, LabelledMixture
from certdp.pairs.subsampled import SubsampledGaussian
from certdp.pairs.subsampled_laplace import SubsampledLaplace

#: Default largest cut label mass per step (a caller with a budget passes its own ``cut``).
DEFAULT_CUT = Fraction(1, 2**64)
#: Largest cut mass accepted when MAX_LABELS labels do not reach ``cut``.
MAX_TAIL = Fraction(1, 2**40)
#: Components of the Gaussian lower pair: shifts 0..KLOW (the rest lowered to KLOW).
KLOW = 3
#: Dyadic rounding of the rates and weights (directed: up for the upper pair, down for the lower).
ROUND_BITS = 80
#: Working precision of pi_0 = (1 - 1/n)^b.
PREC = 256


@dataclass(frozen=True)
class WithReplacement:
    """The two pairs of one step of sampling with replacement (module docstring).

    ``upper`` dominates the step up to ``tail`` (per step, added to delta: delta of m steps is at
    most that of the upper pair composed m times plus m * tail); ``lower`` is dominated by the pair
    of an extremal dataset. ``eta_upper`` >= P(K >= 1) is the rate of the upper pair's components.
    """

    upper: PrivacyPair
    lower: PrivacyPair
    tail: Fraction
    kmax: int
    eta_upper: Fraction


def _floor(x: Ball) -> Fraction:
    """A dyadic <= every point of x (units 2^-ROUND_BITS; the ball's exact lower end)."""
    return Fraction(math.floor(Enclosure.from_ball(x, PREC).lower * 2**ROUND_BITS), 2**ROUND_BITS)


def _ceil(x: Ball) -> Fraction:
    """A dyadic >= every point of x (units 2^-ROUND_BITS; the ball's exact upper end)."""
    return Fraction(math.ceil(Enclosure.from_ball(x, PREC).upper * 2**ROUND_BITS), 2**ROUND_BITS)


def with_replacement(n: int, b: int, scale: Fraction, noise: str, cut: Fraction = DEFAULT_CUT) -> WithReplacement:
    """Upper and lower pairs of one step of sampling b of n records with replacement, noise
    ``scale`` (Gaussian sigma or Laplace b) relative to the norm bound C (module docstring).

    Contract: for every pair of datasets differing in one record and every eps >= 0, also under
    composition of m steps: delta(eps) <= delta_upper^{(m)}(eps) + m * tail, and
    delta_lower^{(m)}(eps) <= delta(eps) of the extremal dataset (docs/math.md §12.6). The label
    weights pi_k / (pi_1 + ... + pi_kmax) are exact (the ratios pi_k / pi_0 = C(b, k)/(n - 1)^k);
    pi_0 = (1 - 1/n)^b is a ball, and every number formed from it is rounded in the safe
    direction. n >= 1, b >= 1, scale > 0, else InvalidArgument; LimitExceeded when the cut mass
    stays above MAX_TAIL at MAX_LABELS labels. ``cut`` (<= MAX_TAIL): the largest cut mass per step
    wanted; kmax is the least number of labels that reaches it (or MAX_LABELS).
    """
    if noise not in ("gaussian", "laplace"):
        raise InvalidArgument(f"noise={noise!r} must be gaussian or laplace")
    if not 0 < cut <= MAX_TAIL:
        raise invalid("cut", cut, f"must be in (0, {MAX_TAIL}]")
    cut_max = cut
    if n < 1 or b < 1:
        raise invalid("sample_size" if b < 1 else "source_dataset_size", b if b < 1 else n, "must be >= 1")
    top = min(b, MAX_LABELS)
    with workprec(PREC):
        if n == 1:  # the one record is every draw: K = b, a single label
            ratios, pi0 = None, to_ball(0)
        else:
            # pi_k / pi_0 = C(b, k) / (n - 1)^k, exact
            ratios = [Fraction(math.comb(b, k), (n - 1) ** k) for k in range(top + 1)]
            pi0 = (to_ball(b) * (-1 / to_ball(n)).log1p()).exp()
        eta = 1 - pi0
        kmax, cut = top, to_ball(0)
        if ratios is None:  # one label, K = b, whatever b is (no spread over counts)
            kmax, weights = 1, (Fraction(1),)
        else:
            covered = Fraction(0)
            for k in range(1, top + 1):
                covered += ratios[k]
                # P(K > k | K >= 1) = 1 - pi_0 (r_1 + ... + r_k) / (1 - pi_0)
                cut = (1 - pi0 * to_ball(covered) / eta).max(to_ball(0))
                kmax = k
                if _ceil(cut) <= cut_max or k == b:
                    break
            if k == b:
                cut = to_ball(0)  # every label is kept
            if not _ceil(cut) <= MAX_TAIL:
                raise _spread(n, b, float(_ceil(cut)))
            weights = tuple(r / covered for r in ratios[1 : kmax + 1])
        tail = _ceil(cut)
        eta_up = min(Fraction(1), _ceil(eta))
        if noise == "gaussian":
            comps: tuple[PrivacyPair, ...] = tuple(
                SubsampledGaussian(eta_up, scale / (2 * k), "remove") for k in range(1, kmax + 1)
            )
        else:
            comps = tuple(SubsampledLaplace(eta_up, scale / (2 * k), "remove") for k in range(1, kmax + 1))
        if n == 1:  # K = b: the record's b copies are always in the batch
            comps = (
                (SubsampledGaussian(1, scale / (2 * b), "remove"),)
                if noise == "gaussian"
                else (SubsampledLaplace(1, scale / (2 * b), "remove"),)
            )
        upper: PrivacyPair = comps[0] if len(comps) == 1 else LabelledMixture(comps, weights)
        if noise == "gaussian" and n > 1:
            klow = min(b, KLOW)
            assert ratios is not None
            low_w = [_floor(pi0 * to_ball(r)) for r in ratios[1:klow]]
            # K >= klow, lowered to the shift klow: P(K >= klow) = 1 - pi_0 (1 + r_1 + ... + r_{klow-1})
            low_w.append(_floor(1 - pi0 * to_ball(sum(ratios[:klow], Fraction(0)))))
            low_w = [max(w, Fraction(0)) for w in low_w]
            w0 = 1 - sum(low_w)
            shifts = tuple(Fraction(k) for k in range(klow + 1))
            lower: PrivacyPair = GaussianShifts(scale / 2, shifts, (w0, *low_w), "remove")
        elif noise == "gaussian":
            lower = upper  # n = 1: the pair is the mechanism itself
        else:
            lower = (
                SubsampledLaplace(max(_floor(eta), Fraction(1, 2**ROUND_BITS)), scale / 2, "remove") if n > 1 else upper
            )
    return WithReplacement(upper, lower, tail, kmax, eta_up)


def _spread(n: int, b: int, cut: float) -> LimitExceeded:
    return LimitExceeded(
        f"sample_size={b}, source_dataset_size={n}: a record's copies in a batch spread over more than "
        f"{MAX_LABELS} counts (cut mass {cut:.3g} > 2^-40); certdp bounds sampling with replacement up to "
        "about b/n = 10"
    )
