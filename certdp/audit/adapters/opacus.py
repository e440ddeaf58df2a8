"""Opacus: the RDP, PRV and GDP accountants and ``get_noise_multiplier``.

Opacus imports torch at its top level. When torch is installed the accountants are imported
normally (path "import"). Without torch, only ``opacus.accountants`` is loaded (path
"torch-free"): the package directories are mounted without running ``opacus/__init__.py``, and
``opacus.optimizers`` (torch code) is replaced by a placeholder whose ``DPOptimizer`` is only a
type in the accountants' optimizer hook, which the audit never calls. Every accountant module
runs unmodified. The placeholder modules are removed from ``sys.modules`` after loading, so a
later ``import opacus`` fails (or succeeds) exactly as it would have.

Quantities: ``rdp`` from analysis.rdp.compute_rdp; ``eps-rdp`` from RDPAccountant (DEFAULT_ALPHAS,
CKS conversion); ``eps-pld`` from PRVAccountant (method ``prv``, its upper bound, with the case's
``prv_eps_error`` or Opacus's default eps_error and delta_error = delta/1000 passed explicitly) and
GaussianAccountant (method ``gdp``, a CLT approximation that Opacus warns "is experimental and can
underestimate privacy expenditure": an estimate, not a guarantee; not asked when the case sets
``prv_eps_error``, which it does not depend on); ``sigma-rdp`` / ``sigma-pld``
from get_noise_multiplier(accountant="rdp" / "prv").

Recorded calls (certdp.audit.adapters.Adapter.ask): ``compute_rdp`` (q, noise_multiplier, steps,
orders), ``RDPAccountant.get_epsilon`` / ``PRVAccountant.get_epsilon`` /
``GaussianAccountant.get_epsilon`` (history [[sigma, q, steps]] set on a fresh accountant, then the
keyword arguments), ``get_noise_multiplier`` (its keyword arguments).
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import types
from typing import Any, ClassVar

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
    API: ClassVar[dict[str, str]] = {
        "compute_rdp": "opacus.accountants.analysis.rdp.compute_rdp(q=..., noise_multiplier=..., steps=..., "
        "orders=[alpha])[0]",
        "RDPAccountant.get_epsilon": "acct = RDPAccountant(); acct.history = history; acct.get_epsilon(delta=...)",
        "PRVAccountant.get_epsilon": "acct = PRVAccountant(); acct.history = history; "
        "acct.get_epsilon(delta=..., eps_error=..., delta_error=...)",
        "GaussianAccountant.get_epsilon": "acct = GaussianAccountant(); acct.history = history; "
        "acct.get_epsilon(delta=..., poisson=True)",
        "get_noise_multiplier": "opacus.accountants.utils.get_noise_multiplier(target_epsilon=..., "
        "target_delta=..., sample_rate=..., steps=..., accountant=...)",
    }

    def __init__(self) -> None:
        try:
            self.acc, self.utils, self.rdp, self.path = _load()
        except ImportError as exc:
            raise PeerMissing(
                f"peer=opacus needs the package opacus ({exc}); install it with: pip install opacus "
                "(pip install --no-deps opacus is enough: certdp loads its accountants without torch)"
            ) from None
        self.orders = exact_orders(self.acc.RDPAccountant.DEFAULT_ALPHAS)
        eps_error = inspect.signature(self.acc.PRVAccountant.get_epsilon).parameters["eps_error"]
        self.default_eps_error = float(eps_error.default)
        self.functions = {
            "compute_rdp": self.rdp.compute_rdp,
            "RDPAccountant.get_epsilon": self.acc.RDPAccountant.get_epsilon,
            "PRVAccountant.get_epsilon": self.acc.PRVAccountant.get_epsilon,
            "GaussianAccountant.get_epsilon": self.acc.GaussianAccountant.get_epsilon,
            "get_noise_multiplier": self.utils.get_noise_multiplier,
        }

    def run(self, function: str, args: dict[str, Any]) -> float:
        """Contract: the value of one recorded Opacus call (the module docstring lists them)."""
        a = dict(args)
        if function == "compute_rdp":
            return float(self.rdp.compute_rdp(**a)[0])
        if function.endswith(".get_epsilon") and function.split(".")[0] in ACCOUNTANTS:
            acct = getattr(self.acc, function.split(".")[0])()
            acct.history = [tuple(h) for h in a.pop("history")]
            return float(acct.get_epsilon(**a))
        if function == "get_noise_multiplier":
            return float(self.utils.get_noise_multiplier(**a))
        return super().run(function, args)

    def evaluate(self, case: Case) -> list[PeerValue]:
        """Contract: the rows listed in the module docstring for ``case``'s checks."""
        rows: list[PeerValue] = []
        q, steps = float(case.q), case.steps
        if case.sigma is not None:
            history = [[float(case.sigma), q, steps]]
        if "rdp" in case.checks:
            for order in case.orders:
                args = {"q": q, "noise_multiplier": float(case.sigma), "steps": steps, "orders": [float(order)]}  # type: ignore[arg-type]
                rows.append(self.ask("rdp", "rdp", "compute_rdp", args, order=order))
        if "eps-rdp" in case.checks:
            args = {"history": history, "delta": float(case.delta)}  # type: ignore[arg-type]
            rows.append(
                self.ask("rdp", "eps-rdp", "RDPAccountant.get_epsilon", args, orders=self.orders, conversion="cks")
            )
        if "eps-pld" in case.checks:
            d = float(case.delta)  # type: ignore[arg-type]
            eps_error = self.default_eps_error if case.prv_eps_error is None else float(case.prv_eps_error)
            prv = {"history": history, "delta": d, "eps_error": eps_error, "delta_error": d / 1000}
            rows.append(self.ask("prv", "eps-pld", "PRVAccountant.get_epsilon", prv))
            if case.prv_eps_error is None:  # GDP does not depend on it: asked once per setting
                gdp = {"history": history, "delta": d, "poisson": True}
                note = "Opacus documents the GDP accountant as experimental: it can underestimate (an estimate)"
                rows.append(self.ask("gdp", "eps-pld", "GaussianAccountant.get_epsilon", gdp, note=note, estimate=True))
        if "sigma" in case.checks:
            for accountant, kind in (("rdp", "sigma-rdp"), ("prv", "sigma-pld")):
                args = {
                    "target_epsilon": float(case.eps),  # type: ignore[arg-type]
                    "target_delta": float(case.delta),  # type: ignore[arg-type]
                    "sample_rate": q,
                    "steps": steps,
                    "accountant": accountant,
                }
                extra: dict[str, object] = {"orders": self.orders, "conversion": "cks"} if kind == "sigma-rdp" else {}
                rows.append(self.ask(f"noise-multiplier-{accountant}", kind, "get_noise_multiplier", args, **extra))
        return rows


#: The accountant classes whose get_epsilon the adapter calls (after setting their history).
ACCOUNTANTS = ("RDPAccountant", "PRVAccountant", "GaussianAccountant")

ADAPTER = OpacusAdapter
