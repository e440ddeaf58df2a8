"""Certified curves: epsilon against training steps, and the Renyi curve against the order.

:func:`eps_curve` computes, at each step count, the two-sided PLD enclosure of epsilon(delta) of
the Poisson-subsampled Gaussian composed that many times (certdp.notions.pld.pld_bounds; docs/math.md
§10): the band between the ends holds the exact epsilon, the upper end is a sound value and the
lower end a proved violation. :func:`peer_eps` asks installed peer accountants (the audit
adapters) for their epsilon on the same settings, for comparison only: peers' floats are never
certified. :func:`rdp_curve` encloses D_alpha at each order with the zCDP line rho alpha and the
gap Gamma(t) = rho t(t+1) - K(t), t = alpha - 1 (docs/math.md §1-2). The ranges are parsed by
:func:`steps_range` and :func:`orders_range`; floats only place the orders.
"""

from __future__ import annotations

import csv
import io
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from certdp.enclose import DEFAULT_TARGET, Enclosure, to_ball, workprec
from certdp.errors import CertdpError, InvalidArgument, LimitExceeded, fmt_value
from certdp.notions import gap, rdp, rho
from certdp.notions.pld import pld_bounds
from certdp.pairs import PrivacyPair, SubsampledGaussian, compose
from certdp.pairs.params import exact_str, integer, real

if TYPE_CHECKING:
    from certdp.audit.adapters import Adapter

#: Most points of one curve (each is a certified computation of seconds).
MAX_POINTS = 200

#: Orders of an orders range without ``:n``.
DEFAULT_ORDER_POINTS = 40

#: Working precision of the lattice sums (bits).
PLD_PREC = 128

Progress = Callable[[str, float], None]


def _split_range(name: str, text: str) -> tuple[str, str, str | None]:
    lo, _, rest = text.partition("..")
    hi, _, k = rest.partition(":")
    if not lo.strip() or not hi.strip() or (k == "" and ":" in rest):
        raise InvalidArgument(f"{name}={fmt_value(text)} must look like A..B or A..B:k")
    return lo.strip(), hi.strip(), k.strip() if ":" in rest else None


def steps_range(text: str, limit: int) -> list[int]:
    """Step counts from ``A..B`` (every count), ``A..B:k`` (A, A + k, ... and B), ``N1,N2,...``
    or ``N``.

    Contract: a strictly increasing list of integers in [1, limit] with at most MAX_POINTS
    entries; InvalidArgument (naming ``steps`` and the text) otherwise.
    """
    text = str(text).strip()
    if ".." in text:
        lo_s, hi_s, k_s = _split_range("steps", text)
        lo, hi = integer("steps", lo_s, ge=1), integer("steps", hi_s, ge=1)
        k = 1 if k_s is None else integer("steps stride", k_s, ge=1)
        if hi < lo:
            raise InvalidArgument(f"steps={fmt_value(text)} must have A <= B in A..B")
        count = (hi - lo) // k + 1
        if count > MAX_POINTS:
            raise LimitExceeded(
                f"steps={fmt_value(text)} gives {count} points, more than {MAX_POINTS}: add a stride, e.g. "
                f"{lo}..{hi}:{math.ceil((hi - lo) / (MAX_POINTS - 1)) or 1}"
            )
        values = list(range(lo, hi + 1, k))
        if values[-1] != hi:
            values.append(hi)
    else:
        values = sorted({integer("steps", part.strip(), ge=1) for part in text.split(",") if part.strip()})
        if not values:
            raise InvalidArgument(f"steps={fmt_value(text)} must list at least one step count")
        if len(values) > MAX_POINTS:
            raise LimitExceeded(f"steps={fmt_value(text)} lists {len(values)} counts, more than {MAX_POINTS}")
    if values[-1] > limit:
        raise LimitExceeded(f"steps={values[-1]} exceeds {limit}, the most the lattice accountant composes")
    return values


def orders_range(text: str) -> list[Fraction]:
    """Renyi orders from ``A..B`` or ``A..B:n`` (n log-spaced orders from A to B, default
    DEFAULT_ORDER_POINTS, each rounded to 4 significant digits and then exact) or ``a1,a2,...``.

    Contract: a strictly increasing list of exact orders > 1 with at most MAX_POINTS entries;
    InvalidArgument (naming ``orders``) otherwise. Floats only place the orders.
    """
    text = str(text).strip()
    if ".." not in text:
        values = sorted({real("orders", part.strip(), gt=1) for part in text.split(",") if part.strip()})
        if not values:
            raise InvalidArgument(f"orders={fmt_value(text)} must list at least one order")
    else:
        lo_s, hi_s, n_s = _split_range("orders", text)
        lo, hi = real("orders", lo_s, gt=1), real("orders", hi_s, gt=1)
        if hi <= lo:
            raise InvalidArgument(f"orders={fmt_value(text)} must have A < B in A..B")
        n = DEFAULT_ORDER_POINTS if n_s is None else integer("orders points", n_s, ge=2)
        if n > MAX_POINTS:
            raise LimitExceeded(f"orders={fmt_value(text)} asks for {n} points, more than {MAX_POINTS}")
        a, b = math.log(float(lo)), math.log(float(hi))
        inner = {Fraction(f"{math.exp(a + (b - a) * i / (n - 1)):.4g}") for i in range(1, n - 1)}
        values = sorted({lo, hi} | {x for x in inner if lo < x < hi})
    if len(values) > MAX_POINTS:
        raise LimitExceeded(f"orders={fmt_value(text)} lists {len(values)} orders, more than {MAX_POINTS}")
    return values


@dataclass(frozen=True)
class EpsPoint:
    """epsilon(delta) after ``steps`` steps: ``enclosure`` (both ends proved) and its wall time."""

    steps: int
    enclosure: Enclosure
    seconds: float


def eps_curve(
    q: object,
    sigma: object,
    steps: Sequence[int],
    delta: object,
    *,
    direction: str = "both",
    h: Fraction | None = None,
    progress: Progress | None = None,
) -> list[EpsPoint]:
    """The certified epsilon band of Poisson-subsampled Gaussian DP-SGD against the step count.

    Contract: for each n in ``steps``, lower <= epsilon_n(delta) <= upper for the n-fold
    composition of SubsampledGaussian(q, sigma, direction) (pld_bounds' contract, docs/math.md §10):
    the upper end is sound, the lower end a proved violation.
    """
    base = SubsampledGaussian(q=q, sigma=sigma, direction=direction)  # type: ignore[arg-type]
    d = real("delta", delta, gt=0, lt=1)  # type: ignore[arg-type]
    points = []
    for i, n in enumerate(steps):
        if progress is not None:
            progress(f"epsilon after {n} steps", i / len(steps))
        start = time.perf_counter()
        pair = base if n == 1 else compose(base, n)
        with workprec(PLD_PREC):
            enc = pld_bounds(pair, delta=d, h=h).enclosure
        points.append(EpsPoint(n, enc, round(time.perf_counter() - start, 3)))
    if progress is not None:
        progress("done", 1.0)
    return points


def peer_eps(
    peers: Sequence[str | Adapter], q: object, sigma: object, steps: Sequence[int], delta: object
) -> dict[str, list[float]]:
    """The installed peers' epsilon at each step count (NaN where a peer failed), one column per
    peer accountant (``peer:method``, e.g. ``dp_accounting:pld``, ``opacus:prv``; ``peers`` are names
    or loaded adapters). Estimates by design (dp_accounting's optimistic PLD) are left out: the
    columns are guarantees as the peers state them, never certified.

    Contract: floats from the peers (certdp.audit.adapters); PeerMissing for a peer that is not
    installed, InvalidArgument for an unknown name.
    """
    from certdp.audit.adapters import Adapter, load_adapter
    from certdp.audit.cases import Case

    qq, s, d = real("q", q, gt=0, le=1), real("sigma", sigma, gt=0), real("delta", delta, gt=0, lt=1)  # type: ignore[arg-type]
    # every peer is checked before any work; adapters already loaded are used as they are
    adapters = [p if isinstance(p, Adapter) else load_adapter(p) for p in peers]
    columns: dict[str, list[float]] = {}
    for adapter in adapters:
        for i, n in enumerate(steps):
            case = Case(id=f"curve-{n}", q=qq, steps=n, checks=("eps-rdp", "eps-pld"), sigma=s, delta=d)
            for row in adapter.evaluate(case):
                if row.estimate:
                    continue
                column = columns.setdefault(f"{row.peer}:{row.method}", [math.nan] * len(steps))
                column[i] = row.value
    return columns


@dataclass(frozen=True)
class RdpPoint:
    """At Renyi order ``order``: D_alpha, the zCDP line rho alpha and the gap Gamma(alpha - 1)
    (None where rho is not available)."""

    order: Fraction
    rdp: Enclosure
    zcdp: Enclosure | None
    gap: Enclosure | None


@dataclass(frozen=True)
class RdpCurve:
    """The points of :func:`rdp_curve`, the certified rho (None with ``rho_error`` when it could
    not be certified, e.g. an unbounded ratio)."""

    points: list[RdpPoint]
    rho: Enclosure | None
    rho_error: str


def rdp_curve(pair: PrivacyPair, orders: Sequence[Fraction], progress: Progress | None = None) -> RdpCurve:
    """The certified Renyi curve of ``pair`` with its zCDP line and gap.

    Contract: each point's ``rdp`` contains D_alpha(P||Q) (certdp.notions.rdp), ``zcdp`` contains
    rho alpha with rho = sup_t K(t)/(t(t+1)) (certdp.notions.rho), and ``gap`` contains
    Gamma(t) = rho t(t+1) - K(t) at t = alpha - 1 (certdp.notions.gap; >= 0 by the definition of
    rho); rho and the gap are None when rho cannot be certified (``rho_error`` says why).
    """
    try:
        r: Enclosure | None = rho(pair, DEFAULT_TARGET)
        reason = ""
    except CertdpError as exc:
        r, reason = None, str(exc)
    points = []
    for i, alpha in enumerate(orders):
        if progress is not None:
            progress(f"order {exact_str(alpha)}", i / len(orders))
        d = rdp(pair, alpha, DEFAULT_TARGET)
        z = g = None
        if r is not None:
            with workprec(r.prec_bits):  # outward rounding of the product keeps rho alpha enclosed
                z = Enclosure.from_ball(r.ball() * to_ball(alpha))
            g = gap(pair, alpha - 1, DEFAULT_TARGET)
        points.append(RdpPoint(alpha, d, z, g))
    if progress is not None:
        progress("done", 1.0)
    return RdpCurve(points, r, reason)


def to_csv(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """Contract: RFC 4180 CSV text of ``header`` and ``rows`` (values as str; NaN as empty)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(["" if isinstance(v, float) and math.isnan(v) else v for v in row])
    return buf.getvalue()
