"""Runners of ``certdp curve eps|rdp`` and ``certdp table sigma``."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from certdp.cert.crypto import atomic_write
from certdp.cli.common import ends, pair_from_args, progress_bar
from certdp.cli.run_certs import writable_path
from certdp.errors import InvalidArgument, Unsupported, fmt_value
from certdp.integrations import curves, tables
from certdp.notions.pld import MAX_STEPS as MAX_PLD_STEPS
from certdp.pairs import DIRECTIONS
from certdp.pairs.params import exact_str, integer, real
from certdp.sweep.engine import parse_scheduler, require_dask


def _outputs(args: argparse.Namespace, *names: str) -> dict[str, Path | None]:
    """The output paths, checked before any work (a long run must not end in "no such directory")."""
    return {n: None if getattr(args, n) is None else writable_path(n, getattr(args, n)) for n in names}


def _write(path: Path | None, data: bytes) -> str | None:
    if path is None:
        return None
    atomic_write(path, data)
    return str(path)


def _need(args: argparse.Namespace, what: str, *names: str) -> None:
    for name in names:
        if getattr(args, name, None) is None:
            raise InvalidArgument(f"{name} is required for {what} (--{name})")


def run_curve(args: argparse.Namespace) -> dict[str, object]:
    """Contract: the record of ``curve eps`` (certified epsilon band per step count, curves.eps_curve)
    or ``curve rdp`` (curves.rdp_curve); CSV and PNG written atomically when asked."""
    return _eps_curve(args) if args.kind == "eps" else _rdp_curve(args)


def _eps_curve(args: argparse.Namespace) -> dict[str, object]:
    if args.mechanism != "subsampled-gaussian":
        raise Unsupported(
            f"curve eps is implemented for subsampled-gaussian, not mechanism={fmt_value(args.mechanism)}"
        )
    _need(args, "curve eps", "q", "sigma", "steps", "delta")
    direction = args.direction or "both"
    if direction not in DIRECTIONS:
        raise InvalidArgument(f"direction={fmt_value(direction)} must be one of {', '.join(DIRECTIONS)}")
    q, sigma = real("q", args.q, gt=0, le=1), real("sigma", args.sigma, gt=0)
    delta = real("delta", args.delta, gt=0, lt=1)
    h = None if args.h is None else real("h", args.h, gt=0, le=1)
    steps = curves.steps_range(args.steps, MAX_PLD_STEPS)
    peers = [p.strip() for p in (args.compare or "").split(",") if p.strip()]
    out = _outputs(args, "csv", "png")
    if out["png"] is not None:
        _matplotlib_or_fail()
    from certdp.audit.adapters import PeerOutput, capture_peer_output, load_adapter

    # peers' warnings (dp_accounting logs two per step count) are counted, not printed: one
    # summary line on stderr, and peer_warnings in the record
    said, adapters = PeerOutput(), []
    for name in peers:
        # a missing or unknown peer is refused before the certified work, not after it; loaded once
        with capture_peer_output() as loading:
            adapters.append(load_adapter(name))
        said.merge(loading, name)
    with progress_bar(args) as note:
        points = curves.eps_curve(q, sigma, steps, delta, direction=direction, h=h, progress=note)
    columns: dict[str, list[float]] = {}
    for adapter in adapters:
        with capture_peer_output() as during:
            columns.update(curves.peer_eps([adapter], q, sigma, steps, delta))
        said.merge(during, adapter.name)
    if said.total:
        sys.stderr.write(f"certdp: warning: {said.summary()}\n")
    header = ["steps", "epsilon_lower", "epsilon_upper", *columns]
    rows = [
        [p.steps, p.enclosure.lower_str(), p.enclosure.upper_str(), *(repr(c[i]) for c in columns.values())]
        for i, p in enumerate(points)
    ]
    params = {"q": exact_str(q), "sigma": exact_str(sigma), "direction": direction}
    title = f"Poisson-subsampled Gaussian, q = {exact_str(q)}, sigma = {exact_str(sigma)} ({direction})"
    csv_path = _write(out["csv"], curves.to_csv(header, rows).encode())
    png_path = None
    if out["png"] is not None:
        from certdp.integrations.plot import eps_curve_png

        png_path = _write(out["png"], eps_curve_png(points, columns, title, exact_str(delta)))
    text = [f"certified epsilon at delta={exact_str(delta)} of {title} (PLD lattice bounds)"]
    text.append("  " + "  ".join(f"{h:>22}" for h in header))
    text += ["  " + "  ".join(f"{v if not isinstance(v, float) else f'{v:.10g}':>22}" for v in r) for r in rows]
    text += [f"  {kind} written to {path}" for kind, path in (("CSV", csv_path), ("PNG", png_path)) if path]
    return {
        "quantity": "epsilon_curve",
        "mechanism": args.mechanism,
        "params": params,
        "delta": exact_str(delta),
        "via": "pld",
        "points": [{"steps": p.steps, **ends(p.enclosure), "seconds": p.seconds} for p in points],
        "peers": {k: [None if math.isnan(v) else v for v in vals] for k, vals in columns.items()},
        "peer_warnings": said.as_dict(),
        "csv": csv_path,
        "png": png_path,
        "text": "\n".join(str(line) for line in text),
    }


def _rdp_curve(args: argparse.Namespace) -> dict[str, object]:
    args.epochs = None  # pair_from_args reads it; curve rdp composes --steps runs only
    out = _outputs(args, "csv", "png")
    if out["png"] is not None:
        _matplotlib_or_fail()
    pair, inputs = pair_from_args(args)
    orders = curves.orders_range(args.orders or "1.01..256")
    limit = pair.max_t()
    if limit is not None and orders[-1] - 1 > limit:
        raise InvalidArgument(
            f"orders={fmt_value(args.orders or '1.01..256')} reaches order {exact_str(orders[-1])}, beyond "
            f"{exact_str(limit + 1)}, the largest this mechanism evaluates"
        )
    with progress_bar(args) as note:
        curve = curves.rdp_curve(pair, orders, progress=note)
    header = ["order", "rdp_lower", "rdp_upper", "zcdp_lower", "zcdp_upper", "gap_lower", "gap_upper"]
    rows = []
    for p in curve.points:
        z = (p.zcdp.lower_str(), p.zcdp.upper_str()) if p.zcdp is not None else ("", "")
        g = (p.gap.lower_str(), p.gap.upper_str()) if p.gap is not None else ("", "")
        rows.append([exact_str(p.order), p.rdp.lower_str(), p.rdp.upper_str(), *z, *g])
    params = ", ".join(f"{k}={v}" for k, v in inputs["params"].items())  # type: ignore[attr-defined]
    steps = inputs.get("steps", 1)
    title = f"{args.mechanism}({params})" + (f" composed {steps} times" if steps != 1 else "")
    csv_path = _write(out["csv"], curves.to_csv(header, rows).encode())
    png_path = None
    if out["png"] is not None:
        from certdp.integrations.plot import rdp_curve_png

        png_path = _write(out["png"], rdp_curve_png(curve, f"certified Renyi curve of {title}"))
    rho_text = f"rho in [{curve.rho.lower_str()}, {curve.rho.upper_str()}]" if curve.rho else f"rho: {curve.rho_error}"
    text = [f"certified Renyi curve of {title}; {rho_text}"]
    text.append("  " + "  ".join(f"{h:>24}" for h in header))
    text += ["  " + "  ".join(f"{v:>24}" for v in r) for r in rows]
    text += [f"  {kind} written to {path}" for kind, path in (("CSV", csv_path), ("PNG", png_path)) if path]
    return {
        "quantity": "rdp_curve",
        **inputs,
        "rho": None if curve.rho is None else ends(curve.rho),
        "rho_error": curve.rho_error or None,
        "points": [
            {
                "order": exact_str(p.order),
                "rdp": ends(p.rdp),
                "zcdp": None if p.zcdp is None else ends(p.zcdp),
                "gap": None if p.gap is None else ends(p.gap),
            }
            for p in curve.points
        ],
        "csv": csv_path,
        "png": png_path,
        "text": "\n".join(text),
    }


def _matplotlib_or_fail() -> None:
    """Refuse --png before the computation when matplotlib is missing (not after minutes of work)."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise Unsupported('png needs matplotlib: pip install "certdp[plot]"') from None


def run_table(args: argparse.Namespace) -> dict[str, object]:
    """Contract: the record of ``table sigma`` (tables.sigma_table over the grid), with the CSV and
    Markdown files written atomically when asked."""
    qs = tables.number_list("q", args.q, gt=0, le=1)
    steps = [int(n) for n in tables.number_list("steps", args.steps, integral=True)]
    epsilons = tables.number_list("epsilon", args.epsilon, gt=0)
    delta = real("delta", args.delta, gt=0, lt=1)
    step = real("step", args.step or "1e-4", gt=0)
    direction = args.direction or "both"
    if direction not in DIRECTIONS:
        raise InvalidArgument(f"direction={fmt_value(direction)} must be one of {', '.join(DIRECTIONS)}")
    jobs = integer("jobs", args.jobs or "1", ge=1)
    if jobs > tables.MAX_JOBS:
        raise InvalidArgument(f"jobs={jobs} must be <= {tables.MAX_JOBS}")
    scheduler = None if args.scheduler is None else parse_scheduler(args.scheduler)
    if scheduler is not None and "://" in scheduler and args.jobs is not None:
        raise InvalidArgument(f"jobs={jobs} does not apply to scheduler={scheduler}: the cluster has its own workers")
    require_dask(scheduler or ("serial" if jobs == 1 else "processes"))  # before any cell: a missing Dask is said now
    out = _outputs(args, "csv", "markdown")
    with progress_bar(args) as note:
        rows = tables.sigma_table(
            qs, steps, epsilons, delta, step=step, direction=direction, jobs=jobs, scheduler=scheduler, progress=note
        )
    dicts = [r.to_dict() for r in rows]
    header = list(dicts[0])
    title = (
        f"Certified noise multipliers of Poisson-subsampled Gaussian DP-SGD ({direction} neighbours, "
        f"sigma on the {exact_str(step)} lattice, PLD lattice bounds)"
    )
    markdown = tables.sigma_markdown(rows, f"**{title}.**")
    csv_path = _write(out["csv"], curves.to_csv(header, [list(d.values()) for d in dicts]).encode())
    md_path = _write(out["markdown"], markdown.encode())
    text = markdown + "".join(f"{kind} written to {p}\n" for kind, p in (("CSV", csv_path), ("Markdown", md_path)) if p)
    return {
        "quantity": "sigma_table",
        "delta": exact_str(delta),
        "step": exact_str(step),
        "direction": direction,
        "rows": dicts,
        "exit_code": 3 if any(r.sigma is None for r in rows) else 0,  # a setting could not be certified
        "csv": csv_path,
        "markdown": md_path,
        "text": text.rstrip("\n"),
    }
