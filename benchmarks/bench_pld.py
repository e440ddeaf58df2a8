"""PLD epsilon of DP-SGD (Poisson-subsampled Gaussian, add-or-remove): certdp's certified
two-sided enclosure (certdp.notions.pld.pld_bounds, the default of `certdp eps`) against
dp_accounting's PLD accountant and prv_accountant, side by side from one run, with times; and
the calibration of sigma against dp_accounting's PLD calibration.

Run: python benchmarks/bench_pld.py [--first K] [--no-calibration]   (dp-accounting and
prv-accountant in the benchmark environment only; a missing peer prints "n/a").

The peers return floats with no proved error bar: dp_accounting's PLDAccountant (0.6: pessimistic
estimates, add-or-remove) at its default value discretisation 1e-4 and at 1e-5 (its finest
practical one: ~10x the time); prv_accountant reports (lower, estimate, upper) from float error
bounds, at eps_error 0.1 and 0.01. certdp's [eps_low, eps_up] is proved for both directions
(`both`): eps_up is a sound epsilon and every eps below eps_low is a proved violation.

Measured (2026-12-02, one run of `python benchmarks/bench_pld.py` on an otherwise idle 2-core
machine; eps at delta, certdp at its default spacing (2^-11, finer where one step's losses are
tiny: 2^-15 in the last row), both directions):

| q, sigma, steps, delta | certdp [eps_low, eps_up] (s) | dp_accounting vdi 1e-4 / 1e-5 (s) | prv eps_error 0.01 |
|---|---|---|---|
| 0.01, 0.8, 500, 1e-5 | [2.3993301, 2.3994916] (5.5) | 2.3994394 (0.8) / 2.3994372 (11.3) | [2.3892137, 2.4096662] |
| 0.004, 0.52, 2500, 1e-5 | [7.9825615, 7.9828833] (7.6) | 7.9827705 (1.7) / 7.9827653 (19.8) | [7.9721303, 7.9934037] |
| 0.1, 1.5, 100, 1e-5 | [3.5358352, 3.5358803] (3.1) | 3.5358703 (0.5) / 3.5358699 (5.9) | [3.5256434, 3.5461015] |
| 0.05, 1.0, 50, 1e-6 | [3.2014621, 3.2014784] (2.9) | 3.2014734 (0.6) / 3.2014732 (7.0) | [3.1912466, 3.2117029] |
| 0.001, 2.0, 1000, 1e-8 | [0.0799247, 0.0799852] (2.1) | 0.0801814 (0.0) / 0.0799672 (0.2) | [0.0700388, 0.0900462] |

Every dp_accounting value at vdi 1e-5 lies inside certdp's enclosure; at vdi 1e-4 the last row's
0.0801814 lies above it (pessimistic, so conservative). certdp's two-sided enclosure takes less
time than dp_accounting's pessimistic vdi 1e-5 run in every row.
Calibration, q = 0.01, 500 steps, (3, 1e-5): certdp sigma = 0.74275 with the violation at
0.74274 proved, 14.9 s; dp_accounting's calibrate_dp_mechanism (PLD, vdi 1e-4, tol 1e-5)
0.7427519 in 17.8 s.
"""

from __future__ import annotations

import argparse
import time
from fractions import Fraction

from certdp.enclose import workprec
from certdp.notions.pld import pld_bounds
from certdp.pairs import SubsampledGaussian, compose

# (q, sigma, steps, delta): the anchor and tightness settings, and two more
SETTINGS = [
    ("0.01", "0.8", 500, "1e-5"),
    ("0.004", "0.52", 2500, "1e-5"),
    ("0.1", "1.5", 100, "1e-5"),
    ("0.05", "1.0", 50, "1e-6"),
    ("0.001", "2.0", 1000, "1e-8"),
]


def certdp_eps(q: str, sigma: str, steps: int, delta: str) -> tuple[float, float, float]:
    t0 = time.time()
    with workprec(128):
        res = pld_bounds(compose(SubsampledGaussian(q, sigma, "both"), steps), delta=Fraction(delta))
    return float(res.enclosure.lower), float(res.enclosure.upper), time.time() - t0


def dp_accounting_eps(q: str, sigma: str, steps: int, delta: str, vdi: float) -> tuple[str, float | None]:
    """dp_accounting's PLDAccountant (add-or-remove) at value_discretization_interval ``vdi``."""
    try:
        from dp_accounting import dp_event, pld
    except ImportError:
        return "n/a", None
    t0 = time.time()
    acc = pld.PLDAccountant(value_discretization_interval=vdi)
    event = dp_event.PoissonSampledDpEvent(float(q), dp_event.GaussianDpEvent(float(sigma)))
    acc.compose(dp_event.SelfComposedDpEvent(event, steps))
    eps = acc.get_epsilon(float(delta))
    return f"{eps:.7f} ({time.time() - t0:.1f} s)", eps


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


def calibration(q: str, steps: int, eps: str, delta: str) -> None:
    """certdp's PLD calibration (step 1e-5, proved violation one step below) against
    dp_accounting's calibrate_dp_mechanism with its PLD accountant (vdi 1e-4, tol 1e-5)."""
    from certdp.calibrate.pld import calibrate_pld

    t0 = time.time()
    res = calibrate_pld(q, steps, eps, delta)
    proved = "violation at sigma - step proved" if res.refutation is not None else "violation not proved"
    print(f"  certdp PLD calibration: sigma = {float(res.sigma)} ({proved}; {time.time() - t0:.1f} s)")
    try:
        from dp_accounting import dp_event, mechanism_calibration, pld
    except ImportError:
        print("  dp_accounting calibration: n/a")
        return
    t0 = time.time()

    def event(s: float) -> dp_event.DpEvent:
        return dp_event.SelfComposedDpEvent(
            dp_event.PoissonSampledDpEvent(float(q), dp_event.GaussianDpEvent(s)), steps
        )

    sigma = mechanism_calibration.calibrate_dp_mechanism(
        lambda: pld.PLDAccountant(value_discretization_interval=1e-4),
        event,
        float(eps),
        float(delta),
        mechanism_calibration.LowerEndpointAndGuess(0.3, 1.0),
        tol=1e-5,
    )
    print(f"  dp_accounting PLD calibration (vdi 1e-4, tol 1e-5): sigma = {sigma:.7f} ({time.time() - t0:.1f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--first", type=int, default=len(SETTINGS), help="run the first K settings only")
    parser.add_argument("--no-calibration", action="store_true", help="skip the calibration comparison")
    args = parser.parse_args()
    for q, sigma, steps, delta in SETTINGS[: args.first]:
        print(f"q={q} sigma={sigma} steps={steps} delta={delta}")
        low, up, secs = certdp_eps(q, sigma, steps, delta)
        print(
            f"  certdp (default h, both directions): [{low:.7f}, {up:.7f}]"
            f"  width/eps {(up - low) / up:.1e}  ({secs:.1f} s)"
        )
        for vdi in (1e-4, 1e-5):
            text, value = dp_accounting_eps(q, sigma, steps, delta, vdi)
            where = ""
            if value is not None:
                where = " inside" if low <= value <= up else (" ABOVE" if value > up else " BELOW (optimistic)")
            print(f"  dp_accounting PLD vdi={vdi:g}: {text}{where} certdp's enclosure")
        for err in (0.1, 0.01):
            print(f"  prv_accountant eps_error={err:g}: {prv_eps(q, sigma, steps, delta, err)}")
    if not args.no_calibration:
        print("calibration: q=0.01 steps=500 (3, 1e-5)")
        calibration("0.01", 500, "3", "1e-5")


if __name__ == "__main__":
    main()
