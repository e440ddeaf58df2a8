"""Privacy notions evaluated on pairs: RDP, zCDP rho, the gap, (eps, delta) conversions."""

from certdp.notions.eps_delta import CONVERSION_TARGET, ConversionResult, classic_zcdp_epsilon, delta, epsilon
from certdp.notions.gap import gap
from certdp.notions.orders import DEFAULT_GRID_NAME, DEFAULT_INTEGER_ORDERS
from certdp.notions.renyi import cgf, kl, rdp
from certdp.notions.zcdp import RhoResult, rho, rho_detail

__all__ = [
    "CONVERSION_TARGET",
    "DEFAULT_GRID_NAME",
    "DEFAULT_INTEGER_ORDERS",
    "ConversionResult",
    "RhoResult",
    "cgf",
    "classic_zcdp_epsilon",
    "delta",
    "epsilon",
    "gap",
    "kl",
    "rdp",
    "rho",
    "rho_detail",
]
