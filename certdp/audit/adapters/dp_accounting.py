"""dp_accounting (Google): RDP accountant, PLD accountant (pessimistic and optimistic), and
``calibrate_dp_mechanism`` with the RDP accountant.

Quantities: ``rdp`` from RdpAccountant(orders=[alpha]) after composing the Poisson-sampled Gaussian
event (its stored RDP vector); ``eps-rdp`` from RdpAccountant() (its default orders, CKS
conversion); ``eps-pld`` / ``delta-pld`` from PLDAccountant (pessimistic, the value users get)
and, for eps, the optimistic PLD (privacy_loss_distribution.from_gaussian_mechanism with
pessimistic_estimate=False), a lower estimate by design; ``sigma-rdp`` from
calibrate_dp_mechanism(RdpAccountant, ...). The value-discretization interval is the case's
``pld_vdi``, else dp_accounting's default.
"""

from __future__ import annotations

from typing import Any

from certdp.audit.adapters import Adapter, PeerValue, exact_orders, require
from certdp.audit.cases import Case


class DpAccountingAdapter(Adapter):
    name = "dp_accounting"
    package = "dp-accounting"

    def __init__(self) -> None:
        self.dpa: Any = require("dp_accounting", self.name, self.package)
        self.rdp_mod: Any = require("dp_accounting.rdp.rdp_privacy_accountant", self.name, self.package)
        self.pld_mod: Any = require("dp_accounting.pld.pld_privacy_accountant", self.name, self.package)
        self.pld_dist: Any = require("dp_accounting.pld.privacy_loss_distribution", self.name, self.package)
        self.orders = exact_orders(self.rdp_mod.DEFAULT_RDP_ORDERS)

    def _event(self, q: float, sigma: float, steps: int) -> Any:
        dpa = self.dpa
        return dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(sigma)), steps)

    def _vdi(self, case: Case) -> dict[str, float]:
        return {} if case.pld_vdi is None else {"value_discretization_interval": float(case.pld_vdi)}

    def evaluate(self, case: Case) -> list[PeerValue]:
        """Contract: the rows listed in the module docstring for ``case``'s checks."""
        rows: list[PeerValue] = []
        q, steps = float(case.q), case.steps
        sigma = None if case.sigma is None else float(case.sigma)
        if "rdp" in case.checks:
            assert sigma is not None
            for order in case.orders:

                def rdp_at(a: float = float(order)) -> float:
                    acct = self.rdp_mod.RdpAccountant(orders=[a])
                    acct.compose(self._event(q, sigma, steps))
                    return float(acct._rdp[0])  # the accountant's RDP vector (no public getter per order)

                rows.append(self.value("rdp", "rdp", rdp_at, order=order))
        if "eps-rdp" in case.checks:
            assert sigma is not None and case.delta is not None

            def eps_rdp() -> float:
                acct = self.rdp_mod.RdpAccountant()
                return float(acct.compose(self._event(q, sigma, steps)).get_epsilon(float(case.delta)))

            rows.append(self.value("rdp", "eps-rdp", eps_rdp, orders=self.orders, conversion="cks"))
        if "eps-pld" in case.checks:
            assert sigma is not None and case.delta is not None
            d = float(case.delta)

            def eps_pld() -> float:
                acct = self.pld_mod.PLDAccountant(**self._vdi(case))
                return float(acct.compose(self._event(q, sigma, steps)).get_epsilon(d))

            def eps_optimistic() -> float:
                pld = self.pld_dist.from_gaussian_mechanism(
                    sigma, sampling_prob=q, pessimistic_estimate=False, **self._vdi(case)
                )
                return float(pld.self_compose(steps).get_epsilon_for_delta(d))

            rows.append(self.value("pld", "eps-pld", eps_pld))
            note = "optimistic estimate: a lower estimate by design, not a privacy guarantee"
            rows.append(self.value("pld-optimistic", "eps-pld", eps_optimistic, note=note, estimate=True))
        if "delta-pld" in case.checks:
            assert sigma is not None and case.eps is not None

            def delta_pld() -> float:
                acct = self.pld_mod.PLDAccountant(**self._vdi(case))
                return float(acct.compose(self._event(q, sigma, steps)).get_delta(float(case.eps)))

            rows.append(self.value("pld", "delta-pld", delta_pld))
        if "sigma" in case.checks:
            assert case.eps is not None and case.delta is not None

            def calibrate() -> float:
                return float(
                    self.dpa.calibrate_dp_mechanism(
                        self.rdp_mod.RdpAccountant,
                        lambda s: self._event(q, s, steps),
                        float(case.eps),
                        float(case.delta),
                    )
                )

            rows.append(self.value("calibrate-rdp", "sigma-rdp", calibrate, orders=self.orders, conversion="cks"))
        return rows


ADAPTER = DpAccountingAdapter
