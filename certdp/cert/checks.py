"""Exact reading of the checks of a certificate body, before anything is recomputed.

The JSON Schema only says that fields exist and look like decimals. This module says what a
check may MEAN (verifier defects found by review, issue 12):
- the method must fit the quantity and the relation: a TV claim ``<=`` is proved only by the
  lattice UPPER bound, ``>`` only by the lattice LOWER bound; epsilon of the subsampled Gaussian
  through RDP orders or PLD lattices, epsilon of random allocation only through its hockey-stick
  lattice (hockey-upper for ``<=``, hockey-lower for ``>``);
- every number is read exactly (Fraction), within certdp.cert.limits, and grid values must be
  exact binary64 numbers with the shape the lattice construction needs (h and eta powers of
  two, cap a multiple of h, 0 < l_min < 1 < l_max);
- the claim holds ``<=`` and the refutation ``>``, for the same mechanism, parameters,
  quantity, threshold and delta, at sigma exactly one ``step`` below the claim's sigma.

Nothing here computes an enclosure: it returns typed, validated specs that verify.py recomputes.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from certdp.cert import limits as L
from certdp.errors import CertificateMalformed, PrecisionExhausted
from certdp.pairs.params import exact_str

_DECIMAL = re.compile(r"^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$")
_COUNT = re.compile(r"^[1-9][0-9]{0,15}$")
TV_SIDE = {"<=": "lattice-upper", ">": "lattice-lower"}
PLD_SIDE = {"<=": "pld-upper", ">": "pld-lower"}
HOCKEY_SIDE = {"<=": "hockey-upper", ">": "hockey-lower"}
DIRECTIONS = ("remove", "add", "both")


def bad(where: str, message: str) -> CertificateMalformed:
    """Contract: the one-line CertificateMalformed ``field WHERE: MESSAGE``."""
    return CertificateMalformed(f"field {where}: {message}")


def decimal(where: str, text: object) -> Fraction:
    """Exact value of a decimal string, within the length and exponent limits.

    Contract: Fraction(text) exactly; CertificateMalformed if not a decimal string, LimitExceeded
    if longer than MAX_DECIMAL_CHARS or with |exponent| > MAX_DECIMAL_EXPONENT.
    """
    if isinstance(text, str) and len(text) > L.MAX_DECIMAL_CHARS:
        raise L.refuse(f"{where} (length)", len(text), f"of {L.MAX_DECIMAL_CHARS} characters")
    if not isinstance(text, str) or not _DECIMAL.fullmatch(text):
        raise bad(where, f"{str(text)[:40]!r} is not a decimal string")
    exponent = text.lower().partition("e")[2]
    if exponent and (len(exponent.lstrip("+-")) > 3 or abs(int(exponent)) > L.MAX_DECIMAL_EXPONENT):
        raise L.refuse(f"{where} (exponent)", exponent, f"|e| <= {L.MAX_DECIMAL_EXPONENT}")
    return Fraction(text)


#: |binary exponent| of a recorded dyadic end (recorded precisions are at most MAX_RDP_PREC bits)
MAX_DYADIC_EXPONENT = 10_000


def dyadic(where: str, pair: list[Any]) -> Fraction:
    """The exact value m 2^e of a recorded dyadic end [m, e], within the decimal limits.

    Contract: returns m 2^e, or raises CertificateMalformed when m has more than
    MAX_DECIMAL_CHARS characters or |e| > MAX_DYADIC_EXPONENT (both far beyond what certdp writes).
    """
    mantissa, exponent = pair
    if len(mantissa) > L.MAX_DECIMAL_CHARS:
        raise CertificateMalformed(
            f"field {where}: mantissa of {len(mantissa)} characters exceeds {L.MAX_DECIMAL_CHARS}"
        )
    if type(exponent) is not int or abs(exponent) > MAX_DYADIC_EXPONENT:
        raise CertificateMalformed(f"field {where}: exponent {exponent} must be an integer in +-{MAX_DYADIC_EXPONENT}")
    return Fraction(int(mantissa)) * Fraction(2) ** exponent


def count(where: str, text: object, limit: int) -> int:
    """Contract: a positive integer written without sign, zeros or fraction, <= limit."""
    if isinstance(text, int) and not isinstance(text, bool):
        text = str(text)
    if not isinstance(text, str) or not _COUNT.fullmatch(text):
        raise bad(where, f"{str(text)[:40]!r} must be a positive integer")
    value = int(text)
    L.at_most(where, value, limit)
    return value


def _in_range(where: str, value: Fraction, lo: Fraction, hi: Fraction, lo_open: bool = False) -> Fraction:
    if (value <= lo if lo_open else value < lo) or value > hi:
        raise bad(where, f"{value} must be in {'(' if lo_open else '['}{lo}, {hi}]")
    return value


def _binary64(where: str, value: Fraction) -> float:
    """The float equal to ``value``; refuses values that no binary64 number equals exactly."""
    as_float = float(value)
    if not math.isfinite(as_float) or Fraction(as_float) != value:
        raise bad(where, f"{value} is not an exact binary64 number (grid values must be)")
    return as_float


def _power_of_two(where: str, value: Fraction) -> float:
    num, den = value.numerator, value.denominator
    if num <= 0 or num & (num - 1) or den & (den - 1) or (num != 1 and den != 1):
        raise bad(where, f"{value} must be a power of two (exact lattice points)")
    if value < L.MIN_GRID_SPACING or value > 1:
        raise bad(where, f"{value} must be in [2^-40, 1]")
    return float(value)


@dataclass(frozen=True)
class Mechanism:
    """A validated mechanism: name, exact parameters and (subsampled Gaussian) compositions."""

    name: str
    params: dict[str, Any]
    steps: int

    def lattice_run(self) -> tuple[int, int]:
        """(steps, epochs) of the k = 1 random-allocation run whose lattice a check is computed on:
        the recorded run, or for k > 1 the reduction's floor(M/k) steps and k E epochs (docs/math.md
        §9.8, "k > 1"; an upper bound only, which _hockey_check enforces).

        Contract: for random-allocation only; exact integers."""
        m, e, k = self.params["steps"], self.params["epochs"], self.params.get("k", 1)
        return m // k, k * e

    def same_except_sigma(self, other: Mechanism) -> bool:
        """Contract: True iff the two mechanisms differ at most in sigma."""
        mine = {k: v for k, v in self.params.items() if k != "sigma"}
        theirs = {k: v for k, v in other.params.items() if k != "sigma"}
        return (self.name, self.steps, mine) == (other.name, other.steps, theirs)


def mechanism(where: str, mech: dict[str, Any]) -> Mechanism:
    """Contract: exact, range-checked parameters of a random-allocation (with a direction for its
    epsilon checks) or subsampled-gaussian mechanism; unknown, missing or extra parameters are
    CertificateMalformed."""
    name, params = mech["name"], mech["params"]
    want = {"random-allocation": {"steps", "epochs", "sigma"}, "subsampled-gaussian": {"q", "sigma", "direction"}}[name]
    if name == "random-allocation" and "direction" in params:
        want = want | {"direction"}  # an epsilon check (check() says which quantity takes it)
        if "k" in params:  # k of the M steps per epoch: epsilon claims only (_hockey_check)
            want = want | {"k"}
    if params.get("direction", "both") not in DIRECTIONS:
        raise bad(f"{where}/params/direction", f"{params['direction']!r} must be remove, add or both")
    if set(params) != want:
        raise bad(f"{where}/params", f"keys {sorted(params)} must be exactly {sorted(want)} for {name}")
    sigma = _in_range(
        f"{where}/params/sigma", decimal(f"{where}/params/sigma", params["sigma"]), L.MIN_SIGMA, L.MAX_SIGMA
    )
    if name == "random-allocation":
        if "steps" in mech:
            raise bad(f"{where}/steps", "random-allocation gives its steps in params")
        steps = count(f"{where}/params/steps", params["steps"], L.MAX_RA_STEPS)
        epochs = count(f"{where}/params/epochs", params["epochs"], L.MAX_RA_EPOCHS)
        out = {"steps": steps, "epochs": epochs, "sigma": sigma}
        if "k" in params:
            # k = 1 is written by leaving k out (one form per run); the reduced run's k E epochs
            # must stay within the epoch limit the verifier rebuilds
            k = count(f"{where}/params/k", params["k"], L.MAX_RA_STEPS)
            if k == 1:
                raise bad(f"{where}/params/k", "k=1 is written by leaving k out")
            if k > steps:
                raise bad(f"{where}/params/k", f"k={k} must be <= steps={steps}")
            L.at_most(f"{where}/params/k times epochs", k * epochs, L.MAX_RA_EPOCHS)
            out["k"] = k
        return Mechanism(name, out | ({"direction": params["direction"]} if "direction" in params else {}), 1)
    q = _in_range(f"{where}/params/q", decimal(f"{where}/params/q", params["q"]), Fraction(0), Fraction(1), True)
    steps = count(f"{where}/steps", mech.get("steps", 1), L.MAX_SG_STEPS)
    return Mechanism(name, {"q": q, "sigma": sigma, "direction": params["direction"]}, steps)


def describe(raw: dict[str, Any], mech: Mechanism) -> str:
    """What a check is about, for reports.

    Contract: the mechanism, its parameters, steps and delta with every number in one canonical
    decimal form (``q=0.05``, never ``5e-2`` in one check and ``0.050`` in the other).
    """
    params = ", ".join(
        f"{k}={v if isinstance(v, str) else exact_str(v)}" for k, v in sorted(mech.params.items(), key=_param_order)
    )
    of = f"{mech.name}({params})"
    if mech.name == "subsampled-gaussian":
        of += f" x {mech.steps} steps"
    if "delta" in raw:
        of += f", delta={exact_str(Fraction(raw['delta']))}"
    return of


def _param_order(item: tuple[str, Any]) -> int:
    return ("q", "steps", "epochs", "k", "sigma", "direction").index(item[0])


@dataclass(frozen=True)
class Check:
    """A validated check: what to recompute (mechanism, method, grid or orders) and what it proves."""

    mechanism: Mechanism
    quantity: str
    relation: str
    threshold: Fraction
    delta: Fraction | None
    method: str
    prec_bits: int
    grid: dict[str, float] | None
    orders: tuple[int, ...] | None
    #: pld-*: per direction (h, offset, lo, hi), exact, plus (bulk_lo, bulk_hi, stride) for a split
    #: lattice; and the pruning floor 2^-prune_bits
    lattices: dict[str, tuple[Fraction | int, ...]] | None = None
    prune_bits: int | None = None
    #: pld-lower: the lower-bound construction, "balanced" (the default of older files) or "merged"
    lower: str | None = None
    #: pld-*: the powers are coarsened as they spread (False: one spacing throughout)
    coarsen_powers: bool = False


def _grid(where: str, grid: dict[str, Any], mech: Mechanism, prec: int, side: str) -> dict[str, float]:
    exact = {k: decimal(f"{where}/{k}", v) for k, v in grid.items() if k != "scheme"}
    out: dict[str, float] = {"h": _power_of_two(f"{where}/h", exact["h"])}
    out["eta"] = _power_of_two(f"{where}/eta", exact["eta"])
    for k in ("cap", "l_min", "l_max", "tail_k", "coarsen"):
        if k in exact:
            out[k] = _binary64(f"{where}/{k}", exact[k])
    if not 0 < exact["l_min"] < 1 < exact["l_max"]:
        raise bad(where, f"needs 0 < l_min < 1 < l_max, got l_min={exact['l_min']}, l_max={exact['l_max']}")
    if not 0 < exact["cap"] <= L.MAX_CAP:
        raise bad(f"{where}/cap", f"{exact['cap']} must be in (0, {L.MAX_CAP}]")
    cells = exact["cap"] / exact["h"]
    if cells.denominator != 1:
        raise bad(f"{where}/cap", f"{exact['cap']} must be a multiple of h={exact['h']}")
    for k in ("tail_k", "coarsen"):
        if k in exact and not 0 <= exact[k] <= 1000:
            raise bad(f"{where}/{k}", f"{exact[k]} must be in [0, 1000]")
    scheme = grid.get("scheme", "1")
    if scheme == "1" and ("tail_k" in exact or "coarsen" in exact):
        raise bad(where, "scheme 1 grids have no tail_k or coarsen")
    out["scheme"] = int(scheme)
    m, e = mech.lattice_run()
    L.at_most(f"{where} epoch-sum points l_max M/h", math.ceil(exact["l_max"] * m / exact["h"]), L.MAX_SUM_POINTS)
    L.at_most(f"{where} step lattice points cap/h", cells.numerator, L.MAX_STEP_POINTS)
    from certdp.notions.tv_certified import LatticeGrid

    grid_obj = LatticeGrid(**out, prec=prec)  # every field was checked exactly above
    L.grid_work(m, e, float(mech.params["sigma"]), grid_obj, side, where)
    return out


def _orders(where: str, orders: list[int], prec: int) -> tuple[int, ...]:
    if any(type(a) is not int for a in orders):  # 2.0 canonicalizes like 2 but is not an order
        raise bad(where, "orders must be JSON integers (no fraction part)")
    L.at_most(f"{where} (count)", len(orders), L.MAX_ORDERS)
    if any(not 2 <= a <= L.MAX_ORDER for a in orders):
        raise L.refuse(f"{where} (largest)", max(orders), f"orders in [2, {L.MAX_ORDER}]")
    if any(b <= a for a, b in itertools.pairwise(orders)):
        raise bad(where, "orders must be strictly increasing (no repeats)")
    # cost of the RDP recomputation: per order about (precision / 64), growing mildly with the
    # order; see limits.py
    L.at_most(f"{where} work sum(orders) x prec/64", sum(orders) * max(prec, 64) // 64, L.MAX_RDP_ORDER_SUM_WORK)
    L.at_most(f"{where} work count(orders) x prec/64", len(orders) * max(prec, 64) // 64, L.MAX_RDP_COUNT_WORK)
    return tuple(orders)


#: the result fields a check of each relation records (format v2): the proved end, exactly, and
#: optionally the other end named for its status and the calibrator's time
RESULT_FIELDS = {
    "<=": ({"upper", "upper_dyadic"}, {"lower_unverified", "seconds"}),
    ">": ({"lower", "lower_dyadic"}, {"upper_unverified", "seconds"}),
}


def result_shape(where: str, result: dict[str, Any], relation: str) -> None:
    """Contract: returns only if ``result`` holds the proved end of ``relation`` (upper and
    upper_dyadic for ``<=``, lower and lower_dyadic for ``>``) and otherwise only the other end
    named ``*_unverified`` and ``seconds``; CertificateMalformed naming the field otherwise."""
    need, may = RESULT_FIELDS[relation]
    missing, extra = sorted(need - set(result)), sorted(set(result) - need - may)
    if missing or extra:
        side = "an upper" if relation == "<=" else "a lower"
        what = f"lacks {', '.join(missing)}" if missing else f"has {', '.join(extra)}"
        raise bad(
            f"{where}/result",
            f"{what}: a {relation} check records only {side} end, the one certdp verify proves "
            f"({' and '.join(sorted(need))}; the other end only as *_unverified)",
        )


def check(where: str, raw: dict[str, Any]) -> Check:
    """Validate one check (claim or refutation) exactly, before any recomputation.

    Contract: returns only if the method fits the quantity, the mechanism and the relation (TV:
    ``<=`` by lattice-upper, ``>`` by lattice-lower; epsilon of the subsampled Gaussian:
    rdp-orders, or pld-upper / pld-lower, with a delta; epsilon of random allocation: ``<=`` by
    hockey-upper, ``>`` by hockey-lower, with a delta, a direction and a grid), every
    number is exact and within certdp.cert.limits and the grid has the shape the lattice bound
    of certdp.notions.tv_certified needs; raises CertificateMalformed or LimitExceeded otherwise.
    """
    mech = mechanism(f"{where}/mechanism", raw["mechanism"])
    result_shape(where, raw["result"], raw["relation"])
    method = raw["method"]
    quantity, relation, name = raw["quantity"], raw["relation"], method["name"]
    threshold = decimal(f"{where}/threshold", raw["threshold"])
    prec = method["prec_bits"]
    if type(prec) is not int:
        raise bad(f"{where}/method/prec_bits", f"{prec} must be a JSON integer")
    least = L.MIN_CHECK_PREC.get(name)
    if least is not None and prec < least:
        raise PrecisionExhausted(
            f"field {where}/method/prec_bits: prec_bits={prec} is too small for {name} (at least {least} bits): "
            "precision exhausted"
        )
    if quantity == "tv":
        if mech.name != "random-allocation" or name not in TV_SIDE.values():
            raise bad(f"{where}/method/name", f"tv of {mech.name} cannot be proved by {name}")
        if "direction" in mech.params:
            raise bad(f"{where}/mechanism/params/direction", "tv has no direction (it is symmetric)")
        if TV_SIDE[relation] != name:
            side = "an upper" if relation == "<=" else "a lower"
            raise bad(f"{where}/method/name", f"{relation} needs {side} bound ({TV_SIDE[relation]}), not {name}")
        if "grid" not in method or "orders" in method or "delta" in raw:
            raise bad(f"{where}/method", f"{name} takes a grid (no orders, no delta)")
        _in_range(f"{where}/threshold", threshold, Fraction(0), Fraction(1), True)
        L.at_most(f"{where}/method/prec_bits", prec, L.MAX_LATTICE_PREC)
        grid = _grid(f"{where}/method/grid", method["grid"], mech, prec, "upper" if relation == "<=" else "lower")
        return Check(mech, quantity, relation, threshold, None, name, prec, grid, None)
    if mech.name == "subsampled-gaussian" and name in PLD_SIDE.values():
        return _pld_check(where, raw, mech, relation, threshold, prec)
    if mech.name == "random-allocation":
        return _hockey_check(where, raw, mech, relation, threshold, prec)
    if mech.name != "subsampled-gaussian" or name != "rdp-orders":
        raise bad(f"{where}/method/name", f"epsilon of {mech.name} cannot be proved by {name}")
    if "orders" not in method or "grid" in method or "delta" not in raw:
        raise bad(f"{where}/method", "rdp-orders takes orders and a delta (no grid)")
    delta = _in_range(f"{where}/delta", decimal(f"{where}/delta", raw["delta"]), Fraction(0), Fraction(1), True)
    if delta == 1:
        raise bad(f"{where}/delta", "1 must be < 1")
    _in_range(f"{where}/threshold", threshold, Fraction(0), Fraction(10**6), True)
    L.at_most(f"{where}/method/prec_bits", prec, L.MAX_RDP_PREC)
    orders = _orders(f"{where}/method/orders", method["orders"], prec)
    return Check(mech, quantity, relation, threshold, delta, name, prec, None, orders)


def _hockey_check(
    where: str, raw: dict[str, Any], mech: Mechanism, relation: str, threshold: Fraction, prec: int
) -> Check:
    """A hockey-upper (claim ``<=``) or hockey-lower (refutation ``>``) check of random
    allocation's eps at delta, on one recorded grid (certdp.notions.allocation_dp): the grid
    within the TV lattice limits plus the epoch power this check keeps, up to the threshold + 1."""
    method, name = raw["method"], raw["method"]["name"]
    if name not in HOCKEY_SIDE.values():
        raise bad(f"{where}/method/name", f"epsilon of random-allocation cannot be proved by {name}")
    if HOCKEY_SIDE[relation] != name:
        side = "an upper" if relation == "<=" else "a lower"
        raise bad(f"{where}/method/name", f"{relation} needs {side} bound ({HOCKEY_SIDE[relation]}), not {name}")
    if "grid" not in method or "orders" in method or "lattices" in method or "prune_floor_bits" in method:
        raise bad(f"{where}/method", f"{name} takes a grid (no orders, no lattices)")
    if "direction" not in mech.params:
        raise bad(f"{where}/mechanism/params", "an epsilon check of random-allocation names its direction")
    if "delta" not in raw:
        raise bad(f"{where}/delta", f"{name} proves epsilon at a delta: missing")
    if "k" in mech.params and mech.params["k"] < mech.params["steps"] and name != "hockey-upper":
        # the reduction to k = 1 bounds k-of-M allocation from above only: a lower end of the
        # reduced run proves no violation of the k-of-M run (k = M: the reduced run is the run)
        raise bad(
            f"{where}/method/name", f"{name} cannot prove epsilon of 1 < k={mech.params['k']} < M (upper ends only)"
        )
    delta = _in_range(f"{where}/delta", decimal(f"{where}/delta", raw["delta"]), Fraction(0), Fraction(1), True)
    if delta == 1:
        raise bad(f"{where}/delta", "1 must be < 1")
    _in_range(f"{where}/threshold", threshold, Fraction(0), L.MAX_HOCKEY_EPS, True)
    L.at_most(f"{where}/method/prec_bits", prec, L.MAX_LATTICE_PREC)
    side = "upper" if relation == "<=" else "lower"
    grid = _grid(f"{where}/method/grid", method["grid"], mech, prec, side)
    from certdp.notions.tv_certified import LatticeGrid

    grid_obj = LatticeGrid(**grid, prec=prec)
    m, e = mech.lattice_run()
    L.hockey_work(m, e, float(mech.params["sigma"]), grid_obj, side, threshold, f"{where}/method/grid")
    return Check(mech, "epsilon", relation, threshold, delta, name, prec, grid, None)


def _json_int(where: str, value: object, lo: int, hi: int) -> int:
    if type(value) is not int or not lo <= value <= hi:
        raise bad(where, f"{str(value)[:40]} must be a JSON integer in [{lo}, {hi}]")
    return value


def _pld_check(
    where: str, raw: dict[str, Any], mech: Mechanism, relation: str, threshold: Fraction, prec: int
) -> Check:
    """A pld-upper (claim ``<=``) or pld-lower (refutation ``>``) check of eps at delta: every
    lattice exact and within the limits; the claim lists every direction of the mechanism (the
    max over them must meet the threshold), a refutation at least one (one violating direction
    suffices)."""
    method, name = raw["method"], raw["method"]["name"]
    if PLD_SIDE[relation] != name:
        side = "an upper" if relation == "<=" else "a lower"
        raise bad(f"{where}/method/name", f"{relation} needs {side} bound ({PLD_SIDE[relation]}), not {name}")
    if "lattices" not in method or "prune_floor_bits" not in method or "orders" in method or "grid" in method:
        raise bad(f"{where}/method", f"{name} takes lattices and prune_floor_bits (no orders, no grid)")
    if raw.get("quantity") != "epsilon" or "delta" not in raw:
        raise bad(f"{where}/quantity", f"{name} proves epsilon at a delta")
    delta = _in_range(f"{where}/delta", decimal(f"{where}/delta", raw["delta"]), Fraction(0), Fraction(1), True)
    if delta == 1:
        raise bad(f"{where}/delta", "1 must be < 1")
    _in_range(f"{where}/threshold", threshold, Fraction(0), Fraction(10**6), True)
    L.at_most(f"{where}/method/prec_bits", prec, L.MAX_PLD_PREC)
    bits = _json_int(f"{where}/method/prune_floor_bits", method["prune_floor_bits"], L.MIN_PRUNE_BITS, L.MAX_PRUNE_BITS)
    L.at_most(f"{where}/mechanism/steps", mech.steps, L.MAX_PLD_STEPS)
    d = mech.params["direction"]
    directions = {"remove", "add"} if d == "both" else {d}
    given = set(method["lattices"])
    if (relation == "<=" and given != directions) or not given <= directions:
        need = "exactly" if relation == "<=" else "a subset of"
        raise bad(f"{where}/method/lattices", f"directions {sorted(given)} must be {need} {sorted(directions)}")
    lattices = {}
    for direction, lat in method["lattices"].items():
        at = f"{where}/method/lattices/{direction}"
        h = decimal(f"{at}/h", lat["h"])
        _power_of_two(f"{at}/h", h)
        if not L.MIN_PLD_H <= h <= L.MAX_PLD_H:
            raise bad(f"{at}/h", f"{h} must be in [{L.MIN_PLD_H}, {L.MAX_PLD_H}]")
        offset = decimal(f"{at}/offset", lat["offset"])
        if not 0 <= offset < h or (offset / h * 2**L.PLD_OFFSET_BITS).denominator != 1:
            raise bad(f"{at}/offset", f"{offset} must be a multiple of h 2^-{L.PLD_OFFSET_BITS} in [0, h)")
        lo = _json_int(f"{at}/lo", lat["lo"], -(2**40), 2**40)
        hi = _json_int(f"{at}/hi", lat["hi"], lo + 1, 2**40)
        split = _split_fields(at, lat, lo, hi)
        if split is None:
            L.at_most(f"{at} cells hi - lo", hi - lo, L.MAX_PLD_CELLS)
        lattices[direction] = (h, offset, lo, hi, *(split or ()))
    lower = method.get("lower")
    if lower is not None and relation != ">":
        raise bad(f"{where}/method/lower", f"{lower!r}: only a pld-lower check names its lower construction")
    if lower == "merged" and threshold > L.MAX_MERGED_THRESHOLD:
        # its units carry ceil(threshold / ln 2) + 2 extra bits; past 40 a refutation takes the balancing
        raise bad(f"{where}/method/lower", f"merged needs threshold <= {L.MAX_MERGED_THRESHOLD}, not {threshold}")
    if relation == ">":
        lower = lower or "balanced"
    coarsen = method.get("coarsen_powers", False)
    return Check(mech, "epsilon", relation, threshold, delta, name, prec, None, None, lattices, bits, lower, coarsen)


def _split_fields(at: str, lat: dict[str, Any], lo: int, hi: int) -> tuple[int, int, int] | None:
    """(bulk_lo, bulk_hi, stride) of a split lattice (all three fields or none), validated: the
    bulk inside [lo, hi], the stride dividing both tails, the cells (fine bulk cells plus coarse
    tail cells) within MAX_PLD_CELLS and the fine range within MAX_PLD_SPLIT_RANGE; None for a
    plain lattice."""
    given = [name for name in ("bulk_lo", "bulk_hi", "stride") if name in lat]
    if not given:
        return None
    if len(given) < 3:
        raise bad(f"{at}", f"a split lattice needs bulk_lo, bulk_hi and stride (given {', '.join(given)})")
    b_lo = _json_int(f"{at}/bulk_lo", lat["bulk_lo"], lo, hi - 1)
    b_hi = _json_int(f"{at}/bulk_hi", lat["bulk_hi"], b_lo + 1, hi)
    stride = _json_int(f"{at}/stride", lat["stride"], 1, L.MAX_PLD_SPLIT_RANGE)
    if (b_lo - lo) % stride or (hi - b_hi) % stride:
        raise bad(f"{at}/stride", f"{stride} must divide both tails ({b_lo - lo} and {hi - b_hi} cells)")
    L.at_most(f"{at} fine range hi - lo", hi - lo, L.MAX_PLD_SPLIT_RANGE)
    cells = (b_hi - b_lo) + (b_lo - lo) // stride + (hi - b_hi) // stride
    L.at_most(f"{at} cells (bulk plus coarse tail cells)", cells, L.MAX_PLD_CELLS)
    return b_lo, b_hi, stride


def claim_and_refutation(body: dict[str, Any]) -> tuple[Check, Check | None, Fraction]:
    """Validate the body's claim, refutation and step together.

    Contract: the claim is a ``<=`` check and the refutation (if any) a ``>`` check of the same
    mechanism (all parameters but sigma equal), quantity, threshold, delta and (RDP) orders, at
    sigma = claim sigma - step exactly, with MIN_STEP <= step <= MAX_STEP (1e-12 and 1/10, the range calibrate accepts).
    """
    if body["claim"]["relation"] != "<=":
        raise bad("body/claim/relation", f"{body['claim']['relation']} is a refutation's relation; a claim holds <=")
    claim = check("body/claim", body["claim"])
    step = decimal("body/step", body["step"])
    sigma = claim.mechanism.params["sigma"]
    if not L.MIN_STEP <= step <= L.MAX_STEP:
        raise bad("body/step", f"{step} must be in [{L.MIN_STEP}, {L.MAX_STEP}]")
    if body["refutation"] is None:
        return claim, None, step
    if body["refutation"]["relation"] != ">":
        raise bad("body/refutation/relation", f"{body['refutation']['relation']} cannot refute; a refutation holds >")
    ref = check("body/refutation", body["refutation"])
    if not ref.mechanism.same_except_sigma(claim.mechanism):
        raise bad("body/refutation/mechanism", "must be the claim's mechanism with the same parameters but sigma")
    if ref.mechanism.params["sigma"] != sigma - step:
        raise bad(
            "body/refutation/mechanism/params/sigma",
            f"{ref.mechanism.params['sigma']} must be the claim's sigma minus step = {sigma - step}",
        )
    for field in ("quantity", "threshold", "delta", "orders"):
        if getattr(ref, field) != getattr(claim, field):
            shown = str(getattr(ref, field))  # an order list can hold 128 entries: the line stays short
            shown = shown if len(shown) <= 80 else shown[:60] + " ... " + shown[-15:]
            raise bad(f"body/refutation/{field}", f"{shown} differs from the claim's")
    return claim, ref, step
