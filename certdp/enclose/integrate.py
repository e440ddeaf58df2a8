"""Rigorous integration on a finite interval with Arb (``acb.integral``).

Callers add their own analytic tail bounds for the part of the real line left out; the
integrand must return a non-finite ball where it is not holomorphic on the complex ball it is
given (meromorphic integrands are handled automatically: poles give non-finite balls).
"""

from __future__ import annotations

from collections.abc import Callable

from flint import acb, arb, ctx

from certdp.errors import PrecisionExhausted

ComplexFunc = Callable[[acb, bool], acb]


def integrate_real(f: ComplexFunc, a: arb, b: arb, *, what: str = "integral") -> arb:
    """Enclose the real integral of f over [a, b].

    Contract: if f is real on the real segment and satisfies acb.integral's analyticity rule
    (non-finite output on complex balls where f is not holomorphic), the result contains
    int_a^b f(x) dx. The imaginary part of Arb's enclosure must contain 0 (checked). Raises
    PrecisionExhausted when Arb returns a non-finite enclosure at this precision.
    """
    tol = arb(2) ** (-ctx.prec)
    val = acb.integral(f, a, b, rel_tol=tol, abs_tol=tol * tol)
    re, im = val.real, val.imag
    if not (re.is_finite() and im.is_finite()):
        raise PrecisionExhausted(f"{what}: integration did not converge at prec={ctx.prec}")
    if not im.contains(0):
        raise PrecisionExhausted(f"{what}: imaginary part {im} excludes 0 (integrand not real?)")
    return re
