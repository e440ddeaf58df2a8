"""The optimal zCDP to GDP conversion (arXiv:2611.01218): mu(rho), its sharp bounds, and the
order of conversion and composition."""

from __future__ import annotations

from fractions import Fraction

from certdp.claims.interval import Interval
from certdp.claims.quantities import Args, quantity
from certdp.errors import InvalidArgument
from certdp.notions.zcdp_gdp import check_mu_squared_convex, compare_composition_order, mu_bounds, mu_from_rho


@quantity("mu_from_rho", "certdp.notions.zcdp_gdp.mu_from_rho", ("rho",))
def _mu(a: Args) -> Interval:
    return Interval.of(mu_from_rho(a.frac("rho")), "mu(rho) = 2 Phi^{-1}(1/(1 + e^{-t_rho}))")


@quantity("mu_bound", "certdp.notions.zcdp_gdp.mu_bounds", ("rho", "side"))
def _bound(a: Args) -> Interval:
    low, high = mu_bounds(a.frac("rho"))
    side = a.text("side")
    if side not in ("lower", "upper"):
        raise InvalidArgument(f"side={side} must be lower or upper")
    return Interval.of(low, "sqrt(pi rho)") if side == "lower" else Interval.of(high, "sqrt(8 rho)")


@quantity("mu_composed", "certdp.notions.zcdp_gdp.compare_composition_order", ("rhos", "order"))
def _composed(a: Args) -> Interval:
    res = compare_composition_order(a.list("rhos"))
    if a.text("order") == "before":
        return Interval.of(res.before, "sqrt(sum_i mu(rho_i)^2): convert, then compose")
    return Interval.of(res.after, "mu(sum_i rho_i): compose, then convert")


@quantity(
    "mu2_convexity",
    "certdp.notions.zcdp_gdp.check_mu_squared_convex",
    ("rho_lo", "rho_hi"),
)
def _convexity(a: Args) -> Interval:
    """The sign of min over [rho_lo, rho_hi] of d^2 mu(rho)^2 / d rho^2: (0, inf) when positivity is
    certified on every piece, (-inf, 0) when a piece is certified negative (then not convex)."""
    lo, hi = a.frac("rho_lo"), a.frac("rho_hi")
    try:
        res = check_mu_squared_convex(lo, hi)
    except InvalidArgument as exc:
        if "is not convex" not in str(exc):
            raise
        return Interval(None, Fraction(0), f"second derivative certified negative somewhere: {exc}", upper_open=True)
    return Interval(
        Fraction(0),
        None,
        f"d^2 mu^2/d rho^2 > 0 certified on [{lo}, {hi}] ({res.pieces} pieces in z = mu/2)",
        lower_open=True,
    )
