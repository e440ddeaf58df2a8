"""riskcal (Kulynych et al.): attack-risk calibration of DP-SGD.

Quantity: ``delta-pld`` at eps = 0 from riskcal.calibration.dpsgd.get_advantage_for_dpsgd: the
maximal membership-inference advantage TPR - FPR, which is the total variation distance, i.e.
delta(0) of the composition (computed by riskcal from a dp_accounting PLD, grid step 1e-4).
Cases with another eps are not asked (riskcal reports advantage, not delta(eps)).
"""

from __future__ import annotations

from typing import Any

from certdp.audit.adapters import Adapter, PeerValue, require
from certdp.audit.cases import Case


class RiskcalAdapter(Adapter):
    name = "riskcal"
    package = "riskcal"

    def __init__(self) -> None:
        self.dpsgd: Any = require("riskcal.calibration.dpsgd", self.name, self.package)

    def evaluate(self, case: Case) -> list[PeerValue]:
        """Contract: one advantage row for a delta-pld check at eps = 0, nothing otherwise."""
        if "delta-pld" not in case.checks or case.eps != 0:
            return []

        def advantage() -> float:
            return float(
                self.dpsgd.get_advantage_for_dpsgd(
                    noise_multiplier=float(case.sigma),  # type: ignore[arg-type]
                    sample_rate=float(case.q),
                    num_steps=case.steps,
                )
            )

        return [self.value("advantage", "delta-pld", advantage, note="advantage = TV = delta(0)")]


ADAPTER = RiskcalAdapter
