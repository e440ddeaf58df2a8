"""Allocation of a fixed zCDP budget across n releases (arXiv:2610.02414 §4.3, Prop. 4.3;
docs/math.md §5.4).

n releases of the same additive noise with shifts r_i; release i has rho_i = rho(r_i). Along
the path rho_1(w) = (rho_sum/n)(1 + (n-1)w), rho_i(w) = (rho_sum/n)(1 - w) (i >= 2), w in [0, 1],
the composed gap at order t is sum_i Gamma_i(t) = sum_i [rho_i t(t+1) - K_{r_i}(t)] (gaps add
under composition, arXiv:2610.02414 eq. (3.11); docs/math.md §2). w = 0 is the uniform
allocation, w = 1 puts everything in one release. The shift of each release is the certified inverse of its rho:
* Laplace (unit scale): rho(r) = r + e^{-r} - 1, inverted by certified bisection (increasing,
  sqrt(2 rho) <= r <= rho + 1: r + e^{-r} - 1 <= r^2/2 and >= r - 1);
* Gaussian mixture (means +-m): rho(r) = r^2/2 (certdp.pairs.mixture), r = sqrt(2 rho).
"""

from __future__ import annotations

from fractions import Fraction

from certdp.enclose import (
    DEFAULT_TARGET,
    Ball,
    Enclosure,
    Target,
    current_prec,
    lower_float,
    refine,
    root_increasing,
    to_ball,
)
from certdp.errors import InvalidArgument
from certdp.pairs.additive import laplace_cgf_u
from certdp.pairs.mixture import mixture_log_i
from certdp.pairs.params import Number, integer, real

FAMILIES = ("laplace", "gaussian-mixture")


def _laplace_shift(rho: Ball) -> Ball:
    lo = (2 * rho).sqrt().lower() * 999 / 1000
    hi = (rho + 1).upper()
    tol = lower_float(lo) * 2.0 ** -(current_prec() - 6)
    return root_increasing(lambda r: r + (-r).expm1() - rho, lo.lower(), hi, tol=tol, straddle_ok=True)


def _release_gap(family: str, rho: Fraction, t: Ball, m: Ball) -> Ball:
    if rho == 0:
        return to_ball(0)  # P = Q: no release, no gap
    rb = to_ball(rho)
    if family == "laplace":
        return rb * t * (t + 1) - laplace_cgf_u(t, _laplace_shift(rb))
    s = (2 * rb).sqrt()
    return -mixture_log_i(m, s, t)  # rho t(t+1) - K(t) = -log I(t) (certdp.pairs.mixture)


def allocation_gap(
    family: str,
    n: Number,
    rho_sum: Number,
    t: Number,
    omega: Number,
    *,
    m: Number = 1,
    target: Target = DEFAULT_TARGET,
) -> Enclosure:
    """Certified composed gap sum_i Gamma_i(t) along the allocation path of docs/math.md §5.4 at w = ``omega``.

    Contract: contains sum_i [rho_i t(t+1) - K_{r_i}(t)] for rho_i on the path (module
    docstring), with each r_i the certified inverse of rho (an enclosure of the root) and K from
    the pair's certified CGF (Laplace: closed form, proofs_checks ``laplace_cgf``,
    ``laplace_prop43_curvature``; mixture: integral with proved tail, ``mixture_tail``).
    """
    if family not in FAMILIES:
        raise InvalidArgument(f"family={family} must be one of {', '.join(FAMILIES)}")
    nn = integer("n", n, ge=1)
    rs = real("rho_sum", rho_sum, gt=0)
    tt = real("t", t, gt=0)
    w = real("omega", omega, ge=0, le=1)
    mm = real("m", m, ge=0)
    first = rs / nn * (1 + (nn - 1) * w)
    rest = rs / nn * (1 - w)

    def compute() -> Ball:
        tb, mb = to_ball(tt), to_ball(mm)
        total = _release_gap(family, first, tb, mb)
        if nn > 1:
            total += (nn - 1) * _release_gap(family, rest, tb, mb)
        return total

    return refine(compute, target, what="allocation gap")
