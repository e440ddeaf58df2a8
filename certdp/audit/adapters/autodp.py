"""autodp (Zhu, Wang): the analytical RDP accountant ``rdp_acct.anaRDPacct``.

Quantities: ``rdp`` from get_rdp([alpha]) after compose_poisson_subsampled_mechanisms(RDP_gaussian,
q, coeff=steps) (autodp evaluates integer orders and interpolates between them linearly);
``eps-rdp`` from get_eps(delta), Mironov's basic conversion log(1/delta)/(alpha-1) + RDP(alpha)
minimized over real alpha (so its reference is that conversion's infimum over all real orders).
"""

from __future__ import annotations

from typing import Any

from certdp.audit.adapters import Adapter, PeerValue, require
from certdp.audit.cases import Case


class AutodpAdapter(Adapter):
    name = "autodp"
    package = "autodp"

    def __init__(self) -> None:
        self.acct_mod: Any = require("autodp.rdp_acct", self.name, self.package)
        self.bank: Any = require("autodp.rdp_bank", self.name, self.package)

    def _acct(self, case: Case) -> Any:
        acct = self.acct_mod.anaRDPacct()
        sigma = float(case.sigma)  # type: ignore[arg-type]
        acct.compose_poisson_subsampled_mechanisms(
            lambda x: self.bank.RDP_gaussian({"sigma": sigma}, x), float(case.q), coeff=case.steps
        )
        return acct

    def evaluate(self, case: Case) -> list[PeerValue]:
        """Contract: the rows listed in the module docstring for ``case``'s checks."""
        rows: list[PeerValue] = []
        if "rdp" in case.checks:
            for order in case.orders:
                rows.append(
                    self.value(
                        "rdp", "rdp", lambda a=float(order): float(self._acct(case).get_rdp([a])[0]), order=order
                    )
                )
        if "eps-rdp" in case.checks:
            rows.append(
                self.value(
                    "rdp", "eps-rdp", lambda: float(self._acct(case).get_eps(float(case.delta))), conversion="basic"
                )  # type: ignore[arg-type]
            )
        return rows


ADAPTER = AutodpAdapter
