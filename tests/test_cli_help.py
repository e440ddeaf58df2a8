"""Per-mechanism --help (issue 33): ``certdp calibrate subsampled-gaussian --help`` listed every
mechanism's flags. After a mechanism, the help lists exactly the flags the command accepts for it:
each one shown is accepted for some route (--via, --method) and each one hidden is refused for
every route, by reject_unused or as "not a parameter of" the mechanism (the CLI's own checks)."""

from __future__ import annotations

import argparse
import itertools
import re

import pytest

from certdp.cli import main
from certdp.cli.common import pair_from_args
from certdp.cli.flags import reject_unused
from certdp.cli.parser import MECHANISM_NAMES, PARAMS, build_parser
from certdp.errors import CertdpError

ENCLOSURE = ("cgf", "rdp", "kl", "rho", "gap", "eps", "delta", "tv", "expansion")
CASES = [
    *((cmd, mech) for cmd in ENCLOSURE for mech in MECHANISM_NAMES),
    ("calibrate", "subsampled-gaussian"),
    ("calibrate", "random-allocation"),
    ("curve eps", "subsampled-gaussian"),
    *(("curve rdp", mech) for mech in MECHANISM_NAMES),
]
#: the flags argparse itself requires
REQUIRED_FLAGS = {"eps": ["--delta", "1e-5"], "delta": ["--eps", "1"]}
#: a valid value of each pair flag
PAIR_VALUES = {
    "sigma": "1",
    "shift": "1",
    "scale": "1",
    "a": "0.5",
    "q": "0.5",
    "m": "1",
    "nu": "3",
    "beta": "1.5",
    "direction": "both",
    "steps": "10",
    "epochs": "1",
}
PAIR_FLAGS = {*PARAMS, "direction", "epochs"}


def help_flags(argv: list[str], capsys: pytest.CaptureFixture[str]) -> set[str]:
    """The long flags (as argparse dests) the help of ``certdp ARGV --help`` lists."""
    assert main([*argv, "--help"]) == 0
    text = capsys.readouterr().out
    options = text.split("\noptions:\n", 1)[1].split("\n\n", 1)[0]
    flags = set(re.findall(r"^  (?:-h, )?--([a-z-]+)", options, flags=re.M))
    return {f.replace("-", "_") for f in flags} - {"help", "json"}


def options_of(parser: argparse.ArgumentParser) -> set[str]:
    return {a.dest for a in parser._actions if a.option_strings and a.dest not in ("help", "json", argparse.SUPPRESS)}


def accepted(argv: list[str], mech: str, dest: str) -> bool:
    """Whether ``certdp ARGV --DEST value`` passes the CLI's flag checks for some route choice."""
    parser = build_parser()
    base = parser.parse_args([*argv, *REQUIRED_FLAGS.get(argv[0], [])])
    sub = parser._subparsers._group_actions[0].choices[argv[0]]  # type: ignore[union-attr]
    if dest == "event":
        return False  # the eps/delta runners refuse a mechanism and an event file together
    routes = [a for a in sub._actions if a.dest in ("via", "method") and a.choices]
    for choice in itertools.product(*((None, *r.choices) for r in routes)):
        args = argparse.Namespace(**vars(base))
        for route, value in zip(routes, choice, strict=True):
            setattr(args, route.dest, value)
        if getattr(args, dest) is None:
            if dest in ("via", "method"):
                continue  # a route flag takes one of its choices (argparse refuses the rest)
            setattr(args, dest, PAIR_VALUES.get(dest, "1"))
        try:
            reject_unused(args)
            # eps / delta random-allocation read --direction in their own runner (certdp.cli.run_allocation)
            own = mech == "random-allocation" and dest == "direction" and argv[0] in ("eps", "delta")
            if dest in PAIR_FLAGS and argv[:2] != ["curve", "eps"] and argv[0] != "calibrate" and not own:
                # the mechanism's required parameters, and this flag
                pair = argparse.Namespace(**{k: None for k in (*PARAMS, "direction", "steps", "epochs")})
                pair.mechanism = mech
                for req in ("sigma", "q", "a"):
                    if mech in PARAMS[req][0]:
                        setattr(pair, req, PAIR_VALUES[req])
                if mech == "random-allocation":
                    pair.steps = PAIR_VALUES["steps"]
                setattr(pair, dest, PAIR_VALUES[dest])
                pair_from_args(pair)
        except CertdpError:
            continue
        return True
    return False


@pytest.mark.parametrize(("cmd", "mech"), CASES, ids=[f"{c}-{m}" for c, m in CASES])
def test_a_mechanisms_help_lists_exactly_the_flags_it_accepts(cmd, mech, capsys) -> None:
    argv = [*cmd.split(), mech]
    shown = help_flags(argv, capsys)
    sub = build_parser()._subparsers._group_actions[0].choices[argv[0]]  # type: ignore[union-attr]
    expected = {dest for dest in options_of(sub) if accepted(argv, mech, dest)}
    assert shown == expected
    assert PARAMS.keys() & shown <= {p for p, (mechs, _) in PARAMS.items() if mech in mechs}


def test_the_reported_trap(capsys) -> None:
    shown = help_flags(["calibrate", "subsampled-gaussian"], capsys)
    assert {"q", "steps", "epochs", "epsilon", "delta"} <= shown
    assert not shown & {"nu", "beta", "m", "scale", "tv", "sigma", "shift", "a"}
    # without a mechanism, or with one calibrate does not take, every flag is listed
    every = help_flags(["calibrate"], capsys)
    assert {"nu", "beta", "m", "scale", "tv", "q", "epsilon"} <= every
    assert help_flags(["calibrate", "laplace"], capsys) == every
    # an event file stands for the mechanism
    assert help_flags(["eps", "--event", "e.json"], capsys) == {
        "event",
        "relation",
        "delta",
        "via",
        "h",
        "rel_width",
        "orders",
        "max_seconds",
        "max_memory",
        "prec",
        "max_prec",
    }
