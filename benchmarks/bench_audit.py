"""Time of `certdp audit`: peer calls next to certdp's certified references, per quantity.

Usage: python benchmarks/bench_audit.py [report.json]   (default: audits/report.json, the
committed run; make a new one with `certdp audit --suite default --json > report.json`).
A reference shared by several peers (the same case and quantity) is counted once.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path


def main() -> None:
    path = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent.parent / "audits" / "report.json")
    rec = json.loads(path.read_text())
    peer_s: dict[tuple[str, str], float] = defaultdict(float)
    ref_s: dict[str, dict[tuple[str, str, str | None], float]] = defaultdict(dict)
    for row in rec["rows"]:
        peer_s[(row["kind"], row["peer"])] += row["peer_seconds"]
        ref_s[row["kind"]][(row["case"], row["compared"], row.get("order"))] = row["certdp_seconds"]
    print(f"certdp audit run of {path}: {len(rec['rows'])} peer values, {rec['seconds']} s in all")
    print(f"{'quantity':10s} {'certdp s':>9s}  peers (s, and certdp / peer)")
    for kind, refs in ref_s.items():
        total = sum(refs.values())
        peers = ", ".join(
            f"{p} {s:.1f} ({total / s:.1f}x)" if s > 0 else f"{p} 0" for (k, p), s in peer_s.items() if k == kind
        )
        print(f"{kind:10s} {total:9.1f}  {peers}")


if __name__ == "__main__":
    main()
