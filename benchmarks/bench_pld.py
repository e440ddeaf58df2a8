"""PLD epsilon of DP-SGD (Poisson-subsampled Gaussian, remove direction): certdp's certified
two-sided enclosure (certdp.notions.pld) against dp_accounting's PLD accountant and
prv_accountant, side by side from one run, with times.

Run: python benchmarks/bench_pld.py [--first K]   (dp-accounting, prv-accountant in the benchmark
env only; a missing peer prints "n/a"). ``--first K`` runs the first K settings only.

The peers return floats with no proved error bar: dp_accounting's PLD accountant (its default
value discretisation 1e-4, and 1e-5) is a pessimistic float estimate over add-or-remove;
prv_accountant reports (lower, estimate, upper) from float error bounds. certdp's
[eps_low, eps_up] is proved: eps_up is a sound epsilon and every eps below eps_low is a proved
violation.

Measured (2026-12-02, q = 0.01, sigma = 0.8, 500 steps, delta = 1e-5): certdp [2.3850549,
2.3996535] in 5.9 s at h = 2^-10 and [2.3969567, 2.3994913] in 14.0 s at 2^-11; dp_accounting
2.3994394 (1.0 s, vdi 1e-4) and 2.3994372 (13.3 s, vdi 1e-5); prv_accountant [2.3892137,
2.4096662], estimate 2.3994399 (0.5 s, eps_error 0.01).
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction

from certdp.enclose import workprec
from certdp.notions.pld import compose, eps_lower, eps_upper, lattice_for, lower_lattice_pmf, upper_lattice_pmf
from certdp.pairs.subsampled import SubsampledGaussian

# (q, sigma, steps, delta): the anchor and tightness settings, and two small ones
SETTINGS = [
    ("0.01", "0.8", 500, "1e-5"),
    ("0.1", "1.5", 100, "1e-5"),
    ("0.004", "0.52", 2500, "1e-5"),
    ("0.05", "1.0", 50, "1e-6"),
    ("0.001", "2.0", 1000, "1e-8"),
]


def certdp_eps(q: str, sigma: str, steps: int, delta: str, h: Fraction) -> tuple[float, float, float]:
    t0 = time.time()
    pair = SubsampledGaussian(q, sigma, "remove")
    d = Fraction(delta)
    with workprec(128):
        lattice = lattice_for(pair, h)
        up = eps_upper(compose(upper_lattice_pmf(pair, lattice), steps), d)
        low = eps_lower(compose(lower_lattice_pmf(pair, lattice), steps), d)
    return float(low), float(up), time.time() - t0


def dp_accounting_eps(q: str, sigma: str, steps: int, delta: str, vdi: float) -> str:
    """dp_accounting 0.6's PLDAccountant (add-or-remove: the larger of the two directions, so it
    is >= the remove direction certdp reports here) at value_discretization_interval ``vdi``."""
    try:
        from dp_accounting import dp_event, pld
    except ImportError:
        return "n/a"
    t0 = time.time()
    acc = pld.PLDAccountant(value_discretization_interval=vdi)
    event = dp_event.PoissonSampledDpEvent(float(q), dp_event.GaussianDpEvent(float(sigma)))
    acc.compose(dp_event.SelfComposedDpEvent(event, steps))
    eps = acc.get_epsilon(float(delta))
    return f"{eps:.7f} ({time.time() - t0:.1f} s)"


def prv_eps(q: str, sigma: str, steps: int, delta: str, eps_error: float) -> str:
    try:
        from prv_accountant import PoissonSubsampledGaussianMechanism, PRVAccountant
    except ImportError:
        return "n/a"
    t0 = time.time()
    prv = PoissonSubsampledGaussianMechanism(noise_multiplier=float(sigma), sampling_probability=float(q))
    acc = PRVAccountant(prvs=prv, max_self_compositions=steps, eps_error=eps_error, delta_error=float(delta) / 1000)
    low, est, up = acc.compute_epsilon(delta=float(delta), num_self_compositions=[steps])
    return f"[{low:.7f}, {up:.7f}] est {est:.7f} ({time.time() - t0:.1f} s)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--first", type=int, default=len(SETTINGS), help="run the first K settings only")
    args = parser.parse_args()
    for q, sigma, steps, delta in SETTINGS[: args.first]:
        print(f"q={q} sigma={sigma} steps={steps} delta={delta}")
        for k in (10, 11):
            low, up, secs = certdp_eps(q, sigma, steps, delta, Fraction(1, 2**k))
            print(f"  certdp h=2^-{k}: [{low:.7f}, {up:.7f}]  width/eps {(up - low) / up:.1e}  ({secs:.1f} s)")
        for vdi in (1e-4, 1e-5):  # its default, and finer
            print(f"  dp_accounting PLD vdi={vdi:g}: {dp_accounting_eps(q, sigma, steps, delta, vdi)}")
        for err in (0.1, 0.01):
            print(f"  prv_accountant eps_error={err:g}: {prv_eps(q, sigma, steps, delta, err)}")


if __name__ == "__main__":
    main()
