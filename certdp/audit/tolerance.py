"""Roundoff tolerances: how far below the certified lower end a peer's float may lie through the
float arithmetic of the peer's own method, before it is a finding (docs/audit.md, "Roundoff or
UNSOUND").

A value below the certified lower end of its quantity is below the truth. Whether that is a
violation or float noise depends on how the peer computes it:

* ``rdp`` (every peer): one step's RDP is log(A)/(alpha - 1), where A = E[(p/q)^alpha] is a sum of
  terms of order 1 (or a float series of them: Opacus's fractional orders sum a few hundred terms
  until they drop below e^-30). With an error of at most C ulps of those terms (C = 2^12), log A
  is off by C * 2^-52 (1 + log A) in absolute terms: log has condition number 1/log A near 1. The
  composition multiplies by ``steps``. So a value is roundoff when it is within
  2^-40 (steps/(alpha - 1) + |value|) of the lower end.
* ``eps-rdp`` (RDP accountants): epsilon = min over the orders of RDP_alpha + (conversion terms),
  so its float error is at most the largest error of an RDP value among the orders (the smallest
  order alpha_min gives the largest steps/(alpha - 1)) plus the conversion's own rounding:
  2^-40 (steps/(alpha_min - 1) + |value|). For a conversion over all real orders (autodp's basic
  conversion), alpha_min - 1 is taken as 1/10, Opacus's smallest order.
* ``eps-pld`` / ``delta-pld`` (PLD, PRV, GDP accountants, riskcal): the peer composes ``steps``
  distributions by FFT; each composition adds a relative error of order 2^-52 to what it returns,
  so a value is roundoff when it is within steps * 2^-52 |value| of the lower end. The FFT noise
  in the probability masses is NOT part of this tolerance: a pessimistic accountant promises an
  upper bound, and masses lost to noise at the scale of delta (about steps * 2^-52 of the total
  mass: 2.2e-12 at 10^4 steps, more than delta = 1e-12) are a broken promise, not roundoff in the
  printed number.
* ``eps-allocation`` (random allocation: pld-accounting, random-allocation): the peer composes
  one epoch's loss distribution ``epochs`` times and builds that epoch from ``steps`` convolutions,
  so the same rule as eps-pld with n = steps x epochs compositions (run.row_tolerance passes it);
  for a peer's lower end (side "lower") the bound is how far ABOVE the certified upper end it may lie.
* ``sigma-rdp`` / ``sigma-pld`` (calibrations): no allowance beyond the verdict's float slack. A
  calibration returns the end of its bracket that its own accountant accepted; a sigma below a
  sigma that certdp proves to miss the target is a finding.

Every bound is an exact rational, so the verdict stays an exact comparison.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

#: One ulp of 1 (the float64 machine epsilon).
ULP = Fraction(1, 2**52)
#: Ulps of the order-1 terms a peer may lose in one step's RDP (a few ulps per term times the few
#: hundred terms of a float series). The largest seen in the committed audit is about 630.
SERIES_ULPS = 2**12
#: alpha_min - 1 assumed for an RDP conversion over all real orders (autodp): Opacus's smallest order.
REAL_ORDERS_GAP = Fraction(1, 10)

RULES = {
    "rdp": "2^-40 (steps/(alpha-1) + |value|): 2^12 ulps of the order-1 terms of one step, times the "
    "condition of log near 1, times the steps",
    "eps-rdp": "2^-40 (steps/(alpha_min-1) + |value|): the largest RDP roundoff among the peer's orders plus "
    "the conversion's rounding",
    "eps-pld": "steps x 2^-52 x |value|: one ulp per FFT composition of the returned value",
    "delta-pld": "steps x 2^-52 x |value|: one ulp per FFT composition of the returned value",
    "eps-allocation": "steps x epochs x 2^-52 x |value|: one ulp per convolution of the returned value",
    "sigma-rdp": "none beyond the float slack: a calibration returns a sigma its own accountant accepted",
    "sigma-pld": "none beyond the float slack: a calibration returns a sigma its own accountant accepted",
}


@dataclass(frozen=True)
class Tolerance:
    """How far below the certified lower end a value may lie and still be roundoff (``bound``,
    absolute, exact), and the rule that gave it (docs/audit.md)."""

    bound: Fraction
    rule: str

    def to_dict(self) -> dict[str, str]:
        """Contract: the bound as a float string (a display value) and the rule in words."""
        return {"roundoff_tolerance": repr(float(self.bound)), "tolerance_rule": self.rule}


NONE = Tolerance(Fraction(0), "none")


def tolerance(
    kind: str,
    value: Fraction,
    steps: int,
    order: Fraction | None = None,
    orders: tuple[Fraction, ...] = (),
) -> Tolerance:
    """The roundoff tolerance of a peer value of quantity ``kind`` (the module docstring gives
    each rule and its reasoning).

    Contract: an exact bound >= 0; 0 for an unknown kind or for sigma calibrations; for rdp,
    2^-40 (steps/(order-1) + |value|); for eps-rdp, the same with the smallest of ``orders`` (1.1
    when ``orders`` is empty: a conversion over all real orders); for eps-pld and delta-pld,
    steps 2^-52 |value| (eps-allocation: ``steps`` is steps x epochs)."""
    v = abs(value)
    n = max(1, steps)
    if kind == "rdp" and order is not None and order > 1:
        return Tolerance(SERIES_ULPS * ULP * (n / (order - 1) + v), RULES["rdp"])
    if kind == "eps-rdp":
        gap = min(orders) - 1 if orders else REAL_ORDERS_GAP
        if gap > 0:
            return Tolerance(SERIES_ULPS * ULP * (n / gap + v), RULES["eps-rdp"])
    if kind in ("eps-pld", "delta-pld", "eps-allocation"):
        return Tolerance(n * ULP * v, RULES[kind])
    if kind in RULES:
        return Tolerance(Fraction(0), RULES[kind])
    return NONE
