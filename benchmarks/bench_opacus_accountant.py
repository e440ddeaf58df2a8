"""CertifiedAccountant driven exactly as Opacus's PrivacyEngine drives an accountant, beside
Opacus's own RDP and PRV accountants on the same history.

No model is trained: the DP optimizer is reduced to the two attributes the accountant hook reads
(``noise_multiplier``, ``accumulated_iterations``), and every accountant's
``get_optimizer_hook_fn(sample_rate)`` hook is called once per step, as DPOptimizer.step() does.
The schedule is 1000 steps at sample rate 256/60000 (MNIST, batch 256), with the noise multiplier
switching from 1.0 to 1.2 halfway (heterogeneous steps). Opacus is loaded normally when torch is
installed and without torch otherwise (certdp's audit loader); without Opacus only certdp runs.

Usage: python benchmarks/bench_opacus_accountant.py [--steps N] [--delta D]
"""

from __future__ import annotations

import argparse
import time

from certdp.integrations.opacus import CertifiedAccountant, register


class DPOptimizerStandIn:
    """What Opacus's DPOptimizer exposes to the accountant hook."""

    def __init__(self) -> None:
        self.noise_multiplier = 1.0
        self.accumulated_iterations = 1


def opacus_accountants() -> tuple[object | None, str]:
    try:
        from certdp.audit.adapters.opacus import _load

        acc, _, _, path = _load()
        return acc, path
    except ImportError:
        return None, "not installed"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--delta", type=float, default=1e-5)
    args = ap.parse_args()
    sample_rate = 256 / 60000
    acc_mod, path = opacus_accountants()
    accountants: dict[str, object] = {}
    if acc_mod is not None:
        register(acc_mod)  # as a user would: PrivacyEngine(accountant="certdp") then builds it
        accountants["certdp (PLD, certified)"] = acc_mod.create_accountant("certdp")
        accountants["opacus rdp"] = acc_mod.RDPAccountant()
        accountants["opacus prv"] = acc_mod.PRVAccountant()
    else:
        accountants["certdp (PLD, certified)"] = CertifiedAccountant()
    hooks = [a.get_optimizer_hook_fn(sample_rate=sample_rate) for a in accountants.values()]
    opt = DPOptimizerStandIn()
    for i in range(args.steps):
        opt.noise_multiplier = 1.0 if i < args.steps // 2 else 1.2
        for hook in hooks:
            hook(opt)
    ours = next(iter(accountants.values()))
    print(f"opacus: {path}; history {ours.history} ({len(ours)} steps), delta = {args.delta}")
    start = time.perf_counter()
    band = ours.certify(args.delta)
    seconds = {"certdp (PLD, certified)": time.perf_counter() - start}
    values = {"certdp (PLD, certified)": band.epsilon_upper}
    for name, acc in list(accountants.items())[1:]:
        start = time.perf_counter()
        values[name] = acc.get_epsilon(delta=args.delta)
        seconds[name] = time.perf_counter() - start
    low, up = band.enclosure.lower_str(10), band.enclosure.upper_str(10)
    print(f"certified epsilon in [{low}, {up}] (via {band.via}; the lower end is a proved violation)")
    print(f"{'accountant':28s} {'epsilon':>12s} {'/ certdp':>9s} {'seconds':>8s}")
    ref = values["certdp (PLD, certified)"]
    for name, value in values.items():
        verdict = ""
        if name != "certdp (PLD, certified)" and value < float(band.enclosure.lower):
            verdict = "  below the proved violation: UNSOUND"
        print(f"{name:28s} {value:12.6f} {value / ref:9.4f} {seconds[name]:8.2f}{verdict}")


if __name__ == "__main__":
    main()
