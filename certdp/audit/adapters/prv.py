"""prv_accountant (Gopi, Lee, Wutschitz, arXiv:2106.02848): the PRV accountant.

``compute_epsilon`` / ``compute_delta`` return (lower, estimate, upper); the upper value is the one
the accountant guarantees (``eps-pld`` / ``delta-pld`` method ``prv``), the estimate is audited
too (method ``prv-estimate``; an estimate, not a guarantee). Settings: eps_error = 0.01 and
delta_error = delta/1000 (eps queries) or 1e-10 (delta queries), as Opacus sets them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from certdp.audit.adapters import Adapter, PeerValue, call_peer, require
from certdp.audit.cases import Case

EPS_ERROR = 0.01


class PrvAdapter(Adapter):
    name = "prv"
    package = "prv-accountant"

    def __init__(self) -> None:
        self.prv: Any = require("prv_accountant", self.name, self.package)

    def _accountant(self, case: Case, delta_error: float) -> Any:
        mech = self.prv.PoissonSubsampledGaussianMechanism(
            sampling_probability=float(case.q), noise_multiplier=float(case.sigma)
        )
        return self.prv.PRVAccountant(
            prvs=[mech], max_self_compositions=[case.steps], eps_error=EPS_ERROR, delta_error=delta_error
        )

    def evaluate(self, case: Case) -> list[PeerValue]:
        """Contract: upper and estimate rows of eps (eps-pld) and delta (delta-pld) for ``case``."""
        rows: list[PeerValue] = []
        for kind, needed in (("eps-pld", case.delta), ("delta-pld", case.eps)):
            if kind not in case.checks:
                continue
            assert case.sigma is not None and needed is not None
            if kind == "eps-pld":
                d = float(needed)

                def triple(d: float = d) -> tuple[float, float, float]:
                    return self._accountant(case, d / 1000).compute_epsilon(d, [case.steps])  # type: ignore[no-any-return]
            else:
                e = float(needed)

                def triple(e: float = e) -> tuple[float, float, float]:
                    return self._accountant(case, 1e-10).compute_delta(e, [case.steps])  # type: ignore[no-any-return]

            box: dict[str, tuple[float, float, float]] = {}

            def upper(triple=triple, box=box) -> float:  # noqa: ANN001 - closures over the loop
                box["t"] = triple()
                return float(box["t"][2])

            value, seconds, error, note = call_peer(upper)
            rows.append(PeerValue(self.name, "prv", kind, value, seconds, error=error, note=note))
            if "t" in box:
                rows.append(
                    replace(
                        rows[-1],
                        method="prv-estimate",
                        value=float(box["t"][1]),
                        note="the accountant's point estimate (not its guarantee); same call",
                        estimate=True,
                    )
                )
        return rows


ADAPTER = PrvAdapter
