"""Command-line interface: ``certdp <command> <mechanism> --param value ... [--json]``.

Exit codes: 0 ok; 1 a check failed or was refuted; 2 bad usage or input; 3 precision exhausted
or undecided. Errors are one line on stderr.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence
from contextlib import nullcontext

from certdp.budget import Deadline
from certdp.cli.flags import apply_defaults, reject_unused
from certdp.cli.parser import build_parser
from certdp.cli.progress import status_line
from certdp.cli.render import render
from certdp.cli.run_audit import run_audit_command
from certdp.cli.run_certs import run_calibrate, run_keygen, run_sign, run_verify
from certdp.cli.run_claims import run_claims_command
from certdp.cli.run_gdp import run_convert, run_gdp
from certdp.cli.run_integrations import run_curve, run_table
from certdp.cli.run_notions import run_notion
from certdp.enclose.checkpoint import checkpoints
from certdp.errors import (
    BudgetExhausted,
    CertdpError,
    CertificateInvalid,
    InvalidArgument,
    PrecisionExhausted,
    Undecided,
    Unsupported,
)

EXIT = {
    InvalidArgument: 2,
    Unsupported: 2,
    PrecisionExhausted: 3,
    BudgetExhausted: 3,
    Undecided: 3,
    CertificateInvalid: 1,
}


def _exit_code(exc: CertdpError) -> int:
    for cls, code in EXIT.items():
        if isinstance(exc, cls):
            return code
    return 1


def main(argv: Sequence[str] | None = None, out: Callable[[str], object] = print) -> int:
    """Entry point of the ``certdp`` console script; returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error argparse has already printed
        return exc.code if isinstance(exc.code, int) else 2
    simple = {
        "keygen": run_keygen,
        "sign": run_sign,
        "verify": run_verify,
        "calibrate": run_calibrate,
        "gdp": run_gdp,
        "convert": run_convert,
        "audit": run_audit_command,
        "claims": run_claims_command,
        "curve": run_curve,
        "table": run_table,
    }
    try:
        reject_unused(args)
        apply_defaults(args)
        runner = simple.get(args.command, run_notion)
        seconds = getattr(args, "max_seconds", None)
        # the enclosure commands get a status line (tv and the sweeps draw their own progress bars)
        spinner = runner is run_notion and args.command != "tv"
        with status_line(args, f"certifying {args.command}") if spinner else nullcontext():
            if seconds is None or args.command == "calibrate":  # calibrate runs its own Deadline
                rec = runner(args)
            else:
                budget = Deadline(seconds, name="max-seconds")
                with checkpoints(lambda: budget.check(f"computing {args.command}")):
                    rec = runner(args)
    except CertdpError as exc:
        sys.stderr.write(f"certdp: error: {exc}\n")
        return _exit_code(exc)
    out(json.dumps(rec) if args.json else render(rec))
    return int(rec.get("exit_code", 0))  # type: ignore[call-overload]


def main_entry() -> None:
    """Console-script wrapper: exit with :func:`main`'s code.

    A reader that closes the pipe early (``certdp verify f.json | head -1``) gets no traceback:
    stdout is pointed at /dev/null so that the interpreter's final flush cannot fail again, and
    the exit code is 1 (the output was not all delivered).
    """
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        code = 1
    raise SystemExit(code)
