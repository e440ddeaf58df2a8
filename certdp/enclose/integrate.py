"""Rigorous integration on a finite interval with Arb (``acb.integral``).

Callers add their own analytic tail bounds for the part of the real line left out. Arb's rule
for the integrand f(z, analytic): with analytic=True it must return a non-finite ball where f
is not holomorphic on the complex ball z (meromorphic integrands are handled automatically:
poles give non-finite balls); with analytic=False it need only enclose f at the real points of
z, which Arb uses for direct bounds (width times value) on small subintervals. That second mode
lets an integrand with a branch point at an end of the interval (|x|^p at 0) be integrated up
to that end: see :func:`abs_pow`.
"""

from __future__ import annotations

from collections.abc import Callable

from flint import acb, arb

from certdp.enclose.context import pinned
from certdp.errors import InvalidArgument, PrecisionExhausted

ComplexFunc = Callable[[acb, bool], acb]


def abs_pow(z: acb, p: arb, analytic: bool, sign: int = 1) -> acb:
    """|x|^p for integrands on a piece of the real line where sign * x >= 0 (p > 0).

    Contract: with ``analytic`` true, exp(p log(sign z)) with Arb's analyticity flag on log: the
    principal branch, equal to |x|^p at real x with sign * x > 0 and non-finite where the ball
    touches the branch cut; with ``analytic`` false, a real ball containing |x|^p for every real
    x in the real part of z (monotonicity of y^p on [0, inf) for p > 0).
    """
    if analytic:
        return (p * (sign * z).log(analytic=True)).exp()
    x = abs(z.real)
    if x > 0:
        return acb(x**p)
    return acb(arb(0).union(arb(x.upper()) ** p))


def integrate_real(f: ComplexFunc, a: arb, b: arb, *, what: str = "integral") -> arb:
    """Enclose the real integral of f over [a, b].

    Contract: if f is real on the real segment and satisfies acb.integral's analyticity rule
    (non-finite output on complex balls where f is not holomorphic), the result contains
    int_a^b f(x) dx. The imaginary part of Arb's enclosure must contain 0 (checked). Raises
    PrecisionExhausted when Arb returns a non-finite enclosure at this precision. The ends must be
    exact numbers (InvalidArgument otherwise): substitute so that inexact ends (pi/2, a rational
    shift) become exact ones, rather than integrate between balls.
    """
    if not (a.is_exact() and b.is_exact()):
        raise InvalidArgument(f"ends=({a}, {b}) must be exact numbers")
    # Pinned: the tolerance and Arb's integration must see one precision even if another thread
    # changes it (FLINT's context is process-wide; see certdp.enclose.context).
    with pinned() as prec:
        tol = arb(2) ** (-prec)
        # use_heap: bisect the subinterval with the largest error first, so that the tolerance is
        # set by the bulk of the integral before far, tiny parts are resolved (left to right, a
        # peaked integrand cost many times more: e.g. subsampled-gaussian at large orders)
        val = acb.integral(f, a, b, rel_tol=tol, abs_tol=tol * tol, use_heap=True)
    re, im = val.real, val.imag
    if not (re.is_finite() and im.is_finite()):
        raise PrecisionExhausted(f"{what}: integration did not converge at prec={prec}")
    if not im.contains(0):
        raise PrecisionExhausted(f"{what}: imaginary part {im} excludes 0 (integrand not real?)")
    return re
