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

from certdp.enclose.checkpoint import checkpoint
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


def log1p_ratio(s: acb, z: acb, analytic: bool) -> acb:
    """log(1 + s/z) for integrands on a piece of the real line where z > 0 (s > 0 real).

    Contract: with ``analytic`` true, the principal log with Arb's analyticity flag (non-finite
    where the ball meets the pole z = 0 or the cut z in [-s, 0)); otherwise a real ball containing
    log1p(s/x) for every real x in the real part of z, non-finite unless that part is > 0.
    """
    if analytic:
        return (1 + s / z).log(analytic=True)
    x = z.real
    if not x > 0:
        return acb(arb("nan"))
    return acb((s.real / x).log1p())


class _Checkpointed:
    """f, calling certdp.enclose.checkpoint every 256 evaluations: one integral can run for
    minutes inside Arb, and a budget (--max-seconds) must still stop it. An exception must not
    cross Arb's C callback (python-flint 0.9 then fails with SystemError), so a check that raises
    is remembered, every later evaluation returns a non-finite value (Arb then stops quickly, at
    its interval limit), and :meth:`reraise` raises it after acb.integral returns."""

    def __init__(self, f: ComplexFunc) -> None:
        self.f, self.calls, self.stopped = f, 0, None

    def __call__(self, z: acb, analytic: bool) -> acb:
        if self.stopped is not None:
            return acb(arb("nan"))
        self.calls += 1
        if not self.calls & 255:
            try:
                checkpoint()
            except Exception as exc:
                self.stopped = exc
                return acb(arb("nan"))
        return self.f(z, analytic)

    def reraise(self) -> None:
        if self.stopped is not None:
            raise self.stopped


def integrate_real(
    f: ComplexFunc,
    a: arb,
    b: arb,
    *,
    what: str = "integral",
    tol_bits: int | None = None,
    max_intervals: int | None = None,
    scale: arb | None = None,
) -> arb:
    """Enclose the real integral of f over [a, b].

    Contract: if f is real on the real segment and satisfies acb.integral's analyticity rule
    (non-finite output on complex balls where f is not holomorphic), the result contains
    int_a^b f(x) dx. The imaginary part of Arb's enclosure must contain 0 (checked). Raises
    PrecisionExhausted when Arb returns a non-finite enclosure at this precision. The ends must be
    exact numbers (InvalidArgument otherwise): substitute so that inexact ends (pi/2, a rational
    shift) become exact ones, rather than integrate between balls. The relative tolerance is
    2^-tol_bits (default: the working precision). An integrand exp(E) with |E| ~ 2^g loses g bits
    in every evaluation, so 2^-prec is out of reach there and Arb bisects until its interval limit
    and returns a valid but useless ball: evaluate such integrands g bits above tol_bits.
    ``max_intervals`` is Arb's limit on the subintervals kept (default 2 prec): a narrow peak far
    above the flanks needs many (each flank interval is held to the relative tolerance). With
    ``scale``, a lower estimate of |int f|, the absolute tolerance is 2^-tol_bits scale instead of
    2^-2 tol_bits, so flank intervals far below the peak stop once they are negligible in absolute
    terms. Tolerances only steer Arb: the result is an enclosure whatever they are.
    """
    if not (a.is_exact() and b.is_exact()):
        raise InvalidArgument(f"ends=({a}, {b}) must be exact numbers")
    # Pinned: the tolerance and Arb's integration must see one precision even if another thread
    # changes it (FLINT's context is process-wide; see certdp.enclose.context).
    with pinned() as prec:
        tol = arb(2) ** (-(prec if tol_bits is None else min(tol_bits, prec)))
        # use_heap: bisect the subinterval with the largest error first, so that the tolerance is
        # set by the bulk of the integral before far, tiny parts are resolved (left to right, a
        # peaked integrand cost many times more: e.g. subsampled-gaussian at large orders)
        limits = {} if max_intervals is None else {"depth_limit": max_intervals}
        g = _Checkpointed(f)
        abs_tol = tol * tol if scale is None else tol * scale
        val = acb.integral(g, a, b, rel_tol=tol, abs_tol=abs_tol, use_heap=True, **limits)
    g.reraise()
    re, im = val.real, val.imag
    if not (re.is_finite() and im.is_finite()):
        raise PrecisionExhausted(f"{what}: integration did not converge at prec={prec}")
    if not im.contains(0):
        raise PrecisionExhausted(f"{what}: imaginary part {im} excludes 0 (integrand not real?)")
    return re
