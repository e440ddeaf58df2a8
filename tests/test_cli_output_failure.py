"""A stdout that is closed or full gets one line on stderr and exit 1, never a traceback (attack
finding on issue 39: `certdp verify F >&-` and `> /dev/full` printed tracebacks)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CERT = sorted(Path(__file__).resolve().parents[1].glob("certificates/*.json"))[0]


@pytest.mark.parametrize("redirect", [">&-", "> /dev/full"])
def test_unwritable_stdout_is_one_line_and_exit_1(redirect: str) -> None:
    if redirect.endswith("/dev/full") and not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    cmd = f'"{sys.executable}" -m certdp verify "{CERT}" --allow-untrusted {redirect}'
    proc = subprocess.run(["bash", "-c", cmd], capture_output=False, stderr=subprocess.PIPE, text=True, timeout=300)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("certdp: error: the output could not be written") and proc.stderr.count("\n") == 1
