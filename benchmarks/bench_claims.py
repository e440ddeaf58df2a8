"""Time of `certdp claims check` on the shipped registry, per quantity and per paper.

Usage: python benchmarks/bench_claims.py [report.json]   (default: claims_report/report.json, the
committed run; make a new one with `python claims_report/make_report.py`). Per quantity: the CPU
seconds of its distinct computations, each counted once (their sum over the wall time is the
parallel speed-up). Per paper: the seconds of the computations its claims name directly (a
computation shared by several claims counts in each; dependencies are in the quantity table).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path


def main() -> None:
    path = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent.parent / "claims_report" / "report.json")
    rec = json.loads(path.read_text())
    head = f"{path}: {rec['total']} claims, {rec['computations']} computations"
    print(f"{head}, {rec['seconds']} s wall on {rec['workers']} workers")
    total = sum(rec["timings"].values())
    print(f"{'quantity':26s} {'cpu s':>8s}  (all: {total:.0f} s, {total / rec['seconds']:.2f}x the wall time)")
    for q, s in rec["timings"].items():
        print(f"{q:26s} {s:8.1f}")
    per_paper: dict[str, float] = defaultdict(float)
    for c in rec["claims"]:
        per_paper[c["paper"]] += c["seconds"]
    print(f"\n{'paper':20s} {'claim s':>9s}")
    for p, s in sorted(per_paper.items(), key=lambda kv: -kv[1]):
        print(f"{p:20s} {s:9.1f}")


if __name__ == "__main__":
    main()
