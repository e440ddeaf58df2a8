"""Accountant outputs of other papers and libraries, recomputed: RDP of the Poisson-subsampled
Gaussian, epsilon by an RDP conversion on a named order grid, the exact epsilon (PLD lattice
bounds), GDP's central-limit mu, and the Gaussian mechanism's exact privacy profile."""

from __future__ import annotations

import math
from fractions import Fraction

from scipy import optimize

from certdp.audit.reference import CLAIM_REL_WIDTH, REF_TARGET, eps_pld_reference, rdp_reference
from certdp.claims.interval import Interval
from certdp.claims.quantities import Args, quantity
from certdp.claims.quantities.roots import bracket
from certdp.enclose import Enclosure, to_ball, workprec
from certdp.errors import InvalidArgument
from certdp.notions import rdp
from certdp.notions.eps_delta import epsilon
from certdp.notions.gdp import gdp_delta, gdp_epsilon
from certdp.pairs import Gaussian, SubsampledGaussian, compose
from certdp.pairs.params import exact_str


def _tenths() -> list[Fraction]:
    return [1 + Fraction(x, 10) for x in range(1, 100)]


#: Order grids of the accountants whose outputs papers and tutorials print.
GRIDS = {
    # TF Privacy's compute_dp_sgd_privacy (2019-2020)
    "tf-privacy": [Fraction(x) for x in ("1.25", "1.5", "1.75", "2", "2.25", "2.5", "3", "3.5", "4", "4.5")]
    + [Fraction(k) for k in range(5, 64)]
    + [Fraction(k) for k in (128, 256, 512)],
    # the TF Privacy MNIST tutorial's compute_epsilon and Opacus's default alphas
    "tf-tutorial": _tenths() + [Fraction(k) for k in range(12, 64)],
    # dp_accounting's RdpAccountant default orders
    "dp-accounting": _tenths() + [Fraction(k) for k in range(11, 64)] + [Fraction(k) for k in (128, 256, 512, 1024)],
    # the moments accountant's integer orders 2..32 (lambda <= 31 moments), as TF Privacy's test of it
    "moments-2-32": [Fraction(k) for k in range(2, 33)],
}


def _pair(a: Args):
    base = SubsampledGaussian(a.frac("q"), a.frac("sigma"), a.text("direction", "both"))
    n = a.int("steps")
    return base if n == 1 else compose(base, n)


@quantity(
    "subsampled_rdp",
    "certdp.notions.rdp (max of the remove and add directions)",
    ("q", "sigma", "steps", "order"),
)
def _rdp(a: Args) -> Interval:
    ref = rdp_reference(a.frac("q"), a.frac("sigma"), a.int("steps"), a.frac("order"))
    if ref.lower is None:
        raise InvalidArgument(ref.reason)
    return Interval(ref.lower, ref.upper, ref.quantity)


@quantity(
    "eps_rdp_grid",
    "certdp.notions.rdp at each order of the grid (classic: D + log(1/delta)/(alpha-1)); "
    "certdp.notions.epsilon on the grid (cks)",
    ("q", "sigma", "steps", "delta", "grid", "conversion", "direction"),
    ("q", "sigma", "steps", "delta", "grid", "conversion"),
)
def _eps_grid(a: Args) -> Interval:
    name, conv, delta = a.text("grid"), a.text("conversion"), a.frac("delta")
    if name not in GRIDS:
        raise InvalidArgument(f"grid={name} must be one of {', '.join(GRIDS)}")
    pair, orders = _pair(a), GRIDS[name]
    if conv == "cks":
        enc = epsilon(pair, delta, orders=orders, target=REF_TARGET).enclosure
        return Interval(enc.lower, enc.upper, f"CKS conversion, min over the {name} grid")
    if conv != "classic":
        raise InvalidArgument(f"conversion={conv} must be classic or cks")
    with workprec(192):
        vals = [rdp(pair, o, REF_TARGET).ball() + (-to_ball(delta).log()) / (to_ball(o) - 1) for o in orders]
        encs = [Enclosure.from_ball(v) for v in vals]
    return Interval(
        min(e.lower for e in encs), min(e.upper for e in encs), f"classic conversion, min over the {name} grid"
    )


@quantity(
    "eps_exact_subsampled",
    "certdp.notions.pld.pld_bounds (both ends proved)",
    ("q", "sigma", "steps", "delta", "rel_width"),
    ("q", "sigma", "steps", "delta"),
)
def _eps_pld(a: Args) -> Interval:
    """The exact eps(delta), refined (lattice spacing / 4, at most twice) to ``rel_width`` (default 1e-4)."""
    width = a.frac("rel_width", str(CLAIM_REL_WIDTH))
    ref = eps_pld_reference(a.frac("q"), a.frac("sigma"), a.int("steps"), a.frac("delta"), width)
    return Interval(ref.lower, ref.upper, ref.quantity + (f" ({ref.reason})" if ref.reason else ""))


# monotone: mu grows with q and T and falls with sigma (e^{1/sigma^2} falls), each with the others fixed
@quantity(
    "gdp_clt_mu",
    "Arb: mu = q sqrt(T (e^{1/sigma^2} - 1)) (Bu, Dong, Long, Su)",
    ("q", "sigma", "steps"),
    monotone=("q", "sigma", "steps"),
)
def _clt(a: Args) -> Interval:
    q, s, t = a.frac("q"), a.frac("sigma"), a.frac("steps")
    with workprec(192):
        return Interval.of(to_ball(q) * (to_ball(t) * (1 / to_ball(s) ** 2).expm1()).sqrt(), "GDP central limit mu")


def _mu_ends(a: Args) -> tuple[Fraction, Fraction]:
    if a.has("mu_squared") == a.has("mu"):
        raise InvalidArgument("gdp_eps needs exactly one of mu and mu_squared")
    if a.has("mu_squared"):
        with workprec(192):
            x = Interval.of(to_ball(a.frac("mu_squared")).sqrt())
        assert x.lower is not None and x.upper is not None
        return x.lower, x.upper
    return a.ends("mu")


# monotone: eps(delta) of mu-GDP increases with mu (docs/math.md, GDP section) and falls with delta
@quantity(
    "gdp_eps",
    "certdp.notions.gdp.gdp_epsilon (increasing in mu)",
    ("mu", "mu_squared", "delta"),
    ("delta",),
    monotone=("mu", "mu_squared", "delta"),
)
def _gdp_eps(a: Args) -> Interval:
    lo, hi = _mu_ends(a)
    d = a.frac("delta")
    return Interval(gdp_epsilon(lo, d).lower, gdp_epsilon(hi, d).upper, "exact eps(delta) of mu-GDP")


def _sigma_ends(a: Args) -> tuple[Fraction, Fraction]:
    lo, hi = a.ends("sigma")
    s = 10**15
    return Fraction(math.floor(lo * s), s), Fraction(math.ceil(hi * s), s)


@quantity(
    "gaussian_delta",
    "certdp.notions.gdp.gdp_delta at mu = 1/sigma (sensitivity 1; decreasing in sigma)",
    ("sigma", "eps"),
)
def _gauss_delta(a: Args) -> Interval:
    lo, hi = _sigma_ends(a)
    e = a.frac("eps")
    return Interval(gdp_delta(1 / hi, e).lower, gdp_delta(1 / lo, e).upper, "exact delta(eps) of the Gaussian")


def _log_delta_float(sigma: float, eps: float) -> float:
    """log delta(eps) of the Gaussian in floats, without underflow (a search aid only)."""
    from scipy.special import log_ndtr

    mu = 1 / sigma
    a, b = float(log_ndtr(-eps / mu + mu / 2)), float(log_ndtr(-eps / mu - mu / 2))
    return a + math.log1p(-math.exp(min(eps + b - a, 0.0)))


@quantity(
    "gaussian_sigma_exact",
    "certdp.notions.gdp.gdp_delta (certified bracket of the analytic Gaussian calibration)",
    ("eps", "delta"),
)
def _gauss_sigma(a: Args) -> Interval:
    e, d = a.frac("eps"), a.frac("delta")
    target = math.log(float(d))
    guess = float(optimize.brentq(lambda s: _log_delta_float(s, float(e)) - target, 1e-3, 1e4, xtol=1e-14))

    def meets(s: Fraction) -> bool | None:
        enc = gdp_delta(1 / s, e)
        return True if enc.upper <= d else False if enc.lower > d else None

    lo, hi = bracket(meets, guess, increasing_meets=True, what="analytic Gaussian sigma")
    return Interval(lo, hi, f"smallest sigma with delta({exact_str(e)}) <= {exact_str(d)}")


@quantity("classical_gaussian_sigma", "Arb: sqrt(2 ln(1.25/delta))/eps (Dwork and Roth, Thm 3.22)", ("eps", "delta"))
def _classical(a: Args) -> Interval:
    with workprec(192):
        x = (2 * (to_ball(Fraction(5, 4)) / to_ball(a.frac("delta"))).log()).sqrt() / to_ball(a.frac("eps"))
        return Interval.of(x, "sqrt(2 ln(1.25/delta))/eps")


@quantity("gaussian_eps_rdp", "certdp.notions.epsilon (real orders, CKS conversion)", ("sigma", "delta"))
def _gauss_eps_rdp(a: Args) -> Interval:
    enc = epsilon(Gaussian(a.frac("sigma")), a.frac("delta"), target=REF_TARGET).enclosure
    return Interval(enc.lower, enc.upper, "inf over real orders of the CKS conversion")
