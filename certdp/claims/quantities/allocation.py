"""Random allocation (DP-SGD with balls-and-bins batches; Ertan, van Dijk et al., arXiv:2610.09651).

A ``sigma`` parameter is a number or a nested quantity (an enclosure of sigma, e.g. the closed
form before rounding). Every quantity here is monotone in sigma (TV, c_E and each bound fall as
sigma grows: docs/math.md §9.5), so the value over a sigma interval [a, b] lies between its values
at the two ends, and each end is evaluated at an exact decimal outside [a, b].
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

from certdp.calibrate import calibrate_tv
from certdp.claims.interval import Interval
from certdp.claims.quantities import Args, quantity
from certdp.enclose import Enclosure, to_ball, workprec
from certdp.enclose.special import phi
from certdp.errors import InvalidArgument, LimitExceeded
from certdp.notions import tv_closed_form as cf
from certdp.notions.tv_certified import LatticeGrid, auto_grid, tv_bound
from certdp.pairs import RandomAllocation
from certdp.pairs.params import exact_str

#: Decimal places of the exact sigmas at which an interval's ends are evaluated (outward).
SIGMA_PLACES = 12
_GRID = ("h", "eta", "cap", "l_min", "l_max", "tail_k")
_CELL = ("steps", "epochs")


def _outward(lo: Fraction, hi: Fraction) -> tuple[Fraction, Fraction]:
    s = 10**SIGMA_PLACES
    return Fraction(math.floor(lo * s), s), Fraction(math.ceil(hi * s), s)


def _sigma_ends(a: Args) -> tuple[Fraction, Fraction]:
    lo, hi = a.ends("sigma")
    return (lo, hi) if lo == hi else _outward(lo, hi)


def _decreasing(a: Args, f: Callable[[RandomAllocation], Enclosure], what: str) -> Interval:
    """f(pair) over the sigma interval, f non-increasing in sigma: [f(hi).lower, f(lo).upper]."""
    m, e = a.int("steps"), a.int("epochs")
    lo, hi = _sigma_ends(a)
    at_lo, at_hi = f(RandomAllocation(m, lo, e)), f(RandomAllocation(m, hi, e))
    where = exact_str(lo) if lo == hi else f"[{exact_str(lo)}, {exact_str(hi)}]"
    return Interval(at_hi.lower, at_lo.upper, f"{what} at sigma {where}")


@quantity("sigma_closed_form", "certdp.notions.tv_closed_form.sigma_closed_form", ("steps", "epochs", "lam"))
def _sigma_closed(a: Args) -> Interval:
    return Interval.of(cf.sigma_closed_form(a.int("steps"), a.int("epochs"), a.frac("lam")), "Cor. 3.4 closed form")


@quantity("sigma_gdp_limit", "certdp.notions.tv_closed_form.sigma_gdp_limit", ("steps", "epochs", "lam"))
def _sigma_gdp(a: Args) -> Interval:
    return Interval.of(cf.sigma_gdp_limit(a.int("steps"), a.int("epochs"), a.frac("lam")), "GDP-limit multiplier")


@quantity("sigma_pinsker_d2", "certdp.notions.tv_closed_form.sigma_pinsker_d2", ("steps", "epochs", "lam"))
def _sigma_pinsker(a: Args) -> Interval:
    return Interval.of(cf.sigma_pinsker_d2(a.int("steps"), a.int("epochs"), a.frac("lam")), "Pinsker with D_2")


@quantity("ra_chi2", "certdp.notions.tv_closed_form.chi2_epochs", (*_CELL, "sigma"))
def _chi2(a: Args) -> Interval:
    return _decreasing(a, cf.chi2_epochs, "c_E")


@quantity("ra_accuracy_bound", "certdp.notions.tv_closed_form.attack_accuracy_upper", (*_CELL, "sigma"))
def _acc_bound(a: Args) -> Interval:
    return _decreasing(a, cf.attack_accuracy_upper, "1/2 + U(c_E)/2")


@quantity("ra_tpr_chi2", "certdp.notions.tv_closed_form.tpr_upper", (*_CELL, "sigma", "fpr"))
def _tpr(a: Args) -> Interval:
    fpr = a.frac("fpr")
    return _decreasing(a, lambda p: cf.tpr_upper(p, fpr), f"a + sqrt(c_E a(1-a)) at a={exact_str(fpr)}")


@quantity("ra_linear_accuracy", "certdp.enclose.special.phi (Phi(mu/2), mu = sqrt(E/M)/sigma)", (*_CELL, "sigma"))
def _linear(a: Args) -> Interval:
    """The optimal attack on the linear model of arXiv:2610.09651 §5.3: Phi(mu/2), mu = sqrt(E/M)/sigma."""

    def f(p: RandomAllocation) -> Enclosure:
        with workprec(128):
            mu = (to_ball(Fraction(p.epochs, p.steps))).sqrt() / to_ball(p.sigma)
            return Enclosure.from_ball(phi(mu / 2))

    return _decreasing(a, f, "Phi(sqrt(E/M)/(2 sigma))")


def _grid(a: Args, pair: RandomAllocation, side: str) -> LatticeGrid:
    if a.has("h"):
        g = {k: float(a.frac(k)) for k in _GRID if a.has(k)}
        return LatticeGrid(
            h=g["h"], cap=g["cap"], l_min=g["l_min"], l_max=g["l_max"], eta=g["eta"], scheme=3,
            tail_k=g.get("tail_k", 0.001), coarsen=0.25,
        )  # fmt: skip
    return auto_grid(pair, float(a.frac("slack", "1e-7")), side=side)


def _tv(a: Args) -> Interval:
    m, e = a.int("steps"), a.int("epochs")
    lo, hi = _sigma_ends(a)
    sides = a.text("sides", "both")
    upper = lower = None
    notes = []
    if sides in ("both", "upper"):
        p = RandomAllocation(m, lo, e)
        b = tv_bound(p, _grid(a, p, "upper"), "upper")
        upper = b.bound.upper
        notes.append(f"upper at sigma {exact_str(lo)} (h={b.grid.h:g}, eta={b.grid.eta:g}, {b.seconds:.1f} s)")
    if sides in ("both", "lower"):
        p = RandomAllocation(m, hi, e)
        b = tv_bound(p, _grid(a, p, "lower"), "lower")
        lower = b.bound.lower
        notes.append(f"lower at sigma {exact_str(hi)} ({b.seconds:.1f} s)")
    return Interval(lower, upper, "certified lattice bounds, " + "; ".join(notes))


_TV_PARAMS = (*_CELL, "sigma", "slack", "sides", *_GRID)
quantity(
    "ra_tv",
    "certdp.notions.tv_certified.tv_bound (auto_grid or the given grid)",
    _TV_PARAMS,
    ("steps", "epochs", "sigma"),
)(_tv)


def _tv_dep(ref: object) -> list:  # type: ignore[type-arg]
    from certdp.claims.model import Ref

    assert isinstance(ref, Ref)
    return [Ref("ra_tv", ref.params)]


@quantity(
    "ra_accuracy", "certdp.notions.tv_certified.tv_bound: 1/2 + TV/2", _TV_PARAMS, ("steps", "epochs", "sigma"), _tv_dep
)
def _accuracy(a: Args) -> Interval:
    from certdp.claims.model import Ref

    tv = a.dep(Ref("ra_tv", a.ref.params))
    half = Fraction(1, 2)
    return Interval(
        None if tv.lower is None else half + tv.lower / 2, None if tv.upper is None else half + tv.upper / 2, tv.detail
    )


@quantity(
    "ra_exact_sigma", "certdp.calibrate.calibrate_tv", ("steps", "epochs", "tv", "step"), ("steps", "epochs", "tv")
)
def _exact_sigma(a: Args) -> Interval:
    """The exact sigma (the smallest meeting the TV target), enclosed as (sigma - step, sigma]."""
    step = a.frac("step", "1e-6")
    r = calibrate_tv(a.int("steps"), a.int("epochs"), a.frac("tv"), step=step)
    detail = f"calibrate_tv: TV({exact_str(r.sigma)}) <= {r.tv_upper.upper_str(12)}"
    if r.tv_lower_at_miss is None:
        return Interval(None, r.sigma, detail + f"; no certified miss below ({r.miss_reason})")
    detail += f", TV({exact_str(r.sigma_miss)}) >= {r.tv_lower_at_miss.lower_str(12)}"
    return Interval(r.sigma_miss, r.sigma, detail, lower_open=True)


@quantity(
    "ra_exact_sigma_bisect",
    "certdp.notions.tv_certified.tv_bound (bisection on sigma, bracketed around the GDP-limit sigma)",
    ("steps", "epochs", "tv", "rel", *_GRID),
    ("steps", "epochs", "tv", "h", "eta", "cap", "l_min", "l_max"),
)
def _bisect(a: Args) -> Interval:
    """The exact sigma by certified bisection on a fixed grid, for cells beyond calibrate_tv's numeric
    search: every probe is a tv_bound (upper: sigma meets the target; lower: it misses)."""
    m, e, lam = a.int("steps"), a.int("epochs"), a.frac("tv")
    rel = a.frac("rel", "1e-5")

    def probe(s: Fraction) -> bool | None:
        p = RandomAllocation(m, s, e)
        if tv_bound(p, _grid(a, p, "upper"), "upper").bound.upper <= lam:
            return True
        if tv_bound(p, _grid(a, p, "lower"), "lower").bound.lower > lam:
            return False
        return None

    # floats propose: the GDP-limit sigma (within a few per cent of the exact one) brackets it; the
    # closed form is a proved meeting end (TV <= U(c_E) <= lam at it, Cor. 3.4) if that fails
    limit = cf.sigma_gdp_limit(m, e, lam).upper
    closed = cf.sigma_closed_form(m, e, lam)
    lo, hi = None, _outward(closed.lower, closed.upper)[1]
    for factor in (Fraction(99, 100), Fraction(9, 10), Fraction(3, 4), Fraction(1, 2)):
        s = _outward(limit * factor, limit * factor)[0]
        if probe(s) is False:
            lo = s
            break
    if lo is None:
        raise LimitExceeded(f"steps={m}, epochs={e}: no certified miss found below sigma={exact_str(limit)}")
    s = _outward(limit * Fraction(101, 100), limit * Fraction(101, 100))[1]
    if s < hi and probe(s) is True:
        hi = s
    while hi - lo > rel * hi:
        mid = Fraction(round((lo + hi) / 2 * 10**9), 10**9)
        if not lo < mid < hi:
            break
        v = probe(mid)
        if v is None:
            break
        lo, hi = (lo, mid) if v else (mid, hi)
    return Interval(lo, hi, f"certified bisection on tv_bound (h={float(a.frac('h')):g})", lower_open=True)


#: The sigmas of arXiv:2610.09651 a ratio may compare: closed form (Cor. 3.4), GDP-limit multiplier
#: (App. B.3), Pinsker with D_2 (App. B.2), exact (the smallest sigma on the 1e-6 lattice).
SIGMAS = {
    "closed-form": "sigma_closed_form",
    "gdp-limit": "sigma_gdp_limit",
    "pinsker-d2": "sigma_pinsker_d2",
    "exact": "ra_exact_sigma",
}


def _sigma_ref(a_ref: object, which: str) -> object:
    from certdp.claims.model import Ref

    assert isinstance(a_ref, Ref)
    if which not in SIGMAS:
        raise InvalidArgument(f"sigma name={which} must be one of {', '.join(SIGMAS)}")
    cell = {"epochs": a_ref.get("epochs"), "steps": a_ref.get("steps")}
    if which == "exact":
        return Ref.of("ra_exact_sigma", step="1e-6", tv=a_ref.get("lam"), **cell)
    return Ref.of(SIGMAS[which], lam=a_ref.get("lam"), **cell)


def _ratio_deps(ref: object) -> list:  # type: ignore[type-arg]
    from certdp.claims.model import Ref

    assert isinstance(ref, Ref)
    return [_sigma_ref(ref, str(ref.get("num"))), _sigma_ref(ref, str(ref.get("den")))]  # type: ignore[list-item]


@quantity(
    "ra_sigma_ratio",
    "the sigmas' certdp functions (tv_closed_form.sigma_closed_form, sigma_gdp_limit, sigma_pinsker_d2, "
    "calibrate.calibrate_tv), then exact interval division",
    ("steps", "epochs", "lam", "num", "den", "form"),
    deps=_ratio_deps,
)
def _sigma_ratio(a: Args) -> Interval:
    """sigma_num/sigma_den - 1 (form "excess": "X% more noise") or 1 - sigma_num/sigma_den ("saving")."""
    from certdp.claims.quantities.generic import ratio_of

    num, den = (a.dep(_sigma_ref(a.ref, a.text(k))) for k in ("num", "den"))  # type: ignore[arg-type]
    r = ratio_of(num, den)
    form = a.text("form")
    assert r.lower is not None and r.upper is not None
    if form == "excess":
        return Interval(r.lower - 1, r.upper - 1, f"sigma_{a.text('num')}/sigma_{a.text('den')} - 1")
    if form == "saving":
        return Interval(1 - r.upper, 1 - r.lower, f"1 - sigma_{a.text('num')}/sigma_{a.text('den')}")
    raise InvalidArgument(f"form={form} must be excess or saving")
