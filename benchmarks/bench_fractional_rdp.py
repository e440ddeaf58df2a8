"""Fractional-order RDP of the Poisson-subsampled Gaussian: certdp's enclosure vs peers.

Run: python benchmarks/bench_fractional_rdp.py   (dp-accounting / opacus in the benchmark env only)

For each (q, sigma) and order alpha in (1.5, 2.5, 10.5, 20.5, 50.5) it prints certdp's certified
enclosure of D_alpha(P||Q) (remove direction, as the peers compute it), dp_accounting's float value
and Opacus's (when installed; without torch its RDP module is loaded from its file), whether each
peer value lies inside the enclosure (a float essentially never does: the enclosures are ~1e-20
wide), its relative distance from the enclosure's midpoint, and certdp's time from one run.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import certdp

ORDERS = ["1.5", "2.5", "10.5", "20.5", "50.5"]
SETTINGS = [("0.001", "1.0"), ("0.01", "0.5"), ("0.01", "1.0"), ("0.05", "2.0"), ("0.1", "0.8"), ("0.001", "0.5")]


def _load_opacus_rdp():
    """Opacus's RDP analysis module. Opacus's package __init__ imports torch, which its RDP analysis
    does not need: without torch the module is loaded from its file (same code, no torch)."""
    try:
        from opacus.accountants.analysis import rdp

        return rdp
    except ImportError:
        pass
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("opacus")  # locates the package without running its __init__
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "accountants" / "analysis" / "rdp.py"
    if not path.exists():
        return None
    mod_spec = importlib.util.spec_from_file_location("opacus_rdp_standalone", path)
    if mod_spec is None or mod_spec.loader is None:
        return None
    module = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(module)
    return module


def main() -> None:
    try:
        from dp_accounting.rdp import rdp_privacy_accountant as dpa
    except ImportError:
        dpa = None
    opacus_rdp = _load_opacus_rdp()
    print(
        f"peers: dp_accounting {'yes' if dpa else 'not installed'}, opacus {'yes' if opacus_rdp else 'not installed'}"
    )
    print(
        f"{'q':>6} {'sigma':>5} {'alpha':>5} {'certdp enclosure':>48} {'s':>6} {'dp_accounting':>22} {'in?':>4} "
        f"{'rel dist':>9} {'opacus':>22} {'in?':>4} {'rel dist':>9}"
    )
    for q, sigma in SETTINGS:
        pair = certdp.SubsampledGaussian(q, sigma, "remove")
        for a in ORDERS:
            t0 = time.perf_counter()
            enc = certdp.rdp(pair, a)
            secs = time.perf_counter() - t0
            row = f"{q:>6} {sigma:>5} {a:>5} [{enc.lower_str(20)}, {enc.upper_str(20)}] {secs:6.3f}"
            for peer in (dpa, opacus_rdp):
                if peer is None:
                    row += f" {'-':>22} {'-':>4} {'-':>9}"
                    continue
                if peer is dpa:
                    v = float(dpa._compute_rdp_poisson_subsampled_gaussian(float(q), float(sigma), [float(a)])[0])
                else:
                    v = float(
                        opacus_rdp.compute_rdp(q=float(q), noise_multiplier=float(sigma), steps=1, orders=[float(a)])[0]
                    )
                if not math.isfinite(v):
                    row += f" {v!s:>22} {'NO':>4} {'-':>9}"
                    continue
                inside = enc.contains(v)
                row += f" {v:22.15e} {'yes' if inside else 'NO':>4} {float(abs(Fraction(v) - enc.mid) / enc.mid):9.2e}"
            print(row, flush=True)


if __name__ == "__main__":
    main()
