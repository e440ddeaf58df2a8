"""Certified calibration of random allocation on the nine cells of arXiv:2610.09651 (lambda = 0.10).

Run: python benchmarks/bench_random_allocation.py [--cells M:E,...]
     python benchmarks/bench_random_allocation.py --from-certificates certificates/
       (prints the same table from committed certificates: their grids and per-side times)

Prints per cell, from one run on one core: certdp's certified sigma and its TV upper bound, the
certified lower bound at sigma - 1e-6 (or why not), the time of the numeric exact-sigma search,
the certification time (both sides) and the automatic grid, next to arXiv:2610.09651 Table 4's exact
sigma, bound and certify time (one side, hand-tuned grid, plus a first grid).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from certdp.calibrate import calibrate_tv

PAPER = {  # (M, E): (exact sigma, certified bound, certify s, first grid s) from arXiv:2610.09651 Table 4
    (100, 10): ("1.426215", "0.0999999543", 47, 23),
    (100, 20): ("1.907073", "0.0999999580", 36, 81),
    (100, 40): ("2.610518", "0.0999999743", 43, 345),
    (250, 10): ("1.024495", "0.0999999977", 598, 71),
    (250, 20): ("1.309428", "0.0999999624", 119, 108),
    (250, 40): ("1.732809", "0.0999999826", 95, 316),
    (500, 10): ("0.834432", "0.0999999316", 181, 170),
    (500, 20): ("1.025964", "0.0999999445", 252, 231),
    (500, 40): ("1.310146", "0.0999999769", 212, 433),
}


def from_certificates(folder: Path) -> None:
    print(
        f"{'M':>4} {'E':>3} {'sigma':>9} {'paper':>9} {'tv_upper':>14} {'paper bound':>12} {'miss lower':>14} "
        f"{'upper s':>8} {'lower s':>8} {'paper s':>8} {'h':>10} {'eta':>10}"
    )
    for (m, e), paper in PAPER.items():
        path = folder / f"random_allocation_M{m}_E{e}_tv0.1.json"
        if not path.exists():
            print(f"{m:>4} {e:>3}  (no certificate)")
            continue
        body = json.loads(path.read_text())["body"]
        claim, ref = body["claim"], body["refutation"]
        grid = claim["method"]["grid"]
        miss = ref["result"]["lower"][:14] if ref else "no"
        low_s = ref["result"].get("seconds", 0) if ref else 0
        print(
            f"{m:>4} {e:>3} {claim['mechanism']['params']['sigma']:>9} {paper[0]:>9} "
            f"{claim['result']['upper'][:14]:>14} "
            f"{paper[1]:>12} {miss:>14} {claim['result'].get('seconds', 0):8.1f} {low_s:8.1f} {paper[2]:>8} "
            f"{float(grid['h']):10.3g} {float(grid['eta']):10.3g}"
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cells", default=",".join(f"{m}:{e}" for m, e in PAPER))
    ap.add_argument("--from-certificates", type=Path, default=None)
    args = ap.parse_args()
    if args.from_certificates is not None:
        from_certificates(args.from_certificates)
        return
    cells = [tuple(int(x) for x in c.split(":")) for c in args.cells.split(",")]
    print(
        f"{'M':>4} {'E':>3} {'sigma':>9} {'paper':>9} {'tv_upper':>14} {'paper bound':>12} {'miss lower':>14} "
        f"{'search s':>8} {'certify s':>9} {'paper s':>8} {'h':>10} {'eta':>10} {'cap':>7}",
        flush=True,
    )
    for m, e in cells:
        t0 = time.perf_counter()
        res = calibrate_tv(m, e, "0.1")
        total = time.perf_counter() - t0
        certify = sum(float(a.get("seconds", 0)) for a in res.attempts)
        paper = PAPER.get((m, e), ("-", "-", 0, 0))
        miss = res.tv_lower_at_miss.lower_str(12) if res.tv_lower_at_miss is not None else "no: " + str(res.miss_reason)
        print(
            f"{m:>4} {e:>3} {float(res.sigma):9.6f} {paper[0]:>9} {res.tv_upper.upper_str(12):>14} {paper[1]:>12} "
            f"{miss:>14} {total - certify:8.1f} {certify:9.1f} {paper[2]:>8} {res.grid.h:10.3g} {res.grid.eta:10.3g} "
            f"{res.grid.cap:7.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
