"""Building, signing and writing certificates (format v2)."""

from __future__ import annotations

import json
import time
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from certdp import __version__
from certdp.cert.crypto import atomic_write, digest_hex, sign_body
from certdp.cert.schema import FORMAT, validate
from certdp.enclose import FLINT_VERSION, PYTHON_FLINT_VERSION, Enclosure
from certdp.errors import InvalidArgument
from certdp.pairs.params import decimal_str


def exact_float(x: float) -> str:
    """The exact decimal expansion of a float (so that float(text) == x).

    Contract: float(result) == x exactly.
    """
    return format(Decimal(x), "f")


#: relative slack by which a recorded end is loosened outward (2^-30, about 1e-9): the calibrator's
#: end is the tightest its method proves (a PLD epsilon is the least point of a 2^-40 grid with
#: delta_upper <= delta), so an auditor's certdp whose enclosure code differs in the last bits
#: (precision policy, series truncation) could no longer prove it; the loosened end stays proved
#: (every bound is monotone in the end) and leaves that margin
RECORD_SLACK = Fraction(1, 2**30)


def _loosened(enc: Enclosure, relation: str, threshold: Fraction | None) -> Enclosure:
    """``enc`` with its proved end moved outward by RECORD_SLACK relative, unless that would cross
    the threshold (then the end is kept exactly)."""
    up, low = enc.upper, enc.lower
    if relation == "<=":
        moved = up + abs(up) * RECORD_SLACK
        if threshold is None or moved <= threshold:
            up = moved
    else:
        moved = low - abs(low) * RECORD_SLACK
        if threshold is None or moved > threshold:
            low = moved
    return Enclosure.from_bounds(low, up, enc.prec_bits)


def result_record(
    enc: Enclosure,
    relation: str,
    seconds: float | None = None,
    other_end: bool = False,
    threshold: Fraction | None = None,
) -> dict[str, Any]:
    """The ``result`` of a check: only the end the verifier proves (format v2, docs/certificates.md).

    Contract: for ``<=`` an upper end >= enc.upper (``upper`` rounded up and ``upper_dyadic``
    exact), for ``>`` a lower end <= enc.lower (``lower`` rounded down, ``lower_dyadic``): the
    end of ``enc`` loosened by RECORD_SLACK relative when that keeps it on its side of
    ``threshold``, else exactly; with ``other_end`` the other end as ``lower_unverified`` /
    ``upper_unverified`` (informative: the verifier does not check it); ``seconds`` informative.
    """
    d = enc.to_dict()
    side, other = ("upper", "lower") if relation == "<=" else ("lower", "upper")
    proved = _loosened(enc, relation, threshold).to_dict()
    out: dict[str, Any] = {side: proved[side], f"{side}_dyadic": proved[f"{side}_dyadic"]}
    if other_end:
        out[f"{other}_unverified"] = d[other]
    if seconds is not None:
        out["seconds"] = round(seconds, 3)
    return out


def tv_check(
    steps: int,
    epochs: int,
    sigma: Fraction,
    relation: str,
    threshold: Fraction,
    grid: Any,
    enc: Enclosure,
    seconds: float | None,
) -> dict[str, Any]:
    """Contract: a check that the verifier recomputes with tv_bound on ``grid``."""
    return {
        "mechanism": {
            "name": "random-allocation",
            "params": {"steps": str(steps), "epochs": str(epochs), "sigma": decimal_str(sigma, "sigma")},
        },
        "quantity": "tv",
        "relation": relation,
        "threshold": decimal_str(threshold, "threshold"),
        "method": {
            "name": "lattice-upper" if relation == "<=" else "lattice-lower",
            "prec_bits": grid.prec,
            "grid": {k: exact_float(v) for k, v in grid.to_dict().items() if k != "prec"},
        },
        # the ball's other end bounds the lattice bound, not tv: never recorded
        "result": result_record(enc, relation, seconds, threshold=threshold),
    }


def hockey_check(
    steps: int,
    epochs: int,
    sigma: Fraction,
    direction: str,
    delta: Fraction,
    relation: str,
    threshold: Fraction,
    grid: Any,
    end: Fraction,
    seconds: float | None = None,
    k: int = 1,
) -> dict[str, Any]:
    """An epsilon check of random allocation that the verifier recomputes on ``grid``: hockey-upper
    for ``<=`` (delta_upper(end) <= delta in every direction), hockey-lower for ``>``
    (delta_lower(end) > delta in one direction), on the lattice of
    certdp.notions.allocation_dp.certificate_lattice.

    Contract: the check records ``end`` exactly as its proved end (no further loosening: the
    calibrator's certdp.calibrate.random_allocation_dp.certificate_ends already loosened it and
    proved the loosened end on that very lattice). ``k`` > 1 (hockey-upper only): the record is
    used in k of the M steps per epoch, and ``grid`` is a grid of the reduction's k = 1 run of
    floor(M/k) steps and k E epochs, which the verifier rebuilds (docs/math.md §9.8, "k > 1");
    k = M may be hockey-lower too (the reduced run is the run, "k = M").
    """
    side = "upper" if relation == "<=" else "lower"
    if 1 < k < steps and side != "upper":
        raise InvalidArgument(f"k={k}: a check with 1 < k < M can only be a claim (the reduction bounds from above)")
    params = {"steps": str(steps), "epochs": str(epochs)} | ({"k": str(k)} if k != 1 else {})
    enc = Enclosure.from_bounds(end, end, grid.prec).to_dict()
    result: dict[str, Any] = {side: enc[side], f"{side}_dyadic": enc[f"{side}_dyadic"]}
    if seconds is not None:
        result["seconds"] = round(seconds, 3)
    return {
        "mechanism": {
            "name": "random-allocation",
            "params": params | {"sigma": decimal_str(sigma, "sigma"), "direction": direction},
        },
        "quantity": "epsilon",
        "relation": relation,
        "threshold": decimal_str(threshold, "threshold"),
        "delta": decimal_str(delta, "delta"),
        "method": {
            "name": f"hockey-{side}",
            "prec_bits": grid.prec,
            "grid": {k: exact_float(v) for k, v in grid.to_dict().items() if k != "prec"},
        },
        "result": result,
    }


def _sg_eps_check(
    q: Fraction,
    sigma: Fraction,
    direction: str,
    steps: int,
    delta: Fraction,
    relation: str,
    threshold: Fraction,
    method: dict[str, Any],
    enc: Enclosure,
    other_end: bool = True,
) -> dict[str, Any]:
    """An epsilon check of the composed subsampled Gaussian proved by ``method``."""
    return {
        "mechanism": {
            "name": "subsampled-gaussian",
            "steps": steps,
            "params": {"q": decimal_str(q, "q"), "sigma": decimal_str(sigma, "sigma"), "direction": direction},
        },
        "quantity": "epsilon",
        "relation": relation,
        "threshold": decimal_str(threshold, "threshold"),
        "delta": decimal_str(delta, "delta"),
        "method": method,
        "result": result_record(enc, relation, other_end=other_end, threshold=threshold),
    }


def eps_check(
    q: Fraction,
    sigma: Fraction,
    direction: str,
    steps: int,
    delta: Fraction,
    relation: str,
    threshold: Fraction,
    orders: list[int],
    enc: Enclosure,
) -> dict[str, Any]:
    """Contract: a check that the verifier recomputes with epsilon over ``orders``."""
    method = {"name": "rdp-orders", "prec_bits": enc.prec_bits, "orders": orders}
    # the other end of the RDP-conversion enclosure is no bound on epsilon: never recorded
    return _sg_eps_check(q, sigma, direction, steps, delta, relation, threshold, method, enc, False)


def pld_check(
    q: Fraction,
    sigma: Fraction,
    direction: str,
    steps: int,
    delta: Fraction,
    relation: str,
    threshold: Fraction,
    lattices: dict[str, dict[str, Any]],
    prec_bits: int,
    prune_bits: int,
    enc: Enclosure,
    other_end: bool = True,
    lower: str | None = None,
    coarsen_powers: bool = False,
) -> dict[str, Any]:
    """Contract: a check that the verifier recomputes with the PLD lattice bounds on ``lattices``
    (per direction: h, offset as exact decimals, lo and hi as integers, and bulk_lo, bulk_hi and
    stride for a split lattice): pld-upper for ``<=``,
    pld-lower for ``>``, by the ``lower`` construction ("merged" or "balanced"; None: not recorded,
    the balancing); ``coarsen_powers``: the powers were coarsened as they spread (recorded when
    True); ``other_end``: record enc's other end as ``*_unverified``."""
    method = {
        "name": "pld-upper" if relation == "<=" else "pld-lower",
        "prec_bits": prec_bits,
        "prune_floor_bits": prune_bits,
        "lattices": {
            d: {
                "h": decimal_str(v["h"], "h"),
                "offset": decimal_str(v["offset"], "offset"),
                "lo": v["lo"],
                "hi": v["hi"],
                # a split lattice's bulk and tail stride (certdp.notions.pld_split)
                **{k: v[k] for k in ("bulk_lo", "bulk_hi", "stride") if k in v},
            }
            for d, v in lattices.items()
        },
        **({"lower": lower} if lower is not None and relation == ">" else {}),
        **({"coarsen_powers": True} if coarsen_powers else {}),
    }
    return _sg_eps_check(q, sigma, direction, steps, delta, relation, threshold, method, enc, other_end)


def make_body(
    step: Fraction,
    claim: dict[str, Any],
    refutation: dict[str, Any] | None,
    reason: str | None,
    notes: str | None = None,
) -> dict[str, Any]:
    """Contract: the body of format v1 with the running versions and the UTC time."""
    body: dict[str, Any] = {
        "certdp_version": __version__,
        "python_flint_version": str(PYTHON_FLINT_VERSION),
        "flint_version": str(FLINT_VERSION),
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "step": decimal_str(step, "step"),
        "claim": claim,
        "refutation": refutation,
    }
    if refutation is None and reason:
        body["refutation_missing_reason"] = reason
    if notes:
        body["notes"] = notes
    return body


def finalize(body: dict[str, Any], key: Ed25519PrivateKey | None = None) -> dict[str, Any]:
    """The full certificate: body, its SHA-256 digest and (if a key is given) its Ed25519 signature.

    Contract: a schema-valid certificate whose digest (and signature) cover the body.
    """
    doc = {
        "format": FORMAT,
        "body": body,
        "digest": {"alg": "sha256", "value": digest_hex(body)},
        "signature": None if key is None else sign_body(body, key),
    }
    validate(doc)
    return doc


def write(path: Path, doc: dict[str, Any]) -> None:
    """Write a certificate atomically (temporary file, then rename).

    Contract: atomic (crypto.atomic_write).
    """
    atomic_write(path, (json.dumps(doc, indent=2) + "\n").encode())
