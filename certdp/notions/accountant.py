"""eps(delta) and delta(eps) of a pair: which accountant answers (one rule), and what each end proves.

**The rule** (:func:`default_route`; the CLI, the Python API, ``calibrate`` and the Opacus
accountant all call it, and ``docs/accounting.md`` states it):

1. ``orders`` given: ``rdp`` (the user asked for the conversion over those orders).
2. The Gaussian mechanism and any composition of Gaussians (a subsampled Gaussian at q = 1 is
   one): ``exact``. The composition is the
   Gaussian pair N(0,1) vs N(mu,1) with mu^2 = sum n_i s_i^2/sigma_i^2, whose delta(eps) is
   Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu) (Balle and Wang, 2018), certified in Arb.
3. Every part has a loss distribution (subsampled Gaussian, Laplace, discrete Laplace, discrete
   Gaussian) and the composition is within the lattice accountant's limits (steps, parts):
   ``pld``, two-sided lattice bounds (docs/math.md §10).
4. Otherwise ``rdp``. When rule 3 failed only on a limit (or the lattice accountant refused at run
   time), that is a route switch: the result carries a warning that says so, and the CLI prints it
   on stderr too. It is never silent.

**What each end proves.** ``enclosure`` is always [lower, upper] with lower <= the true eps(delta)
(resp. delta(eps)) of the pair <= upper. ``exact`` and ``pld`` prove both ends. ``rdp`` and ``zcdp``
prove the upper end only (the conversion delta <= c_t e^{K(t) - t eps} is one-sided), so the lower
end is the best *proved* lower bound at hand: the exact value for Gaussians, the lattice lower bound
where the lattice accountant takes the pair within LOWER_END_WORK work units (certdp.enclose.work;
past them a warning says so), else 0. ``lower_from`` and ``upper_from`` name them, and
the conversion's own value (a ball around inf over orders of the bound) is kept apart in
``route_bound``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from fractions import Fraction

from certdp.enclose import Enclosure, Target, current_prec, workprec
from certdp.enclose.work import metered
from certdp.errors import (
    BudgetExhausted,
    InvalidArgument,
    LimitExceeded,
    PrecisionExhausted,
    Unsupported,
    fmt_value,
    invalid,
)
from certdp.notions import eps_delta
from certdp.notions.eps_delta import CONVERSION_TARGET, ConversionResult
from certdp.notions.gdp import gaussian_delta, gaussian_epsilon
from certdp.notions.zcdp_gdp import MU_MAX, MU_MIN
from certdp.pairs import Composition, Gaussian, PrivacyPair, SubsampledGaussian
from certdp.pairs.base import PrivacyPair as _Base
from certdp.pairs.params import Number, exact_str, real

#: accountants a caller may name (``via``)
ROUTES = ("exact", "pld", "rdp", "zcdp")

#: working precision of the lattice accountant when it answers (as the CLI's default --prec)
PLD_PREC = 128

#: work units (certdp.enclose.work) the optional lattice lower end of an rdp/zcdp answer may take
#: (about 2^21 product coefficients: seconds; the lattice at the default spacing usually needs less)
LOWER_END_WORK = 1 << 21

#: how every route-switch warning starts (the CLI repeats those on stderr)
SWITCH_PREFIX = "RDP answered, not PLD"

LOWER_EXACT = "exact closed form (Gaussian pair, Balle and Wang 2018)"
LOWER_PLD = "pld lattice lower bound (dominated pair)"
LOWER_TRIVIAL = "trivial: the quantity is >= 0 (no lower bound is proved for this pair on this route)"
UPPER_PLD = "pld lattice upper bound (dominating pair)"


@dataclass(frozen=True)
class Route:
    """Which accountant answers and why (one line). ``switched``: the rule wanted ``pld`` but a
    limit of the lattice accountant sent it to ``rdp`` (the result must say so)."""

    via: str
    reason: str
    switched: bool = False


def _parts(pair: PrivacyPair) -> list[tuple[PrivacyPair, int]]:
    return list(pair.parts) if isinstance(pair, Composition) else [(pair, 1)]


def gaussian_mu_sq(pair: PrivacyPair) -> Fraction | None:
    """mu^2 = sum n_i s_i^2/sigma_i^2 when ``pair`` is a Gaussian or a composition of Gaussians,
    else None.

    Contract: the exact mu^2 of the Gaussian pair the composition equals (docs/math.md §6).
    """
    total = Fraction(0)
    for p, n in _parts(pair):
        if type(p) is Gaussian:
            total += n * p.shift**2 / p.sigma**2
        elif type(p) is SubsampledGaussian and p.q == 1:
            # q = 1 samples every record: N(0, sigma^2) vs N(1, sigma^2) in either direction
            total += n / p.sigma**2
        else:
            return None
    return total


def _closed_form_mu_sq(pair: PrivacyPair) -> Fraction | None:
    """:func:`gaussian_mu_sq` when mu is within the range the closed form evaluates ([1e-100, 1e4]),
    else None (the one place that range decides the exact route)."""
    mu_sq = gaussian_mu_sq(pair)
    return mu_sq if mu_sq is not None and MU_MIN**2 <= mu_sq <= MU_MAX**2 else None


def _has_loss_distribution(p: PrivacyPair) -> bool:
    return type(p).loss_tail is not _Base.loss_tail


def pld_refusal(pair: PrivacyPair) -> tuple[str, bool] | None:
    """Why the lattice accountant would refuse ``pair`` before any work, or None if it takes it.
    The flag says whether the refusal is a limit (True: the pair is of a kind it takes) or the
    kind of pair (False).

    Contract: None only if every part has a loss distribution, the steps are <= MAX_STEPS and the
    distinct parts <= MAX_PARTS (it may still refuse at run time on the loss range or cells).
    """
    from certdp.notions.pld import MAX_PARTS, MAX_STEPS

    parts = _parts(pair)
    kinds = [p.mechanism for p, _ in parts if not _has_loss_distribution(p)]
    if kinds:
        return f"the lattice accountant needs a loss distribution, which {kinds[0]} does not implement", False
    steps = sum(n for _, n in parts)
    if steps > MAX_STEPS:
        return f"steps={steps} exceeds {MAX_STEPS}, the most the lattice accountant composes", True
    if len(parts) > MAX_PARTS:
        return f"the composition has {len(parts)} distinct parts, more than {MAX_PARTS}", True
    return None


def default_route(pair: PrivacyPair, *, orders: Iterable[Number] | None = None) -> Route:
    """The accountant the rule of the module docstring picks for eps/delta of ``pair``.

    Contract: a Route whose ``via`` is one of ROUTES; ``switched`` exactly when rule 3 failed on a
    limit of the lattice accountant.
    """
    if orders is not None:
        return Route("rdp", "orders were given: the RDP conversion over those orders")
    if _closed_form_mu_sq(pair) is not None:
        return Route("exact", "Gaussian mechanism (or a composition of Gaussians): exact closed form")
    refusal = pld_refusal(pair)
    if refusal is None:
        return Route("pld", "every part has a loss distribution: two-sided lattice bounds")
    why, limit = refusal
    if limit:
        return Route("rdp", f"{SWITCH_PREFIX}: {why}", switched=True)
    return Route("rdp", f"RDP conversion ({why})")


def calibration_route(steps: int) -> Route:
    """The accountant that calibrates sigma of ``steps`` Poisson-subsampled Gaussian steps: ``pld``
    (claim and refutation by the lattice bounds) within the lattice accountant's step limit, else
    ``rdp`` as a route switch (the caller must say so: warning, and stderr on the CLI).

    Contract: a Route with via "pld" iff steps <= certdp.notions.pld.MAX_CALIBRATION_STEPS.
    """
    from certdp.notions.pld import MAX_CALIBRATION_STEPS

    if steps <= MAX_CALIBRATION_STEPS:
        return Route("pld", "PLD lattice bounds (claim and refutation both proved)")
    return Route(
        "rdp",
        f"{SWITCH_PREFIX}: steps={steps} exceeds {MAX_CALIBRATION_STEPS}, the most the PLD calibration composes",
        switched=True,
    )


@dataclass(frozen=True)
class EpsDeltaResult:
    """eps(delta) or delta(eps) of a pair, with what each end proves.

    ``enclosure`` is [lower, upper] with lower <= the true value <= upper; ``upper`` is a sound
    value. ``via`` is the accountant that gave the upper end; ``lower_from``/``upper_from`` say what
    proves each end; ``route_bound`` is the RDP/zCDP conversion's own result (its ball encloses the
    conversion's value, an upper bound of the quantity, not the quantity) when via is rdp or zcdp;
    ``grid`` is the lattice record when a lattice bound was computed; ``warnings`` are one-line
    notes (a route switch among them).

    ``float(res)`` is the sound value rounded up (the upper end).
    """

    quantity: str
    enclosure: Enclosure
    via: str
    lower_from: str
    upper_from: str
    reason: str
    route_bound: ConversionResult | None = None
    grid: dict[str, object] | None = None
    warnings: tuple[str, ...] = field(default=())

    @property
    def sound(self) -> Fraction:
        """Contract: the upper end: a value for which the guarantee holds."""
        return self.enclosure.upper

    def __float__(self) -> float:
        """Contract: a float >= the sound value (the upper end rounded up)."""
        return self.enclosure.upper_float()

    def __repr__(self) -> str:
        e = self.enclosure
        notes = f", warnings={len(self.warnings)}" if self.warnings else ""
        return f"EpsDeltaResult({self.quantity} in [{e.lower_str(8)}, {e.upper_str(8)}], via={self.via}{notes})"


def _check_route(via: str | None) -> None:
    if via is not None and via not in ROUTES:
        raise invalid("via", via, f"must be one of {', '.join(ROUTES)}")


def _run(
    quantity: str,
    pair: PrivacyPair,
    given: Fraction,
    raw: Number,
    via: str | None,
    orders: Iterable[Number] | None,
    h: Number | None,
    target: Target,
    rel_width: Number | None = None,
) -> EpsDeltaResult:
    from certdp.notions.cost import REACH_PREFIX, pld_cost_refusal
    from certdp.notions.pld import pld_bounds

    _check_route(via)
    if not isinstance(pair, PrivacyPair):
        raise invalid("pair", repr(pair), "must be a privacy pair (certdp.pairs)")
    if via is None:
        route = default_route(pair, orders=orders)
    else:
        route = Route(via, f"via={via} was asked for")
    if orders is not None and route.via in ("exact", "pld"):
        raise InvalidArgument(f"orders={fmt_value(list(orders))} are read by via rdp or zcdp only, not via={route.via}")
    if h is not None and route.via != "pld":
        raise InvalidArgument(f"h={fmt_value(h)} is the lattice spacing of via pld, not used by via={route.via}")
    if rel_width is not None and route.via != "pld":
        raise InvalidArgument(
            f"rel_width={fmt_value(rel_width)} is the target width of via pld, not used by via={route.via}"
        )
    hh = None if h is None else real("h", h, gt=0, le=1)
    rw = None if rel_width is None else real("rel-width", rel_width, gt=0, lt=1)
    warnings: list[str] = []
    if route.switched:
        warnings.append(route.reason)
    mu_sq = gaussian_mu_sq(pair)
    key = {"delta": given} if quantity == "epsilon" else {"eps": given}

    def exact() -> Enclosure:
        assert mu_sq is not None
        fn = gaussian_epsilon if quantity == "epsilon" else gaussian_delta
        return fn(mu_sq, given, target)

    if route.via == "exact":
        if mu_sq is None:
            raise Unsupported(
                f"via=exact is the closed form of the Gaussian mechanism and its compositions, not of {pair.mechanism}"
            )
        return EpsDeltaResult(quantity, exact(), "exact", LOWER_EXACT, LOWER_EXACT, route.reason)

    if route.via == "pld":
        try:
            # refused before any lattice is built when it cannot fit the caller's budget (certdp.notions.cost)
            over = pld_cost_refusal(pair, given if quantity == "epsilon" else None, h=hh, rel_width=rw)
            if over is not None and over[0].startswith(REACH_PREFIX):
                # the target width is out of reach: exit 3 naming a width that fits, as the
                # refinement itself refuses one it stops short of (not a silent switch to RDP)
                raise PrecisionExhausted(over[0].removeprefix(REACH_PREFIX))
            if over is not None:
                raise (BudgetExhausted if over[1] and via is not None else LimitExceeded)(over[0])
            with workprec(max(current_prec(), PLD_PREC)):
                res = pld_bounds(pair, h=hh, rel_width=rw, **key)
            return EpsDeltaResult(
                quantity, res.enclosure, "pld", LOWER_PLD, UPPER_PLD, route.reason, grid=res.grid, warnings=()
            )
        except LimitExceeded as exc:
            if via is not None:  # asked for by name: a refusal, not a switch
                raise
            route = Route("rdp", f"{SWITCH_PREFIX}: the lattice accountant refused ({exc})", switched=True)
            warnings.append(route.reason)

    conv_fn = eps_delta.epsilon if quantity == "epsilon" else eps_delta.delta
    try:
        conv = conv_fn(pair, raw, via=route.via, orders=orders, target=target)
    except Unsupported as exc:
        if not route.switched:
            raise
        # neither accountant takes it: say both reasons (second attack review of issue 39: the
        # conversion's own hint was the lattice route that had just refused)
        raise Unsupported(
            f"no accountant certifies this: {route.reason.removeprefix(SWITCH_PREFIX + ': ')}, and the "
            f"{route.via} conversion needs a CGF ({str(exc).split(';')[0]})"
        ) from None
    warnings.extend(conv.warnings)
    upper = conv.enclosure.upper
    lower, lower_from = Fraction(0), LOWER_TRIVIAL
    grid = None
    if _closed_form_mu_sq(pair) is not None:
        lower, lower_from = exact().lower, LOWER_EXACT
    elif pld_refusal(pair) is None and not route.switched:
        spacing = _lower_end_spacing(pair, key.get("delta"))
        if spacing is not None and pld_cost_refusal(pair, key.get("delta"), h=spacing) is None:
            # the lower end is optional: its lattice gets a share of the work (certdp.enclose.work) and
            # gives way to 0 past it, instead of costing the conversion's answer (q = 1e-5, sigma = 0.3,
            # 10^6 steps, delta = 1e-300 via rdp: the conversion took seconds, this lattice minutes)
            with metered(limit=LOWER_END_WORK, name="the optional lattice lower end's share") as share:
                try:
                    with workprec(max(current_prec(), PLD_PREC)):
                        # only the lower end is used: one lattice at the default spacing, no refinement
                        res = pld_bounds(pair, h=spacing, **key)
                    lower, lower_from, grid = res.enclosure.lower, LOWER_PLD, res.grid
                except (LimitExceeded, Unsupported):
                    pass  # no lattice lower bound for this pair: 0 stays the proved lower end
                except BudgetExhausted as exc:
                    if getattr(exc, "meter", None) is not share:
                        raise  # the caller's own budget: not this step's to absorb
                    warnings.append(
                        f"no lattice lower end: its lattice would pass its share of {LOWER_END_WORK} work units, "
                        "so 0 is the proved lower end (--via pld gives both ends, at the lattice's cost)"
                    )
    if lower > upper:  # both ends are proved, so this is a bug somewhere: refuse loudly
        raise AssertionError(f"{quantity}: proved lower end {lower} exceeds the {route.via} upper end {upper}")
    enc = Enclosure.from_bounds(lower, upper, conv.enclosure.prec_bits)
    upper_from = f"{route.via} conversion (upper end of its ball; order {conv.order:.8g})"
    return EpsDeltaResult(
        quantity,
        enc,
        route.via,
        lower_from,
        upper_from,
        route.reason,
        route_bound=conv,
        grid=grid,
        warnings=tuple(warnings),
    )


def _lower_end_spacing(pair: PrivacyPair, delta: Fraction | None) -> Fraction | None:
    """The one lattice's spacing of an optional lattice lower end (certdp.notions.pld.default_spacing),
    or None when the lattice accountant cannot place it (it then refuses the pair itself)."""
    from certdp.notions.pld import default_spacing

    try:
        return default_spacing(pair, delta=delta)
    except (LimitExceeded, Unsupported):
        return None


def _finish(res: EpsDeltaResult, name: str, raw: object, exact: Fraction) -> EpsDeltaResult:
    """``res`` with its lower end at least 0, and a warning when ``raw`` is a float whose binary
    value (the one certdp uses, as for every float input) differs from the decimal it prints as:
    the CLI reads that decimal, so the two would answer two different questions (attack finding:
    non-overlapping enclosures)."""
    if res.enclosure.lower < 0:  # eps and delta are >= 0: a ball's rounding below 0 says nothing
        e = res.enclosure
        res = replace(res, enclosure=Enclosure.from_bounds(Fraction(0), max(e.upper, Fraction(0)), e.prec_bits))
    if not isinstance(raw, float) or exact == Fraction(repr(raw)):
        return res
    note = (
        f"{name}={raw!r} is a float: its binary value {exact_str(exact)[:40]}... was used, not the decimal "
        f"{raw!r}; pass the string {str(raw)!r} for the decimal (as the command line reads it)"
    )
    return replace(res, warnings=(note, *res.warnings))


def epsilon(
    pair: PrivacyPair,
    delta: Number,
    *,
    via: str | None = None,
    orders: Iterable[Number] | None = None,
    h: Number | None = None,
    target: Target = CONVERSION_TARGET,
    rel_width: Number | None = None,
) -> EpsDeltaResult:
    """Certified eps(delta) of ``pair``: [lower, upper] with lower <= the true eps <= upper.

    ``via`` None picks the accountant by the rule of the module docstring; "exact", "pld", "rdp" or
    "zcdp" asks for one (``orders`` for rdp/zcdp, ``h`` or ``rel_width`` for pld: with rel_width,
    pld refines its lattice until (upper - lower)/upper <= rel_width, else raises
    PrecisionExhausted; without either, one lattice at the default spacing;
    certdp.notions.pld.pld_bounds).

    Contract: the enclosure contains the smallest eps >= 0 with delta(eps) <= ``delta`` of the pair
    (both directions the pair covers); the upper end is a sound eps. Proofs: exact, docs/math.md §6;
    pld, §10; rdp/zcdp upper ends, §3, lower ends as ``lower_from`` says.
    """
    d = real("delta", delta, gt=0, lt=1)
    return _finish(_run("epsilon", pair, d, delta, via, orders, h, target, rel_width), "delta", delta, d)


def delta(
    pair: PrivacyPair,
    eps: Number,
    *,
    via: str | None = None,
    orders: Iterable[Number] | None = None,
    h: Number | None = None,
    target: Target = CONVERSION_TARGET,
    rel_width: Number | None = None,
) -> EpsDeltaResult:
    """Certified delta(eps) of ``pair``: [lower, upper] with lower <= the true delta <= upper.

    Contract: as :func:`epsilon`, for the hockey-stick divergence delta(eps) at ``eps`` >= 0.
    """
    e = real("eps", eps, ge=0)
    return _finish(_run("delta", pair, e, eps, via, orders, h, target, rel_width), "eps", eps, e)
