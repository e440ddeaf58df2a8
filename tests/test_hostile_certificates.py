"""Hostile certificates (issue 12): every file built by tests/hostile_certificates.py is rejected
with exit 2 (malformed, or refused: over a work limit) or 1 (a claim or number that does not
hold) and a one-line reason, never a traceback; the two valid base files verify. Plus: the
untrusted-signer report, /dev/zero, a broken pipe, and key files that are not keys."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from certdp.cli import main
from tests.hostile_certificates import build


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, Path, tuple[int, ...], str]]:
    return build(tmp_path_factory.mktemp("hostile"))


def _verify(path: Path | str, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    code = main(["verify", str(path), *extra, "--json"])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def test_there_are_at_least_thirty_hostile_files_covering_every_defect(hostile: list) -> None:
    defects = {d for _, _, codes, d in hostile if codes != (0,)}
    assert len([h for h in hostile if h[2] != (0,)]) >= 30
    assert {"1", "2", "3", "5", "6", "7", "9"} <= defects


def test_each_hostile_file_is_rejected_with_a_one_line_reason(
    hostile: list, capsys: pytest.CaptureFixture[str]
) -> None:
    failures = []
    for name, path, codes, _ in hostile:
        code, out, err = _verify(path, capsys, "--allow-untrusted")
        lines = err.strip().splitlines()
        ok = code in codes and (code == 0 or (len(lines) == 1 and lines[0].startswith("certdp: error: ") and not out))
        if not ok:
            failures.append(f"{name}: exit {code} (want {codes}); stderr {err.strip()[:300]!r}")
    assert not failures, "\n".join(failures)


def test_forged_files_are_rejected_for_the_reason_they_were_built(
    hostile: list, capsys: pytest.CaptureFixture[str]
) -> None:
    """The rejection names the defect, not some unrelated earlier check."""
    want = {
        "lower_bound_proves_le": "needs an upper bound",
        "upper_bound_proves_gt": "needs a lower bound",
        "tv_through_rdp_orders": "cannot be proved by rdp-orders",
        "eps_through_lattice": "cannot be proved by lattice-upper",
        "refutation_far_below": "minus step",
        "step_huge": "body/step",
        "claim_slot_holds_refutation": "a claim holds <=",
        "duplicate_claim_key": "duplicate key",
        "duplicate_signature_key": "duplicate key",
        "forged_cap_not_multiple_of_h": "multiple of h",
        "nested_brackets": "nesting depth",
        "too_large": "is larger than the limit of 1048576 bytes",
        "cap_many_cells": "step cells",
        "small_sigma_full_length_products": "estimated memory",
        "orders_many": "exceeds the verifier limit",
        "empty_params": "params",
        "seconds_2_60": "not an exact JSON number",
        "nan_seconds": "NaN",
    }
    paths = {name: path for name, path, _, _ in hostile}
    for name, text in want.items():
        _, _, err = _verify(paths[name], capsys, "--allow-untrusted")
        assert text in err, (name, err)


def test_small_sigma_grids_are_refused_by_their_memory_estimate_before_any_work(
    hostile: list, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review round 3: a file within every other limit (M = 7, E = 10, sigma = 0.4027, h = 2^-9)
    made verify take 210 s and 2.29 GB; both of its grids are refused (exit 2) before any lattice
    is computed (tv_bound is never called), and each grid alone is over the memory estimate."""
    from fractions import Fraction

    import certdp.notions.tv_certified as tvc
    from certdp.cert.limits import MAX_MEMORY, grid_work
    from certdp.errors import LimitExceeded
    from certdp.notions.tv_certified import LatticeGrid

    def no_lattice(*args: object, **kwargs: object) -> None:
        raise AssertionError("tv_bound ran: the grid was not refused before the work")

    path = next(p for n, p, _, _ in hostile if n == "small_sigma_full_length_products")
    monkeypatch.setattr(tvc, "tv_bound", no_lattice)
    code, out, err = _verify(path, capsys, "--allow-untrusted")
    assert code == 2 and "estimated memory" in err and not out, err
    doc = json.loads(path.read_text())
    for slot, side in (("claim", "upper"), ("refutation", "lower")):
        part = doc["body"][slot]
        g = {k: int(v) if k == "scheme" else float(Fraction(v)) for k, v in part["method"]["grid"].items()}
        sigma = float(Fraction(part["mechanism"]["params"]["sigma"]))
        with pytest.raises(LimitExceeded, match="estimated memory") as exc:
            grid_work(7, 10, sigma, LatticeGrid(**g), side)
        assert str(MAX_MEMORY) in str(exc.value)


def test_without_pubkey_the_verifier_says_the_signer_is_not_trusted(
    hostile: list, capsys: pytest.CaptureFixture[str]
) -> None:
    base = next(p for n, p, _, _ in hostile if n == "base_sg")
    code, out, err = _verify(base, capsys)
    assert code == 2 and "--allow-untrusted" in err and not out
    code, out, _ = _verify(base, capsys, "--allow-untrusted")
    assert code == 0 and '"signer_trusted": false' in out
    code = main(["verify", str(base), "--allow-untrusted"])
    assert code == 0 and "NOT checked against a trusted key" in capsys.readouterr().out


def test_dev_zero_stops_at_the_size_limit(capsys: pytest.CaptureFixture[str]) -> None:
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero")
    code, _, err = _verify("/dev/zero", capsys, "--allow-untrusted")
    assert code == 2 and "certificate=/dev/zero is not a regular file" in err


def test_a_broken_pipe_gives_no_traceback(hostile: list) -> None:
    base = next(p for n, p, _, _ in hostile if n == "base_sg")
    read, write = os.pipe()
    os.close(read)  # nobody reads: the first write fails with EPIPE
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from certdp.cli import main_entry; main_entry()",
            "verify",
            str(base),
            "--allow-untrusted",
        ],
        stdout=write,
        stderr=subprocess.PIPE,
        timeout=300,
    )
    os.close(write)
    assert proc.returncode == 141  # a closed pipe: 128 + SIGPIPE, never 1 (a claim that does not hold)
    assert b"Traceback" not in proc.stderr and b"Exception ignored" not in proc.stderr, proc.stderr


@pytest.mark.parametrize(
    "content",
    [
        bytes(range(256)),
        b"-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIGbMFcGCSqGSIb3\n-----END ENCRYPTED PRIVATE KEY-----\n",
        b"not base64 at all",
    ],
    ids=["binary", "encrypted", "text"],
)
def test_a_key_file_that_is_not_a_key_is_a_one_line_error(
    hostile: list, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes
) -> None:
    base = next(p for n, p, _, _ in hostile if n == "base_sg")
    key = tmp_path / "bad.pub"
    key.write_bytes(content)
    code, out, err = _verify(base, capsys, "--pubkey", str(key))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "pubkey=" in err and not out


def test_an_encrypted_private_key_is_a_one_line_error(
    hostile: list, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"secret"),
    )
    key = tmp_path / "enc.key"
    key.write_bytes(pem)
    base = next(p for n, p, _, _ in hostile if n == "base_sg")
    for argv in (["verify", str(base), "--pubkey", str(key)], ["sign", str(base), "--key", str(key)]):
        code = main(argv)
        err = capsys.readouterr().err
        assert code == 2 and len(err.strip().splitlines()) == 1 and "key" in err, (argv, err)


def test_sign_into_an_unwritable_folder_is_a_one_line_error(
    hostile: list, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review: `certdp sign` on a file in a read-only folder (or /dev/fd/N) printed a traceback."""
    import shutil
    import tempfile

    base = next(p for n, p, _, _ in hostile if n == "base_sg")
    cert = tmp_path / "c.json"
    shutil.copy(base, cert)
    key = tmp_path / "k"
    assert main(["keygen", "--out", str(key)]) == 0
    capsys.readouterr()

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied")

    # the writer (certdp.fileio.write_atomic) makes its temporary with os.open and renames it
    # with os.replace: a folder that refuses the rename (tests may run as root, so no chmod)
    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    monkeypatch.setattr(os, "replace", refuse)
    code = main(["sign", str(cert), "--key", str(key)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "cannot be written (PermissionError)" in err
    assert cert.read_bytes() == base.read_bytes()
