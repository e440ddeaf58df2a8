"""Privacy notions evaluated on pairs: RDP, zCDP rho, the gap, (eps, delta).

``epsilon`` and ``delta`` choose the accountant by one rule (certdp.notions.accountant) and return
[lower, upper] of the true quantity; ``conversion_epsilon``/``conversion_delta`` are the RDP/zCDP
conversion bounds themselves (their ball encloses the bound's value, an upper bound).
"""

from certdp.notions.accountant import EpsDeltaResult, Route, default_route, delta, epsilon
from certdp.notions.eps_delta import CONVERSION_TARGET, ConversionResult, classic_zcdp_epsilon
from certdp.notions.eps_delta import delta as conversion_delta
from certdp.notions.eps_delta import epsilon as conversion_epsilon
from certdp.notions.gap import gap
from certdp.notions.orders import DEFAULT_GRID_NAME, DEFAULT_INTEGER_ORDERS
from certdp.notions.renyi import cgf, kl, rdp
from certdp.notions.zcdp import RhoResult, rho, rho_detail

__all__ = [
    "CONVERSION_TARGET",
    "DEFAULT_GRID_NAME",
    "DEFAULT_INTEGER_ORDERS",
    "ConversionResult",
    "EpsDeltaResult",
    "RhoResult",
    "Route",
    "cgf",
    "classic_zcdp_epsilon",
    "conversion_delta",
    "conversion_epsilon",
    "default_route",
    "delta",
    "epsilon",
    "gap",
    "kl",
    "rdp",
    "rho",
    "rho_detail",
]
