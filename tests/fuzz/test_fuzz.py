"""Issue 13, "every input gets an answer": each corpus case either answers correctly or exits 2
with one line naming the offending parameter (exit 3 where marked), never a traceback, in under
10 s and 1 GiB. The cases run once per session (conftest.py); each test reads its outcome."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.fuzz.conftest import CASES
from tests.fuzz.harness import Case, Outcome, run_cases

# one worker runs the whole corpus (its session fixture forks the cases, two at a time)
pytestmark = pytest.mark.xdist_group("fuzz")

CLI = [c for c in CASES if c.api is None]
API = [c for c in CASES if c.api is not None]


def _explain(case: Case, out: Outcome) -> str:
    shown = "(api)" if out.argv is None else " ".join(out.argv)[:300]
    return (
        f"{case.id}: {shown}\n  exit {out.exit}, {out.seconds:.2f} s, {out.maxrss_kb // 1024} MiB\n  "
        + "\n  ".join(out.problems)
        + (f"\n  stderr: {out.stderr[-600:]}" if out.stderr else "")
    )


@pytest.mark.parametrize("fuzz_case", CLI, ids=[c.id for c in CLI])
def test_cli(fuzz_case: Case, fuzz_outcomes: dict[str, Outcome]) -> None:
    out = fuzz_outcomes[fuzz_case.id]
    assert out.ok, _explain(fuzz_case, out)


@pytest.mark.parametrize("fuzz_case", API, ids=[c.id for c in API])
def test_api(fuzz_case: Case, fuzz_outcomes: dict[str, Outcome]) -> None:
    out = fuzz_outcomes[fuzz_case.id]
    assert out.ok, _explain(fuzz_case, out)


def test_corpus_size() -> None:
    assert len(CLI) >= 300 and len(API) >= 40
    assert len({c.id for c in CASES}) == len(CASES)
    assert all(len(c.id) <= 40 for c in CASES)


def _sleep() -> None:
    while True:  # never ends: only the harness's kill stops it
        time.sleep(3600)


def _allocate() -> None:
    blob = bytearray(8 << 30)  # over the address-space safety stop
    assert blob


def _spin() -> None:
    while True:
        pass


def _exit_hard() -> None:
    import os

    os.abort()


def test_harness_kills_and_reports(tmp_path: Path) -> None:
    """A hanging case is killed, a memory hog stopped, a crash reported; the harness returns.

    No verdict reads a stopwatch, so none depends on the machine's load: the hang sleeps forever
    (it is killed once blocked 4 s, which no load can hasten or delay much), the spin forever (it
    is killed at 1.5 s of CPU time, not of wall time), and the other cases end by themselves."""
    cases = [
        Case("hang", api=_sleep, expect="ok"),
        Case("hog", api=_allocate, expect="ok"),
        Case("abort", api=_exit_hard, expect="ok"),
        Case("spin", api=_spin, expect="ok", max_seconds=1.0),
        Case("fine", ("kl", "gaussian", "--sigma", "1", "--json"), expect="ok"),
        Case("wrong", ("kl", "gaussian", "--sigma", "1", "--json"), expect="usage:sigma"),
    ]
    res = run_cases(cases, tmp_path, {}, kill_seconds=4.0)
    assert sorted(res) == sorted(c.id for c in cases)
    hang, spin = res["hang"], res["spin"]
    assert hang.killed and hang.kill_reason.startswith(("blocked", "wall time")) and not hang.ok, hang.kill_reason
    assert hang.cpu_seconds < 1, hang.cpu_seconds  # asleep: it was not killed for its CPU time
    assert spin.killed and spin.kill_reason.startswith("CPU") and not spin.ok, spin.kill_reason
    assert 1.0 <= spin.cpu_seconds, spin.cpu_seconds  # its budget, then the 0.5 s kill margin
    assert not res["hog"].ok and "MemoryError" in " ".join(res["hog"].problems)
    assert not res["abort"].ok and res["abort"].signal is not None
    assert res["fine"].ok, res["fine"].problems
    assert not res["wrong"].ok
