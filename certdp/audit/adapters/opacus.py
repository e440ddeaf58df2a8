"""Opacus: the RDP, PRV and GDP accountants and ``get_noise_multiplier``.

Opacus imports torch at its top level. When torch is installed the accountants are imported
normally (path "import"). Without torch, only ``opacus.accountants`` is loaded (path
"torch-free"): the package directories are mounted without running ``opacus/__init__.py``, and
``opacus.optimizers`` (torch code) is replaced by a placeholder whose ``DPOptimizer`` is only a
type in the accountants' optimizer hook, which the audit never calls. Every accountant module
runs unmodified. The placeholder modules are removed from ``sys.modules`` after loading, so a
later ``import opacus`` fails (or succeeds) exactly as it would have.

Quantities: ``rdp`` from analysis.rdp.compute_rdp; ``eps-rdp`` from RDPAccountant (DEFAULT_ALPHAS,
CKS conversion); ``eps-pld`` from PRVAccountant (method ``prv``, its upper bound) and
GaussianAccountant (method ``gdp``, a CLT approximation Opacus marks experimental);
``sigma-rdp`` / ``sigma-pld`` from get_noise_multiplier(accountant="rdp" / "prv").
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from typing import Any

from certdp.audit.adapters import Adapter, PeerMissing, PeerValue, exact_orders
from certdp.audit.cases import Case


def _load() -> tuple[Any, Any, Any, str]:
    """(opacus.accountants, its utils, its analysis.rdp, path)."""
    try:
        import torch  # noqa: F401 - only probing whether the normal import can work
    except ImportError:
        pass
    else:
        acc = importlib.import_module("opacus.accountants")
        return (
            acc,
            importlib.import_module("opacus.accountants.utils"),
            importlib.import_module("opacus.accountants.analysis.rdp"),
            "import",
        )
    spec = importlib.util.find_spec("opacus")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("No module named 'opacus'")
    saved = {k: v for k, v in sys.modules.items() if k == "opacus" or k.startswith("opacus.")}
    pkg = types.ModuleType("opacus")
    pkg.__path__ = list(spec.submodule_search_locations)
    placeholder = types.ModuleType("opacus.optimizers")
    placeholder.DPOptimizer = object  # type: ignore[attr-defined]
    sys.modules["opacus"], sys.modules["opacus.optimizers"] = pkg, placeholder
    try:
        acc = importlib.import_module("opacus.accountants")
        utils = importlib.import_module("opacus.accountants.utils")
        rdp = importlib.import_module("opacus.accountants.analysis.rdp")
    finally:
        for k in [k for k in sys.modules if k == "opacus" or k.startswith("opacus.")]:
            del sys.modules[k]
        sys.modules.update(saved)
    return acc, utils, rdp, "torch-free"


class OpacusAdapter(Adapter):
    name = "opacus"
    package = "opacus"

    def __init__(self) -> None:
        try:
            self.acc, self.utils, self.rdp, self.path = _load()
        except ImportError as exc:
            raise PeerMissing(
                f"peer=opacus needs the package opacus ({exc}); install it with: pip install opacus "
                "(pip install --no-deps opacus is enough: certdp loads its accountants without torch)"
            ) from None
        self.orders = exact_orders(self.acc.RDPAccountant.DEFAULT_ALPHAS)

    def _eps(self, cls: str, case: Case) -> float:
        acct = getattr(self.acc, cls)()
        acct.history = [(float(case.sigma), float(case.q), case.steps)]  # type: ignore[arg-type]
        return float(acct.get_epsilon(delta=float(case.delta)))  # type: ignore[arg-type]

    def evaluate(self, case: Case) -> list[PeerValue]:
        """Contract: the rows listed in the module docstring for ``case``'s checks."""
        rows: list[PeerValue] = []
        q, steps = float(case.q), case.steps
        if "rdp" in case.checks:
            for order in case.orders:

                def rdp_at(a: float = float(order)) -> float:
                    return float(
                        self.rdp.compute_rdp(q=q, noise_multiplier=float(case.sigma), steps=steps, orders=[a])[0]
                    )  # type: ignore[arg-type]

                rows.append(self.value("rdp", "rdp", rdp_at, order=order))
        if "eps-rdp" in case.checks:
            rdp_eps = self.value(
                "rdp", "eps-rdp", lambda: self._eps("RDPAccountant", case), orders=self.orders, conversion="cks"
            )
            rows.append(rdp_eps)
        if "eps-pld" in case.checks:
            rows.append(self.value("prv", "eps-pld", lambda: self._eps("PRVAccountant", case)))
            rows.append(self.value("gdp", "eps-pld", lambda: self._eps("GaussianAccountant", case)))
        if "sigma" in case.checks:
            for accountant, kind in (("rdp", "sigma-rdp"), ("prv", "sigma-pld")):

                def sigma(accountant: str = accountant) -> float:
                    return float(
                        self.utils.get_noise_multiplier(
                            target_epsilon=float(case.eps),  # type: ignore[arg-type]
                            target_delta=float(case.delta),  # type: ignore[arg-type]
                            sample_rate=q,
                            steps=steps,
                            accountant=accountant,
                        )
                    )

                extra: dict[str, object] = {"orders": self.orders, "conversion": "cks"} if kind == "sigma-rdp" else {}
                rows.append(self.value(f"noise-multiplier-{accountant}", kind, sigma, **extra))
        return rows


ADAPTER = OpacusAdapter
