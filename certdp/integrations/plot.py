"""PNG figures of the certified curves (matplotlib, the optional extra ``certdp[plot]``).

The figures are drawn on matplotlib's object API with the Agg canvas (no pyplot, so a user's
interactive backend and global state are left alone). The certified band is a filled region
between the enclosure's ends, outlined so that it stays visible when it is thinner than a line;
peers are drawn as dashed lines for comparison.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from typing import Any

from certdp.errors import Unsupported
from certdp.integrations.curves import EpsPoint, RdpCurve

#: Figure size in inches and resolution: 1600 x 1000 pixels.
SIZE, DPI = (8.0, 5.0), 200


def _figure(rows: int = 1) -> tuple[Any, Any]:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise Unsupported(f'plots need matplotlib ({exc}): pip install "certdp[plot]"') from None
    fig = Figure(figsize=(SIZE[0], SIZE[1] * (1 if rows == 1 else 1.5)), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.subplots(rows, 1, sharex=True, squeeze=False)[:, 0]


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def eps_curve_png(points: Sequence[EpsPoint], peers: Mapping[str, Sequence[float]], title: str, delta: str) -> bytes:
    """The certified epsilon band against the step count, with the peers' values (top), and every
    value relative to the certified upper end (bottom, in percent), where the band is visible.

    Contract: PNG bytes of a figure whose filled regions span [lower, upper] of every point
    (float ends rounded outward by Enclosure.lower_float/upper_float; the relative band is drawn
    from those floats, for reading only); Unsupported without matplotlib.
    """
    fig, (top, bottom) = _figure(rows=2)
    steps = [p.steps for p in points]
    low = [p.enclosure.lower_float() for p in points]
    up = [p.enclosure.upper_float() for p in points]
    top.fill_between(steps, low, up, color="tab:blue", alpha=0.35, linewidth=0, label="certified band [lower, upper]")
    top.plot(steps, up, color="tab:blue", linewidth=1.4, label="certdp: certified epsilon (upper end, sound)")
    rel_low = [100 * (lo / hi - 1) for lo, hi in zip(low, up, strict=True)]
    bottom.fill_between(steps, rel_low, [0.0] * len(steps), color="tab:blue", alpha=0.35, linewidth=0)
    bottom.plot(steps, [0.0] * len(steps), color="tab:blue", linewidth=1.4, label="certified band (0 = upper end)")
    bottom.plot(
        steps, rel_low, color="tab:blue", linewidth=0.8, linestyle=":", label="lower end: smaller is proved false"
    )
    styles = ["--", "-.", (0, (5, 1)), (0, (3, 1, 1, 1)), ":", (0, (1, 1))]
    for i, (name, values) in enumerate(peers.items()):
        pts = [(s, v, u) for s, v, u in zip(steps, values, up, strict=True) if not math.isnan(v)]
        if not pts:
            continue
        xs, ys, us = zip(*pts, strict=True)
        style = {"linestyle": styles[i % len(styles)], "linewidth": 1.1, "color": f"C{i + 1}"}
        top.plot(xs, ys, label=f"{name} (float, not certified)", **style)
        bottom.plot(xs, [100 * (y / u - 1) for y, u in zip(ys, us, strict=True)], **style)
    top.set_ylabel(f"epsilon at delta = {delta}")
    top.set_title(title, fontsize=10)
    top.set_ylim(bottom=0)
    top.legend(fontsize=7, loc="lower right")
    bottom.set_ylabel("relative to the certified\nupper end (%)")
    bottom.set_xlabel("training steps (compositions of the subsampled Gaussian)")
    bottom.set_yscale("symlog", linthresh=0.01)  # linear only within 0.01%: the band shows
    bottom.legend(fontsize=7, loc="center right")
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
    return _png(fig)


def rdp_curve_png(curve: RdpCurve, title: str) -> bytes:
    """The certified Renyi curve D_alpha with the zCDP line rho alpha (top) and the gap
    Gamma(alpha - 1) = rho t(t+1) - K(t) (bottom, logarithmic).

    Contract: PNG bytes of a figure whose filled regions span each point's [lower, upper];
    Unsupported without matplotlib.
    """
    fig, (top, bottom) = _figure(rows=2)
    orders = [float(p.order) for p in curve.points]
    low = [p.rdp.lower_float() for p in curve.points]
    up = [p.rdp.upper_float() for p in curve.points]
    top.fill_between(orders, low, up, color="tab:blue", alpha=0.35, linewidth=0)
    top.plot(orders, up, color="tab:blue", linewidth=1.2, label="certified Renyi divergence D_alpha")
    if curve.rho is not None:
        zc = [p.zcdp.upper_float() for p in curve.points if p.zcdp is not None]
        top.plot(
            orders,
            zc,
            color="tab:red",
            linestyle="--",
            linewidth=1.0,
            label=f"zCDP line rho alpha, rho <= {curve.rho.upper_str(6)}",
        )
        gaps = [(float(p.order), p.gap) for p in curve.points if p.gap is not None and p.gap.upper > 0]
        if gaps:
            xs = [x for x, _ in gaps]
            g_low = [max(g.lower_float(), 1e-300) for _, g in gaps]
            g_up = [g.upper_float() for _, g in gaps]
            bottom.fill_between(xs, g_low, g_up, color="tab:green", alpha=0.35, linewidth=0)
            bottom.plot(xs, g_up, color="tab:green", linewidth=1.2, label="certified gap Gamma(t) = rho t(t+1) - K(t)")
            bottom.set_yscale("log")
            bottom.legend(fontsize=8, loc="lower right")
    else:
        bottom.text(0.5, 0.5, f"rho not certified: {curve.rho_error[:90]}", ha="center", va="center", fontsize=8)
    for ax in (top, bottom):
        ax.set_xscale("log")
        ax.grid(alpha=0.3, which="both")
    top.set_yscale("log")
    top.set_ylabel("D_alpha(P||Q)  (nats, log scale)")
    bottom.set_ylabel("gap Gamma(alpha - 1)  (nats, log scale)")
    bottom.set_xlabel("Renyi order alpha (log scale)")
    top.set_title(title, fontsize=10)
    top.legend(fontsize=8, loc="upper left")
    return _png(fig)
