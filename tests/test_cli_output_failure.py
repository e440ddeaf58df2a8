"""A stdout that cannot take the output never gives a traceback, nor exit 1 (which means a claim
that does not hold): a closed pipe (a reader such as ``head`` that left early) exits 141
(128 + SIGPIPE) with one stderr line, and a stdout that is closed or full exits 74 (EX_IOERR)
with one line (attack findings on issue 39: `certdp verify F >&-` and `> /dev/full` printed
tracebacks; `certdp verify F | head -c 10` then exited 1 silently)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from certdp.cli import EXIT_OUTPUT_ERROR, EXIT_PIPE_CLOSED

CERT = sorted(Path(__file__).resolve().parents[1].glob("certificates/*.json"))[0]


@pytest.mark.parametrize("redirect", [">&-", "> /dev/full"])
def test_unwritable_stdout_is_one_line_and_exit_74(redirect: str) -> None:
    if redirect.endswith("/dev/full") and not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    cmd = f'"{sys.executable}" -m certdp verify "{CERT}" --allow-untrusted {redirect}'
    proc = subprocess.run(["bash", "-c", cmd], capture_output=False, stderr=subprocess.PIPE, text=True, timeout=300)
    assert proc.returncode == EXIT_OUTPUT_ERROR == 74
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("certdp: error: the output could not be written") and proc.stderr.count("\n") == 1


@pytest.mark.parametrize("command", ["verify", "eps"])
def test_closed_pipe_is_exit_141_with_one_line(command: str) -> None:
    # `true` exits without reading, so the write meets a closed pipe whatever the timing (the
    # command takes far longer to start than `true` to end); PIPESTATUS gives certdp's own code
    args = {
        "verify": f'verify "{CERT}" --allow-untrusted',
        "eps": "eps gaussian --sigma 1 --delta 1e-5 --json",
    }[command]
    cmd = f'"{sys.executable}" -m certdp {args} | true; exit ${{PIPESTATUS[0]}}'
    proc = subprocess.run(["bash", "-c", cmd], stderr=subprocess.PIPE, text=True, timeout=300)
    assert proc.returncode == EXIT_PIPE_CLOSED == 141
    assert "Traceback" not in proc.stderr
    assert proc.stderr == "certdp: error: stdout closed before the output was written (exit 141)\n"
