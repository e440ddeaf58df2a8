"""random-allocation (Feldman and Shenfeld, arXiv:2502.08202): epsilon of random allocation
("balls and bins": each record in 1 of ``steps`` steps per epoch) with the Gaussian mechanism.

Quantities (random-allocation cases, ``eps-allocation``):

* method ``combined``: ``allocation_epsilon_combined`` (direction BOTH), the smallest of the
  package's upper bounds (local, analytic, direct, recursive and, for one epoch, decomposition), a
  guarantee; with ``allocation_direct_alpha_orders`` = 2..60, the orders of the package's README
  and examples (its default, None, is refused by the direct method);
* method ``lower-bound`` (one epoch only, as the package requires): ``allocation_epsilon_lower_bound``,
  the epsilon at which the package's lower bound on delta (Chua et al.'s, in its external
  sources) meets delta, found by bisection to its ``epsilon_tolerance``; side "lower" (a value
  above certdp's certified upper end is UNSOUND; certdp.audit.verdict.judge_lower).

The package prints its warnings (alpha at the edge of the orders); they are captured as the
row's note, not printed. Recorded calls: ``allocation_epsilon_combined`` and
``allocation_epsilon_lower_bound`` (sigma, num_steps, num_selected, num_epochs, delta,
allocation_direct_alpha_orders).
"""

from __future__ import annotations

import contextlib
import io
import warnings
from typing import Any, ClassVar

from certdp.audit.adapters import Adapter, PeerValue, require
from certdp.audit.cases import Case

#: The RDP orders of the direct method, as the package's README and examples set them.
DIRECT_ORDERS = tuple(range(2, 61))
FUNCTIONS = ("allocation_epsilon_combined", "allocation_epsilon_lower_bound")


class RandomAllocationAdapter(Adapter):
    name = "random_allocation"
    package = "random-allocation"
    API: ClassVar[dict[str, str]] = {
        "allocation_epsilon_combined": "random_allocation.random_allocation_scheme.allocation_epsilon_combined("
        "PrivacyParams(sigma, num_steps, num_selected, num_epochs, delta=delta), "
        "SchemeConfig(allocation_direct_alpha_orders=...), direction=Direction.BOTH)",
        "allocation_epsilon_lower_bound": "random_allocation.random_allocation_scheme.allocation_epsilon_lower_bound("
        "PrivacyParams(sigma, num_steps, num_selected, num_epochs, delta=delta), "
        "SchemeConfig(allocation_direct_alpha_orders=...), direction=Direction.BOTH)",
    }

    def __init__(self) -> None:
        # the package's __init__ imports pandas and matplotlib (not declared by random-allocation 1.0.5)
        self.scheme: Any = require("random_allocation.random_allocation_scheme", self.name, self.package)
        self.defs: Any = require("random_allocation.comparisons.definitions", self.name, self.package)
        self.functions = {
            "allocation_epsilon_combined": self.defs.SchemeConfig,
            "allocation_epsilon_lower_bound": self.defs.SchemeConfig,
        }

    def run(self, function: str, args: dict[str, Any]) -> float:
        """Contract: the value of one recorded call (the module docstring lists them); what the
        package prints becomes a warning (captured by call_peer), not output."""
        if function not in FUNCTIONS:
            return super().run(function, args)
        a = dict(args)
        config = self.defs.SchemeConfig(allocation_direct_alpha_orders=list(a.pop("allocation_direct_alpha_orders")))
        params = self.defs.PrivacyParams(**a)
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            value = float(getattr(self.scheme, function)(params, config, direction=self.defs.Direction.BOTH))
        for line in printed.getvalue().splitlines():
            if line.strip():
                warnings.warn(line.strip(), stacklevel=1)
        return value

    def evaluate(self, case: Case) -> list[PeerValue]:
        """Contract: a ``combined`` row, and for one epoch a ``lower-bound`` row, for a
        random-allocation case; nothing for other cases."""
        if "eps-allocation" not in case.checks or case.sigma is None or case.delta is None:
            return []
        args: dict[str, object] = {
            "sigma": float(case.sigma),
            "num_steps": case.steps,
            "num_selected": case.k,
            "num_epochs": case.epochs,
            "delta": float(case.delta),
            "allocation_direct_alpha_orders": list(DIRECT_ORDERS),
        }
        rows = [self.ask("combined", "eps-allocation", "allocation_epsilon_combined", args)]
        if case.epochs == 1:
            note = "a lower bound found by bisection to the package's epsilon_tolerance; judged as a lower bound"
            rows.append(
                self.ask(
                    "lower-bound", "eps-allocation", "allocation_epsilon_lower_bound", args, note=note, side="lower"
                )
            )
        return rows


ADAPTER = RandomAllocationAdapter
