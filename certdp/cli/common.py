"""Shared CLI helpers: building pairs and targets from arguments, records, the progress bar."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from fractions import Fraction

from certdp.cli.parser import PARAMS, REQUIRED
from certdp.enclose import Enclosure, Target
from certdp.errors import InvalidArgument, LimitExceeded, fmt_value
from certdp.pairs import MECHANISMS, PrivacyPair, compose
from certdp.pairs.params import exact_str, integer, real

#: Largest composition count accepted on the command line (a CGF times n costs nothing, but a
#: count past this is a typo rather than a training run).
MAX_STEPS = 10**12


#: Largest working precision the CLI accepts (4x the default ceiling; an Arb number of 2^16 bits
#: costs ~1000x one of 64 bits, so beyond this a computation is a hang, not a tighter answer).
MAX_PREC = 1 << 16


def steps_from_args(args: argparse.Namespace, q: str | None) -> tuple[int, dict[str, object]]:
    """The composition count from --steps, or from --epochs E as ceil(E/q) for subsampled-gaussian.

    Rounding E/q up composes at least as many runs as E epochs of Poisson sampling at rate q
    make on average, so the accounting errs on the safe side. Returns the count and the record
    fields that state where it came from.
    """
    if args.epochs is not None and args.steps is not None:
        raise InvalidArgument(
            f"epochs={fmt_value(args.epochs)} and steps={fmt_value(args.steps)} are exclusive: "
            "give --steps, or --epochs (steps = ceil(epochs/q))"
        )
    if args.epochs is not None:
        assert q is not None  # only subsampled-gaussian reaches here, and q is required for it
        epochs = real("epochs", args.epochs, gt=0, le=MAX_STEPS)
        steps = math.ceil(epochs / real("q", q, gt=0, le=1))
        if steps > MAX_STEPS:
            raise LimitExceeded(f"epochs={fmt_value(args.epochs)} gives steps={steps}, above the limit {MAX_STEPS}")
        return steps, {"steps": steps, "epochs": exact_str(epochs), "steps_rule": "ceil(epochs/q)"}
    steps = integer("steps", args.steps if args.steps is not None else "1", ge=1)
    if steps > MAX_STEPS:
        raise LimitExceeded(f"steps={fmt_value(args.steps)} exceeds the limit {MAX_STEPS}")
    return steps, {"steps": steps}


def pair_from_args(args: argparse.Namespace) -> tuple[PrivacyPair, dict[str, object]]:
    """The (possibly composed) pair the flags describe, and its input record for the output.

    Contract: every parameter is validated (InvalidArgument naming it) before any computation.
    """
    mech = args.mechanism
    if mech not in MECHANISMS:
        raise InvalidArgument(f"mechanism={fmt_value(mech)} must be one of {', '.join(MECHANISMS)}")
    kwargs: dict[str, str] = {}
    for param, (mechs, _) in PARAMS.items():
        value = getattr(args, param)
        if value is None:
            continue
        if mech not in mechs:
            raise InvalidArgument(f"{param}={fmt_value(value)} is not a parameter of {mech}")
        kwargs[param] = value
    if args.direction is not None:
        if mech != "subsampled-gaussian":
            raise InvalidArgument(f"direction={fmt_value(args.direction)} is not a parameter of {mech}")
        kwargs["direction"] = args.direction
    for req in REQUIRED[mech]:
        if req not in kwargs:
            raise InvalidArgument(f"{req} is required for {mech} (--{req})")
    if mech == "random-allocation":
        if args.steps is None:
            raise InvalidArgument("steps is required for random-allocation (--steps M)")
        pair = MECHANISMS[mech](steps=args.steps, epochs=args.epochs if args.epochs is not None else "1", **kwargs)
        return pair, {"mechanism": mech, "params": pair.params(), "steps": pair.steps, "epochs": pair.epochs}
    if args.epochs is not None and mech != "subsampled-gaussian":
        raise InvalidArgument(f"epochs={fmt_value(args.epochs)} is not a parameter of {mech}")
    base = MECHANISMS[mech](**kwargs)
    steps, fields = steps_from_args(args, kwargs.get("q"))
    pair = base if steps == 1 else compose(base, steps)
    return pair, {"mechanism": mech, "params": base.params(), **fields}


def target_from_args(args: argparse.Namespace, base: Target) -> Target:
    start = integer("prec", args.prec, ge=16) if args.prec is not None else base.start_prec
    top = integer("max-prec", args.max_prec, ge=16) if args.max_prec is not None else max(base.max_prec, start)
    for name, bits in (("prec", start), ("max-prec", top)):
        if bits > MAX_PREC:
            raise LimitExceeded(f"{name}={bits} exceeds the limit {MAX_PREC} bits")
    if top < start:
        raise InvalidArgument(f"max-prec={top} must be >= prec={start}")
    return Target(base.rel_tol, base.abs_tol, start, top)


def order_or_t(args: argparse.Namespace) -> tuple[str, str]:
    if (args.order is None) == (args.t is None):
        raise InvalidArgument("exactly one of --order and --t is required")
    if args.order is not None:
        return "order", args.order
    return "t", args.t


def enclosure_record(quantity: str, enc: Enclosure, inputs: dict[str, object], **extra: object) -> dict[str, object]:
    rec: dict[str, object] = {"quantity": quantity}
    rec.update(enc.to_dict())
    rec.update(inputs)
    rec.update(extra)
    return rec


def ends(enc: Enclosure) -> dict[str, str]:
    """Outward-rounded decimal ends of an enclosure (a nested field of a JSON record)."""
    return {"lower": enc.lower_str(), "upper": enc.upper_str()}


def order_text(order: float, searched: Sequence[Fraction] | None = None) -> str | None:
    """The optimal order as JSON text: the user's own decimal when it came from --orders (2.8, not
    2.7999999999999998), the shortest round-trip float text otherwise, None for order infinity."""
    if order == float("inf"):
        return None
    for given in searched or ():
        if float(given) == order:
            return exact_str(given)
    return repr(float(order))


def fmt_exact(x: Fraction) -> str:
    return exact_str(x)


@contextmanager
def progress_bar(args: argparse.Namespace) -> Iterator[Callable[[str, float], None]]:
    """A rich progress bar on a terminal; silent with --json or when output is not a terminal."""
    if args.json or not sys.stderr.isatty():
        yield lambda what, frac: None
        return
    from rich.console import Console
    from rich.progress import Progress

    # stderr: stdout carries the result (a pipe or a redirect must receive only that)
    with Progress(transient=True, console=Console(stderr=True)) as bar:
        task = bar.add_task("certifying", total=1.0)
        yield lambda what, frac: bar.update(task, completed=frac, description=what)
