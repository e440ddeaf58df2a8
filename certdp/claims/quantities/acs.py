"""Calibrations of the ACS experiment and of DP-SGD in Su, Yang, Su, Wang (arXiv:2610.02414 §5).

Both compare the noise that the full RDP curve needs with the noise that its zCDP summary needs
for the same (eps, delta), each converted with the Balle et al. / Canonne-Kamath-Steinke bound
F(t) = (K(t) + log c_t - log delta)/t minimised over t > 0 (docs/math.md §3):

* RDP: K is the composition's CGF (certdp.notions.epsilon, real orders);
* zCDP: K(t) = rho_sum t(t+1) (certdp.notions.gdp.zcdp_epsilon); eps grows with rho, so there is
  one rho* with eps_Z(rho*) = eps, shared by every workload.

ACS (§5.1, Appendix D.3): a workload of d = 5 m_i scalar queries, each released with noise b Z
(Z: N(0,1), the mixture N(-1,1)/2 + N(1,1)/2, or unit Laplace; variances v = 1, 2, 2) for a
$1000 change, i.e. standardised shift s = 1000/b. The RDP calibration is the largest s with
eps_R(d-fold composition at shift s) <= eps; the zCDP one solves d rho(s) = rho* with
rho(s) = s^2/2 (Gaussian, mixture) or s + e^{-s} - 1 (Laplace). In units of ($1000)^2 the noise
variance is v/s^2, so Var_RDP/Var_zCDP = s_Z^2/s_R^2 and Delta MSE = v (1/s_Z^2 - 1/s_R^2).
These noises are log-concave and symmetric, so the trade-off curve of shift s,
F(F^{-1}(1-a) - s), falls as s grows: every divergence, hence eps_R, increases with s, and the
calibrated s is the unique root (what the certified bracket encloses).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from scipy import integrate, optimize

from certdp.claims.interval import Interval
from certdp.claims.quantities import Args, quantity
from certdp.claims.quantities.roots import bracket
from certdp.enclose import Target, to_ball, workprec
from certdp.errors import InvalidArgument
from certdp.notions.eps_delta import epsilon
from certdp.notions.gdp import zcdp_epsilon
from certdp.pairs import Gaussian, GaussianMixture, Laplace, compose
from certdp.pairs.base import PrivacyPair

FAMILIES = {"gaussian": 1, "gaussian-mixture": 2, "laplace": 2}  # noise variance v of Z
#: Accuracy of the certified epsilons: the brackets are 1e-10 wide, eps moves ~1e-9 across them.
TIGHT = Target(rel_tol=1e-14, abs_tol=1e-30)


# ---- floats: they only propose the bracket ------------------------------------------------------
def _log_ct(t: float) -> float:
    return t * math.log(t) - (1 + t) * math.log1p(t)


def _k_float(family: str, s: float, t: float) -> float:
    if family == "gaussian":
        return t * (t + 1) * s * s / 2
    if family == "laplace":
        return math.log((t + 1) / (2 * t + 1) * math.exp(t * s) + t / (2 * t + 1) * math.exp(-(t + 1) * s))

    def logp(x: np.ndarray | float) -> np.ndarray | float:
        return -x * x / 2 - 0.5 + np.logaddexp(x, -x) - math.log(2 * math.sqrt(2 * math.pi))

    c = (t + 1) * s
    val, _ = integrate.quad(
        lambda x: math.exp((t + 1) * logp(x - s) - t * logp(x)), c - 40, c + 40, points=[c - 1, c, c + 1], limit=400
    )
    return math.log(val)


def _inf_over_t(f) -> float:  # noqa: ANN001
    return float(optimize.minimize_scalar(f, bounds=(-8, 8), method="bounded", options={"xatol": 1e-11}).fun)


def eps_rdp_float(family: str, d: int, s: float, delta: float) -> float:
    """Float eps_R of d compositions at shift s. Contract: a float estimate, a search aid only (never
    compared with a claim: the certified brackets decide)."""
    return _inf_over_t(
        lambda u: (d * _k_float(family, s, math.exp(u)) + _log_ct(math.exp(u)) - math.log(delta)) / math.exp(u)
    )


def eps_zcdp_float(rho: float, delta: float) -> float:
    """Float eps_Z at rho. Contract: a float estimate, a search aid only (the certified brackets decide)."""
    return _inf_over_t(lambda u: rho * (math.exp(u) + 1) + (_log_ct(math.exp(u)) - math.log(delta)) / math.exp(u))


def _root(f, target: float, lo: float, hi: float) -> float:  # noqa: ANN001
    return float(optimize.brentq(lambda x: f(x) - target, lo, hi, xtol=1e-15, rtol=1e-14))


# ---- certified ------------------------------------------------------------------------------------
def _pair(family: str, s: Fraction) -> PrivacyPair:
    if family == "gaussian":
        return Gaussian(1, shift=s)
    if family == "gaussian-mixture":
        return GaussianMixture(m=1, shift=s)
    if family == "laplace":
        return Laplace(1, shift=s)
    raise InvalidArgument(f"family={family} must be one of {', '.join(FAMILIES)}")


def _verdict(enc_lower: Fraction, enc_upper: Fraction, target: Fraction) -> bool | None:
    return True if enc_upper <= target else False if enc_lower > target else None


@quantity(
    "zcdp_rho_for",
    "certdp.notions.gdp.zcdp_epsilon (certified bracket of the root of eps_Z(rho) = eps)",
    ("eps", "delta"),
)
def _rho_for(a: Args) -> Interval:
    eps, delta = a.frac("eps"), a.frac("delta")
    guess = _root(lambda r: eps_zcdp_float(r, float(delta)), float(eps), 1e-8, 1e4)

    def meets(r: Fraction) -> bool | None:
        e = zcdp_epsilon(r, delta, TIGHT).enclosure
        return _verdict(e.lower, e.upper, eps)

    lo, hi = bracket(meets, guess, increasing_meets=False, what="rho*")
    return Interval(lo, hi, "rho* with eps_Z(rho*) = eps: certified at both ends")


def _rho_dep(ref: object) -> list:  # type: ignore[type-arg]
    from certdp.claims.model import Ref

    assert isinstance(ref, Ref)
    return [Ref.of("zcdp_rho_for", delta=ref.get("delta"), eps=ref.get("eps"))]


def rho_star(a: Args) -> Interval:
    """Contract: the certified rho* of the zCDP calibration at this (eps, delta)."""
    return a.dep(_rho_dep(a.ref)[0])


_ACS = ("family", "d", "eps", "delta")


@quantity("acs_shift_rdp", "certdp.notions.epsilon (real orders) on the d-fold composition", _ACS)
def _shift_rdp(a: Args) -> Interval:
    fam, d, eps, delta = a.text("family"), a.int("d"), a.frac("eps"), a.frac("delta")
    if fam not in FAMILIES:
        raise InvalidArgument(f"family={fam} must be one of {', '.join(FAMILIES)}")
    s0 = math.sqrt(2 * 0.2 / d)
    guess = _root(lambda s: eps_rdp_float(fam, d, s, float(delta)), float(eps), s0 / 20, s0 * 20)

    def meets(s: Fraction) -> bool | None:
        e = epsilon(compose(_pair(fam, s), d), delta, target=TIGHT).enclosure
        return _verdict(e.lower, e.upper, eps)

    lo, hi = bracket(meets, guess, increasing_meets=False, what=f"RDP shift ({fam}, d={d})")
    return Interval(lo, hi, f"largest shift with eps_R <= {eps} (certified at both ends)")


def _zcdp_shift(fam: str, d: int, rho: Interval) -> Interval:
    """Shift with d rho(s) = rho*: s = sqrt(2 rho*/d), or the Laplace inverse (rho(s) increasing)."""
    assert rho.lower is not None and rho.upper is not None
    if fam in ("gaussian", "gaussian-mixture"):
        with workprec(256):
            lo = to_ball(2 * rho.lower / d).sqrt()
            hi = to_ball(2 * rho.upper / d).sqrt()
            return Interval(Interval.of(lo).lower, Interval.of(hi).upper, "s = sqrt(2 rho*/d)")

    def meets_below(target: Fraction):
        def meets(s: Fraction) -> bool | None:
            with workprec(256):
                b = to_ball(s)
                v = Interval.of(b + (-b).exp() - 1)
            return _verdict(v.lower, v.upper, target)  # type: ignore[arg-type]

        return meets

    def guess(target: Fraction) -> float:
        return _root(lambda s: s + math.expm1(-s), float(target), 1e-9, 50)

    t_lo, t_hi = rho.lower / d, rho.upper / d
    lo = bracket(meets_below(t_lo), guess(t_lo), increasing_meets=False, what="Laplace inverse")[0]
    hi = bracket(meets_below(t_hi), guess(t_hi), increasing_meets=False, what="Laplace inverse")[1]
    return Interval(lo, hi, "s + e^{-s} - 1 = rho*/d")


@quantity("acs_shift_zcdp", "certdp.notions.gdp.zcdp_epsilon, then rho(s) inverted", _ACS, deps=_rho_dep)
def _shift_zcdp(a: Args) -> Interval:
    fam = a.text("family")
    if fam not in FAMILIES:
        raise InvalidArgument(f"family={fam} must be one of {', '.join(FAMILIES)}")
    return _zcdp_shift(fam, a.int("d"), rho_star(a))


def _shift_refs(ref: object) -> list:  # type: ignore[type-arg]
    """The two calibrated shifts of ``ref``'s workload (its family, d, eps, delta; not its form)."""
    from certdp.claims.model import Ref

    assert isinstance(ref, Ref)
    cell = tuple((k, v) for k, v in ref.params if k in _ACS)
    return [Ref("acs_shift_rdp", cell), Ref("acs_shift_zcdp", cell)]


def _shifts(a: Args) -> tuple[Interval, Interval]:
    r, z = _shift_refs(a.ref)
    return a.dep(r), a.dep(z)


@quantity(
    "acs_variance_ratio",
    "certdp.notions.epsilon and certdp.notions.gdp.zcdp_epsilon",
    (*_ACS, "form"),
    _ACS,
    deps=_shift_refs,
)
def _ratio(a: Args) -> Interval:
    """Var_RDP/Var_zCDP (form "ratio", the default) or the saving 1 - Var_RDP/Var_zCDP ("saving")."""
    r, z = _shifts(a)
    assert r.lower and r.upper and z.lower and z.upper
    lo, hi = z.lower**2 / r.upper**2, z.upper**2 / r.lower**2
    form = a.text("form", "ratio")
    if form == "saving":
        return Interval(1 - hi, 1 - lo, "1 - s_Z^2/s_R^2")
    if form != "ratio":
        raise InvalidArgument(f"form={form} must be ratio or saving")
    return Interval(lo, hi, "Var_RDP/Var_zCDP = s_Z^2/s_R^2")


@quantity("acs_delta_mse", "certdp.notions.epsilon and certdp.notions.gdp.zcdp_epsilon", _ACS, deps=_shift_refs)
def _dmse(a: Args) -> Interval:
    r, z = _shifts(a)
    assert r.lower and r.upper and z.lower and z.upper
    v = FAMILIES[a.text("family")]
    return Interval(
        v * (1 / z.upper**2 - 1 / r.lower**2), v * (1 / z.lower**2 - 1 / r.upper**2), "v (1/s_Z^2 - 1/s_R^2)"
    )
