"""Temporary files and key generation under attack and under concurrency (issue 12, items 10 and 11).

atomic_write used the predictable name ``.NAME.tmp<pid>`` opened without O_EXCL (a planted symlink
received the data, the private key included) and shared it between threads; keygen checked for
an existing key and then replaced it, so concurrent runs all "succeeded" with mismatched keys.
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import os
import stat
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from certdp.cert import crypto
from certdp.cert.crypto import atomic_write, keygen, load_private_key, public_key_b64
from certdp.cli import main
from certdp.errors import InvalidArgument, fmt_value

WORKERS = 8
TRIALS = 5


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _assert_pair_matches(key: Path) -> None:
    pub = key.with_name(key.name + ".pub")
    assert public_key_b64(load_private_key(key).public_key()) == pub.read_text().strip()
    assert _mode(key) == 0o600 and not key.is_symlink() and not pub.is_symlink()


def _leftovers(directory: Path, keep: set[str]) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name not in keep)


# --- atomic_write -----------------------------------------------------------------------------


def test_planted_symlinks_do_not_receive_the_data(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"untouched")
    victim.chmod(0o644)
    target = tmp_path / "project.key"
    pid = os.getpid()
    guesses = [f".{target.name}.tmp{pid + k}" for k in range(-4, 5)] + [f".{target.name}.tmp", f"{target.name}.tmp"]
    for name in guesses:
        (tmp_path / name).symlink_to(victim)
    atomic_write(target, b"PRIVATE KEY", mode=0o600)
    assert victim.read_bytes() == b"untouched" and _mode(victim) == 0o644
    assert not target.is_symlink() and target.read_bytes() == b"PRIVATE KEY" and _mode(target) == 0o600
    assert all(os.readlink(tmp_path / name) == str(victim) for name in guesses)
    assert _leftovers(tmp_path, {"victim", target.name, *guesses}) == []


@pytest.mark.parametrize("mode", [0o600, 0o644])
def test_mode_is_exact_whatever_the_umask(tmp_path: Path, mode: int) -> None:
    old = os.umask(0o077)
    try:
        atomic_write(tmp_path / "f", b"x", mode=mode)
    finally:
        os.umask(old)
    assert _mode(tmp_path / "f") == mode


def test_a_failed_write_leaves_no_temporary_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "d").mkdir()  # a directory is refused before any temporary file is made
    with pytest.raises(InvalidArgument, match="not a regular file"):
        atomic_write(tmp_path / "d", b"x")
    assert _leftovers(tmp_path, {"d"}) == []

    def failing_replace(src: object, dst: object, **_: object) -> None:  # the rename fails after the data is written
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("certdp.cert.crypto.os.replace", failing_replace)
    with pytest.raises(InvalidArgument, match="cannot be written"):  # one line, not an OSError traceback
        atomic_write(tmp_path / "f", b"x")
    assert _leftovers(tmp_path, {"d"}) == []


def test_concurrent_writers_leave_one_complete_content(tmp_path: Path) -> None:
    target = tmp_path / "cert.json"
    contents = [bytes([ord("a") + i]) * 300_000 for i in range(WORKERS)]
    barrier = threading.Barrier(WORKERS)

    def write(i: int) -> None:
        barrier.wait()
        for _ in range(5):
            atomic_write(target, contents[i])

    with ThreadPoolExecutor(WORKERS) as pool:
        list(pool.map(write, range(WORKERS)))  # re-raises any writer's error
    assert target.read_bytes() in contents
    assert _leftovers(tmp_path, {target.name}) == []


# --- keygen -----------------------------------------------------------------------------------


def _keygen_worker(out: str, barrier: object, results: object) -> None:
    """One ``certdp keygen --out OUT`` through the CLI's main; reports (exit code, stderr)."""
    err = io.StringIO()
    barrier.wait()  # type: ignore[attr-defined]
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["keygen", "--out", out])
    except BaseException as exc:
        code, err = -1, io.StringIO(repr(exc))
    results.put((code, err.getvalue()))  # type: ignore[attr-defined]


def _assert_one_winner(codes: list[int], errors: list[str], key: Path) -> None:
    """Exactly one run succeeded (exit 0), the others were refused (exit 2), and key and .pub match."""
    assert sorted(codes) == [0] + [2] * (WORKERS - 1), errors
    refused = f"certdp: error: out={fmt_value(str(key))} already exists: refusing to overwrite a key\n"
    assert all(err == refused for code, err in zip(codes, errors, strict=True) if code == 2), errors
    _assert_pair_matches(key)
    assert _leftovers(key.parent, {key.name, key.name + ".pub"}) == []


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs fork")
@pytest.mark.parametrize("trial", range(TRIALS))
def test_concurrent_keygen_processes_one_wins(tmp_path: Path, trial: int) -> None:
    mp = multiprocessing.get_context("fork")  # forked: no re-import, so the 8 runs really overlap
    key = tmp_path / "project.key"
    barrier, results = mp.Barrier(WORKERS), mp.Queue()
    procs = [mp.Process(target=_keygen_worker, args=(str(key), barrier, results)) for _ in range(WORKERS)]
    for p in procs:
        p.start()
    outcomes = [results.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    _assert_one_winner([c for c, _ in outcomes], [e for _, e in outcomes], key)


@pytest.mark.slow
def test_concurrent_keygen_console_processes(tmp_path: Path) -> None:
    """The same race through separate interpreters running the console entry point (main_entry)."""
    sync, keys = tmp_path / "sync", tmp_path / "keys"
    sync.mkdir()
    keys.mkdir()
    key, go = keys / "project.key", sync / "go"
    # Each process imports certdp, says so, then waits for the go file: the keygens overlap.
    script = (
        "import os, sys, time\n"
        "from certdp.cli import main_entry\n"
        "sync = sys.argv.pop(1)\n"
        "open(os.path.join(sync, f'ready{os.getpid()}'), 'w').close()\n"
        "while not os.path.exists(os.path.join(sync, 'go')): time.sleep(0.002)\n"
        "main_entry()\n"
    )
    cmd = [sys.executable, "-c", script, str(sync), "keygen", "--out", str(key)]
    run = {"stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE, "text": True}
    procs = [subprocess.Popen(cmd, **run) for _ in range(WORKERS)]  # type: ignore[call-overload]
    deadline = time.monotonic() + 60
    while len(list(sync.glob("ready*"))) < WORKERS and time.monotonic() < deadline:
        time.sleep(0.01)
    go.touch()
    errors = [p.communicate(timeout=120)[1] for p in procs]
    _assert_one_winner([p.returncode for p in procs], errors, key)


def test_concurrent_keygen_threads_one_wins(tmp_path: Path) -> None:
    key = tmp_path / "project.key"
    barrier = threading.Barrier(WORKERS)

    def run(_: int) -> str:
        barrier.wait()
        try:
            keygen(key)
        except InvalidArgument as exc:
            return str(exc)
        return "ok"

    with ThreadPoolExecutor(WORKERS) as pool:
        outcomes = list(pool.map(run, range(WORKERS)))
    refused = f"out={fmt_value(str(key))} already exists: refusing to overwrite a key"
    assert sorted(outcomes) == sorted(["ok"] + [refused] * (WORKERS - 1))
    _assert_pair_matches(key)


def test_keygen_refuses_an_existing_pub_before_creating_the_key(tmp_path: Path) -> None:
    key = tmp_path / "project.key"
    pub = tmp_path / "project.key.pub"
    pub.write_text("someone else's key\n")
    with pytest.raises(InvalidArgument, match=r"^out=.*project\.key has an existing public key .*: refusing"):
        keygen(key)
    assert not os.path.lexists(key) and pub.read_text() == "someone else's key\n"


def test_keygen_refuses_a_dangling_symlink(tmp_path: Path) -> None:
    key = tmp_path / "project.key"
    key.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(InvalidArgument, match=r"already exists: refusing to overwrite a key$"):
        keygen(key)
    assert not (tmp_path / "elsewhere").exists()


def test_keygen_removes_its_key_when_the_pub_appears_meanwhile(tmp_path: Path, monkeypatch) -> None:
    key = tmp_path / "project.key"
    pub = tmp_path / "project.key.pub"
    real = crypto._create_exclusive

    def racing(path: Path, data: bytes, mode: int) -> object:
        if path == pub:  # another run wins the .pub between our two creations
            pub.write_text("other\n")
        return real(path, data, mode)

    monkeypatch.setattr(crypto, "_create_exclusive", racing)
    with pytest.raises(InvalidArgument, match=r"has an existing public key"):
        keygen(key)
    assert not os.path.lexists(key) and pub.read_text() == "other\n"
    assert _leftovers(tmp_path, {pub.name}) == []


def test_keygen_without_hard_links_is_still_exclusive(tmp_path: Path, monkeypatch) -> None:
    def no_links(src: object, dst: object) -> None:
        raise PermissionError(1, "Operation not permitted")  # e.g. FAT, some network file systems

    monkeypatch.setattr(os, "link", no_links)
    key = tmp_path / "project.key"
    keygen(key)
    _assert_pair_matches(key)
    assert _leftovers(tmp_path, {key.name, key.name + ".pub"}) == []
    with pytest.raises(InvalidArgument, match=r"already exists"):
        keygen(key)
