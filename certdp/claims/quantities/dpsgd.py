"""DP-SGD calibrations (Poisson-subsampled Gaussian, clipping norm 1) under RDP and under zCDP
(Su, Yang, Su, Wang, arXiv:2610.02414 §5.2): the smallest noise multiplier certifying (eps, delta).

RDP: certdp.calibrate.calibrate_epsilon (the Balle et al. / CKS conversion on certdp's default
integer orders; a sigma on the 1e-6 lattice certified to meet the target and one step below
certified to miss it). zCDP: the subsampled Gaussian's optimal rho is 1/(2 sigma^2) for every
q > 0 (arXiv:2610.02414 Prop. 4.2; proofs_checks ``subsampled_rho_limit``), so n steps give
rho_sum = n/(2 sigma^2) and the calibration is sigma = sqrt(n/(2 rho*)) with rho* the root of
eps_Z(rho*) = eps (:mod:`certdp.claims.quantities.acs`).
"""

from __future__ import annotations

from certdp.calibrate import calibrate_epsilon
from certdp.claims.interval import Interval
from certdp.claims.quantities import Args, quantity
from certdp.claims.quantities.acs import _rho_dep, rho_star
from certdp.enclose import to_ball, workprec


@quantity(
    "dpsgd_sigma_rdp",
    "certdp.calibrate.calibrate_epsilon (integer orders, step 1e-6)",
    ("q", "steps", "eps", "delta"),
)
def _sigma_rdp(a: Args) -> Interval:
    r = calibrate_epsilon(a.frac("q"), a.int("steps"), a.frac("eps"), a.frac("delta"))
    if r.eps_at_miss is None:
        return Interval(None, r.sigma, "calibrate_epsilon: no certified miss below")
    return Interval(r.sigma_miss, r.sigma, "calibrate_epsilon: meets at sigma, misses one step below", lower_open=True)


@quantity(
    "dpsgd_sigma_zcdp",
    "certdp.notions.gdp.zcdp_epsilon (rho* root), sigma = sqrt(n/(2 rho*))",
    ("steps", "eps", "delta"),
    deps=_rho_dep,
)
def _sigma_zcdp(a: Args) -> Interval:
    rho = rho_star(a)
    assert rho.lower is not None and rho.upper is not None
    n = a.int("steps")
    with workprec(256):
        lo = Interval.of(to_ball(n / (2 * rho.upper)).sqrt()).lower
        hi = Interval.of(to_ball(n / (2 * rho.lower)).sqrt()).upper
    return Interval(lo, hi, "sigma = sqrt(n/(2 rho*))")
