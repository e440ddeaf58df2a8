"""Issue 39, item 2: one capped, regular-file-only reader (certdp.fileio) behind every file flag.

Every file-reading flag and command is driven with /dev/zero, a FIFO with no writer, a /proc
file, a directory and a sparse file far over every cap: each must exit 2 at once with one line
naming the flag (a FIFO would block a plain open(), /dev/zero and /proc report size 0 and
/dev/zero never ends). Run in a forked child with a timeout, so a regression hangs no test run.
"""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import pytest

from certdp.cert.crypto import keygen
from certdp.errors import InvalidArgument, LimitExceeded
from certdp.fileio import read_capped, read_text

REPO = Path(__file__).resolve().parents[1]
CERT = REPO / "certificates" / "dpsgd_q0.005_n500_eps3.json"

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    tmp = tmp_path_factory.mktemp("reader")
    fifo = tmp / "fifo"
    os.mkfifo(fifo)
    big = tmp / "big.json"
    with open(big, "wb") as fh:  # sparse: 300 MiB of size, no disk
        fh.truncate(300 << 20)
    (tmp / "adir").mkdir()
    keygen(tmp / "k.key")
    (tmp / "out").mkdir()
    return {
        "zero": "/dev/zero",
        "fifo": str(fifo),
        "proc": "/proc/self/status",
        "dir": str(tmp / "adir"),
        "big": str(big),
        "tmp": str(tmp),
    }


#: (id, argv with {bad} for the hostile file, the flag name the error must name)
FLAGS = [
    ("verify-cert", ["verify", "{bad}", "--allow-untrusted"], "certificate"),
    ("verify-pubkey", ["verify", str(CERT), "--pubkey", "{bad}"], "pubkey"),
    ("sign-cert", ["sign", "{bad}", "--key", "{tmp}/k.key"], "certificate"),
    ("sign-key", ["sign", str(CERT), "--key", "{bad}"], "key"),
    (
        "calibrate-sign",
        ["calibrate", "random-allocation", "--steps", "2", "--tv", "0.9", "--out", "{tmp}/c.json", "--sign", "{bad}"],
        "sign",
    ),
    ("audit-cases", ["audit", "--cases", "{bad}"], "cases"),
    ("audit-rerun", ["audit", "--rerun", "{bad}"], "rerun"),
    ("claims-file", ["claims", "check", "--file", "{bad}"], "claims"),
    ("eps-event", ["eps", "--event", "{bad}", "--delta", "1e-5"], "event"),
    ("sweep-spec", ["sweep", "{bad}", "--out", "{tmp}/out"], "spec"),
    (
        "sweep-sign",
        ["sweep", str(REPO / "certificates" / "certificates.toml"), "--out", "{tmp}/out", "--sign", "{bad}"],
        "sign",
    ),
]


def _run(argv: list[str], conn: object) -> None:
    import contextlib
    import io

    from certdp.cli import main

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    conn.send((code, err.getvalue()))  # type: ignore[attr-defined]


def run_cli(argv: list[str], timeout: float = 60) -> tuple[int, str]:
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe()
    proc = ctx.Process(target=_run, args=(argv, child))
    proc.start()
    proc.join(timeout)
    if proc.is_alive():
        proc.kill()
        proc.join()
        pytest.fail(f"certdp {' '.join(argv)} did not finish in {timeout} s (blocked or unbounded read)")
    assert parent.poll(), f"certdp {' '.join(argv)} died with exit code {proc.exitcode}"
    return parent.recv()  # type: ignore[no-any-return]


@pytest.mark.parametrize("kind", ["zero", "fifo", "proc", "dir", "big"])
@pytest.mark.parametrize(("cid", "argv", "flag"), FLAGS, ids=[f[0] for f in FLAGS])
def test_every_file_flag_refuses_hostile_files(
    files: dict[str, str], cid: str, argv: list[str], flag: str, kind: str
) -> None:
    bad = files[kind]
    code, err = run_cli([a.format(bad=bad, tmp=files["tmp"]) for a in argv], timeout=30)
    assert code == 2, (cid, kind, code, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert f"{flag}={bad}" in lines[0], lines[0]


@pytest.mark.parametrize("kind", ["zero", "fifo", "proc", "dir", "big"])
def test_sweep_file_keys_refuse_hostile_files(files: dict[str, str], kind: str, tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_text(f'job = "verify"\nname = "x"\n[grid]\ncertificate = "{files[kind]}"\nallow_untrusted = true\n')
    code, err = run_cli(["sweep", str(spec), "--out", str(tmp_path / "out")], timeout=30)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert files[kind] in err and "Traceback" not in err


def test_reader_contract(tmp_path: Path) -> None:
    ok = tmp_path / "ok.txt"
    ok.write_bytes(b"x" * 100)
    assert read_capped(ok, "f", 100) == b"x" * 100
    with pytest.raises(LimitExceeded, match=r"^f=.*ok\.txt is larger than the limit of 99 bytes$"):
        read_capped(ok, "f", 99)
    with pytest.raises(InvalidArgument, match="cannot be read"):
        read_capped(tmp_path / "missing", "f", 100)
    link = tmp_path / "link"
    link.symlink_to(ok)
    assert read_capped(link, "f", 100) == b"x" * 100
    with pytest.raises(InvalidArgument, match="cannot be read"):
        read_capped(link, "f", 100, follow_links=False)
    (tmp_path / "bad.txt").write_bytes(b"\xff\xfe")
    with pytest.raises(InvalidArgument, match="not UTF-8"):
        read_text(tmp_path / "bad.txt", "f", 100)
    with pytest.raises(InvalidArgument, match="must be a file path"):
        read_capped(" ", "f", 100)


def test_load_cases_does_not_read_dev_zero() -> None:
    """The finding: load_cases checked st_size (0 for /dev/zero) and then read it without limit."""
    from certdp.audit.cases import load_cases

    with pytest.raises(InvalidArgument, match="cases=/dev/zero is not a regular file"):
        load_cases("/dev/zero")


def test_sweep_inputs_are_read_once_and_capped_in_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """10,000 cells naming distinct 16 MiB files held 160 GB: the sweep's inputs are capped in all,
    and a file named by many cells is read once."""
    import certdp.cli.run_sweep as rs
    from certdp.cli import main

    reads: list[str] = []
    real = rs.read_capped

    def counting(path: object, what: str, limit: int, **kw: object) -> bytes:
        reads.append(str(path))
        return real(path, what, limit, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(rs, "read_capped", counting)
    for i in range(3):
        (tmp_path / f"c{i}.json").write_bytes(b"x" * 600)
    spec = tmp_path / "s.toml"
    spec.write_text(
        'job = "verify"\nname = "{certificate}"\n[grid]\ncertificate = { glob = "c*.json" }\npubkey = "c0.json"\n'
    )
    monkeypatch.setattr(rs, "MAX_TOTAL_INPUT_BYTES", 1000)
    assert main(["sweep", str(spec), "--out", str(tmp_path / "o"), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "input files exceed 1000 bytes in all" in err and len(err.strip().splitlines()) == 1
    monkeypatch.setattr(rs, "MAX_TOTAL_INPUT_BYTES", 2000)
    reads.clear()
    code = main(["sweep", str(spec), "--out", str(tmp_path / "o"), "--dry-run"])
    assert code == 0, capsys.readouterr().err
    assert sorted(Path(p).name for p in reads) == ["c0.json", "c1.json", "c2.json"]  # c0 read once
