"""The information gap between RDP and zCDP (Su, Yang, Su, Wang, arXiv:2610.02414): allocation gaps,
tail-parameter coefficients, log-log slopes of the gap, and Example 2.3."""

from __future__ import annotations

import math
from fractions import Fraction

from certdp.claims.interval import Interval
from certdp.claims.quantities import Args, quantity
from certdp.enclose import Enclosure, to_ball, workprec
from certdp.errors import InvalidArgument
from certdp.notions import gap
from certdp.notions.allocation import allocation_gap
from certdp.notions.expansion import ggauss_chi, student_t_quartic_argmax
from certdp.pairs import GaussianMixture, Laplace

#: Most shifts a slope fit may ask for.
MAX_POINTS = 1001
#: Working precision of the slope fit (the Laplace gap at s = 1e-3 is ~3e-13 of terms of size s).
SLOPE_PREC = 256


@quantity(
    "allocation_gap",
    "certdp.notions.allocation.allocation_gap",
    ("family", "n", "rho_sum", "t", "omega", "m"),
    ("family", "n", "rho_sum", "t", "omega"),
)
def _allocation(a: Args) -> Interval:
    enc = allocation_gap(
        a.text("family"), a.int("n"), a.frac("rho_sum"), a.frac("t"), a.frac("omega"), m=a.frac("m", "1")
    )
    return Interval.of(enc, "composed gap along the allocation path")


@quantity("student_t_argmax", "certdp.notions.expansion.student_t_quartic_argmax", ())
def _argmax(a: Args) -> Interval:
    return Interval.of(student_t_quartic_argmax(), "certified root of the derivative of -kappa_4(S_nu)/24")


@quantity("ggauss_chi", "certdp.notions.expansion.ggauss_chi", ("beta",))
def _chi(a: Args) -> Interval:
    return Interval.of(ggauss_chi(a.frac("beta")), "closed form chi_beta")


def _laplace_rho(s: Fraction) -> Enclosure:
    """rho(s) = s + e^{-s} - 1 (Harrison and Manurangsi; the sup over t sits at t -> 0, where
    K(t)/t -> KL = s + e^{-s} - 1, proofs_checks ``laplace_kl``)."""
    with workprec(SLOPE_PREC):
        b = to_ball(s)
        return Enclosure.from_ball(b + (-b).exp() - 1, SLOPE_PREC)


def _gap_at(family: str, s: Fraction, t: Fraction) -> Enclosure:
    if family == "laplace":
        return gap(Laplace(shift=s), t, rho=_laplace_rho(s))
    if family == "gaussian-mixture":
        return gap(GaussianMixture(m=1, shift=s), t)  # rho = s^2/2 is the pair's proved closed form
    raise InvalidArgument(f"family={family} must be laplace or gaussian-mixture")


@quantity(
    "gap_loglog_slope",
    "certdp.notions.gap (Laplace with rho(s) = s + e^{-s} - 1; mixture m = 1 with rho = s^2/2)",
    ("family", "t", "points", "s_min", "s_max", "fit_max"),
)
def _slope(a: Args) -> Interval:
    """Least-squares slope of log Gamma(t) against log s over the shifts s_i = 10^(x_i), x_i evenly
    spaced from log10 s_min to log10 s_max (``points`` of them), using those with s_i <= fit_max.
    The s_i are the binary floats of 10^(x_i) (any fixed shifts define a fit; the slope is then
    certified for exactly those shifts)."""
    fam, t, n = a.text("family"), a.frac("t"), a.int("points")
    if not 2 <= n <= MAX_POINTS:
        raise InvalidArgument(f"points={n} must be in [2, {MAX_POINTS}]")
    lo, hi, cut = math.log10(a.frac("s_min")), math.log10(a.frac("s_max")), float(a.frac("fit_max"))
    shifts = [Fraction(10 ** (lo + (hi - lo) * i / (n - 1))) for i in range(n)]
    used = [s for s in shifts if s <= cut]
    if len(used) < 2:
        raise InvalidArgument("gap_loglog_slope: fewer than two shifts below fit_max")
    with workprec(SLOPE_PREC):
        xs = [to_ball(s).log() for s in used]
        ys = [_gap_at(fam, s, t).ball().log() for s in used]
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        num = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
        den = sum((x - mx) ** 2 for x in xs)
        return Interval.of(num / den, f"least-squares slope over {len(used)} shifts in [{float(used[0]):.3g}, {cut:g}]")


#: Example 2.3 rebuilt from the paper's likelihood-ratio table W(k) = P(k)/Q(k) on the regions
#: k >= 1, k = 0, k <= -1, with Q(k) = c 4^{-k} for k >= 0 (an integer noise f, Q = f, P = f(. - 1)).
_W = {"A": (Fraction(4), Fraction(1, 4), Fraction(1, 2)), "B": (Fraction(4), Fraction(1, 3), Fraction(1, 3))}


def _regions(pair: str) -> list[tuple[Fraction, Fraction]]:
    """(Q-mass, W) of the three regions, exactly: f(k-1) = W(k) f(k) gives f(-1) = W0 c and a
    geometric left tail of ratio W_-; normalisation fixes c (6/11 for both pairs)."""
    w_pos, w0, w_neg = _W[pair]
    right = Fraction(4, 3)  # sum_{k>=0} 4^{-k}, in units of c
    left = w0 / (1 - w_neg)  # sum_{j>=1} W0 W_-^{j-1}
    c = 1 / (right + left)
    return [(c * (right - 1), w_pos), (c, w0), (c * left, w_neg)]


@quantity(
    "example23",
    "exact rational arithmetic on the pairs of arXiv:2610.02414 Example 2.3 (proofs_checks example23)",
    ("pair", "what", "exp_eps"),
    ("pair", "what"),
)
def _example23(a: Args) -> Interval:
    pair, what = a.text("pair"), a.text("what")
    if pair not in _W:
        raise InvalidArgument(f"pair={pair} must be A or B")
    regions = _regions(pair)
    if what == "exp_d2":  # E_Q[W^2] = exp(D_2(P||Q))
        return Interval.point(sum(q * w * w for q, w in regions), "sum over regions of Q W^2")
    x = a.frac("exp_eps")
    if what == "delta_pq":  # sup_A P(A) - e^eps Q(A) = sum Q (W - e^eps)_+
        return Interval.point(sum(q * max(w - x, Fraction(0)) for q, w in regions), "sum of Q (W - e^eps)_+")
    if what == "delta_qp":  # sum P (1/W - e^eps)_+ = sum Q (1 - e^eps W)_+
        return Interval.point(sum(q * max(1 - x * w, Fraction(0)) for q, w in regions), "sum of Q (1 - e^eps W)_+")
    raise InvalidArgument(f"what={what} must be exp_d2, delta_pq or delta_qp")
