"""prv_accountant (Gopi, Lee, Wutschitz, arXiv:2106.02848): the PRV accountant.

``compute_epsilon`` / ``compute_delta`` return (lower, estimate, upper); the upper value is the one
the accountant guarantees (``eps-pld`` / ``delta-pld`` method ``prv``), the estimate is audited
too (method ``prv-estimate``; an estimate, not a guarantee). Settings: eps_error = the case's
``prv_eps_error`` or 0.01, and delta_error = delta/1000 (eps queries) or 1e-10 (delta queries), as
Opacus sets them. Recorded calls: ``compute_epsilon`` / ``compute_delta`` with
sampling_probability, noise_multiplier, steps, eps_error, delta_error, delta or epsilon, and
``result`` (upper or estimate: which entry of the triple).
"""

from __future__ import annotations

from typing import Any, ClassVar

from certdp.audit.adapters import Adapter, PeerValue, require
from certdp.audit.cases import Case

#: eps_error when the case gives no prv_eps_error (Opacus's default).
EPS_ERROR = 0.01
#: The index of each method's value in compute_epsilon / compute_delta's (lower, estimate, upper).
RESULTS = {"upper": 2, "estimate": 1}


class PrvAdapter(Adapter):
    name = "prv"
    package = "prv-accountant"
    API: ClassVar[dict[str, str]] = {
        "compute_epsilon": "PRVAccountant(prvs=[PoissonSubsampledGaussianMechanism(sampling_probability, "
        "noise_multiplier)], max_self_compositions=[steps], eps_error, delta_error).compute_epsilon(delta, [steps])"
        "[2 for upper, 1 for estimate]",
        "compute_delta": "PRVAccountant(prvs=[PoissonSubsampledGaussianMechanism(sampling_probability, "
        "noise_multiplier)], max_self_compositions=[steps], eps_error, delta_error).compute_delta(epsilon, [steps])"
        "[2 for upper, 1 for estimate]",
    }

    def __init__(self) -> None:
        self.prv: Any = require("prv_accountant", self.name, self.package)
        self.functions = {"compute_epsilon": self.prv.PRVAccountant, "compute_delta": self.prv.PRVAccountant}
        self._last: tuple[str, tuple[tuple[str, object], ...], tuple[float, float, float]] | None = None

    def run(self, function: str, args: dict[str, Any]) -> float:
        """Contract: the ``result`` entry ("upper" or "estimate") of one recorded compute_epsilon /
        compute_delta call (the triple of the same call is computed once)."""
        if function not in ("compute_epsilon", "compute_delta") or args.get("result") not in RESULTS:
            return super().run(function, args)
        a = {k: v for k, v in args.items() if k != "result"}
        key = (function, tuple(sorted(a.items(), key=lambda kv: kv[0])))
        if self._last is None or self._last[:2] != key:
            mech = self.prv.PoissonSubsampledGaussianMechanism(
                sampling_probability=a["sampling_probability"], noise_multiplier=a["noise_multiplier"]
            )
            acct = self.prv.PRVAccountant(
                prvs=[mech],
                max_self_compositions=[a["steps"]],
                eps_error=a["eps_error"],
                delta_error=a["delta_error"],
            )
            query = a["delta"] if function == "compute_epsilon" else a["epsilon"]
            triple = getattr(acct, function)(query, [a["steps"]])
            self._last = (function, key[1], tuple(float(x) for x in triple))  # type: ignore[assignment]
        return self._last[2][RESULTS[args["result"]]]  # type: ignore[index]

    def evaluate(self, case: Case) -> list[PeerValue]:
        """Contract: upper and estimate rows of eps (eps-pld) and delta (delta-pld) for ``case``."""
        rows: list[PeerValue] = []
        eps_error = EPS_ERROR if case.prv_eps_error is None else float(case.prv_eps_error)
        for kind, needed in (("eps-pld", case.delta), ("delta-pld", case.eps)):
            if kind not in case.checks:
                continue
            assert case.sigma is not None and needed is not None
            args: dict[str, object] = {
                "sampling_probability": float(case.q),
                "noise_multiplier": float(case.sigma),
                "steps": case.steps,
                "eps_error": eps_error,
            }
            if kind == "eps-pld":
                function = "compute_epsilon"
                args.update(delta=float(needed), delta_error=float(needed) / 1000)
            else:
                function = "compute_delta"
                args.update(epsilon=float(needed), delta_error=1e-10)
            self._last = None  # a fresh computation for each case (a replay may reuse it)
            rows.append(self.ask("prv", kind, function, {**args, "result": "upper"}))
            if not rows[-1].error:
                note = "the accountant's point estimate (not its guarantee); same call"
                rows.append(
                    self.ask("prv-estimate", kind, function, {**args, "result": "estimate"}, note=note, estimate=True)
                )
        return rows


ADAPTER = PrvAdapter
