"""The lower side's balancing construction in floats, for the lattice offset search only.

Why: the offset search (certdp.notions.pld_lattice.tuned_offset) compares about 16 offsets per
direction and round by what the balancing of the lower bound gives away on a window of up to a
few thousand cells. Run on balls (even balls of float tails) it cost 0.4 s of a 2 s CIFAR-10
epsilon and 6 s of a 76 s calibration (profiled 2026-12-05); the same recursion on float arrays
costs a few milliseconds per offset. Nothing certified is computed here: the chosen offset's
lattice is then built from the pair's Arb tails by certdp.notions.pld_lattice._lower_groups,
whose steps this module follows (the certification's integer rounding and back-off are left
out: they move the imbalance by far less than the offsets differ).
"""

from __future__ import annotations

import math

import numpy as np

from certdp.notions.pld_lattice import MEETING_BELOW_MODE, LossLattice, float_sweeps
from certdp.pairs import PrivacyPair

__all__ = ["float_imbalance"]


def float_imbalance(pair: PrivacyPair, lattice: LossLattice, below: int) -> float | None:
    """sum of P_g (log(P_g/Q_g) - l_g) over the balancing groups g with index < ``below``, the
    first-order loss of the lower bound on ``lattice`` (pld_lattice._imbalance of
    pld_lattice._lower_groups), from the pair's float tails; None when the pair has none.

    Contract: a float near that imbalance (no enclosure: it only steers the offset search).
    """
    n = lattice.hi - lattice.lo + 1
    ells = float(lattice.offset) + float(lattice.h) * np.arange(lattice.lo, lattice.hi + 1, dtype=float)
    tails = pair.loss_tails_float(ells)
    if tails is None:
        return None
    tp, tq = tails
    p = np.concatenate(([0.0], tp[:-1] - tp[1:]))
    w = np.concatenate(([0.0], tq[:-1] - tq[1:]))
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(ells)
        a = np.zeros(n)
        b = np.zeros(n)  # -B of pld_lattice: >= 0 where a cell's own loss is below its boundary
        a[1 : n - 1] = p[2:] - e[1 : n - 1] * w[2:]
        b[1 : n - 1] = -(p[1 : n - 1] - e[1 : n - 1] * w[1 : n - 1])
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        return math.inf  # floats cannot steer at this offset: rank it last
    groups = _groups(pair, lattice, ells, tp, tq, p.tolist(), w.tolist(), a.tolist(), b.tolist())
    total = 0.0
    for i, mp, mq in groups:
        if i < below and mp > 0 and mq > 0:
            total += mp * (math.log(mp / mq) - ells[i])
    return total


def _groups(
    pair: PrivacyPair,
    lattice: LossLattice,
    ells: np.ndarray,
    tp: np.ndarray,
    tq: np.ndarray,
    p: list[float],
    w: list[float],
    a: list[float],
    b: list[float],
) -> list[tuple[int, float, float]]:
    """The groups (index, P-mass, Q-mass) of pld_lattice._lower_groups, in floats."""
    n = len(p)
    used = [0.0] * (n + 1)
    u, v = [0.0] * n, [0.0] * n

    def settle(i: int, below_first: bool) -> None:
        ai, bi = a[i], b[i]
        if not (ai > 0 and bi > 0):
            return
        room_below, room_above = 1 - used[i], 1 - used[i + 1]
        if room_below <= 0 or room_above <= 0:
            return
        ratio = ai / bi
        if not 0 < ratio < math.inf:
            return
        if below_first:
            ui = room_below
            vi = min(room_above, ui / ratio)
            ui = min(ui, vi * ratio)
        else:
            vi = room_above
            ui = min(room_below, vi * ratio)
            vi = min(vi, ui / ratio)
        u[i], v[i] = ui, vi
        used[i] += ui
        used[i + 1] += vi

    groups: list[tuple[int, float, float]] = []
    m = _meeting_cell(pair, lattice, ells, tp, tq, p, a, b)
    for i in range(n - 2, m if m is not None else 0, -1):
        settle(i, below_first=False)
    if m is not None:
        vm = 1 - used[m + 1] if a[m] > 0 else 0.0
        upper, lower = _split_cell(pair, ells, tp, tq, m, vm * a[m])
        groups.append((m, upper[0] + vm * p[m + 1], upper[1] + vm * w[m + 1]))
        used[m + 1] += vm
        used[m] = 1.0
        for i in range(1, m - 1):
            settle(i, below_first=True)
        ui = max(1 - used[m - 1], 0.0)
        avail = lower[0] - math.exp(ells[m - 1]) * lower[1]
        need = b[m - 1]
        if ui * need > avail:
            ui = max(0.0, min(ui, avail / need if need > 0 else 1.0))
        used[m - 1] += ui
        groups.append((m - 1, ui * p[m - 1] + lower[0], ui * w[m - 1] + lower[1]))
    for i in range(1, n - 1):
        if u[i] or v[i]:
            groups.append((i, u[i] * p[i] + v[i] * p[i + 1], u[i] * w[i] + v[i] * w[i + 1]))
    for k in range(1, n):
        keep = 1 - used[k]
        if keep > 0:
            groups.append((k - 1, keep * p[k], keep * w[k]))
    groups.append((n - 1, float(tp[-1]), float(tq[-1])))
    return groups


def _meeting_cell(
    pair: PrivacyPair,
    lattice: LossLattice,
    ells: np.ndarray,
    tp: np.ndarray,
    tq: np.ndarray,
    p: list[float],
    a: list[float],
    b: list[float],
) -> int | None:
    """pld_lattice._meeting_cell in floats: the cell where the two sweeps meet best."""
    n = len(p)
    if n < 4:
        return None
    mode = max(range(n), key=p.__getitem__)

    u_top, v_bottom = float_sweeps(a, b)
    h = float(lattice.h)
    candidates = list(range(max(2, mode - MEETING_BELOW_MODE), min(n - 2, mode + 1) + 1))
    if not candidates:
        return None

    def mismatches(ms: list[int], k: int) -> list[float]:
        # the tails at the k - 1 inner cuts of every candidate cell, in one vectorised call
        starts = np.array([ells[m - 1] for m in ms])
        inner = starts[:, None] + h * np.arange(1, k)[None, :] / k
        got = pair.loss_tails_float(inner.ravel())
        assert got is not None  # the caller checked that the pair has float tails
        ip, iq = got[0].reshape(len(ms), k - 1), got[1].reshape(len(ms), k - 1)
        out = []
        for r, m in enumerate(ms):
            ea, eb = math.exp(ells[m - 1]), math.exp(ells[m])
            credit = (1 - u_top[m + 1]) * a[m]
            cf = [(tp[m - 1], tq[m - 1]), *zip(ip[r], iq[r], strict=True), (tp[m], tq[m])]
            j = k
            while j > 0 and (cf[j - 1][0] - cf[k][0]) - eb * (cf[j - 1][1] - cf[k][1]) + credit >= 0:
                j -= 1
            slack = (cf[j][0] - cf[k][0]) - eb * (cf[j][1] - cf[k][1]) + credit
            avail = (cf[0][0] - cf[j][0]) - ea * (cf[0][1] - cf[j][1])
            need = (1 - v_bottom[m - 2]) * b[m - 1]
            out.append(float(slack + abs(need - avail)))
        return out

    with np.errstate(over="ignore", invalid="ignore"):
        rough_cost = mismatches(candidates, 8)
        rough = [m for _, m in sorted(zip(rough_cost, candidates, strict=True))][:3]
        fine = mismatches(rough, 32)
    if not all(math.isfinite(c) for c in fine):
        return None
    return rough[min(range(len(rough)), key=fine.__getitem__)]


def _split_cell(
    pair: PrivacyPair, ells: np.ndarray, tp: np.ndarray, tq: np.ndarray, m: int, credit: float
) -> tuple[tuple[float, float], tuple[float, float]]:
    """pld_lattice._split_meeting_cell in floats: the (P, Q)-masses of the upper piece (c, b] and
    the lower piece (a, c] of cell m, c the lowest cut (by bisection) at which the upper piece
    plus ``credit`` balances at b."""
    a_, b_ = float(ells[m - 1]), float(ells[m])
    eb = math.exp(b_)

    def tail(c: float) -> tuple[float, float]:
        if c == b_:
            return float(tp[m]), float(tq[m])
        got = pair.loss_tail_float(c)
        assert got is not None  # the caller checked that the pair has float tails
        return got

    def pieces(c: float) -> tuple[tuple[float, float], tuple[float, float]]:
        t = tail(c)
        return (t[0] - tp[m], t[1] - tq[m]), (tp[m - 1] - t[0], tq[m - 1] - t[1])

    def balanced(c: float) -> bool:
        up = pieces(c)[0]
        return up[0] - eb * up[1] + credit >= 0

    if not balanced(b_):
        return pieces(b_)
    low, high = a_, b_
    for _ in range(30):
        mid = (low + high) / 2
        low, high = (low, mid) if balanced(mid) else (mid, high)
    return pieces(high)
