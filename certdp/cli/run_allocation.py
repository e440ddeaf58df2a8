"""eps / delta of random allocation by its certified lattice (certdp.notions.allocation_dp).

``certdp eps random-allocation --steps M --epochs E --sigma S [--k K] [--direction D] --delta X``
and ``certdp delta random-allocation ... --eps X`` take this route by default and with
``--via pld``; ``--via rdp`` (or ``--orders``) keeps the RDP conversion of certdp.notions.accountant.
With ``--k K``, 1 < K < M, the upper end is the reduction of docs/math.md §9.8 to k = 1 and the
lower end that of an additive statistic (0, ``one_sided``, when it proves nothing); neither is
refined to --rel-width, and a certificate of ``certdp calibrate`` holds the claim alone. K = M is
exactly the 1-step run of M E epochs (a Gaussian): both ends, refined, and a certificate with its
refutation.
"""

from __future__ import annotations

import argparse
import time

from certdp.cli.common import enclosure_record, pair_from_args, progress_bar
from certdp.errors import InvalidArgument, LimitExceeded, PrecisionExhausted, fmt_value, reworded
from certdp.notions.accountant import PLD_PREC
from certdp.pairs.params import integer, real

#: default target relative width of the enclosure, per command
DEFAULT_REL_WIDTH = {"eps": "1e-3", "delta": "1e-2"}
DIRECTIONS = ("remove", "add", "both")


def takes_allocation_route(args: argparse.Namespace) -> bool:
    """Contract: True exactly when ``eps``/``delta`` of random-allocation is asked for without
    --event, --orders or a --via other than pld (the lattice route of this module)."""
    return (
        args.command in ("eps", "delta")
        and getattr(args, "event", None) is None
        and args.mechanism == "random-allocation"
        and args.via in (None, "pld")
        and args.orders is None
    )


def run_allocation_eps_delta(args: argparse.Namespace) -> dict[str, object]:
    """The eps / delta record of random allocation from its certified two-sided lattice bounds.

    Contract: ``lower`` <= the true eps(delta) (delta(eps)) <= ``upper`` of the pair of
    docs/math.md §9.8 in the direction asked for (default both: the larger of remove and add);
    both ends are proved; the relative width is at most --rel-width (default 1e-3 for eps, 1e-2
    for delta), else PrecisionExhausted (exit 3) naming the width reached. --k K > 1: ``upper`` by
    the reduction to k = 1 and ``lower`` by an additive statistic's laws (docs/math.md §9.8; 0 and
    ``one_sided`` true when they prove nothing); --rel-width applies to the reduced pair's
    enclosure only.
    """
    from certdp.notions.allocation_dp import (
        allocation_delta_bounds,
        allocation_eps_bounds,
        k_reduction,
        one_step_closed_form,
    )
    from certdp.notions.allocation_k_lower import K_LOWER_MAX_K

    if args.h is not None:
        raise InvalidArgument(
            f"h={fmt_value(args.h)} is not used by certdp {args.command} random-allocation (its lattice "
            "chooses its own spacing); drop --h"
        )
    direction = args.direction if args.direction is not None else "both"
    if direction not in DIRECTIONS:
        raise InvalidArgument(f"direction={fmt_value(direction)} must be one of {', '.join(DIRECTIONS)}")
    k = integer("k", args.k if args.k is not None else "1", ge=1)
    raw_rw = args.rel_width if args.rel_width is not None else DEFAULT_REL_WIDTH[args.command]
    rel_width = real("rel-width", raw_rw, gt=0, lt=1)
    prec = integer("prec", args.prec, ge=64) if args.prec is not None else PLD_PREC
    if args.max_prec is not None:
        raise InvalidArgument(
            f"max-prec={fmt_value(args.max_prec)} is not used by certdp {args.command} random-allocation "
            "(one working precision, --prec); drop --max-prec"
        )
    pair, inputs = pair_from_args(argparse.Namespace(**{**vars(args), "direction": None}))
    red = k_reduction(pair.steps, pair.epochs, k)  # 1 <= k <= M, before any work
    inputs["params"] = {**pair.params(), "direction": direction, "k": str(k)}  # type: ignore[dict-item]
    start = time.perf_counter()
    with progress_bar(args) as note:
        # eps(delta) or delta(eps): the same lattice bounds, read at a given delta or eps
        if args.command == "eps":
            given, bounds, name = real("delta", args.delta, gt=0, lt=1), allocation_eps_bounds, "epsilon"
            inputs["delta"] = args.delta
        else:
            given, bounds, name = real("eps", args.eps, ge=0), allocation_delta_bounds, "delta"
            inputs["eps"] = args.eps
        try:
            enc = bounds(
                pair.sigma,
                pair.steps,
                pair.epochs,
                given,
                direction=direction,
                k=k,
                rel_width=rel_width,
                prec=prec,
                progress=note,
            )
        except (LimitExceeded, PrecisionExhausted) as exc:
            # --via rdp refuses --k, and dropping --k answers k = 1, which bounds nothing for k > 1
            # (attack review 50): no advice to follow
            raise (_without_via(exc) if k > 1 else exc) from None
    extra: dict[str, object] = {
        name: enc.upper_str(),
        "via": "pld",
        "lower_from": "random-allocation lattice lower bound (post-processing of the pair; docs/math.md §9.8)",
        "upper_from": "random-allocation lattice upper bound (mean-keeping splits; docs/math.md §9.8)",
        "route": "random allocation: two-sided lattice bounds on the hockey-stick divergence of the pair of "
        "Feldman and Shenfeld (arXiv:2502.08202)",
        "direction": direction,
        "k": k,
        "one_sided": red.one_sided and enc.lower == 0,
        "rel_width_target": str(raw_rw),
        "seconds": round(time.perf_counter() - start, 3),
        "warnings": [],
    }
    closed = one_step_closed_form(pair.sigma, pair.steps, pair.epochs, k)
    # k = M: the reduced run (1 step, M E epochs) is the run, and both ends are its own
    mu = "sqrt(M*E)/sigma" if red.equal else "sqrt(E)/sigma"
    if closed and not red.one_sided:  # one step per epoch: a Gaussian (honest labels: no lattice was built)
        source = f"closed form of the Gaussian pair N(0, 1) vs N({mu}, 1) (docs/math.md §9.8, one step)"
        extra.update(
            via="exact",
            lower_from=source,
            upper_from=source,
            route=(
                f"random allocation with k = M = {k} (every record in every step): exactly the Gaussian mechanism of "
                f"mu = {mu} (both directions)"
                if red.equal
                else f"random allocation with one step per epoch: exactly the Gaussian mechanism of mu = {mu} "
                "(both directions)"
            ),
        )
    if closed and args.via == "pld":  # attack review 50: the route asked for was not taken, silently
        extra["warnings"] = [
            "--via pld asked, but the reduced run has one step per epoch: its upper end is a Gaussian's, answered "
            "by the closed form (no lattice was built for it)"
            if red.one_sided
            else "--via pld asked, but the run has one step per epoch: it is exactly a Gaussian, answered by the "
            "closed form; no lattice was built"
        ]
    if red.equal:
        extra.update(reduced={"steps": red.reduced_steps, "epochs": red.reduced_epochs}, via_note=red.note())
    if red.one_sided:
        proved = enc.lower > 0
        extra.update(
            # neither "pld" (a reduced run of one step is answered by the closed form, no lattice is
            # built) nor "exact" (the enclosure is wide; attack review 50): the reduction's answer,
            # upper_from saying how its upper end was computed
            via="reduction",
            lower_from="laws of an additive statistic of the output (post-processing; docs/math.md §9.8, "
            "k > 1: the lower end)"
            if proved
            else (
                f"none: the statistic's lower end is computed for k <= {K_LOWER_MAX_K} (0 is trivial)"
                if red.k > K_LOWER_MAX_K
                else "none: the statistic's laws prove no violation (0 is trivial)"
            ),
            upper_from=f"{'closed form (a Gaussian)' if closed else 'lattice upper bound'} of the k = 1 pair with "
            f"{red.reduced_steps} step{'s' * (red.reduced_steps != 1)} and {red.reduced_epochs} epochs "
            "(docs/math.md §9.8, k > 1)",
            route="random allocation, k > 1: upper bound through the decomposition of Feldman and Shenfeld "
            "(arXiv:2502.08202) into k E epochs of 1-of-floor(M/k) allocation; lower bound by the laws of "
            "an additive statistic",
            reduced={"steps": red.reduced_steps, "epochs": red.reduced_epochs},
            via_note=red.note(proved),
            rel_width_target=f"{raw_rw} (of the reduced pair's enclosure; the k > 1 enclosure is not refined to it)",
        )
    return enclosure_record(name, enc, inputs, **extra)


def run_calibrate_eps_delta(
    args: argparse.Namespace, budget: object, out: object = None, key: object = None
) -> dict[str, object]:
    """``certdp calibrate random-allocation --steps M [--epochs E] --epsilon X --delta D``.

    Contract: the record of certdp.calibrate.random_allocation_dp.calibrate_eps_delta: ``sigma``
    proved (epsilon, delta)-DP, and sigma - step a proved violation or the proved interval
    (``proved_interval``); with ``out`` (a checked path) the certificate that certdp verify
    recomputes (hockey-upper claim, hockey-lower refutation), signed with ``key`` if given;
    one-line InvalidArgument for a missing or conflicting target. --k K > 1: the claim by the
    reduction of docs/math.md §9.8, the largest violated sigma by the additive statistic's lower end
    (``sigma_violated``; ``one_sided`` when none is proved; ``note``); ``out`` records the claim
    only (a hockey-upper check with k, rebuilt on the reduction's run), never a refutation, except
    for k = M, whose reduced run is the run: claim and refutation, as for k = 1.
    """
    from certdp.calibrate.random_allocation_dp import calibrate_eps_delta

    if args.epsilon is None and args.delta is None:
        raise InvalidArgument(
            "tv is required for random-allocation (--tv LAMBDA), or an (epsilon, delta) target (--epsilon, --delta)"
        )
    for need in ("steps", "epsilon", "delta"):
        if getattr(args, need) is None:
            raise InvalidArgument(f"{need} is required to calibrate random-allocation to (epsilon, delta) (--{need})")
    direction = args.direction if args.direction is not None else "both"
    if direction not in DIRECTIONS:
        raise InvalidArgument(f"direction={fmt_value(direction)} must be one of {', '.join(DIRECTIONS)}")
    k = integer("k", args.k if args.k is not None else "1", ge=1)
    with progress_bar(args) as note:
        try:
            res = calibrate_eps_delta(
                args.steps,
                args.epochs if args.epochs is not None else "1",
                args.epsilon,
                args.delta,
                args.step,
                direction=direction,
                k=k,
                progress=note,
                max_seconds=budget,  # type: ignore[arg-type]
                # a certificate records lattice grids: the closed form of a one-step run only without one
                closed_form=out is None,
            )
        except (LimitExceeded, PrecisionExhausted) as exc:
            raise _without_via(exc) from None
    rec: dict[str, object] = {"quantity": "calibration", "mechanism": "random-allocation", **res.to_dict()}
    if out is not None:
        rec.update(_write_eps_delta_certificate(res, out, key))
        rec["certificate"] = args.out
    return rec


#: the advice the eps and delta queries' refusals end with; calibrate random-allocation takes no --via
VIA_RDP_ADVICE = "; --via rdp gives a sound upper bound"


def _without_via(exc: LimitExceeded | PrecisionExhausted) -> LimitExceeded | PrecisionExhausted:
    """``exc`` without the --via rdp advice of the eps and delta queries, which calibrate
    random-allocation refuses (the second attack review of issue 39: a refusal names a flag that
    works). Contract: an exception of exc's type and attributes, its message otherwise unchanged."""
    text = str(exc)
    if VIA_RDP_ADVICE not in text:
        return exc
    return reworded(exc, text.replace(VIA_RDP_ADVICE, ""))


def _write_eps_delta_certificate(res: object, out: object, key: object) -> dict[str, object]:
    """The certificate of a random-allocation (epsilon, delta) calibration: the claim by the
    hockey-stick lattice upper bound on the claim's grid (hockey-upper), the refutation at
    sigma - step by the lower bound on the miss grid (hockey-lower, a proved violation), each at the
    epsilon end of certdp.calibrate.random_allocation_dp.certificate_ends; returns the proved
    epsilon ends for the record."""
    from certdp.calibrate.random_allocation_dp import AllocationDpCalibration, certificate_ends
    from certdp.cert.write import hockey_check, make_body
    from certdp.cli.run_certs import _write_verifiable
    from certdp.enclose import Enclosure

    assert isinstance(res, AllocationDpCalibration) and res.grid is not None
    ends = certificate_ends(res)
    common = (res.steps, res.epochs)
    claim = hockey_check(*common, res.sigma, res.direction, res.delta, "<=", res.epsilon, res.grid, ends.claim, k=res.k)
    refute = None
    if ends.refutation is not None and res.miss_grid is not None:
        refute = hockey_check(
            *common, res.sigma_miss, res.direction, res.delta, ">", res.epsilon, res.miss_grid, ends.refutation, k=res.k
        )
    body = make_body(
        res.step,
        claim,
        refute,
        ends.reason,
        notes=(
            "refutation: the hockey-stick lattice lower bound proves that sigma - step violates (epsilon, delta)-DP "
            "for random allocation (a statement about the mechanism, not about an accountant)"
            if res.k == 1
            else f"k=M={res.k}: every record is in every step, so the run is the k = 1 run of 1 step and "
            f"M*E={res.reduced_epochs} epochs (a Gaussian) on which both checks are computed (docs/math.md §9.8, k = M)"
            if res.k == res.steps
            else f"k={res.k}: the claim is computed on the k = 1 run of floor(M/k)={res.reduced_steps} steps and "
            f"k*E={res.reduced_epochs} epochs, which bounds k-of-M allocation from above (decomposition of Feldman "
            "and Shenfeld, arXiv:2502.08202; docs/math.md §9.8); there is no refutation check"
        ),
    )
    _write_verifiable(out, body, key)  # type: ignore[arg-type]
    # the recorded ends are dyadics of 40 fraction bits: shown rounded outward (17 digits)
    return {
        "certificate_epsilon_upper": Enclosure.from_bounds(ends.claim, ends.claim, 128).upper_str(),
        "certificate_epsilon_lower_at_miss": None
        if ends.refutation is None
        else Enclosure.from_bounds(ends.refutation, ends.refutation, 128).lower_str(),
    }


def render_calibration_eps_delta(rec: dict[str, object]) -> str:
    """Contract: the text form of :func:`run_calibrate_eps_delta`'s record (every number from it)."""
    target = f"({rec['epsilon']}, {rec['delta']})"
    k = f" k={rec['k']}" if rec.get("k", 1) != 1 else ""
    lines = [
        f"random-allocation M={rec['steps']} E={rec['epochs']}{k} direction={rec['direction']}: target {target}, "
        "certified "
        + {"lattice": "lattice bounds", "closed form": "closed form (a Gaussian)"}.get(
            str(rec.get("bounds", "lattice")), str(rec.get("bounds"))
        ),
        f"  sigma = {rec['sigma']}: certified delta(epsilon) <= {rec['delta_upper']}",
    ]
    if rec.get("note"):
        lines.append(f"  note: {rec['note']}")
    if rec["delta_lower_at_miss"] is not None:
        lines.append(
            f"  sigma = {rec['sigma_miss']}: certified delta(epsilon) >= {rec['delta_lower_at_miss']}: "
            f"this sigma is proved NOT {target}-DP"
        )
    else:
        interval = rec["proved_interval"]
        lines.append(f"  sigma = {rec['sigma_miss']}: violation not proved ({rec['miss_reason']})")
        lines.append(
            f"  proved: the least sigma on the step lattice meeting the target is in "
            # no violation proved: the least sigma is above 0, not above "None" (attack review 51)
            f"({interval['lower_open'] or 0}, {interval['upper']}]"  # type: ignore[index]
        )
    lines.append(f"  {rec['evaluations']} certified evaluations, {rec['seconds']} s")
    if rec.get("certificate"):
        miss = rec["certificate_epsilon_lower_at_miss"]
        below = "no refutation" if miss is None else f"sigma - step violates every epsilon <= {miss}"
        lines.append(
            f"  certificate written to {rec['certificate']} (recorded: sigma meets epsilon "
            f"{rec['certificate_epsilon_upper']}; {below})"
        )
    return "\n".join(lines)
