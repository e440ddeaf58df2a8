"""dp_accounting (Google): RDP accountant, PLD accountant (pessimistic and optimistic), and
``calibrate_dp_mechanism`` with the RDP accountant.

Quantities: ``rdp`` from RdpAccountant(orders=[alpha]) after composing the Poisson-sampled Gaussian
event (its stored RDP vector); ``eps-rdp`` from RdpAccountant() (its default orders, CKS
conversion); ``eps-pld`` / ``delta-pld`` from PLDAccountant (pessimistic, the value users get)
and, for eps, the optimistic PLD (privacy_loss_distribution.from_gaussian_mechanism with
pessimistic_estimate=False), a lower estimate by design; ``sigma-rdp`` from
calibrate_dp_mechanism(RdpAccountant, ...). The value-discretization interval is the case's
``pld_vdi``, else dp_accounting's default (read from its signature and passed explicitly).

Every call is recorded (function name below, every argument; certdp.audit.adapters.Adapter.ask):
``rdp_vector`` (q, sigma, steps, alpha), ``rdp_epsilon`` (q, sigma, steps, delta), ``pld_epsilon``
and ``pld_delta`` (q, sigma, steps, delta or eps, value_discretization_interval),
``pld_optimistic_epsilon`` (standard_deviation, sampling_prob, steps, delta,
value_discretization_interval, pessimistic_estimate), ``calibrate_rdp`` (q, steps, target_epsilon,
target_delta).
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

from certdp.audit.adapters import Adapter, PeerValue, exact_orders, require
from certdp.audit.cases import Case


class DpAccountingAdapter(Adapter):
    name = "dp_accounting"
    package = "dp-accounting"
    API: ClassVar[dict[str, str]] = {
        "rdp_vector": "RdpAccountant(orders=[alpha]).compose(EVENT)._rdp[0]",
        "rdp_epsilon": "RdpAccountant().compose(EVENT).get_epsilon(delta)",
        "pld_epsilon": "PLDAccountant(value_discretization_interval=...).compose(EVENT).get_epsilon(delta)",
        "pld_delta": "PLDAccountant(value_discretization_interval=...).compose(EVENT).get_delta(eps)",
        "pld_optimistic_epsilon": "privacy_loss_distribution.from_gaussian_mechanism(standard_deviation, "
        "sampling_prob=..., pessimistic_estimate=False, value_discretization_interval=...)"
        ".self_compose(steps).get_epsilon_for_delta(delta)",
        "calibrate_rdp": "calibrate_dp_mechanism(RdpAccountant, lambda s: EVENT(sigma=s), target_epsilon, "
        "target_delta)",
        "EVENT": "SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)), steps)",
    }
    SETS: ClassVar[dict[str, tuple[str, ...]]] = {"rdp_vector": ("orders",)}

    def __init__(self) -> None:
        self.dpa: Any = require("dp_accounting", self.name, self.package)
        self.rdp_mod: Any = require("dp_accounting.rdp.rdp_privacy_accountant", self.name, self.package)
        self.pld_mod: Any = require("dp_accounting.pld.pld_privacy_accountant", self.name, self.package)
        self.pld_dist: Any = require("dp_accounting.pld.privacy_loss_distribution", self.name, self.package)
        self.orders = exact_orders(self.rdp_mod.DEFAULT_RDP_ORDERS)
        vdi = inspect.signature(self.pld_mod.PLDAccountant).parameters["value_discretization_interval"]
        self.default_vdi = float(vdi.default)
        self.functions = {
            "rdp_vector": self.rdp_mod.RdpAccountant,
            "rdp_epsilon": self.rdp_mod.RdpAccountant,
            "pld_epsilon": self.pld_mod.PLDAccountant,
            "pld_delta": self.pld_mod.PLDAccountant,
            "pld_optimistic_epsilon": self.pld_dist.from_gaussian_mechanism,
            "calibrate_rdp": self.dpa.calibrate_dp_mechanism,
        }

    def _event(self, q: float, sigma: float, steps: int) -> Any:
        dpa = self.dpa
        return dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), steps)

    def run(self, function: str, args: dict[str, Any]) -> float:
        """Contract: the value of one recorded dp_accounting call (the module docstring lists them)."""
        a = args
        if function == "rdp_vector":
            acct = self.rdp_mod.RdpAccountant(orders=[a["alpha"]])
            acct.compose(self._event(a["q"], a["sigma"], a["steps"]))
            return float(acct._rdp[0])  # the accountant's RDP vector (no public getter per order)
        if function == "rdp_epsilon":
            acct = self.rdp_mod.RdpAccountant()
            return float(acct.compose(self._event(a["q"], a["sigma"], a["steps"])).get_epsilon(a["delta"]))
        if function in ("pld_epsilon", "pld_delta"):
            acct = self.pld_mod.PLDAccountant(value_discretization_interval=a["value_discretization_interval"])
            acct.compose(self._event(a["q"], a["sigma"], a["steps"]))
            return float(acct.get_epsilon(a["delta"]) if function == "pld_epsilon" else acct.get_delta(a["eps"]))
        if function == "pld_optimistic_epsilon":
            pld = self.pld_dist.from_gaussian_mechanism(
                a["standard_deviation"],
                sampling_prob=a["sampling_prob"],
                pessimistic_estimate=a["pessimistic_estimate"],
                value_discretization_interval=a["value_discretization_interval"],
            )
            return float(pld.self_compose(a["steps"]).get_epsilon_for_delta(a["delta"]))
        if function == "calibrate_rdp":
            return float(
                self.dpa.calibrate_dp_mechanism(
                    self.rdp_mod.RdpAccountant,
                    lambda s: self._event(a["q"], s, a["steps"]),
                    a["target_epsilon"],
                    a["target_delta"],
                )
            )
        return super().run(function, args)

    def evaluate(self, case: Case) -> list[PeerValue]:
        """Contract: the rows listed in the module docstring for ``case``'s checks."""
        rows: list[PeerValue] = []
        q, steps = float(case.q), case.steps
        sigma = None if case.sigma is None else float(case.sigma)
        vdi = self.default_vdi if case.pld_vdi is None else float(case.pld_vdi)
        setting = {"q": q, "sigma": sigma, "steps": steps}
        if "rdp" in case.checks:
            for order in case.orders:
                rows.append(self.ask("rdp", "rdp", "rdp_vector", {**setting, "alpha": float(order)}, order=order))
        if "eps-rdp" in case.checks:
            args = {**setting, "delta": float(case.delta)}  # type: ignore[arg-type]
            rows.append(self.ask("rdp", "eps-rdp", "rdp_epsilon", args, orders=self.orders, conversion="cks"))
        if "eps-pld" in case.checks:
            d = float(case.delta)  # type: ignore[arg-type]
            rows.append(
                self.ask("pld", "eps-pld", "pld_epsilon", {**setting, "delta": d, "value_discretization_interval": vdi})
            )
            optimistic = {
                "standard_deviation": sigma,
                "sampling_prob": q,
                "steps": steps,
                "delta": d,
                "value_discretization_interval": vdi,
                "pessimistic_estimate": False,
            }
            note = "optimistic estimate: a lower estimate by design, not a privacy guarantee"
            rows.append(
                self.ask("pld-optimistic", "eps-pld", "pld_optimistic_epsilon", optimistic, note=note, estimate=True)
            )
        if "delta-pld" in case.checks:
            args = {**setting, "eps": float(case.eps), "value_discretization_interval": vdi}  # type: ignore[arg-type]
            rows.append(self.ask("pld", "delta-pld", "pld_delta", args))
        if "sigma" in case.checks:
            args = {"q": q, "steps": steps, "target_epsilon": float(case.eps), "target_delta": float(case.delta)}  # type: ignore[arg-type]
            rows.append(
                self.ask("calibrate-rdp", "sigma-rdp", "calibrate_rdp", args, orders=self.orders, conversion="cks")
            )
        return rows


ADAPTER = DpAccountingAdapter
