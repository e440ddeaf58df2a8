"""Runners of ``certdp gdp`` (zCDP -> GDP with the bounds of arXiv:2611.01218) and ``certdp convert``."""

from __future__ import annotations

import argparse

from certdp.cli.common import enclosure_record, ends, order_text, target_from_args
from certdp.enclose import DEFAULT_TARGET, Enclosure, refine, to_ball
from certdp.errors import InvalidArgument
from certdp.notions import CONVERSION_TARGET, classic_zcdp_epsilon
from certdp.notions.gdp import (
    gaussian_delta,
    gaussian_epsilon,
    gdp_attack_accuracy,
    gdp_delta,
    gdp_epsilon,
    gdp_to_rho,
    gdp_tv,
    zcdp_delta,
    zcdp_epsilon,
)
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
        if src == "zcdp":
            # the quantity: the least eps (delta) that EVERY rho-zCDP mechanism meets. The conversion
            # bounds it from above; the Gaussian with rho = mu^2/2 is rho-zCDP, so its exact eps
            # (delta) bounds it from below. The conversion's own ball goes in zcdp_bound.
            fn = zcdp_epsilon if which == "delta" else zcdp_delta
            exact = gaussian_epsilon if which == "delta" else gaussian_delta
            res = fn(value, given, ctarget)
            low = exact(2 * value, given, ctarget)
            name = "epsilon" if which == "delta" else "delta"
            enc = Enclosure.from_bounds(
                min(low.lower, res.enclosure.upper), res.enclosure.upper, res.enclosure.prec_bits
            )
            extra: dict[str, object] = {
                name: enc.upper_str(),
                "lower_from": "exact value of the Gaussian mechanism with this rho (a rho-zCDP mechanism)",
                "upper_from": f"zCDP conversion (upper end of its ball; order {res.order:.8g})",
                "zcdp_bound": {
                    **ends(res.enclosure),
                    "order": order_text(res.order),
                    "means": f"the conversion's value, an upper bound on {name} (not an enclosure of {name})",
                },
                "order": order_text(res.order),
            }
            if which == "delta":
                extra["classic_epsilon"] = ends(classic_zcdp_epsilon(refine(lambda: to_ball(value)), given))
            return enclosure_record(name, enc, inputs, **extra)
        target = target_from_args(args, DEFAULT_TARGET)
        if which == "delta":
            enc = gdp_epsilon(value, given, target)
            return enclosure_record("epsilon", enc, inputs, epsilon=enc.upper_str())
        enc = gdp_delta(value, given, target)
        if enc.lower < 0:  # delta >= 0: a negative lower end is the cancellation's rounding
            enc = Enclosure.from_bounds(0, max(enc.upper, 0), enc.prec_bits)
        return enclosure_record("delta", enc, inputs, delta=enc.upper_str())
    target = target_from_args(args, DEFAULT_TARGET)
    if dst == "gdp":
        return enclosure_record("mu", mu_from_rho(value, target), inputs)
    if dst == "zcdp":
        return enclosure_record(
            "rho", refine(lambda: to_ball(gdp_to_rho(value)), target), inputs, exact=exact_str(gdp_to_rho(value))
        )
    if src == "zcdp":
        bound = zcdp_tv_upper(value, target)
        # the Gaussian with mu^2 = 2 rho is rho-zCDP: its TV erf(mu/(2 sqrt 2)) bounds the class's below
        gauss = refine(lambda: (to_ball(2 * value).sqrt() / 2 / to_ball(2).sqrt()).erf(), target, what="tv")
        tv = Enclosure.from_bounds(min(gauss.lower, bound.upper), bound.upper, bound.prec_bits)
        acc = refine(lambda: (1 + bound.ball()) / 2, target, what="accuracy")
        return enclosure_record(
            "tv",
            tv,
            inputs,
            tv_upper=tv.upper_str(),
            accuracy_upper=acc.upper_str(),
            lower_from="exact TV of the Gaussian mechanism with this rho (a rho-zCDP mechanism)",
            upper_from="zCDP -> TV bound of arXiv:2611.01218 (upper end of its ball)",
            tv_bound=ends(bound),
        )
    else:
        tv, acc = gdp_tv(value, target), gdp_attack_accuracy(value, target)
    return enclosure_record("tv", tv, inputs, tv_upper=tv.upper_str(), accuracy_upper=acc.upper_str())
