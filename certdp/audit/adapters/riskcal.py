"""riskcal (Kulynych et al.): attack-risk calibration of DP-SGD.

Quantity: ``delta-pld`` at eps = 0 from riskcal.calibration.dpsgd.get_advantage_for_dpsgd: the
maximal membership-inference advantage TPR - FPR, which is the total variation distance, i.e.
delta(0) of the composition (computed by riskcal from a dp_accounting PLD, grid step 1e-4).
Cases with another eps are not asked (riskcal reports advantage, not delta(eps)). Recorded call:
``get_advantage_for_dpsgd`` (noise_multiplier, sample_rate, num_steps; grid_step its default).
"""

from __future__ import annotations

from typing import Any, ClassVar

from certdp.audit.adapters import Adapter, PeerValue, require
from certdp.audit.cases import Case


class RiskcalAdapter(Adapter):
    name = "riskcal"
    package = "riskcal"
    API: ClassVar[dict[str, str]] = {
        "get_advantage_for_dpsgd": "riskcal.calibration.dpsgd.get_advantage_for_dpsgd(noise_multiplier=..., "
        "sample_rate=..., num_steps=...)",
    }

    def __init__(self) -> None:
        self.dpsgd: Any = require("riskcal.calibration.dpsgd", self.name, self.package)
        self.functions = {"get_advantage_for_dpsgd": self.dpsgd.get_advantage_for_dpsgd}

    def run(self, function: str, args: dict[str, Any]) -> float:
        """Contract: the value of one recorded get_advantage_for_dpsgd call."""
        if function != "get_advantage_for_dpsgd":
            return super().run(function, args)
        return float(self.dpsgd.get_advantage_for_dpsgd(**args))

    def evaluate(self, case: Case) -> list[PeerValue]:
        """Contract: one advantage row for a delta-pld check at eps = 0, nothing otherwise."""
        if "delta-pld" not in case.checks or case.eps != 0:
            return []
        args = {"noise_multiplier": float(case.sigma), "sample_rate": float(case.q), "num_steps": case.steps}  # type: ignore[arg-type]
        return [self.ask("advantage", "delta-pld", "get_advantage_for_dpsgd", args, note="advantage = TV = delta(0)")]


ADAPTER = RiskcalAdapter
