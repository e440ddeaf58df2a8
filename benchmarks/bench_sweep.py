"""A 24-cell sweep of subsampled-Gaussian calibrations on Dask: 1 worker against 2, and the same
spec on a scheduler and workers started as separate processes over tcp://127.0.0.1 (how it runs on
a multi-machine cluster).

    python benchmarks/bench_sweep.py            # about 6 minutes on 2 cores
    python benchmarks/bench_sweep.py --cells 8  # a shorter run

Prints the wall time of each run (cluster start-up included), the summed time of the cells, the
speed-up of 2 workers over 1, and checks that every run certified the same sigma in every cell.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SPEC = """job = "calibrate"
name = "sg_q{{q}}_n{{steps}}_eps{{epsilon}}"
[grid]
mechanism = "subsampled-gaussian"
q = {qs}
steps = [50, 100, 200]
epsilon = [1, 2, 4, 8]
delta = "1e-5"
step = "1e-4"
"""


def sweep(spec: Path, out: Path, *flags: str) -> tuple[float, dict]:
    argv = [sys.executable, "-m", "certdp", "sweep", str(spec), "--out", str(out), "--json", *flags]
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"sweep failed ({done.returncode}): {done.stderr.strip()}")
    return wall, json.loads((out / "manifest.json").read_text())


def sigmas(manifest: dict) -> dict[str, str]:
    return {c["name"]: c["summary"]["sigma"] for c in manifest["cells"]}


def ui(sfile: Path) -> list[str]:
    return ["--no-dashboard", "--scheduler-file", str(sfile)]


def tcp_cluster(tmp: Path, workers: int) -> tuple[str, list[subprocess.Popen[bytes]]]:
    sfile = tmp / "scheduler.json"
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    mod = "distributed.cli"
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", f"{mod}.dask_scheduler", "--host", "127.0.0.1", "--port", "0", *ui(sfile)],
            **quiet,
        )
    ]
    while not (sfile.exists() and sfile.read_text().strip()):
        time.sleep(0.05)
    procs.append(
        subprocess.Popen(
            [sys.executable, "-m", f"{mod}.dask_worker", "--nworkers", str(workers), "--nthreads", "1", *ui(sfile)],
            **quiet,
        )
    )
    from distributed import Client

    address = json.loads(sfile.read_text())["address"]
    with Client(address) as client:
        client.wait_for_workers(workers, timeout=120)
    return address, procs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--cells", type=int, choices=(8, 24), default=24, help="24 (q in 0.01, 0.05) or 8 (q = 0.01, eps 1, 4)"
    )
    a = ap.parse_args()
    qs = '["0.01", "0.05"]' if a.cells == 24 else '["0.01"]'
    text = SPEC.format(qs=qs)
    if a.cells == 8:
        text = text.replace("epsilon = [1, 2, 4, 8]", "epsilon = [1, 4]").replace(
            "[50, 100, 200]", "[50, 100, 200, 400]"
        )
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        spec = tmp / "spec.toml"
        spec.write_text(text)
        runs = {}
        for n in (1, 2):
            runs[f"local, {n} worker{'s' if n > 1 else ''}"] = sweep(spec, tmp / f"w{n}", "--workers", str(n))
        address, procs = tcp_cluster(tmp, 2)
        try:
            runs[f"tcp ({address}), 2 workers"] = sweep(spec, tmp / "tcp", "--scheduler", address)
        finally:
            for p in reversed(procs):
                p.kill()
                p.wait()
    first = next(iter(runs.values()))[1]
    cells = len(first["cells"])
    print(f"certdp sweep: {cells} calibrations of subsampled-gaussian (PLD, step 1e-4, delta 1e-5)")
    print(f"{'run':<44} {'wall s':>8} {'cells s':>8} {'ratio to 1 worker':>18}")
    base = runs["local, 1 worker"][0]
    for name, (wall, m) in runs.items():
        busy = sum(c["seconds"] for c in m["cells"])
        print(f"{name:<44} {wall:8.1f} {busy:8.1f} {base / wall:18.2f}")
    same = all(sigmas(m) == sigmas(first) for _, m in runs.values())
    print(f"same certified sigma in every cell of every run: {same}")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
