"""Command-line interface: ``certdp <command> <mechanism> --param value ... [--json]``.

Exit codes: 0 ok; 1 a check, digest, signature or claim that does not hold; 2 unparseable or
schema-invalid input (bad usage, a malformed file or certificate, a limit); 3 precision exhausted,
undecided, or a time or memory budget spent; 141 stdout was closed before the output was written
(a reader such as ``head`` left early: 128 + SIGPIPE, what a shell reports for a program killed
by the broken pipe); 74 stdout could not be written otherwise (a full disk: EX_IOERR).
Errors are one line on stderr.

Only the parser is imported up front: ``certdp --version`` and ``--help`` load neither flint nor
numpy, and a command's runner (with its audit, claims, sweep or SciPy imports) is imported when
that command runs (tests/test_cli_startup.py).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from certdp.cli.parser import build_parser
from certdp.errors import CertdpError


def main(argv: Sequence[str] | None = None, out: Callable[[str], object] = print) -> int:
    """Entry point of the ``certdp`` console script; returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error argparse has already printed
        return exc.code if isinstance(exc.code, int) else 2
    from certdp.cli.dispatch import exit_code, run_parsed
    from certdp.cli.render import render

    try:
        if args.command == "sweep":
            from certdp.cli.run_sweep import run_sweep

            rec = run_sweep(args)
        else:
            with hard_stop(getattr(args, "max_seconds", None)):
                rec = run_parsed(args)
    except CertdpError as exc:
        sys.stderr.write(f"certdp: error: {exc}\n")
        return exit_code(exc)
    except MemoryError:  # past the address-space cap (certdp.budget.address_space_cap)
        sys.stderr.write(
            "certdp: error: max-memory: an allocation failed (the address-space cap was reached); no answer "
            "(pass a larger --max-memory, or ask for less)\n"
        )
        return 3
    text = json.dumps(rec) if args.json else render(rec)
    try:
        out(text)
    except UnicodeEncodeError:  # a path with undecodable bytes, and a stdout that refuses them
        out(text.encode("utf-8", "backslashreplace").decode("utf-8"))
    return int(rec.get("exit_code", 0))  # type: ignore[call-overload]


#: seconds a command may run past --max-seconds before :func:`hard_stop` interrupts it: the
#: cooperative checks (certdp.enclose.checkpoint) stop it first, with a message saying where
HARD_STOP_GRACE = 5


@contextmanager
def hard_stop(max_seconds: str | None) -> Iterator[None]:
    """Within the block, a timer (SIGALRM, main thread only, where the platform has it) raises
    BudgetExhausted HARD_STOP_GRACE seconds after --max-seconds (default
    certdp.budget.DEFAULT_MAX_SECONDS): the backstop for a step with no cooperative checkpoint (a
    single Arb evaluation that takes minutes). A Python signal handler runs between bytecodes,
    so one long FLINT call finishes first. No file is half-written: files are written to a
    temporary name and renamed (certdp.cert.write).

    Not armed when certdp.budget.clock is not the real clock (tests that count clock reads), nor
    when a timer is already running (it belongs to the caller).

    Contract: only adds the timer; removes it (and restores the previous handler) on exit.
    """
    from certdp.budget import DEFAULT_MAX_SECONDS, MAX_SECONDS
    from certdp.errors import BudgetExhausted

    try:
        seconds = float(max_seconds) if max_seconds is not None else float(DEFAULT_MAX_SECONDS)
    except ValueError:
        seconds = float(DEFAULT_MAX_SECONDS)  # run_parsed refuses the value with its own message
    import time

    from certdp import budget

    # armed only on the real clock: a test that replaces certdp.budget.clock (a clock that ticks per
    # read, so that its budgets do not depend on the machine's load) gets no wall-clock backstop
    usable = (
        hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
        and budget.clock is time.monotonic
    )
    # a timer already running belongs to the caller (a test runner's timeout): leave SIGALRM to it
    if not usable or not 0 < seconds <= MAX_SECONDS or signal.getitimer(signal.ITIMER_REAL)[0] > 0:
        yield
        return
    shown = max_seconds if max_seconds is not None else f"{DEFAULT_MAX_SECONDS} (the default)"

    def ring(signum: int, frame: object) -> None:
        from certdp.enclose.work import current

        meter = current()
        got = f"{meter.used} work units done (last: {meter.doing})" if meter is not None else "no progress recorded"
        raise BudgetExhausted(
            f"max-seconds={shown} ran out ({seconds + HARD_STOP_GRACE:g} s, within one step without a "
            f"checkpoint) after {got}; no answer, no file written (raise --max-seconds, or ask for less)"
        )

    old = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds + HARD_STOP_GRACE)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


#: exit code of a closed stdout pipe (128 + SIGPIPE: what a shell shows for a program killed by it)
EXIT_PIPE_CLOSED = 141

#: exit code of a stdout that cannot be written otherwise (EX_IOERR of sysexits.h)
EXIT_OUTPUT_ERROR = 74


def _memory_cap(argv: Sequence[str]) -> None:
    """Cap the address space at --max-memory (default DEFAULT_MAX_MEMORY) plus headroom, for the
    console script only (certdp.budget.address_space_cap); a sweep is left alone (its Dask
    workers inherit limits and reserve address space per thread), as is a value that does not
    parse (the command refuses it with its own message)."""
    from certdp.budget import DEFAULT_MAX_MEMORY, address_space_cap, parse_memory
    from certdp.errors import InvalidArgument

    args = list(argv)
    if not args or args[0] == "sweep":
        return
    raw = DEFAULT_MAX_MEMORY
    for i, a in enumerate(args):
        if a == "--max-memory" and i + 1 < len(args):
            raw = args[i + 1]
        elif a.startswith("--max-memory="):
            raw = a.split("=", 1)[1]
    try:
        address_space_cap(parse_memory(raw))
    except InvalidArgument:
        return


def main_entry() -> None:
    """Console-script wrapper: exit with :func:`main`'s code.

    A reader that closes the pipe early (``certdp verify f.json | head -c 10``) gets no traceback:
    stdout is pointed at /dev/null so that the interpreter's final flush cannot fail again, one
    line goes to stderr, and the exit code is EXIT_PIPE_CLOSED (141), never 1, which means a
    claim that does not hold (attack findings: a traceback, then a silent exit 1). A stdout that is
    closed (``>&-``) or cannot be written (a full disk) gets one line and EXIT_OUTPUT_ERROR (74).
    The address space is capped at the memory budget plus headroom (:func:`_memory_cap`).
    """
    _memory_cap(sys.argv[1:])
    try:
        code = main()
        if sys.stdout is None:  # closed before the start: print() wrote nothing
            raise OSError("stdout is closed")
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        if sys.stderr is not None:
            try:
                sys.stderr.write("certdp: error: stdout closed before the output was written (exit 141)\n")
            except OSError:
                pass
        code = EXIT_PIPE_CLOSED
    except OSError as exc:
        if sys.stdout is not None:
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
            except OSError:
                pass
        if sys.stderr is not None:
            sys.stderr.write(f"certdp: error: the output could not be written ({exc.strerror or exc})\n")
        code = EXIT_OUTPUT_ERROR
    raise SystemExit(code)
