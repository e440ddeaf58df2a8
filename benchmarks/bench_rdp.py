"""Certified RDP curve of the Poisson-subsampled Gaussian vs dp_accounting's float curve.

Run: python benchmarks/bench_rdp.py   (install dp-accounting in the benchmark env only)

Prints, per (q, sigma): the time of a 64-order certified curve (integer orders 2..65, remove
direction, certdp's default target: relative width <= 2^-60) next to dp_accounting's float curve
on the same orders, their ratio from one run (best of 5), the largest relative difference of the
RDP values, and the epsilon at delta = 1e-5 after 500 steps from both on the same orders.
"""

from __future__ import annotations

import time
from fractions import Fraction

import certdp

ORDERS = list(range(2, 66))
SETTINGS = [("0.01", "1.0"), ("0.001", "0.8"), ("0.05", "2.0"), ("0.1", "0.6"), ("0.01", "0.5")]
REPEATS = 5


def best_time(fn) -> float:
    times = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def certified_curve(q: str, sigma: str) -> list[certdp.Enclosure]:
    pair = certdp.SubsampledGaussian(q, sigma, "remove")
    return [certdp.rdp(pair, a) for a in ORDERS]


def main() -> None:
    try:
        from dp_accounting.rdp import rdp_privacy_accountant as dpa
    except ImportError:
        dpa = None
        print("dp_accounting not installed: printing certdp times only (pip install dp-accounting)")
    print(
        f"{'q':>6} {'sigma':>6} {'certdp s':>10} {'dp_acc s':>10} {'ratio':>7} {'max rel diff':>13} "
        f"{'eps certdp':>20} {'eps dp_acc':>20} {'eps rel diff':>13}"
    )
    for q, sigma in SETTINGS:
        t_cert = best_time(lambda q=q, sigma=sigma: certified_curve(q, sigma))
        curve = certified_curve(q, sigma)
        run = certdp.compose(certdp.SubsampledGaussian(q, sigma, "remove"), 500)
        eps = certdp.notions.conversion_epsilon(run, "1e-5", orders=ORDERS)  # the RDP conversion, as dp_accounting
        if dpa is None:
            print(f"{q:>6} {sigma:>6} {t_cert:10.4f} {'-':>10} {'-':>7} {'-':>13} {float(eps.sound):20.15g}")
            continue
        t_float = best_time(
            lambda q=q, sigma=sigma: dpa._compute_rdp_poisson_subsampled_gaussian(float(q), float(sigma), ORDERS)
        )
        floats = dpa._compute_rdp_poisson_subsampled_gaussian(float(q), float(sigma), ORDERS)
        rel = max(abs(Fraction(float(f)) - e.mid) / e.mid for f, e in zip(floats, curve, strict=True))
        eps_f, _ = dpa.compute_epsilon(ORDERS, [500 * float(f) for f in floats], 1e-5)
        eps_rel = abs(Fraction(eps_f) - eps.enclosure.mid) / eps.enclosure.mid
        print(
            f"{q:>6} {sigma:>6} {t_cert:10.4f} {t_float:10.4f} {t_cert / t_float:7.1f} {float(rel):13.3e} "
            f"{float(eps.sound):20.15g} {eps_f:20.15g} {float(eps_rel):13.3e}"
        )


if __name__ == "__main__":
    main()
