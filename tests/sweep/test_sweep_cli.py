"""certdp sweep in this process (--scheduler serial): each cell's file is exactly what its command
prints, a second run does no work, a killed sweep loses at most the cells in flight, failures are
recorded while the other cells go on, certificates are signed on the client, and bad input exits 2
with one line naming the key."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import pytest

from certdp.cert.crypto import keygen, load_public_key_b64
from certdp.cert.verify import check_integrity, verify_bytes
from certdp.cli import main
from certdp.sweep import ledger
from tests.counters import ticking_budget

EPS = """job = "eps"
[grid]
mechanism = "gaussian"
sigma = [1, 2.5]
steps = {from = 1, to = 3, step = 1}
delta = 1e-5
"""


def sweep(tmp_path: Path, text: str, *extra: str, out: str = "out") -> tuple[int, dict]:
    spec = tmp_path / "spec.toml"
    spec.write_text(text)
    lines: list[str] = []
    code = main(
        ["sweep", str(spec), "--out", str(tmp_path / out), "--scheduler", "serial", "--json", *extra], lines.append
    )
    return code, (json.loads(lines[0]) if lines else {})


def manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())


def test_each_cell_file_is_what_its_command_prints(tmp_path):
    code, rec = sweep(tmp_path, EPS)
    assert code == 0 and rec["cells"] == rec["ran"] == 6 and rec["counts"] == {"ok": 6}
    m = manifest(tmp_path / "out")
    assert (
        m["spec"]["content"]["job"] == "eps"
        and m["versions"]["certdp"]
        and not (tmp_path / "out/manifest.journal").exists()
    )
    for e in m["cells"]:
        lines: list[str] = []
        assert main(e["argv"][1:], lines.append) == 0
        direct = json.loads(lines[0])
        written = json.loads((tmp_path / "out" / e["output"]).read_text())
        assert written.pop("exit_code") == 0 and written == direct  # the same enclosure, to the last digit
        assert e["summary"] == {"lower": direct["lower"], "upper": direct["upper"]}
        assert {"sigma": direct["params"]["sigma"], "steps": str(direct["steps"])}.items() <= e["params"].items()


def test_a_second_run_does_no_work_and_reruns_only_what_changed(tmp_path):
    out = tmp_path / "out"
    assert sweep(tmp_path, EPS)[0] == 0
    stamp = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in out.glob("eps_*.json")}
    code, rec = sweep(tmp_path, EPS)
    assert code == 0 and rec["ran"] == 0 and rec["skipped"] == 6
    assert {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in out.glob("eps_*.json")} == stamp
    # a file that no longer matches the manifest is recomputed, and only it
    victim = out / "eps_gaussian_sigma1_steps2.json"
    victim.write_text(victim.read_text().replace('"upper"', '"upper" ', 1))
    code, rec = sweep(tmp_path, EPS)
    assert rec["ran"] == 1 and victim.read_bytes() == stamp[victim.name][1]
    # a changed value is a new command line: that cell alone runs again
    code, rec = sweep(tmp_path, EPS.replace("delta = 1e-5", "delta = 1e-5\n[[grid]]\nmechanism = 'laplace'"))
    assert code == 2  # [grid] and [[grid]] cannot be mixed: TOML refuses it, one line
    code, rec = sweep(tmp_path, EPS.replace("sigma = [1, 2.5]", "sigma = [1, 2.25]"), out="out")
    assert rec["ran"] == 3 and rec["skipped"] == 3


def test_failed_cells_are_recorded_and_rerun_while_the_others_go_on(tmp_path, monkeypatch, capsys):
    text = """job = "eps"
[[grid]]
mechanism = "gaussian"
sigma = 1
delta = 1e-5
via = "rdp"
max_seconds = [1e-9, 100]
"""
    # (via rdp: the exact closed form, gaussian's default, never reaches a budget check)
    # the budgets' clock advances 1 s per read: 1e-9 runs out at the first check, 100 at the
    # hundredth, which the cells never reach (asserted below), however loaded the machine
    clock = ticking_budget(monkeypatch, 1.0)
    code, rec = sweep(tmp_path, text)
    assert clock.reads < 100, clock.reads
    assert code == 1 and rec["counts"] == {"failed": 1, "ok": 1}
    bad = next(e for e in manifest(tmp_path / "out")["cells"] if e["status"] == "failed")
    assert bad["exit_code"] == 3 and "max-seconds=1e-09 ran out" in bad["error"] and bad["output"] is None
    code, rec = sweep(tmp_path, text)
    assert code == 1 and rec["ran"] == 1 and rec["skipped"] == 1  # the failed one is tried again


def test_a_killed_sweep_loses_at_most_the_cells_in_flight(tmp_path):
    text = """job = "eps"
[grid]
mechanism = "subsampled-gaussian"
via = "pld"
q = 0.25
sigma = {from = 1, to = 1.4, step = 0.1}
steps = 10
delta = 1e-5
h = 0.00390625
"""
    spec = tmp_path / "spec.toml"
    spec.write_text(text)
    out, marker, errors = tmp_path / "out", tmp_path / "third-cell-started", tmp_path / "stderr"
    # The sweep's third cell never ends: it says it started (the marker file) and sleeps until the
    # kill. No race with the clock: the kill lands with two cells done and the third in flight.
    script = (
        "import importlib, sys, time\n"
        "rs = importlib.import_module('certdp.cli.run_sweep')  # certdp.cli.run_sweep is also a function\n"
        "marker = sys.argv.pop(1)\n"
        "real, started = rs.run_cell, []\n"
        "def run_cell(task):\n"
        "    started.append(task)\n"
        "    if len(started) == 3:\n"
        "        open(marker, 'w').close()\n"
        "        while True:\n"
        "            time.sleep(3600)\n"
        "    return real(task)\n"
        "rs.run_cell = run_cell\n"
        "from certdp.cli import main_entry\n"
        "main_entry()\n"
    )
    argv = [sys.executable, "-c", script, str(marker), "sweep", str(spec), "--out", str(out), "--scheduler", "serial"]
    with errors.open("wb") as err:
        proc = subprocess.Popen([*argv, "--json"], stdout=subprocess.DEVNULL, stderr=err)
    deadline = time.monotonic() + 600  # a safety net only: the marker appears within seconds
    while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.kill()  # SIGKILL
    proc.wait()
    assert marker.exists(), (proc.returncode, errors.read_text())
    journal = out / ledger.JOURNAL
    kept = {n for n, e in ledger.previous_cells(out).items() if e["status"] == "ok"}
    assert len(kept) == 2 and journal.exists()  # the two cells done survive; the one in flight is lost
    code, rec = sweep(tmp_path, text)
    assert code == 0 and rec["ran"] == 3 and rec["counts"] == {"ok": 5}
    assert not journal.exists() and len(manifest(out)["cells"]) == 5


CAL = """job = "calibrate"
name = "sg_q{q}_eps{epsilon}"
[grid]
mechanism = "subsampled-gaussian"
q = 0.25
steps = 4
epsilon = [1, 2]
delta = 1e-5
step = 0.01
h = 0.00390625
"""


def test_certificates_are_signed_on_the_client_and_verify(tmp_path):
    priv, pub = keygen(tmp_path / "k.key")
    code, rec = sweep(tmp_path, CAL, "--sign", str(priv))
    assert code == 0 and rec["counts"] == {"ok": 2}
    key = load_public_key_b64(pub)
    assert manifest(tmp_path / "out")["signed_by"] == key
    for name in ("sg_q0.25_eps1.json", "sg_q0.25_eps2.json"):
        data = (tmp_path / "out" / name).read_bytes()
        assert check_integrity(json.loads(data), key) == key
        assert verify_bytes(data, key).status == "valid"  # recomputed: the claim and the refutation hold
    # another key: every certificate is computed again and signed by it
    priv2, _ = keygen(tmp_path / "k2.key")
    code, rec = sweep(tmp_path, CAL, "--sign", str(priv2))
    assert code == 0 and rec["ran"] == 2
    # a verify sweep over them: one record per certificate, the tampered one refuted (exit 1)
    bad = tmp_path / "out" / "sg_q0.25_eps2.json"
    bad.write_text(bad.read_text().replace('"steps": 4,', '"steps": 3,'))
    text = 'job = "verify"\nname = "v_{certificate}"\n[grid]\ncertificate = {glob = "out/sg_*.json"}\n'
    text += f'pubkey = "{tmp_path / "k2.key.pub"}"\n'
    code, rec = sweep(tmp_path, text, out="checked")
    assert code == 1 and rec["counts"] == {"ok": 1, "refuted": 1}
    refuted = json.loads((tmp_path / "checked" / "v_sg_q0.25_eps2.json").read_text())
    assert (
        refuted["exit_code"] == 1 and "digest" in refuted["error"] and str(tmp_path / "checked") not in refuted["error"]
    )
    ok = json.loads((tmp_path / "checked" / "v_sg_q0.25_eps1.json").read_text())
    assert ok["status"] == "valid" and ok["certificate"] == "out/sg_q0.25_eps1.json"


def test_audit_and_claims_cells_record_their_verdicts(tmp_path):
    """An UNSOUND peer number and a refuted claim are the cells' answers: status refuted, exit 1."""
    claim = "dp_accounting rdp eps={} sigma=2 q=0.5 steps=2 delta=1e-5"
    text = f'job = "audit"\nname = "a{{claim}}"\n[grid]\nclaim = ["{claim.format(5)}", "{claim.format(1)}"]\n'
    code, rec = sweep(tmp_path, text)
    assert code == 1 and rec["counts"] == {"ok": 1, "refuted": 1}
    verdicts = {
        e["status"]: json.loads((tmp_path / "out" / e["output"]).read_text())
        for e in manifest(tmp_path / "out")["cells"]
    }
    assert verdicts["ok"]["verdict"] == "conservative" and verdicts["refuted"]["verdict"] == "UNSOUND"
    assert Fraction(verdicts["refuted"]["lower"]) > 1  # the certified RDP epsilon is above the peer's 1
    wrong = Path(__file__).resolve().parents[1] / "claims" / "wrong_claims.toml"
    code, rec = sweep(tmp_path, f'job = "claims"\n[grid]\nfile = "{wrong}"\n', out="claims")
    entry = manifest(tmp_path / "claims")["cells"][0]
    assert code == 1 and entry["status"] == "refuted" and entry["summary"]["counts"]["refuted"] == 5
    assert entry["argv"][:3] == ["certdp", "claims", "check"]


@pytest.mark.parametrize(
    "text, extra, message",
    [
        (
            'job = "eps"\n[grid]\nmechanism = "gaussian"\nsigma = 1\ndelta = 1e-5\ncolour = 1',
            (),
            "grid[0].colour is not a parameter of certdp eps",
        ),
        (
            'job = "eps"\n[grid]\nmechanism = "gaussian"\nsigma = 1\ndelta = 1e-5\nout = "x"',
            (),
            "grid[0].out is set by the sweep",
        ),
        (
            'job = "eps"\n[grid]\nmechanism = "subsampled-gaussian"\nsigma = 1\ndelta = 1e-5\nq = [0.5, 2]',
            (),
            "grid[0] cell eps_subsampled-gaussian_q2: q=2 must be <= 1",
        ),
        (
            'job = "eps"\n[grid]\nmechanism = "gaussian"\nsigma = 1\ndelta = 1e-5\nq = 0.5',
            (),
            "q=0.5 is not a parameter of gaussian",
        ),
        ('job = "eps"\n[grid]\nmechanism = "gaussian"\nsigma = 1', (), "the following arguments are required: --delta"),
        (
            'job = "calibrate"\n[grid]\nmechanism = "random-allocation"\nsteps = 10\ntv = 0.1\nsigma = 1',
            (),
            "sigma=1 is what calibrate computes",
        ),
        ('job = "verify"\n[grid]\ncertificate = "nope.json"\nallow_untrusted = true', (), "certificate="),
        (
            'job = "verify"\n[grid]\ncertificate = "spec.toml"\nallow_untrusted = 1',
            (),
            "grid[0].allow_untrusted=1 must be true or false",
        ),
        ('job = "verify"\n[grid]\ncertificate = "spec.toml"', (), "pubkey is required"),
        (
            'job = "eps"\n[grid]\nmechanism = "--event=x.json"\ndelta = 1e-5',
            (),
            "grid[0].mechanism=--event=x.json must not start with -",
        ),
        (
            'job = "eps"\n[grid]\nmechanism = "gaussian"\nsigma = 1\ndelta = 1e-5',
            ("--sign", "k.key"),
            "sign applies to calibrate sweeps",
        ),
        (
            'job = "eps"\n[grid]\nmechanism = "gaussian"\nsigma = 1\ndelta = 1e-5',
            ("--recheck", "yes"),
            "recheck applies to calibrate sweeps",
        ),
        (
            'job = "eps"\n[grid]\nmechanism = "gaussian"\nsigma = 1\ndelta = 1e-5',
            ("--workers", "0"),
            "workers=0 must be >= 1",
        ),
        (
            'job = "eps"\n[grid]\nmechanism = "gaussian"\nsigma = 1\ndelta = 1e-5',
            ("--workers", "2"),
            "workers=2 does not apply to scheduler=serial",
        ),
    ],
)
def test_bad_input_exits_2_naming_the_key(tmp_path, capsys, text, extra, message):
    code, _ = sweep(tmp_path, text, *extra)
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()  # nothing was started


def test_scheduler_flags_and_a_busy_folder(tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text(EPS)
    for flags, message in [
        (["--scheduler", "yarn"], "scheduler=yarn must be serial, processes, local or a Dask scheduler address"),
        (["--scheduler", "tcp://127.0.0.1:8786", "--workers", "2"], "workers=2 does not apply to scheduler=tcp://"),
    ]:
        assert main(["sweep", str(spec), "--out", str(tmp_path / "o"), *flags]) == 2
        assert message in capsys.readouterr().err
    (tmp_path / "file").write_text("")
    assert main(["sweep", str(spec), "--out", str(tmp_path / "file"), "--scheduler", "serial"]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    (tmp_path / "busy").mkdir()
    with ledger.locked(tmp_path / "busy"):
        assert main(["sweep", str(spec), "--out", str(tmp_path / "busy"), "--scheduler", "serial"]) == 2
    assert "is in use by another certdp sweep" in capsys.readouterr().err


def test_without_dask_the_sweep_says_how_to_install_it(tmp_path, capsys, monkeypatch):
    for mod in ("dask", "distributed"):
        monkeypatch.setitem(sys.modules, mod, None)  # import dask now raises ImportError
    spec = tmp_path / "spec.toml"
    spec.write_text(EPS)
    assert main(["sweep", str(spec), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert 'scheduler=local needs Dask distributed, which is not installed: pip install "certdp[sweep]"' in err
    assert not (tmp_path / "o" / "manifest.json").exists()
    assert main(["sweep", str(spec), "--out", str(tmp_path / "o"), "--scheduler", "serial"]) == 0


def test_dry_run_lists_the_cells_and_what_would_be_skipped(tmp_path):
    assert sweep(tmp_path, EPS)[0] == 0
    (tmp_path / "out" / "eps_gaussian_sigma2.5_steps3.json").unlink()
    code, plan = sweep(tmp_path, EPS, "--dry-run")
    assert code == 0 and plan["to_run"] == 1 and len(plan["cells"]) == 6
    assert [c["name"] for c in plan["cells"] if not c["skip"]] == ["eps_gaussian_sigma2.5_steps3"]
