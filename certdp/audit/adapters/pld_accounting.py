"""pld-accounting (Feldman and Shenfeld, arXiv:2602.17284): PLD accounting of random allocation and
of Poisson subsampling.

Quantities:

* ``eps-allocation`` (random-allocation cases): ``gaussian_allocation_epsilon_range`` at its
  defaults (adaptive refinement to its own relative accuracy), which returns the pair
  (upper_bound, lower_bound) of epsilon at delta for 1 of ``steps`` steps per epoch and
  ``epochs`` epochs, add and remove neighbours. Both ends are audited: method ``allocation-upper``
  (the guarantee, judged like every upper bound) and ``allocation-lower`` (side "lower": a peer
  lower end above certdp's certified upper end is UNSOUND; certdp.audit.verdict.judge_lower).
  One call gives both rows.
* ``eps-pld`` / ``delta-pld`` (Poisson cases): ``subsample_pld`` (its PLD-dual subsampling) of
  dp_accounting's pessimistic Gaussian PLD at the case's ``pld_vdi`` (else dp_accounting's default
  value-discretization interval, read from its signature and passed explicitly), composed
  ``steps`` times by dp_accounting's ``self_compose``: an upper bound by design (DOMINATES).

Recorded calls (certdp.audit.adapters.Adapter.ask): ``allocation_epsilon_range`` (delta, sigma,
num_steps, num_selected, num_epochs, and ``result``: upper or lower), ``subsampled_epsilon`` and
``subsampled_delta`` (sigma, sampling_probability, steps, value_discretization_interval, and
delta or eps).
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

from certdp.audit.adapters import Adapter, PeerValue, require
from certdp.audit.cases import Case

#: gaussian_allocation_epsilon_range returns (upper_bound, lower_bound): the index of each end.
RESULTS = {"upper": 0, "lower": 1}


class PldAccountingAdapter(Adapter):
    name = "pld_accounting"
    package = "pld-accounting"
    API: ClassVar[dict[str, str]] = {
        "allocation_epsilon_range": "PLD_accounting.gaussian_allocation_epsilon_range(delta=..., sigma=..., "
        "num_steps=..., num_selected=..., num_epochs=...) -> (upper_bound, lower_bound) [0 for upper, 1 for lower]",
        "subsampled_epsilon": "PLD_accounting.subsample_pld(pld=privacy_loss_distribution.from_gaussian_mechanism("
        "sigma, value_discretization_interval=...), sampling_probability=...).self_compose(steps)"
        ".get_epsilon_for_delta(delta)",
        "subsampled_delta": "PLD_accounting.subsample_pld(pld=privacy_loss_distribution.from_gaussian_mechanism("
        "sigma, value_discretization_interval=...), sampling_probability=...).self_compose(steps)"
        ".get_delta_for_epsilon(eps)",
    }

    def __init__(self) -> None:
        self.pa: Any = require("PLD_accounting", self.name, self.package)
        self.pld_dist: Any = require("dp_accounting.pld.privacy_loss_distribution", self.name, self.package)
        vdi = inspect.signature(self.pld_dist.from_gaussian_mechanism).parameters["value_discretization_interval"]
        self.default_vdi = float(vdi.default)
        self.functions = {
            "allocation_epsilon_range": self.pa.gaussian_allocation_epsilon_range,
            "subsampled_epsilon": self.pa.subsample_pld,
            "subsampled_delta": self.pa.subsample_pld,
        }
        self._last: tuple[tuple[tuple[str, object], ...], tuple[float, float]] | None = None

    def run(self, function: str, args: dict[str, Any]) -> float:
        """Contract: the value of one recorded call (the module docstring lists them); the pair of
        one allocation_epsilon_range call is computed once for its two ends."""
        a = args
        if function == "allocation_epsilon_range" and a.get("result") in RESULTS:
            call = {k: v for k, v in a.items() if k != "result"}
            key = tuple(sorted(call.items()))
            if self._last is None or self._last[0] != key:
                pair = self.pa.gaussian_allocation_epsilon_range(**call)
                self._last = (key, (float(pair[0]), float(pair[1])))
            return self._last[1][RESULTS[a["result"]]]
        if function in ("subsampled_epsilon", "subsampled_delta"):
            base = self.pld_dist.from_gaussian_mechanism(
                a["sigma"], value_discretization_interval=a["value_discretization_interval"]
            )
            pld = self.pa.subsample_pld(pld=base, sampling_probability=a["sampling_probability"])
            composed = pld.self_compose(a["steps"])
            if function == "subsampled_epsilon":
                return float(composed.get_epsilon_for_delta(a["delta"]))
            return float(composed.get_delta_for_epsilon(a["eps"]))
        return super().run(function, args)

    def evaluate(self, case: Case) -> list[PeerValue]:
        """Contract: the rows listed in the module docstring for ``case``'s checks."""
        rows: list[PeerValue] = []
        if case.sigma is None:  # a calibration: pld-accounting is not asked
            return rows
        if "eps-allocation" in case.checks:
            assert case.delta is not None
            args: dict[str, object] = {
                "delta": float(case.delta),
                "sigma": float(case.sigma),
                "num_steps": case.steps,
                "num_selected": case.k,
                "num_epochs": case.epochs,
            }
            self._last = None  # a fresh computation for each case (a replay may reuse it)
            rows.append(
                self.ask("allocation-upper", "eps-allocation", "allocation_epsilon_range", {**args, "result": "upper"})
            )
            if not rows[-1].error:
                note = "the lower end of the peer's band: judged as a lower bound; same call"
                lower = {**args, "result": "lower"}
                rows.append(
                    self.ask(
                        "allocation-lower", "eps-allocation", "allocation_epsilon_range", lower, note=note, side="lower"
                    )
                )
        vdi = self.default_vdi if case.pld_vdi is None else float(case.pld_vdi)
        setting = {"sigma": float(case.sigma), "sampling_probability": float(case.q), "steps": case.steps}
        setting["value_discretization_interval"] = vdi
        if "eps-pld" in case.checks:
            rows.append(
                self.ask("subsample-pld", "eps-pld", "subsampled_epsilon", {**setting, "delta": float(case.delta)})
            )  # type: ignore[arg-type]
        if "delta-pld" in case.checks:
            rows.append(self.ask("subsample-pld", "delta-pld", "subsampled_delta", {**setting, "eps": float(case.eps)}))  # type: ignore[arg-type]
        return rows


ADAPTER = PldAccountingAdapter
