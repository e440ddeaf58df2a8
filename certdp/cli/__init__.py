"""Command-line interface: ``certdp <command> <mechanism> --param value ... [--json]``.

Exit codes: 0 ok; 1 a check, digest, signature or claim that does not hold; 2 unparseable or
schema-invalid input (bad usage, a malformed file or certificate, a limit); 3 precision exhausted
or undecided. Errors are one line on stderr.

Only the parser is imported up front: ``certdp --version`` and ``--help`` load neither flint nor
numpy, and a command's runner (with its audit, claims, sweep or SciPy imports) is imported when
that command runs (tests/test_cli_startup.py).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence

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
            rec = run_parsed(args)
    except CertdpError as exc:
        sys.stderr.write(f"certdp: error: {exc}\n")
        return exit_code(exc)
    text = json.dumps(rec) if args.json else render(rec)
    try:
        out(text)
    except UnicodeEncodeError:  # a path with undecodable bytes, and a stdout that refuses them
        out(text.encode("utf-8", "backslashreplace").decode("utf-8"))
    return int(rec.get("exit_code", 0))  # type: ignore[call-overload]


def main_entry() -> None:
    """Console-script wrapper: exit with :func:`main`'s code.

    A reader that closes the pipe early (``certdp verify f.json | head -1``) gets no traceback:
    stdout is pointed at /dev/null so that the interpreter's final flush cannot fail again, and
    the exit code is 1 (the output was not all delivered). The same for a stdout that is closed
    (``>&-``) or cannot be written (a full disk): one line on stderr, exit 1 (attack finding: both
    printed a traceback).
    """
    try:
        code = main()
        if sys.stdout is None:  # closed before the start: print() wrote nothing
            raise OSError("stdout is closed")
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        code = 1
    except OSError as exc:
        if sys.stdout is not None:
            try:
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
            except OSError:
                pass
        if sys.stderr is not None:
            sys.stderr.write(f"certdp: error: the output could not be written ({exc.strerror or exc})\n")
        code = 1
    raise SystemExit(code)
