"""Which flags each command reads, and their defaults.

A flag that a command would ignore is an error (exit 2), never a silent no-op: ``calibrate
subsampled-gaussian --epochs 10`` once dropped the epochs and calibrated a single step. Flags
with a default are parsed as None, so "given by the user" and "defaulted" stay distinguishable;
:func:`apply_defaults` fills them in after :func:`reject_unused` has looked.
"""

from __future__ import annotations

import argparse
import math

from certdp.cli.parser import PARAMS
from certdp.errors import InvalidArgument, Unsupported, fmt_value

#: Defaults of flags parsed as None, per command (the help texts state the same values).
DEFAULTS: dict[str, dict[str, str]] = {
    "tv": {"method": "closed-form", "samples": "200000", "seed": "0", "width": "1e-6"},
    "rho": {"method": "auto"},
    "expansion": {"t": "1"},
    "calibrate": {"step": "1e-6"},
}

_NOT_FLAGS = ("command", "mechanism", "json", "kind")
#: the budgets, which every command but sweep reads (certdp.budget)
_BUDGET = {"max_seconds", "max_memory"}
_PRECISION = {"prec", "max_prec"}
_PAIR = {*PARAMS, "direction", "steps", "epochs"}
_TV_METHOD_FLAGS = {
    "closed-form": _PRECISION,
    "exact": set(),
    "monte-carlo": {"samples", "seed"},
    "certified": {"width"},
}


def _flag(dest: str) -> str:
    return {
        "from_": "from",
        "max_prec": "max-prec",
        "max_seconds": "max-seconds",
        "max_memory": "max-memory",
        "rel_width": "rel-width",
    }.get(dest, dest)


def used_flags(args: argparse.Namespace) -> set[str]:
    """The argparse destinations that ``args.command`` (for its mechanism and method) reads.

    Contract: every flag outside the returned set is ignored by the command's runner.
    """
    return _used_flags(args) | (_BUDGET if args.command != "sweep" else set())


def _used_flags(args: argparse.Namespace) -> set[str]:
    cmd = args.command
    if cmd in ("keygen", "sign", "verify", "audit", "claims", "table"):
        return set(vars(args))  # every flag of these is used (argparse knows them all)
    if cmd == "curve":
        if args.kind == "eps":
            return {"q", "sigma", "direction", "steps", "delta", "h", "compare", "csv", "png"}
        return (_PAIR - {"epochs"}) | {"orders", "csv", "png"}
    if cmd in ("eps", "delta") and getattr(args, "event", None) is not None:
        # the event file describes the mechanism: its flags would be ignored
        query = "delta" if cmd == "eps" else "eps"
        return {"event", "relation", query, "via", "h", "rel_width", "orders", "max_seconds"} | _PRECISION
    if cmd == "gdp":
        return {"rho"} | _PRECISION
    if cmd == "convert":
        given = {"delta", "eps"} if args.to == "eps-delta" else set()
        return {"from_", "to", "value"} | _PRECISION | given
    if cmd == "calibrate":
        if args.mechanism == "random-allocation":
            if getattr(args, "tv", None) is None:
                # an (epsilon, delta) target (certdp.cli.run_allocation; --out writes a hockey-upper/-lower certificate)
                return {"steps", "epochs", "epsilon", "delta", "k", "direction", "step", "out", "sign", "max_seconds"}
            return {"steps", "epochs", "tv", "step", "out", "sign", "max_seconds"}
        pld = {"h"} if _via(args) == "pld" else set()
        return {"q", "steps", "epochs", "epsilon", "delta", "direction", "step", "out", "sign", "max_seconds"} | {
            "via",
            *pld,
        }
    extra = {
        "cgf": {"order", "t"},
        "rdp": {"order", "t"},
        "gap": {"order", "t"},
        "kl": set(),
        "rho": {"method"},
        "expansion": {"t"},
        # the accountant (certdp.notions.accountant) says which of --h / --orders its route reads
        "eps": {"delta", "via", "h", "rel_width", "orders"},
        "delta": {"eps", "via", "h", "rel_width", "orders"},
    }
    if cmd == "tv":
        return _PAIR | {"method", "max_seconds"} | _TV_METHOD_FLAGS[args.method or DEFAULTS["tv"]["method"]]
    if cmd in ("eps", "delta") and getattr(args, "mechanism", None) == "random-allocation":
        if getattr(args, "via", None) in (None, "pld") and getattr(args, "orders", None) is None:
            # its own lattice (certdp.cli.run_allocation): one precision, no --h
            return _PAIR | {"prec", "k", "rel_width", "via", "max_seconds", "delta" if cmd == "eps" else "eps"}
    return _PAIR | _PRECISION | extra[cmd] | {"max_seconds"}


def reject_unused(args: argparse.Namespace) -> None:
    """Raise InvalidArgument naming the first flag the user gave that the command would ignore.

    Contract: returns only if every flag given (not None, not False) is read by the command.
    """
    if args.command == "calibrate" and args.mechanism not in ("random-allocation", "subsampled-gaussian"):
        # the mechanism is the first thing wrong: say so, not that its flags are unused
        raise Unsupported(
            "calibrate is implemented for random-allocation and subsampled-gaussian, "
            f"not mechanism={fmt_value(args.mechanism)}"
        )
    used = used_flags(args)
    for dest, value in vars(args).items():
        if dest in _NOT_FLAGS or value is None or value is False or dest in used:
            continue
        if args.command == "calibrate" and dest == "sigma":
            raise InvalidArgument(f"sigma={fmt_value(value)} is what calibrate computes; drop --sigma")
        if dest == "k" and args.mechanism == "random-allocation" and str(value).strip() not in ("1", "+1", "01"):
            # dropping --k would answer k = 1, which bounds nothing for k > 1 (attack review 51)
            route = "--orders" if getattr(args, "orders", None) is not None else f"--via {args.via}"
            raise InvalidArgument(
                f"k={fmt_value(value)} is not read by {route} (the RDP conversion has no pair for k > 1); drop "
                f"{route.split()[0]} (the default route reads --k)"
            )
        what = f"certdp {args.command}"
        if args.command == "curve":
            what += f" {args.kind}"
        if getattr(args, "event", None) is not None:
            what += " --event"
        elif args.command not in ("gdp", "convert"):
            what += f" {args.mechanism}"
        if args.command == "tv":
            what += f" --method {args.method or DEFAULTS['tv']['method']}"
        if args.command == "convert":
            what += f" --to {args.to}"
        raise InvalidArgument(f"{_flag(dest)}={fmt_value(value)} is not used by {what}; drop --{_flag(dest)}")


def _defaults_for(args: argparse.Namespace) -> dict[str, str]:
    """DEFAULTS, with calibrate subsampled-gaussian's accountant from the one rule
    (certdp.notions.accountant.calibration_route: PLD within its step limit, stepping sigma by 1e-5,
    the width the two-sided bounds resolve at h = 2^-12; else RDP, announced as a switch). eps and
    delta have no default here: the accountant picks the route from the pair itself."""
    out = dict(DEFAULTS.get(args.command, {}))
    if args.command == "calibrate" and getattr(args, "mechanism", None) == "random-allocation":
        if getattr(args, "tv", None) is None:
            out["step"] = "1e-4"  # (epsilon, delta) targets: each lattice sigma costs certified delta bounds
        return out
    if args.command != "calibrate" or getattr(args, "mechanism", None) != "subsampled-gaussian":
        return out
    if _within_pld_steps(args):
        out["via"] = "pld"
        if getattr(args, "via", None) in (None, "pld"):
            out["step"] = "1e-5"
    else:
        out["via"] = "rdp"
    return out


def _within_pld_steps(args: argparse.Namespace) -> bool:
    """Whether the calibration the flags ask for is within MAX_CALIBRATION_STEPS, by
    the same exact count as certdp.cli.common.steps_from_args (ceil(E/q) in rationals: a float
    quotient once sent 7100 epochs at q = 0.071, exactly 100000 steps, to RDP without a word).
    Values are parsed by certdp's own reader (which refuses 1e999999999 at once instead of
    building its billion digits); one that does not parse counts as within: its check reports it."""
    from certdp.errors import CertdpError
    from certdp.notions.pld import MAX_CALIBRATION_STEPS as MAX_STEPS
    from certdp.pairs.params import real

    try:
        if getattr(args, "epochs", None) is not None:
            return math.ceil(real("epochs", args.epochs, gt=0) / real("q", args.q, gt=0)) <= MAX_STEPS
        return real("steps", getattr(args, "steps", None) or 1) <= MAX_STEPS
    except (CertdpError, TypeError, ValueError, ZeroDivisionError, OverflowError):
        return True


def _via(args: argparse.Namespace) -> str:
    return getattr(args, "via", None) or _defaults_for(args).get("via", "rdp")


def apply_defaults(args: argparse.Namespace) -> None:
    """Fill the None-parsed flags of ``args.command`` with their documented defaults.

    Contract: only flags still None change, to the value in DEFAULTS.
    """
    filled = set()
    for dest, value in _defaults_for(args).items():
        if getattr(args, dest, None) is None:
            setattr(args, dest, value)
            filled.add(dest)
    args.defaulted_flags = frozenset(filled)


def shown(args: argparse.Namespace, dest: str) -> str:
    """``dest=value`` for a message, with `` (the default)`` when the user did not pass the flag.

    Contract: the value is rendered by fmt_value (at most ~80 characters).
    """
    note = " (the default)" if dest in getattr(args, "defaulted_flags", ()) else ""
    return f"{_flag(dest)}={fmt_value(getattr(args, dest))}{note}"
