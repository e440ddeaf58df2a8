"""Runners of ``certdp gdp`` (zCDP -> GDP with the bounds of arXiv:2611.01218) and ``certdp convert``."""

from __future__ import annotations

import argparse

from certdp.cli.common import enclosure_record, ends, order_text, target_from_args
from certdp.enclose import DEFAULT_TARGET, refine, to_ball
from certdp.errors import InvalidArgument
from certdp.notions import CONVERSION_TARGET, classic_zcdp_epsilon
from certdp.notions.gdp import gdp_attack_accuracy, gdp_delta, gdp_epsilon, gdp_to_rho, gdp_tv, zcdp_delta, zcdp_epsilon
from certdp.notions.zcdp_gdp import mu_bounds, mu_from_rho, t_of_rho, zcdp_tv_upper
from certdp.pairs.params import exact_str, real

NOTIONS_FROM = ("zcdp", "gdp")
NOTIONS_TO = ("gdp", "eps-delta", "tv", "zcdp")


def run_gdp(args: argparse.Namespace) -> dict[str, object]:
    """certdp gdp --rho R: mu(rho) with t_rho and the bounds sqrt(pi rho) <= mu <= sqrt(8 rho)."""
    target = target_from_args(args, DEFAULT_TARGET)
    rho = real("rho", args.rho, gt=0)
    mu = mu_from_rho(rho, target)
    low, high = mu_bounds(rho, target)
    return enclosure_record(
        "mu",
        mu,
        {"rho": exact_str(rho)},
        t_rho=ends(t_of_rho(rho, target)),
        sqrt_pi_rho=ends(low),
        sqrt_8_rho=ends(high),
        within_bounds=bool(low.upper <= mu.lower and mu.upper <= high.lower),
    )


def _eps_or_delta(args: argparse.Namespace) -> tuple[str, str]:
    if (args.delta is None) == (args.eps is None):
        raise InvalidArgument("exactly one of --delta and --eps is required for --to eps-delta")
    return ("delta", args.delta) if args.delta is not None else ("eps", args.eps)


def run_convert(args: argparse.Namespace) -> dict[str, object]:
    """certdp convert --from zcdp|gdp --to gdp|eps-delta|tv|zcdp --value V [--delta D | --eps E]."""
    src, dst = args.from_, args.to
    if src == dst or (src == "gdp" and dst == "gdp"):
        raise InvalidArgument(f"to={dst} must differ from from={src}")
    name = "rho" if src == "zcdp" else "mu"
    value = real("value", args.value, gt=0)
    inputs: dict[str, object] = {"from": src, "to": dst, name: exact_str(value)}
    if dst == "eps-delta":
        which, given = _eps_or_delta(args)
        inputs[which] = given
        ctarget = target_from_args(args, CONVERSION_TARGET)
        if src == "zcdp" and which == "delta":
            res = zcdp_epsilon(value, given, ctarget)
            classic = classic_zcdp_epsilon(refine(lambda: to_ball(value)), given)
            return enclosure_record(
                "epsilon",
                res.enclosure,
                inputs,
                epsilon=res.enclosure.upper_str(),
                order=order_text(res.order),
                classic_epsilon=ends(classic),
            )
        if src == "zcdp":
            res = zcdp_delta(value, given, ctarget)
            return enclosure_record(
                "delta", res.enclosure, inputs, delta=res.enclosure.upper_str(), order=order_text(res.order)
            )
        target = target_from_args(args, DEFAULT_TARGET)
        if which == "delta":
            enc = gdp_epsilon(value, given, target)
            return enclosure_record("epsilon", enc, inputs, epsilon=enc.upper_str())
        enc = gdp_delta(value, given, target)
        return enclosure_record("delta", enc, inputs, delta=enc.upper_str())
    target = target_from_args(args, DEFAULT_TARGET)
    if dst == "gdp":
        return enclosure_record("mu", mu_from_rho(value, target), inputs)
    if dst == "zcdp":
        return enclosure_record(
            "rho", refine(lambda: to_ball(gdp_to_rho(value)), target), inputs, exact=exact_str(gdp_to_rho(value))
        )
    if src == "zcdp":
        tv = zcdp_tv_upper(value, target)
        acc = refine(lambda: (1 + tv.ball()) / 2, target, what="accuracy")
    else:
        tv, acc = gdp_tv(value, target), gdp_attack_accuracy(value, target)
    return enclosure_record("tv", tv, inputs, tv_upper=tv.upper_str(), accuracy_upper=acc.upper_str())
