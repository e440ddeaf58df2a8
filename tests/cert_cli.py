"""How the certificate tests run the two checkers: ``certdp verify`` in-process (its exit code and
output) and the independent recheck kernel as a subprocess, the way an auditor runs it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from certdp.cli import main

KERNEL = Path(__file__).resolve().parents[1] / "recheck" / "recheck.py"


def verify(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    """``certdp verify PATH [extra] --json`` (``--allow-untrusted`` unless ``--pubkey`` is given):
    the exit code and stdout + stderr, which never hold a traceback."""
    trust = [] if "--pubkey" in extra else ["--allow-untrusted"]
    code = main(["verify", str(path), *extra, *trust, "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out + err


def kernel(
    path: Path, pub: Path | None = None, timeout: int = 600, preexec_fn: Callable[[], None] | None = None
) -> subprocess.CompletedProcess:
    """``python recheck/recheck.py PATH [--pubkey PUB]`` as a subprocess."""
    args = [sys.executable, str(KERNEL), str(path), *(["--pubkey", str(pub)] if pub else [])]
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, preexec_fn=preexec_fn)
