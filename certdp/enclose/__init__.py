"""Enclosure core: the only package of certdp that imports python-flint.

Everything certified in certdp is computed here or from balls made here. Submodules:
``ball`` (Enclosure, conversions), ``context`` (precision scope), ``refine`` (raise precision
until a width is met), ``compare`` (three-valued comparisons), ``special`` (special functions),
``optimize`` (certified sup/inf and roots), ``integrate`` (rigorous quadrature).
"""

from flint import __FLINT_VERSION__ as FLINT_VERSION
from flint import __version__ as PYTHON_FLINT_VERSION

from certdp.enclose.ball import (
    Ball,
    Enclosure,
    decimal_outward,
    lower_float,
    to_ball,
    upper_float,
    width_of,
)
from certdp.enclose.compare import Verdict, certainly_le, certainly_lt, le, lt
from certdp.enclose.context import current_prec, workprec
from certdp.enclose.integrate import abs_pow, integrate_real, log1p_ratio
from certdp.enclose.lattice import (
    coarsen_group,
    coarsen_group_down,
    coarsen_spread,
    coarsened_powering,
    power_multires,
    power_pruned,
    power_truncated,
    power_two_scale,
    product_pruned,
)
from certdp.enclose.optimize import (
    PositivityResult,
    SearchResult,
    certify_positive,
    inf_convex,
    inf_interval,
    root_increasing,
    sup_cgf_ratio,
    sup_interval,
)
from certdp.enclose.refine import DEFAULT_TARGET, Target, refine
from certdp.enclose.special import (
    binomial,
    interval,
    logsumexp,
    mills_ratio,
    nonneg_error,
    phi,
    phi_inv,
    phi_inv_upper,
    phi_upper_tail,
    pi,
    taylor_coefficients,
    theta,
)

__all__ = [
    "DEFAULT_TARGET",
    "FLINT_VERSION",
    "PYTHON_FLINT_VERSION",
    "Ball",
    "Enclosure",
    "PositivityResult",
    "SearchResult",
    "Target",
    "Verdict",
    "abs_pow",
    "binomial",
    "certainly_le",
    "certainly_lt",
    "certify_positive",
    "coarsen_group",
    "coarsen_group_down",
    "coarsen_spread",
    "coarsened_powering",
    "current_prec",
    "decimal_outward",
    "inf_convex",
    "inf_interval",
    "integrate_real",
    "interval",
    "le",
    "log1p_ratio",
    "logsumexp",
    "lower_float",
    "lt",
    "mills_ratio",
    "nonneg_error",
    "phi",
    "phi_inv",
    "phi_inv_upper",
    "phi_upper_tail",
    "pi",
    "power_multires",
    "power_pruned",
    "power_truncated",
    "power_two_scale",
    "product_pruned",
    "refine",
    "root_increasing",
    "sup_cgf_ratio",
    "sup_interval",
    "taylor_coefficients",
    "theta",
    "to_ball",
    "upper_float",
    "width_of",
    "workprec",
]
