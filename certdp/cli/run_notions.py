"""Runners of the enclosure commands (cgf, rdp, kl, rho, gap, eps, delta) and of tv."""

from __future__ import annotations

import argparse
import math
import sys
from decimal import Decimal
from fractions import Fraction

from certdp.cert.limits import grid_work
from certdp.cli.common import (
    enclosure_record,
    ends,
    fmt_exact,
    order_or_t,
    order_text,
    pair_from_args,
    progress_bar,
    target_from_args,
)
from certdp.cli.flags import shown
from certdp.enclose import DEFAULT_TARGET, Enclosure, workprec
from certdp.errors import InvalidArgument, LimitExceeded, PrecisionExhausted, Unsupported, fmt_value
from certdp.notions import CONVERSION_TARGET, cgf, gap, kl, rdp, rho_detail
from certdp.notions.accountant import PLD_PREC, SWITCH_PREFIX, delta, epsilon
from certdp.notions.tv_certified import auto_grid, tv_bound
from certdp.notions.tv_closed_form import (
    attack_accuracy_upper,
    chi2_epochs,
    log1p_chi2_epochs,
    tv_upper_closed_form,
)
from certdp.notions.tv_numeric import approx_tv_lattice, approx_tv_monte_carlo
from certdp.pairs import PrivacyPair, RandomAllocation
from certdp.pairs.params import integer, real

#: Narrowest --width of ``tv --method certified``: the rounding error of the lattice is of order h^2,
#: so a width w needs h ~ sqrt(w) and about 1/sqrt(w) lattice points per unit of the ratio.
MIN_TV_WIDTH = Fraction(1, 10**12)


def ceil_3_digits(x: Fraction) -> str:
    """Contract: a 3-significant-digit decimal >= x > 0, so that "ask for at least" it is honest
    (plain %.3g rounds to nearest and may name a width the same grid misses again)."""
    exponent = math.floor(math.log10(x)) - 2  # float log10 only places the digits
    scale = Fraction(10) ** exponent
    digits = math.ceil(x / scale)  # exact: the ceiling, so the decimal below is >= x
    return format(Decimal(digits).scaleb(exponent), ".2e")  # exact: at most 4 digits, 1000 -> 1.00e+N


def run_tv(args: argparse.Namespace, pair: PrivacyPair, inputs: dict[str, object]) -> dict[str, object]:
    """The ``tv`` command's record for one method.

    Contract: method "certified" returns ``certified: true`` only with [tv_lower, tv_upper] a
    certified enclosure of TV (certdp.notions.tv_certified.tv_bound, both sides on one grid)
    whose width is at most --width; a wider one raises PrecisionExhausted (exit 3), never a record.
    "closed-form" encloses the bound U(c_E) of arXiv:2610.09651 (tv_closed_form); "exact" and "monte-carlo"
    are numeric estimates marked ``certified: false``.
    """
    if not isinstance(pair, RandomAllocation):
        raise Unsupported(f"tv is implemented for random-allocation only, not mechanism={args.mechanism}")
    method = args.method
    inputs["method"] = method
    if method == "certified":
        width_exact = real("width", args.width, gt=0, lt=1)
        if width_exact < MIN_TV_WIDTH:
            raise LimitExceeded(
                f"{shown(args, 'width')} is below {fmt_value(MIN_TV_WIDTH)}, the narrowest certified TV enclosure "
                "certdp attempts (the lattice would need h of order sqrt(width))"
            )
        width = float(width_exact)
        numeric = approx_tv_lattice(pair.steps, pair.epochs, pair.sigma)
        grid = auto_grid(pair, width / 2, ref=numeric)
        try:
            for side in ("upper", "lower"):
                grid_work(pair.steps, pair.epochs, float(pair.sigma), grid, side)
        except LimitExceeded as exc:
            raise LimitExceeded(f"{shown(args, 'width')} needs a grid beyond the work limits: {exc}") from None
        with progress_bar(args) as note:
            up = tv_bound(pair, grid, "upper", note)
            low = tv_bound(pair, grid, "lower", note)
        achieved = up.bound.upper - low.bound.lower
        # the grid comes from a float prediction of the rounding bias, so the width it reaches is
        # checked here; no retry: each halving of h and eta costs 2-4 times the run just made
        if achieved > width_exact:
            reachable = ceil_3_digits(achieved)
            raise PrecisionExhausted(
                f"{shown(args, 'width')} not reached: the certified bounds are {reachable} apart; "
                f"ask for a --width of at least {reachable}",
                achieved_width=float(achieved),
            )
        enc = Enclosure.from_bounds(low.bound.lower, up.bound.upper, grid.prec)
        return enclosure_record(
            "tv",
            enc,
            inputs,
            certified=True,
            tv_upper=enc.upper_str(),
            tv_lower=enc.lower_str(),
            grid=grid.to_dict(),
            seconds=round(up.seconds + low.seconds, 3),
        )
    if method == "closed-form":
        target = target_from_args(args, DEFAULT_TARGET)
        enc = tv_upper_closed_form(pair, target)
        acc = attack_accuracy_upper(pair, target)
        chi2_text: dict[str, object] = {}
        try:
            chi2_text["chi2_upper"] = chi2_epochs(pair, target).upper_str()
        except Unsupported:
            # c_E ~ e^1000000 at sigma = 0.001 is past the range of an Enclosure; U(c_E) <= 1 and the
            # accuracy are not: they are answered, and c_E is given by the upper end of log(1 + c_E)
            chi2_text["chi2_upper"] = None
            chi2_text["log1p_chi2_upper"] = log1p_chi2_epochs(pair, target).upper_str()
        return enclosure_record(
            "tv_upper",
            enc,
            inputs,
            certified=True,
            tv_upper=enc.upper_str(),
            accuracy_upper=acc.upper_str(),
            **chi2_text,
            means="[lower, upper] encloses the closed-form bound U(c_E) of arXiv:2610.09651, an upper bound on "
            "TV (not an enclosure of TV: --method certified gives that)",
        )
    if method == "exact":
        res = approx_tv_lattice(pair.steps, pair.epochs, pair.sigma)
        lo, hi = res.value - res.error_estimate, res.value + res.error_estimate
        # an estimate, not an enclosure: no top-level lower/upper (those are reserved for proved ends)
        return {
            "quantity": "tv_estimate",
            "certified": False,
            "value": f"{res.value:.12g}",
            "estimate_interval": {"lower": f"{lo:.12g}", "upper": f"{hi:.12g}", "kind": "value -+ error estimate"},
            "error_estimate": f"{res.error_estimate:.3g}",
            "grid": res.grid,
            **inputs,
        }
    n = integer("samples", args.samples, ge=2)
    seed = integer("seed", args.seed, ge=0)
    est, se = approx_tv_monte_carlo(pair.steps, pair.epochs, pair.sigma, n=n, seed=seed)
    return {
        "quantity": "tv_estimate",
        "certified": False,
        "value": f"{est:.12g}",
        "stderr": f"{se:.3g}",
        "estimate_interval": {
            "lower": f"{est - 4 * se:.12g}",
            "upper": f"{est + 4 * se:.12g}",
            "kind": "value -+ 4 standard errors (statistical, not proved)",
        },
        "samples": n,
        "seed": seed,
        **inputs,
    }


def _event_pair(args: argparse.Namespace) -> tuple[PrivacyPair, dict[str, object]]:
    """The pair of a dp_accounting event file (--event), and its input record."""
    from certdp.integrations.dp_accounting import from_event, load_event

    if args.mechanism is not None:
        raise InvalidArgument(
            f"mechanism={fmt_value(args.mechanism)} and event={fmt_value(args.event)} are exclusive: the event "
            "describes the mechanism"
        )
    pair = from_event(load_event(args.event))
    return pair, {"mechanism": "dp_accounting-event", "event": args.event, "params": pair.params()}


def run_notion(args: argparse.Namespace) -> dict[str, object]:
    cmd = args.command
    if getattr(args, "event", None) is not None and cmd in ("eps", "delta"):
        from certdp.cli.run_events import event_pair_or_doc, run_event_answer

        one, doc, relation = event_pair_or_doc(args)
        if one is None:  # several parts or directions: certdp.integrations.dp_events
            return run_event_answer(args, doc, relation)
        pair, inputs = one, {"mechanism": "dp_accounting-event", "event": args.event, "params": one.params()}
    elif getattr(args, "event", None) is not None:
        pair, inputs = _event_pair(args)
    else:
        if args.mechanism is None:
            raise InvalidArgument(f"mechanism is required: certdp {cmd} MECHANISM ... (or --event FILE)")
        from certdp.cli.run_allocation import run_allocation_eps_delta, takes_allocation_route

        if takes_allocation_route(args):  # random allocation's own two-sided lattice (docs/math.md §9.8)
            return run_allocation_eps_delta(args)
        pair, inputs = pair_from_args(args)
    if cmd == "tv":
        return run_tv(args, pair, inputs)
    if cmd == "expansion":
        from certdp.notions.expansion import local_expansion

        t = real("t", args.t if args.t is not None else "1", gt=0)
        inputs["t"] = fmt_exact(t)
        e = local_expansion(pair, t, target_from_args(args, DEFAULT_TARGET))

        return enclosure_record(
            "gap_expansion",
            e.total,
            inputs,
            rho=ends(e.rho),
            kl=ends(e.kappas[0]),
            kappa3=ends(e.kappas[2]),
            kappa4=ends(e.kappas[3]),
            first_term=ends(e.first),
            third_term=ends(e.third),
            fourth_term=ends(e.fourth),
            gap=ends(e.gap),
            note="the expansion's terms (arXiv:2610.02414, Thm 3.1); the O(|s|^5) remainder is not enclosed",
        )
    if cmd in ("cgf", "rdp", "gap"):
        kind, value = order_or_t(args)
        target = target_from_args(args, DEFAULT_TARGET)
        if kind == "order":
            alpha = real("order", value, gt=1)
            t = alpha - 1
        else:
            t = real("t", value, gt=0)
            alpha = t + 1
        inputs.update({"order": fmt_exact(alpha), "t": fmt_exact(t)})
        if cmd == "cgf":
            enc = cgf(pair, t, target)
        elif cmd == "rdp":
            enc = rdp(pair, alpha, target)
        else:
            enc = gap(pair, t, target)
        return enclosure_record(cmd, enc, inputs)
    if cmd == "kl":
        return enclosure_record("kl", kl(pair, target_from_args(args, DEFAULT_TARGET)), inputs)
    if cmd == "rho":
        res = rho_detail(pair, target_from_args(args, DEFAULT_TARGET), method=args.method)
        arg = res.argmax
        where = None if arg is None else ("t->0" if arg == 0 else "t->inf" if arg == float("inf") else f"{arg:.6g}")
        return enclosure_record("rho", res.enclosure, inputs, method=res.method, sup_at=where)
    orders = None
    if args.orders is not None:
        orders = [o.strip() for o in args.orders.split(",") if o.strip()]
        if not orders:
            raise InvalidArgument(f"orders={args.orders} must list at least one order")
    return run_eps_delta(args, pair, inputs, orders)


def run_eps_delta(
    args: argparse.Namespace, pair: PrivacyPair, inputs: dict[str, object], orders: list[str] | None
) -> dict[str, object]:
    """eps or delta by the one rule of certdp.notions.accountant (or the --via asked for).

    Contract: ``lower``/``upper`` bound the true eps(delta) (delta(eps)) of the pair; ``lower_from``
    and ``upper_from`` say what proves each end; an RDP/zCDP conversion's own ball is in
    ``rdp_bound``/``zcdp_bound``; a route switch is a ``warnings`` entry and a stderr line.
    """
    target = target_from_args(args, CONVERSION_TARGET)
    raw_rw = getattr(args, "rel_width", None)
    rel_width = None if raw_rw is None else real("rel-width", raw_rw, gt=0, lt=1)
    kwargs = {"via": args.via, "orders": orders, "h": args.h, "target": target, "rel_width": rel_width}
    prec = integer("prec", args.prec, ge=64) if args.prec is not None else PLD_PREC
    with workprec(prec):
        if args.command == "eps":
            res = epsilon(pair, args.delta, **kwargs)  # type: ignore[arg-type]
            inputs["delta"] = args.delta
        else:
            res = delta(pair, args.eps, **kwargs)  # type: ignore[arg-type]
            inputs["eps"] = args.eps
    name = res.quantity
    extra: dict[str, object] = {
        name: res.enclosure.upper_str(),
        "via": res.via,
        "lower_from": res.lower_from,
        "upper_from": res.upper_from,
        "route": res.reason,
    }
    conv = res.route_bound
    if conv is not None:
        bound: dict[str, object] = {
            **ends(conv.enclosure),
            "order": order_text(conv.order, conv.orders),
            "grid": conv.grid,
            "means": f"the {conv.via} conversion's value, an upper bound on {name} (not an enclosure of {name})",
        }
        if conv.orders is not None:
            bound["orders"] = [fmt_exact(o) for o in conv.orders]
        if conv.signed_infimum is not None:
            bound["signed_infimum"] = ends(conv.signed_infimum)
        extra[f"{conv.via}_bound"] = bound
    if res.grid is not None:
        extra["grid"] = res.grid
    extra["warnings"] = list(res.warnings)
    for note in res.warnings:
        if note.startswith(SWITCH_PREFIX):
            print(f"certdp: warning: {note}", file=sys.stderr)
    return enclosure_record(name, res.enclosure, inputs, **extra)
