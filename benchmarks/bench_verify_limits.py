"""Worst cases within the verifier's work limits against the largest committed certificate.

Builds unsigned certificates that sit at the edges of certdp.cert.limits (the most step cells,
the longest epoch sum, the longest epoch product, the most RDP work), runs ``certdp verify
--allow-untrusted`` on each in a fresh process, and prints wall time and peak memory (max RSS)
next to the slowest committed certificate, as ratios from one run. A file within the limits is
meant to cost at most about 2x the largest committed certificate and under 2 GiB.

    python benchmarks/bench_verify_limits.py [--quick]

(--quick: one committed certificate and two corner cases.) The claims of the corner files are
false or undecidable on purpose (their thresholds are arbitrary): what is measured is the work
done before the verifier answers, whatever the answer.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

from certdp.cert import limits as L
from certdp.cert.write import eps_check, finalize, make_body, tv_check
from certdp.enclose import Enclosure
from certdp.notions.tv_certified import LatticeGrid

ROOT = Path(__file__).resolve().parent.parent
DUMMY = Enclosure.from_bounds(Fraction(0), Fraction(1), 64)


def _ra(name: str, m: int, e: int, sigma: str, grid: LatticeGrid, side: str = "upper") -> tuple[str, dict]:
    relation = "<=" if side == "upper" else ">"
    check = tv_check(m, e, Fraction(sigma), relation, Fraction(1, 2), grid, DUMMY, 0.0)
    if side == "lower":  # a lower-side check lives in the refutation slot, one step below a claim
        claim = tv_check(m, e, Fraction(sigma) + Fraction(1, 10**6), "<=", Fraction(1, 2), grid, DUMMY, 0.0)
        claim["method"]["name"] = "lattice-upper"
        return name, finalize(make_body(Fraction(1, 10**6), claim, check, None))
    return name, finalize(make_body(Fraction(1, 10**6), check, None, "benchmark"))


def corner_cases() -> list[tuple[str, dict]]:
    h = 2.0**-4
    m_sum = L.MAX_RA_STEPS  # with l_max = 16: l_max M / h = 512,000, near MAX_SUM_POINTS
    cells = L.MAX_STEP_CELLS * h  # cap / h at the limit
    cases = [
        _ra("ra most cells + longest sum (scheme 1)", m_sum, 1, "1", LatticeGrid(h, cells, 0.25, 16.0, 2.0**-8)),
        _ra("ra most cells, lower side (scheme 1)", m_sum, 1, "1", LatticeGrid(h, cells, 0.25, 16.0, 2.0**-8), "lower"),
        _ra(
            "ra longest epoch product",
            100,
            L.MAX_RA_EPOCHS,
            "1",
            LatticeGrid(2.0**-6, 64.0, 2.0**-8, 8.0, _eta_for_product(L.MAX_RA_EPOCHS, 2.0**-8)),
        ),
    ]
    orders = list(range(L.MAX_ORDER - L.MAX_ORDERS + 1, L.MAX_ORDER + 1))
    while sum(orders) > 1 << 18:
        orders.pop()
    check = eps_check(Fraction(1, 2), Fraction(1), "both", 1000, Fraction(1, 10**5), "<=", Fraction(1), orders, DUMMY)
    cases.append(("rdp most order work", finalize(make_body(Fraction(1, 10**6), check, None, "benchmark"))))
    return cases


def _eta_for_product(e: int, l_min: float) -> float:
    """The smallest power-of-two eta with E (log(1/l_min)/eta + 2) within MAX_POWER_PRODUCT."""
    eta = 1.0
    while 2 * e * (math.ceil(-math.log(l_min) / (eta / 2)) + 2) <= L.MAX_POWER_PRODUCT:
        eta /= 2
    return eta


_CHILD = (
    "import resource, sys\n"
    "from certdp.cli import main\n"
    "code = main(['verify', sys.argv[1], '--allow-untrusted', '--json'], out=lambda s: None)\n"
    "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def run(path: Path) -> tuple[float, float, int]:
    """(seconds, peak RSS in MiB, exit code) of one verification in a fresh process."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True)
    seconds = time.perf_counter() - start
    last = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "0"
    return seconds, (int(last) if last.isdigit() else -1) / 1024, proc.returncode


def main() -> None:
    quick = "--quick" in sys.argv
    committed = sorted((ROOT / "certificates").glob("random_allocation_*.json"))
    if quick:
        committed = committed[:1]
    rows = []
    for path in committed:
        secs, mib, code = run(path)
        rows.append((f"committed {path.name}", secs, mib, code))
    base = max(r[1] for r in rows)
    with tempfile.TemporaryDirectory() as tmp:
        for name, doc in corner_cases()[: 2 if quick else None]:
            path = Path(tmp) / "corner.json"
            path.write_text(json.dumps(doc))
            secs, mib, code = run(path)
            rows.append((name, secs, mib, code))
    print(f"{'certificate':55s} {'seconds':>8s} {'x slowest committed':>20s} {'max RSS MiB':>12s} {'exit':>5s}")
    for name, secs, mib, code in rows:
        print(f"{name:55s} {secs:8.1f} {secs / base:20.2f} {mib:12.0f} {code:5d}")


if __name__ == "__main__":
    main()
