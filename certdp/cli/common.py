"""Shared CLI helpers: building pairs and targets from arguments, records, the progress bar."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from fractions import Fraction

from certdp.cli.parser import PARAMS, REQUIRED
from certdp.enclose import Enclosure, Target
from certdp.errors import InvalidArgument
from certdp.pairs import MECHANISMS, PrivacyPair, RandomAllocation, compose
from certdp.pairs.params import exact_str, integer


def pair_from_args(args: argparse.Namespace) -> PrivacyPair:
    mech = args.mechanism
    if mech not in MECHANISMS:
        raise InvalidArgument(f"mechanism={mech} must be one of {', '.join(MECHANISMS)}")
    kwargs: dict[str, str] = {}
    for param, (mechs, _) in PARAMS.items():
        value = getattr(args, param)
        if value is None:
            continue
        if mech not in mechs:
            raise InvalidArgument(f"{param}={value} is not a parameter of {mech}")
        kwargs[param] = value
    if args.direction is not None:
        if mech != "subsampled-gaussian":
            raise InvalidArgument(f"direction={args.direction} is not a parameter of {mech}")
        kwargs["direction"] = args.direction
    for req in REQUIRED[mech]:
        if req not in kwargs:
            raise InvalidArgument(f"{req} is required for {mech} (--{req})")
    if mech == "random-allocation":
        if args.steps is None:
            raise InvalidArgument("steps is required for random-allocation (--steps M)")
        return MECHANISMS[mech](steps=args.steps, epochs=args.epochs or "1", **kwargs)
    if args.epochs is not None:
        raise InvalidArgument(f"epochs={args.epochs} is not a parameter of {mech}")
    pair = MECHANISMS[mech](**kwargs)
    steps = integer("steps", args.steps or "1", ge=1)
    return pair if steps == 1 else compose(pair, steps)


def target_from_args(args: argparse.Namespace, base: Target) -> Target:
    start = integer("prec", args.prec, ge=16) if args.prec is not None else base.start_prec
    top = integer("max-prec", args.max_prec, ge=16) if args.max_prec is not None else max(base.max_prec, start)
    if top < start:
        raise InvalidArgument(f"max-prec={top} must be >= prec={start}")
    return Target(base.rel_tol, base.abs_tol, start, top)


def order_or_t(args: argparse.Namespace) -> tuple[str, str]:
    if (args.order is None) == (args.t is None):
        raise InvalidArgument("exactly one of --order and --t is required")
    if args.order is not None:
        return "order", args.order
    return "t", args.t


def input_record(args: argparse.Namespace, pair: PrivacyPair) -> dict[str, object]:
    if isinstance(pair, RandomAllocation):
        return {"mechanism": args.mechanism, "params": pair.params(), "steps": pair.steps, "epochs": pair.epochs}
    base = pair.parts[0][0] if hasattr(pair, "parts") else pair
    return {"mechanism": args.mechanism, "params": base.params(), "steps": int(args.steps or 1)}


def enclosure_record(quantity: str, enc: Enclosure, inputs: dict[str, object], **extra: object) -> dict[str, object]:
    rec: dict[str, object] = {"quantity": quantity}
    rec.update(enc.to_dict())
    rec.update(inputs)
    rec.update(extra)
    return rec


def ends(enc: Enclosure) -> dict[str, str]:
    """Outward-rounded decimal ends of an enclosure (a nested field of a JSON record)."""
    return {"lower": enc.lower_str(), "upper": enc.upper_str()}


def fmt_exact(x: Fraction) -> str:
    return exact_str(x)


@contextmanager
def progress_bar(args: argparse.Namespace) -> Iterator[Callable[[str, float], None]]:
    """A rich progress bar on a terminal; silent with --json or when output is not a terminal."""
    if args.json or not sys.stderr.isatty():
        yield lambda what, frac: None
        return
    from rich.progress import Progress

    with Progress(transient=True) as bar:
        task = bar.add_task("certifying", total=1.0)
        yield lambda what, frac: bar.update(task, completed=frac, description=what)
