"""Run fuzz cases in forked children, at most ``workers`` at a time, each under a wall-clock kill
and an address-space limit, and judge the outcomes against the cases' expectations.

certdp is imported once in the parent; each case is a ``fork()`` of it, so a case costs a fork,
not an interpreter start. A child redirects fds 1 and 2 to files, calls ``certdp.cli.main(argv)``
(or a Python-API callable) and ``_exit``s with its code; an exception escaping ``main`` is
printed as a traceback and becomes exit 99. The parent polls its children (``wait4`` with
WNOHANG, from the main thread only) and kills a child's process group once it has used more than its
CPU budget, has been blocked (asleep, neither running nor waiting for a CPU) for WALL_FACTOR times
its budget (a hang), or holds more than the memory budget; ``wait4``'s rusage gives its CPU time and
peak RSS.

No verdict depends on the machine's load (issue 33, item 5). The time budget is judged on the
child's CPU time (user + system): certdp is single-threaded, so on an idle machine that is its wall
time, and unlike wall time it does not depend on what else the machine runs (the corpus runs two
children at once, beside whatever else is running). A hang is judged on blocked time, wall time less
the time the child ran or waited on a run queue (/proc/PID/schedstat): a starved child is not
blocked, a sleeping one is blocked at the rate of the wall clock, however loaded the machine. Wall
time alone only backs this up: a kill after WALL_SAFETY times the hang limit (a safety net that no
verdict relies on), and the hang limit itself on a kernel without schedstat.
"""

from __future__ import annotations

import io
import json
import os
import re
import resource
import signal
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

#: The budget a case must meet (issue 13): seconds (CPU time of the child, see above) and peak RSS.
MAX_SECONDS = 10.0
MAX_RSS_BYTES = 1 << 30
#: A child is killed after WALL_FACTOR times its budget in blocked time (its verdict: a hang).
WALL_FACTOR = float(os.environ.get("CERTDP_FUZZ_WALL_FACTOR", "3"))
#: ... or after WALL_SAFETY times that in wall time, whatever it was doing (a safety net: at the
#: default budget 300 s, ten times what a case within its CPU budget needs at a third of a core).
WALL_SAFETY = 10.0
#: ... or once its CPU time or RSS is past the budget by these margins (its verdict: over budget).
CPU_KILL_MARGIN = 0.5
RSS_KILL_BYTES = MAX_RSS_BYTES + (256 << 20)
_TICK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")
#: Address-space headroom over the parent's VmSize (a safety stop; the judged limit is MAX_RSS).
AS_HEADROOM = int(1.5 * (1 << 30))
WORKERS = int(os.environ.get("CERTDP_FUZZ_WORKERS", "2"))
#: Longest error line accepted (the message echoes at most ~80 characters of a value).
MAX_ERROR_LINE = 300
READ_LIMIT = 1 << 20


@dataclass(frozen=True)
class Case:
    """One fuzz case.

    ``argv`` (CLI; ``{tmp}`` and ``{repo}`` are substituted) or ``api`` (a zero-argument callable
    that either returns, possibly after asserting, or raises). ``expect`` lists the acceptable
    outcomes separated by ``|``: ``ok``, ``usage:<param>`` (exit 2, one line naming <param>),
    ``exhausted[:<param>]`` (exit 3, one line), ``invalid[:<param>]`` (exit 1, one line: a refuted
    or malformed certificate). ``check`` validates the JSON record of an ``ok`` CLI outcome
    (raise AssertionError). ``forbid`` lists substrings that stderr must not contain.
    """

    id: str
    argv: tuple[str, ...] | None = None
    api: Callable[[], object] | None = None
    expect: str = "ok"
    check: Callable[[dict], None] | None = None
    max_seconds: float = MAX_SECONDS
    forbid: tuple[str, ...] = ()
    note: str = ""

    @property
    def kind(self) -> str:
        return "api" if self.api is not None else "cli"


@dataclass
class Outcome:
    case_id: str
    argv: tuple[str, ...] | None
    exit: int | None
    signal: int | None
    killed: bool
    seconds: float
    maxrss_kb: int
    stdout: str
    stderr: str
    cpu_seconds: float = 0.0
    kill_reason: str = ""
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def first_err_line(self) -> str:
        lines = [ln for ln in self.stderr.splitlines() if ln.strip()]
        return lines[0] if lines else ""

    def traceback_last_line(self) -> str:
        if "Traceback" not in self.stderr:
            return ""
        lines = [ln for ln in self.stderr.splitlines() if ln.strip()]
        return lines[-1] if lines else ""


# -- the child --------------------------------------------------------------------------------


def _redirect(fd: int, path: str) -> None:
    target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(target, fd)
    os.close(target)


def _child(
    case: Case, argv: list[str] | None, out_path: str, err_path: str, as_limit: int | None, wall_kill: float
) -> None:
    code = 98
    try:
        os.setpgid(0, 0)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.alarm(int(WALL_SAFETY * wall_kill) + 10)  # a backstop if the parent is gone
        if as_limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, (as_limit, as_limit))
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        _redirect(1, out_path)
        _redirect(2, err_path)
        # like the console script under a UTF-8 locale: stdout strict, stderr backslashreplace
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", errors="strict")
        sys.stderr = io.TextIOWrapper(
            io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace", line_buffering=True
        )
        try:
            import faulthandler

            faulthandler.enable(file=sys.stderr)
        except Exception:
            pass
        try:
            code = _run_api(case.api) if case.api is not None else _run_cli(argv or [])
            sys.stdout.flush()
            sys.stderr.flush()
        except SystemExit as exc:
            c = exc.code
            code = 0 if c is None else c if isinstance(c, int) else 1
            if not isinstance(c, int | None):
                sys.stderr.write(f"{c}\n")
        except BaseException:
            try:
                sys.stderr.write("Traceback (escaped certdp.cli.main):\n" + traceback.format_exc())
                sys.stderr.flush()
            except BaseException:
                os.write(2, b"Traceback (escaped certdp.cli.main; the traceback could not be printed)\n")
            code = 99
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:
            os.write(2, b"Traceback (flushing the output failed)\n")
            code = 99
    finally:
        os._exit(code if isinstance(code, int) and 0 <= code <= 255 else 97)


def _run_cli(argv: list[str]) -> int:
    from certdp.cli import main

    return main(argv)


def _run_api(fn: Callable[[], object]) -> int:
    from certdp.errors import CertdpError

    try:
        fn()
        rec: dict[str, object] = {"outcome": "ok"}
    except CertdpError as exc:
        rec = {"outcome": "raised", "classes": [c.__name__ for c in type(exc).__mro__], "message": str(exc)[:2000]}
    except BaseException as exc:  # an escape: reported as a failure
        tb = traceback.format_exc()
        sys.stderr.write("Traceback (escaped the API call):\n" + tb[-4000:])
        rec = {"outcome": "escaped", "classes": [c.__name__ for c in type(exc).__mro__], "message": str(exc)[:500]}
    sys.stdout.write(json.dumps(rec) + "\n")
    return 0


# -- the pool ---------------------------------------------------------------------------------


def vm_size_bytes() -> int | None:
    try:
        text = Path("/proc/self/status").read_text()
    except OSError:
        return None
    m = re.search(r"^VmSize:\s+(\d+) kB", text, re.M)
    return int(m.group(1)) * 1024 if m else None


def substitute(argv: Sequence[str], subs: dict[str, str]) -> list[str]:
    out = []
    for a in argv:
        for k, v in subs.items():
            a = a.replace("{" + k + "}", v)
        out.append(a)
    return out


def _read(path: str) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read(READ_LIMIT)
    except OSError:
        return ""
    return data.decode("utf-8", errors="backslashreplace")


def run_cases(
    cases: Sequence[Case],
    scratch: Path,
    subs: dict[str, str],
    workers: int = WORKERS,
    kill_seconds: float | None = None,
    progress: Callable[[Outcome], None] | None = None,
) -> dict[str, Outcome]:
    """Run every case (forked children, ``workers`` at once) and judge each; never raises for a case.

    ``kill_seconds`` overrides the hang limit in blocked seconds (default WALL_FACTOR times each
    case's budget).
    """
    vm = vm_size_bytes()
    as_limit = vm + AS_HEADROOM if vm is not None else None
    io_dir = scratch / "_io"
    io_dir.mkdir(parents=True, exist_ok=True)
    pending = list(enumerate(cases))
    pending.reverse()
    running: dict[int, tuple[int, Case, list[str] | None, float, str, str]] = {}
    results: dict[str, Outcome] = {}
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        while pending or running:
            while pending and len(running) < workers:
                idx, case = pending.pop()
                argv = substitute(case.argv, subs) if case.argv is not None else None
                out_path, err_path = str(io_dir / f"{idx}.out"), str(io_dir / f"{idx}.err")
                wall_kill = kill_seconds if kill_seconds is not None else max(6.0, WALL_FACTOR * case.max_seconds)
                start = time.perf_counter()
                pid = os.fork()
                if pid == 0:
                    _child(case, argv, out_path, err_path, as_limit, wall_kill)
                running[pid] = (idx, case, argv, start, out_path, err_path, wall_kill)
            done = []
            for pid, (_idx, case, argv, start, out_path, err_path, wall_kill) in running.items():
                killed, reason = False, ""
                try:
                    wpid, status, ru = os.wait4(pid, os.WNOHANG)
                except ChildProcessError:
                    wpid, status, ru = pid, 0, None
                if wpid == 0:
                    reason = _over(pid, case, time.perf_counter() - start, wall_kill)
                    if not reason:
                        continue
                    _kill(pid)
                    wpid, status, ru = os.wait4(pid, 0)
                    killed = True
                seconds = time.perf_counter() - start
                exit_code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
                sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
                outcome = Outcome(
                    case.id,
                    tuple(argv) if argv is not None else None,
                    exit_code,
                    sig,
                    killed,
                    seconds,
                    ru.ru_maxrss if ru is not None else 0,
                    _read(out_path),
                    _read(err_path),
                    ru.ru_utime + ru.ru_stime if ru is not None else 0.0,
                    reason,
                )
                outcome.problems = judge(case, outcome)
                results[case.id] = outcome
                done.append(pid)
                if progress is not None:
                    progress(outcome)
            for pid in done:
                del running[pid]
            if running and not done:
                time.sleep(0.003)
    finally:
        for pid in running:
            _kill(pid)
            try:
                os.wait4(pid, 0)
            except ChildProcessError:
                pass
    return results


def _usage(pid: int) -> tuple[float, int] | None:
    """CPU seconds (user + system) and resident bytes of a running child, from /proc."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    # after the command name: state is field 3, utime 14, stime 15, rss 24 (1-based, proc(5))
    return (int(fields[11]) + int(fields[12])) / _TICK, int(fields[21]) * _PAGE


def _scheduled(pid: int) -> float | None:
    """Seconds a running child has spent running or waiting on a run queue, from
    /proc/PID/schedstat (None where the kernel does not keep it)."""
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as f:
            run_ns, wait_ns = f.read().split()[:2]
        return (int(run_ns) + int(wait_ns)) / 1e9
    except (OSError, ValueError):
        return None


def _over(pid: int, case: Case, wall: float, wall_kill: float) -> str:
    """Why a running child must be killed now ("" if it may go on)."""
    if wall >= WALL_SAFETY * wall_kill:
        return f"wall time {wall:.1f} s (the safety net)"
    scheduled = _scheduled(pid)
    if scheduled is None:  # no schedstat: wall time is the best estimate of a hang
        if wall >= wall_kill:
            return f"wall time {wall:.1f} s"
    elif wall - scheduled >= wall_kill:
        return f"blocked {wall - scheduled:.1f} s (of {wall:.1f} s wall)"
    use = _usage(pid)
    if use is None:
        return ""
    cpu, rss = use
    if cpu >= case.max_seconds + CPU_KILL_MARGIN:
        return f"CPU time {cpu:.1f} s"
    if rss >= RSS_KILL_BYTES:
        return f"RSS {rss >> 20} MiB"
    return ""


def _kill(pid: int) -> None:
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            target()
            return
        except (ProcessLookupError, PermissionError):
            continue


# -- judging ----------------------------------------------------------------------------------

_DECIMAL = re.compile(r"-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def _names(param: str) -> tuple[str, ...]:
    p = param.lstrip("-")
    return (p, p.replace("-", "_"), p.replace("_", "-"))


def one_line_error(stderr: str) -> str | None:
    """The problem with an error's stderr, or None if it is one line ``certdp: error: ...``."""
    if not stderr.endswith("\n") or stderr.count("\n") != 1:
        return f"stderr is not exactly one line ({stderr.count(chr(10))} newlines)"
    if not stderr.startswith("certdp: error: "):
        return "stderr does not start with 'certdp: error: '"
    if len(stderr) > MAX_ERROR_LINE:
        return f"stderr line has {len(stderr)} characters (> {MAX_ERROR_LINE}: the value is echoed in full?)"
    return None


def check_enclosures(rec: object, where: str = "") -> None:
    """Every dict with ``lower`` and ``upper`` holds decimal strings with lower <= upper."""
    if isinstance(rec, dict):
        if "lower" in rec and "upper" in rec:
            lo, hi = rec["lower"], rec["upper"]
            for name, v in (("lower", lo), ("upper", hi)):
                assert isinstance(v, str) and _DECIMAL.fullmatch(v), f"{where}{name}={v!r} is not a decimal string"
            assert Decimal(lo) <= Decimal(hi), f"{where}lower={lo} > upper={hi}"
        for k, v in rec.items():
            if isinstance(v, dict | list):
                check_enclosures(v, f"{where}{k}.")
    elif isinstance(rec, list):
        for i, v in enumerate(rec):
            check_enclosures(v, f"{where}{i}.")


def _judge_ok_cli(case: Case, out: Outcome) -> list[str]:
    argv = out.argv or ()
    if "--json" in argv:
        text = out.stdout.strip()
        if not text:
            return ["--json printed nothing"]
        try:
            rec = json.loads(text)
        except ValueError as exc:
            return [f"stdout is not one JSON object ({exc})"]
        if not isinstance(rec, dict):
            return ["stdout JSON is not an object"]
        try:
            check_enclosures(rec)
            if case.check is not None:
                case.check(rec)
        except AssertionError as exc:
            return [f"wrong result: {exc}"]
        except Exception as exc:
            return [f"result check raised {exc.__class__.__name__}: {exc}"]
        return []
    if case.check is not None:
        try:
            case.check({"stdout": out.stdout})
        except AssertionError as exc:
            return [f"wrong result: {exc}"]
    return []


def _judge_api(case: Case, out: Outcome, alternatives: list[str]) -> list[str]:
    try:
        rec = json.loads(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return [f"the API child printed no outcome (exit {out.exit}, signal {out.signal})"]
    got = rec["outcome"]
    if got == "escaped":
        return [f"{rec['classes'][0]} escaped: {rec['message'][:200]}"]
    reasons = []
    for alt in alternatives:
        kind, _, param = alt.partition(":")
        if kind == "ok" and got == "ok":
            return []
        if kind in ("usage", "exhausted") and got == "raised":
            # the classes the CLI maps to exit 2 (usage) and exit 3 (exhausted)
            wants = ("InvalidArgument", "Unsupported") if kind == "usage" else ("PrecisionExhausted", "Undecided")
            classes, msg = rec["classes"], rec["message"]
            if not any(w in classes for w in wants):
                reasons.append(f"raised {classes[0]}, not {' or '.join(wants)}")
                continue
            if "\n" in msg or len(msg) > MAX_ERROR_LINE:
                reasons.append("message is not one short line")
                continue
            if param and not any(n in msg for n in _names(param)):
                reasons.append(f"message does not name {param!r}")
                continue
            return []
    shown = "returned" if got == "ok" else f"raised {rec['classes'][0]}: {rec['message'][:200]}"
    return [f"expected {case.expect}; {shown}" + (f" ({'; '.join(reasons)})" if reasons else "")]


def judge(case: Case, out: Outcome) -> list[str]:
    """The problems of one outcome (empty: the case passes)."""
    problems: list[str] = []
    cost = f"{out.seconds:.1f} s wall, {out.cpu_seconds:.1f} s CPU, {out.maxrss_kb >> 10} MiB"
    if out.killed:
        problems.append(f"killed at {out.kill_reason} ({cost}; budget {case.max_seconds:g} s, 1 GiB)")
    elif out.cpu_seconds >= case.max_seconds:
        problems.append(f"took {out.cpu_seconds:.1f} s CPU ({cost}; budget {case.max_seconds:g} s)")
    if out.maxrss_kb * 1024 >= MAX_RSS_BYTES:
        problems.append(f"peak RSS {out.maxrss_kb / 1024:.0f} MiB (budget 1024 MiB)")
    if out.signal is not None and not out.killed:
        problems.append(f"died of signal {out.signal}")
    if out.exit == 99 or "Traceback" in out.stderr:
        problems.append("traceback: " + (out.traceback_last_line() or "exception escaped")[:300])
    for bad in case.forbid:
        if bad in out.stderr:
            problems.append(f"stderr mentions {bad!r}: {out.first_err_line()[:200]}")
    if out.killed or out.signal is not None or out.exit == 99:
        return problems
    alternatives = case.expect.split("|")
    if case.api is not None:
        return problems + _judge_api(case, out, alternatives)
    reasons: list[str] = []
    codes = {"ok": 0, "usage": 2, "exhausted": 3, "invalid": 1}
    for alt in alternatives:
        kind, _, param = alt.partition(":")
        if codes[kind] != out.exit:
            continue
        if kind == "ok":
            r = _judge_ok_cli(case, out)
            if not r:
                return problems
            reasons += r
            continue
        r1 = one_line_error(out.stderr)
        if r1:
            reasons.append(r1)
            continue
        if param and not any(n in out.stderr for n in _names(param)):
            reasons.append(f"message does not name {param!r}")
            continue
        if out.stdout.strip():
            reasons.append("an error also printed to stdout")
            continue
        return problems
    head = f"expected {case.expect}; exit {out.exit}"
    if out.exit != 0:
        head += f": {out.first_err_line()[:200]}"
    return [*problems, head + (f" ({'; '.join(reasons)})" if reasons else "")]
