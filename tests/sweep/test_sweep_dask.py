"""certdp sweep on Dask: a LocalCluster that loses a worker mid-sweep, Dask's multiprocessing
scheduler, the sweep's own LocalCluster, and a scheduler and a worker started as separate
processes over tcp://127.0.0.1 (the multi-machine setup on one machine)."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from certdp.cert.crypto import keygen, load_public_key_b64
from certdp.cert.verify import check_integrity
from certdp.cli import main
from certdp.sweep import engine, ledger

distributed = pytest.importorskip("distributed")

CAL6 = """job = "calibrate"
name = "sg_n{steps}_eps{epsilon}"
[grid]
mechanism = "subsampled-gaussian"
q = 0.25
steps = [4, 8]
epsilon = [1, 2, 3]
delta = 1e-5
step = 0.01
h = 0.00390625
"""

EPS3 = """job = "eps"
[grid]
mechanism = "gaussian"
sigma = [1, 2, 3]
delta = 1e-5
"""


NO_UI = ("--no-dashboard", "--scheduler-file")


def cli(spec: Path, out: Path, scheduler: str, *extra: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "certdp", "sweep", str(spec), "--out", str(out), "--scheduler", scheduler, "--json"]
    argv += extra
    return subprocess.run(argv, capture_output=True, text=True, timeout=600)


def wait_for(pred, what: str, seconds: float = 600.0):
    """Poll ``pred`` until it is true: every wait is for an event, the timeout only a safety net."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        got = pred()
        if got:
            return got
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def _hold_the_third_cell(folder: str) -> None:
    """Run on each worker (client.run): the third cell to start on any of them never ends; its
    worker writes its pid to ``folder``/held and sleeps until killed. The cells pickle
    run_cell by reference, so a worker finds this wrapper in its place."""
    import importlib
    import os
    import time

    rs = importlib.import_module("certdp.cli.run_sweep")  # certdp.cli.run_sweep is also a function's name
    real = rs.run_cell

    def run_cell(task: object) -> object:
        n = 1
        while True:  # claim the next start number, across the workers
            try:
                os.close(os.open(os.path.join(folder, f"start{n}"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                break
            except FileExistsError:
                n += 1
        if n == 3:
            with open(os.path.join(folder, "held.tmp"), "w") as f:
                f.write(str(os.getpid()))
            os.rename(os.path.join(folder, "held.tmp"), os.path.join(folder, "held"))
            while True:
                time.sleep(3600)
        return real(task)

    rs.run_cell = run_cell


def test_a_worker_killed_mid_sweep_costs_one_retry_and_nothing_else(tmp_path):
    spec = tmp_path / "cal.toml"
    spec.write_text(CAL6)
    out, held = tmp_path / "out", tmp_path / "held"
    held.mkdir()
    names = {f"sg_n{n}_eps{e}" for n in (4, 8) for e in (1, 2, 3)}
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=logging.ERROR
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        client.run(_hold_the_third_cell, str(held))
        pids = client.run(os.getpid)
        argv = [sys.executable, "-m", "certdp", "sweep", str(spec), "--out", str(out), "--json"]
        proc = subprocess.Popen(
            [*argv, "--scheduler", cluster.scheduler_address], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        journal = out / ledger.JOURNAL
        # mid-sweep, by events rather than a race with the clock: a first cell is journaled and the
        # third one is running, held, on the worker that is then killed hard (no clean shutdown)
        wait_for(lambda: journal.exists() and journal.read_text().strip(), "the first finished cell")
        wait_for(lambda: (held / "held").exists(), "the third cell")
        busy = [w for w, pid in pids.items() if pid == int((held / "held").read_text())]
        assert len(busy) == 1 and any(busy[0] == w for w, keys in client.processing().items() if keys)
        os.kill(pids[busy[0]], signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=600)
        assert proc.returncode == 0, stderr
        rec = json.loads(stdout)
        assert rec["ran"] == 6 and rec["counts"] == {"ok": 6}
        m = json.loads((out / "manifest.json").read_text())
        assert sorted(e["name"] for e in m["cells"]) == sorted(names)  # each cell exactly once
        assert m["scheduler"] == cluster.scheduler_address and m["counts"] == {"ok": 6}
        assert not journal.exists()
        for e in m["cells"]:
            data = (out / e["output"]).read_bytes()
            assert e["status"] == "ok" and ledger.sha256_hex(data) == e["sha256"]
            check_integrity(json.loads(data))
        # the nanny replaced the killed worker: two workers again, one of them new
        wait_for(lambda: len(client.scheduler_info()["workers"]) == 2, "the restarted worker")
        assert pids[busy[0]] not in client.run(os.getpid).values()
        stamp = {p.name: p.stat().st_mtime_ns for p in out.glob("sg_*.json")}
        again = subprocess.run(
            [*argv, "--scheduler", cluster.scheduler_address], capture_output=True, text=True, timeout=600
        )
        rec2 = json.loads(again.stdout)
        assert again.returncode == 0 and rec2["ran"] == 0 and rec2["skipped"] == 6
        assert {p.name: p.stat().st_mtime_ns for p in out.glob("sg_*.json")} == stamp


@pytest.mark.parametrize("scheduler", ["processes", "local"])
def test_the_local_schedulers_run_cells_in_other_processes(tmp_path, scheduler):
    spec = tmp_path / "eps.toml"
    spec.write_text(EPS3)
    lines: list[str] = []
    argv = ["sweep", str(spec), "--out", str(tmp_path / "o"), "--scheduler", scheduler, "--workers", "2", "--json"]
    assert main(argv, lines.append) == 0
    rec = json.loads(lines[0])
    m = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert rec["counts"] == {"ok": 3} and m["workers"] == 2 and "dask" in m["versions"]
    assert all(e["worker"] != engine.here() for e in m["cells"])
    for e in m["cells"]:  # the same enclosure as the command run here
        direct: list[str] = []
        assert main(e["argv"][1:], direct.append) == 0
        written = json.loads((tmp_path / "o" / e["output"]).read_text())
        assert {k: written[k] for k in ("lower", "upper")} == {k: json.loads(direct[0])[k] for k in ("lower", "upper")}


def test_a_scheduler_and_a_worker_in_separate_processes(tmp_path, monkeypatch, capsys):
    """The multi-machine setup, on one machine: `dask scheduler` and `dask worker` as their own
    processes, the sweep a client that reaches them over tcp://127.0.0.1."""
    sfile = tmp_path / "scheduler.json"
    mod = "distributed.cli"
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", f"{mod}.dask_scheduler", "--host", "127.0.0.1", "--port", "0", *NO_UI, str(sfile)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    try:
        wait_for(lambda: sfile.exists() and sfile.read_text().strip(), "the scheduler file")
        address = json.loads(sfile.read_text())["address"]
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", f"{mod}.dask_worker", "--nthreads", "1", "--no-nanny", *NO_UI, str(sfile)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        with distributed.Client(address) as client:
            client.wait_for_workers(1, timeout=600)  # a safety net: the worker is up in seconds
        assert address.startswith("tcp://127.0.0.1:")
        spec = tmp_path / "eps.toml"
        spec.write_text(EPS3)
        done = cli(spec, tmp_path / "o", address)
        assert done.returncode == 0, done.stderr
        m = json.loads((tmp_path / "o" / "manifest.json").read_text())
        assert m["counts"] == {"ok": 3} and len({e["worker"] for e in m["cells"]}) == 1
        # a signed calibration on the cluster: by default the client recomputes the certificate first
        priv, pub = keygen(tmp_path / "k.key")
        cal = tmp_path / "cal.toml"
        cal.write_text(CAL6.replace("steps = [4, 8]", "steps = 4").replace("epsilon = [1, 2, 3]", "epsilon = 2"))
        done = cli(cal, tmp_path / "c", address, "--sign", str(priv))
        assert done.returncode == 0, done.stderr
        m = json.loads((tmp_path / "c" / "manifest.json").read_text())
        assert m["recheck"] is True and m["signed_by"] == load_public_key_b64(pub)
        assert check_integrity(json.loads((tmp_path / "c" / "sg_n4_eps2.json").read_text()), m["signed_by"])
        # a client whose certdp differs from the workers' is refused before any task is sent
        import certdp

        monkeypatch.setattr(certdp, "__version__", "0.0.0")  # this process only: the worker keeps its own
        assert main(["sweep", str(spec), "--out", str(tmp_path / "o2"), "--scheduler", address]) == 2
        assert "this client runs {'certdp': '0.0.0'" in capsys.readouterr().err
    finally:
        for p in reversed(procs):  # the worker first: it would wait for a scheduler that is gone
            p.kill()
            p.wait(timeout=30)


def test_the_sigma_table_runs_its_cells_on_the_engine(capsys):
    """certdp table sigma hands its cells to the same engine: on two Dask processes the rows are
    the serial rows (the certified sigma does not depend on where it was computed)."""
    argv = ["table", "sigma", "--q", "0.5", "--steps", "2,3", "--epsilon", "2", "--delta", "1e-5", "--step", "0.01"]
    rows = {}
    for extra in ([], ["--jobs", "2"], ["--scheduler", "local", "--jobs", "2"]):
        lines: list[str] = []
        assert main([*argv, *extra, "--json"], lines.append) == 0
        rows[tuple(extra)] = [{k: v for k, v in r.items() if k != "seconds"} for r in json.loads(lines[0])["rows"]]
    assert rows[()] == rows[("--jobs", "2")] == rows[("--scheduler", "local", "--jobs", "2")]
    assert all(r["sigma"] is not None for r in rows[()])
