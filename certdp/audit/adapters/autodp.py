"""autodp (Zhu, Wang): the analytical RDP accountant ``rdp_acct.anaRDPacct``.

Quantities: ``rdp`` from get_rdp([alpha]) after compose_poisson_subsampled_mechanisms(RDP_gaussian,
q, coeff=steps) (autodp evaluates integer orders and interpolates between them linearly);
``eps-rdp`` from get_eps(delta), Mironov's basic conversion log(1/delta)/(alpha-1) + RDP(alpha)
minimized over real alpha (so its reference is that conversion's infimum over all real orders).
Recorded calls: ``get_rdp`` and ``get_eps`` with sigma (of RDP_gaussian), prob and coeff (of
compose_poisson_subsampled_mechanisms), and alpha or delta.
"""

from __future__ import annotations

from typing import Any, ClassVar

from certdp.audit.adapters import Adapter, PeerValue, require
from certdp.audit.cases import Case


class AutodpAdapter(Adapter):
    name = "autodp"
    package = "autodp"
    API: ClassVar[dict[str, str]] = {
        "get_rdp": "acct = anaRDPacct(); acct.compose_poisson_subsampled_mechanisms(lambda x: "
        "RDP_gaussian({'sigma': sigma}, x), prob, coeff=coeff); acct.get_rdp([alpha])[0]",
        "get_eps": "acct = anaRDPacct(); acct.compose_poisson_subsampled_mechanisms(lambda x: "
        "RDP_gaussian({'sigma': sigma}, x), prob, coeff=coeff); acct.get_eps(delta)",
    }

    def __init__(self) -> None:
        self.acct_mod: Any = require("autodp.rdp_acct", self.name, self.package)
        self.bank: Any = require("autodp.rdp_bank", self.name, self.package)
        self.functions = {"get_rdp": self.acct_mod.anaRDPacct, "get_eps": self.acct_mod.anaRDPacct}

    def run(self, function: str, args: dict[str, Any]) -> float:
        """Contract: the value of one recorded autodp call (the module docstring lists them)."""
        if function not in ("get_rdp", "get_eps"):
            return super().run(function, args)
        acct = self.acct_mod.anaRDPacct()
        sigma = args["sigma"]
        acct.compose_poisson_subsampled_mechanisms(
            lambda x: self.bank.RDP_gaussian({"sigma": sigma}, x), args["prob"], coeff=args["coeff"]
        )
        if function == "get_rdp":
            return float(acct.get_rdp([args["alpha"]])[0])
        return float(acct.get_eps(args["delta"]))

    def evaluate(self, case: Case) -> list[PeerValue]:
        """Contract: the rows listed in the module docstring for ``case``'s checks."""
        rows: list[PeerValue] = []
        if case.sigma is None:  # a calibration: autodp is not asked
            return rows
        setting = {"sigma": float(case.sigma), "prob": float(case.q), "coeff": case.steps}
        if "rdp" in case.checks:
            for order in case.orders:
                rows.append(self.ask("rdp", "rdp", "get_rdp", {**setting, "alpha": float(order)}, order=order))
        if "eps-rdp" in case.checks:
            args = {**setting, "delta": float(case.delta)}  # type: ignore[arg-type]
            rows.append(self.ask("rdp", "eps-rdp", "get_eps", args, conversion="basic"))
        return rows


ADAPTER = AutodpAdapter
