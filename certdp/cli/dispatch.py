"""Running one parsed ``certdp`` command: the runner table, and :func:`execute`, which runs a
command line and returns its outcome instead of printing it (a sweep cell on a Dask worker is one
such command line)."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass

from certdp.cli.flags import apply_defaults, reject_unused
from certdp.cli.parser import build_parser
from certdp.cli.progress import status_line
from certdp.enclose.checkpoint import checkpoints
from certdp.errors import (
    BudgetExhausted,
    CertdpError,
    CertificateInvalid,
    CertificateMalformed,
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
    CertificateMalformed: 2,
    CertificateInvalid: 1,
}

#: command -> (module, function) of its runner, imported when the command runs (the audit, claims,
#: sweep and SciPy imports of some runners would otherwise slow down every command, --help too)
RUNNERS = {
    "keygen": ("certdp.cli.run_certs", "run_keygen"),
    "sign": ("certdp.cli.run_certs", "run_sign"),
    "verify": ("certdp.cli.run_certs", "run_verify"),
    "calibrate": ("certdp.cli.run_certs", "run_calibrate"),
    "gdp": ("certdp.cli.run_gdp", "run_gdp"),
    "convert": ("certdp.cli.run_gdp", "run_convert"),
    "audit": ("certdp.cli.run_audit", "run_audit_command"),
    "claims": ("certdp.cli.run_claims", "run_claims_command"),
    "curve": ("certdp.cli.run_integrations", "run_curve"),
    "table": ("certdp.cli.run_integrations", "run_table"),
}
#: the runner of the enclosure commands (cgf, rdp, kl, rho, gap, eps, delta, tv, expansion)
NOTION_RUNNER = ("certdp.cli.run_notions", "run_notion")


def runner_of(command: str) -> Callable[[argparse.Namespace], dict[str, object]]:
    """Contract: the runner function of ``command`` (its module imported now)."""
    module, name = RUNNERS.get(command, NOTION_RUNNER)
    return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]


def exit_code(exc: CertdpError) -> int:
    """The exit code of a command that raised ``exc``: 2 unparseable or schema-invalid input (a
    malformed certificate too), 1 a digest, signature or claim that does not hold, 3 precision
    exhausted, budget spent or undecided."""
    for cls, code in EXIT.items():
        if isinstance(exc, cls):
            return code
    return 1


def run_parsed(args: argparse.Namespace) -> dict[str, object]:
    """Run a parsed command (not ``sweep``) and return its record; raises CertdpError.

    Every command runs under a time budget (--max-seconds, default DEFAULT_MAX_SECONDS: checked at
    the cooperative checkpoints, certdp.enclose.checkpoint) and a memory budget (--max-memory,
    default DEFAULT_MAX_MEMORY: large steps are estimated and refused before they run,
    certdp.enclose.work), both BudgetExhausted (exit 3) with how far the run got.
    """
    from certdp.budget import DEFAULT_MAX_MEMORY, DEFAULT_MAX_SECONDS, Deadline, parse_memory
    from certdp.enclose.work import metered

    reject_unused(args)
    apply_defaults(args)
    defaulted = getattr(args, "max_seconds", None) is None
    if defaulted:
        args.max_seconds = str(DEFAULT_MAX_SECONDS)
    raw_memory = getattr(args, "max_memory", None)
    memory = parse_memory(raw_memory if raw_memory is not None else DEFAULT_MAX_MEMORY)
    runner = runner_of(args.command)
    # the enclosure commands get a status line (tv and the sweeps draw their own progress bars)
    spinner = args.command not in RUNNERS and args.command != "tv"
    try:  # the estimates that refuse a step up front read it (certdp.notions.cost); Deadline validates it
        seconds: float | None = float(args.max_seconds)
    except (TypeError, ValueError):
        seconds = None
    with metered(memory=memory, name="the command's work budget", seconds=seconds) as meter:
        try:
            with status_line(args, f"certifying {args.command}") if spinner else nullcontext():
                if args.command == "calibrate":  # calibrate runs its own Deadline from args.max_seconds
                    return runner(args)
                budget = Deadline(args.max_seconds, name="max-seconds")  # validated before any work
                if defaulted:
                    budget.shown += " (the default)"

                def check() -> None:
                    budget.check(f"computing {args.command} ({meter.used} work units done; last: {meter.doing})")

                with checkpoints(check):
                    return runner(args)
        except BudgetExhausted as exc:
            if "work units" in str(exc) or not meter.used:
                raise
            # how far it got, for the budgets whose message does not say it (calibrate's own Deadline)
            raise BudgetExhausted(f"{exc} [stopped after {meter.used} work units; last: {meter.doing}]") from None


@dataclass(frozen=True)
class Outcome:
    """What a command line produced: its exit code, its record (None when it raised), and the
    one-line error (None when it did not)."""

    code: int
    record: dict[str, object] | None
    error: str | None


def execute(argv: Sequence[str]) -> Outcome:
    """Run ``certdp ARGV`` in this process without printing: the outcome ``main`` would report."""
    try:
        args = build_parser(raising=True).parse_args(list(argv))
        if args.command == "sweep":
            raise InvalidArgument("a sweep cell cannot run certdp sweep")
        rec = run_parsed(args)
    except CertdpError as exc:
        return Outcome(exit_code(exc), None, str(exc))
    return Outcome(int(rec.get("exit_code", 0)), rec, None)  # type: ignore[call-overload]
