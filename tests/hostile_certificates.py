"""Builds hostile certificates: files anyone can write without the signing key (issue 12).

``build(directory)`` writes two valid base certificates (random allocation M = 3, E = 1 and a
DP-SGD epsilon calibration, both with real recomputed bounds) and more than 40 hostile files
derived from them, and returns ``[(name, path, expected exit codes, defect)]``. Each hostile file
targets one defect found by review: a bound of the wrong side, a refutation that does not fit
the claim, duplicate keys, work limits, malformed values, and the lattice-grid holes. Files
that keep a valid digest are re-digested (unsigned) so that the verifier gets past the
integrity checks to the check under test; a few are re-signed with a throwaway key.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from certdp.cert.schema import FORMAT
from certdp.cert.write import eps_check, finalize, make_body, tv_check
from certdp.enclose import Enclosure
from certdp.notions import conversion_epsilon as epsilon
from certdp.notions.tv_certified import LatticeGrid, tv_bound
from certdp.pairs import RandomAllocation, SubsampledGaussian, compose

# a scheme-3 grid (as auto_grid chooses at slack 1e-4): TV(sigma = 1) <= 0.25397 < 0.25685 <= TV(0.99)
RA_GRID = LatticeGrid(
    h=2**-7, cap=36.765625, l_min=2**-8, l_max=13.0, eta=2**-11, scheme=3, tail_k=0.0372, coarsen=0.25
)
RA_SIGMA, RA_STEP = Fraction(1), Fraction(1, 100)
SG_SIGMA, SG_STEP, SG_DELTA = Fraction(1), Fraction(1, 100), Fraction(1, 10**5)
SG_ORDERS = list(range(2, 33))

Edit = Callable[[dict[str, Any]], None]


def _tv(sigma: Fraction, side: str, grid: LatticeGrid = RA_GRID) -> Enclosure:
    return tv_bound(RandomAllocation(3, sigma, 1), grid, side).bound


def _eps(sigma: Fraction) -> Enclosure:
    pair = compose(SubsampledGaussian(Fraction(1, 100), sigma, "both"), 10)
    return epsilon(pair, SG_DELTA, orders=SG_ORDERS).enclosure


def ra_body() -> dict[str, Any]:
    """A true claim TV <= lambda at sigma = 1/2 and a true refutation TV > lambda one step below."""
    up = _tv(RA_SIGMA, "upper")
    low = _tv(RA_SIGMA - RA_STEP, "lower")
    assert low.lower > up.upper, "the base grid is too coarse to separate claim and refutation"
    threshold = Fraction(round(float(up.upper + low.lower) / 2, 6)).limit_denominator(10**6)
    claim = tv_check(3, 1, RA_SIGMA, "<=", threshold, RA_GRID, up, 0.1)
    refutation = tv_check(3, 1, RA_SIGMA - RA_STEP, ">", threshold, RA_GRID, low, 0.1)
    return make_body(RA_STEP, claim, refutation, None)


def sg_body() -> dict[str, Any]:
    """A true claim epsilon <= e at sigma = 1 and a true refutation epsilon > e one step below."""
    up, low = _eps(SG_SIGMA), _eps(SG_SIGMA - SG_STEP)
    assert low.lower > up.upper
    threshold = Fraction(round(float(up.upper + low.lower) / 2, 6)).limit_denominator(10**6)
    claim = eps_check(Fraction(1, 100), SG_SIGMA, "both", 10, SG_DELTA, "<=", threshold, SG_ORDERS, up)
    refutation = eps_check(Fraction(1, 100), SG_SIGMA - SG_STEP, "both", 10, SG_DELTA, ">", threshold, SG_ORDERS, low)
    return make_body(SG_STEP, claim, refutation, None)


def _body_edit(base: dict[str, Any], edit: Edit) -> bytes:
    body = copy.deepcopy(base)
    edit(body)
    return (json.dumps(finalize_unchecked(body), indent=1) + "\n").encode()


def finalize_unchecked(body: dict[str, Any]) -> dict[str, Any]:
    """finalize() without the schema check: hostile bodies need not follow the schema."""
    from certdp.cert.crypto import digest_hex

    try:
        digest = digest_hex(body)
    except ValueError:  # not canonicalizable (2^60, a lone surrogate): any digest will do
        digest = "0" * 64
    return {
        "format": FORMAT,
        "body": body,
        "digest": {"alg": "sha256", "value": digest},
        "signature": None,
    }


def _set(path: str, value: object) -> Edit:
    def edit(body: dict[str, Any]) -> None:
        *head, last = path.split("/")
        node: Any = body
        for key in head:
            node = node[key]
        node[last] = value

    return edit


def _seq(*edits: Edit) -> Edit:
    def edit(body: dict[str, Any]) -> None:
        for e in edits:
            e(body)

    return edit


def _forged_tv(sigma: Fraction, relation: str, threshold: Fraction, side: str, grid: LatticeGrid) -> Edit:
    """Replace the claim by a FALSE tv claim 'proved' with the bound of ``side``."""

    def edit(body: dict[str, Any]) -> None:
        enc = _tv(sigma, side, grid)
        check = tv_check(3, 1, sigma, relation, threshold, grid, enc, 0.1)
        check["method"]["name"] = "lattice-upper" if side == "upper" else "lattice-lower"
        body["claim"] = check
        body["refutation"] = None

    return edit


def _dup_key_text(doc_text: str, anchor: str, extra: str) -> bytes:
    """Insert a second copy of a key right after ``anchor`` (text level: json.dumps cannot)."""
    assert anchor in doc_text
    return doc_text.replace(anchor, anchor + extra, 1).encode()


def build(directory: Path) -> list[tuple[str, Path, tuple[int, ...], str]]:
    """Write the base and hostile files; returns (name, path, allowed exit codes, defect id)."""
    directory.mkdir(parents=True, exist_ok=True)
    ra, sg = ra_body(), sg_body()
    files: list[tuple[str, bytes, tuple[int, ...], str]] = [
        ("base_ra", (json.dumps(finalize(ra)) + "\n").encode(), (0,), "base"),
        ("base_sg", (json.dumps(finalize(sg)) + "\n").encode(), (0,), "base"),
    ]
    cap_grid = LatticeGrid.__new__(LatticeGrid)  # bypass validation: an attacker writes any numbers
    for k, v in {"h": 1.0, "cap": 2.51, "l_min": 1 / 16, "l_max": 4.0, "eta": 1 / 256, "prec": 128}.items():
        object.__setattr__(cap_grid, k, v)
    for k, v in {"scheme": 3, "tail_k": 0.0, "coarsen": 0.0}.items():
        object.__setattr__(cap_grid, k, v)

    def forged_cap(body: dict[str, Any]) -> None:
        # defect 7: a claim TV <= 0.53 at M = 3, E = 1, sigma = 1/2 (true TV 0.5495) on cap = 2.51, h = 1
        enc = Enclosure.from_bounds(Fraction(1, 2), Fraction(33, 64), 128)
        body["claim"] = tv_check(3, 1, Fraction(1, 2), "<=", Fraction(53, 100), cap_grid, enc, 0.1)
        body["refutation"] = None

    ra_edits: list[tuple[str, Edit, tuple[int, ...], str]] = [
        # 1: the side of the bound must fit the relation, the method the quantity
        ("lower_bound_proves_le", _forged_tv(Fraction(3, 10), "<=", Fraction(1, 1000), "lower", RA_GRID), (2,), "1"),
        ("upper_bound_proves_gt", _seq(_set("refutation/method/name", "lattice-upper")), (2,), "1"),
        (
            "tv_through_rdp_orders",
            _set("claim/method", {"name": "rdp-orders", "prec_bits": 64, "orders": [2, 3]}),
            (2,),
            "1",
        ),
        ("tv_with_orders_and_grid", _set("claim/method/orders", [2, 3]), (2,), "1"),
        ("tv_with_delta", _set("claim/delta", "0.00001"), (2,), "1"),
        # 2: claim, refutation and step must fit together
        ("refutation_far_below", _set("refutation/mechanism/params/sigma", "0.3"), (2,), "2"),
        ("refutation_above_claim", _set("refutation/mechanism/params/sigma", "0.505"), (2,), "2"),
        ("step_zero", _set("step", "0"), (2,), "2"),
        ("step_negative", _set("step", "-0.005"), (2,), "2"),
        ("step_huge", _set("step", "0.5"), (2,), "2"),
        ("refutation_other_epochs", _set("refutation/mechanism/params/epochs", "2"), (2,), "2"),
        ("refutation_other_threshold", _set("refutation/threshold", "0.01"), (2,), "2"),
        ("refutation_other_mechanism", _set("refutation/mechanism/params/steps", "4"), (2,), "2"),
        ("claim_slot_holds_refutation", _set("claim/relation", ">"), (2,), "2"),
        ("refutation_holds_le", _set("refutation/relation", "<="), (2,), "2"),
        # 5: work limits (refused before computing)
        ("steps_huge", _seq(_set("claim/mechanism/params/steps", "1000000"), _set("refutation", None)), (2,), "5"),
        ("epochs_huge", _seq(_set("claim/mechanism/params/epochs", "100000"), _set("refutation", None)), (2,), "5"),
        ("prec_huge", _set("claim/method/prec_bits", 65536), (2,), "5"),
        # review round 2: 2^24 step points (scheme 3, small sigma) took 3.8 GB; 256 bits doubled memory
        ("step_points_huge", _set("claim/method/grid/cap", "32768"), (2,), "5"),
        ("lattice_prec_256", _set("claim/method/prec_bits", 256), (2,), "5"),
        # review round 2: a scheme-3 grid whose fine part spans the whole sum (3.89M) took 2.08 GB
        (
            "scheme3_product_limit",
            _seq(
                _set(
                    "claim/method/grid",
                    {
                        "h": "0.0009765625",
                        "cap": "2000",
                        "l_min": "0.5",
                        "l_max": "190",
                        "eta": "0.0009765625",
                        "scheme": "3",
                        "tail_k": "64",
                        "coarsen": "0",
                    },
                ),
                _set("claim/mechanism/params/steps", "10"),
                _set("claim/mechanism/params/sigma", "0.342"),
                _set("refutation", None),
            ),
            (2,),
            "5",
        ),
        # review round 3: at small sigma every partial sum is as long as the lattice (M = 7,
        # sigma = 0.4027, h = 2^-9): within every other limit, verify took 210 s and 2.29 GB (its
        # products 2.2M and 3.3M long); the memory estimate refuses both grids
        (
            "small_sigma_full_length_products",
            _seq(
                _set(
                    "claim/method/grid",
                    {
                        "h": "0.001953125",
                        "cap": "2284.23828125",
                        "l_min": "0.00390625",
                        "l_max": "456.847335482462540312553755939006805419921875",
                        "eta": "0.00006103515625",
                        "scheme": "3",
                        "tail_k": "0.0302000000000000011490808304870370193384587764739990234375",
                        "coarsen": "0.25",
                    },
                ),
                _set(
                    "refutation/method/grid",
                    {
                        "h": "0.001953125",
                        "cap": "2284.2734375",
                        "l_min": "0.00390625",
                        "l_max": "456.8543301356911570110241882503032684326171875",
                        "eta": "0.0001220703125",
                        "scheme": "3",
                        "tail_k": "0.0276999999999999989286347812367239384911954402923583984375",
                        "coarsen": "0.25",
                    },
                ),
                _set("claim/mechanism/params", {"steps": "7", "epochs": "10", "sigma": "0.402708"}),
                _set("refutation/mechanism/params", {"steps": "7", "epochs": "10", "sigma": "0.392708"}),
                _set("claim/threshold", "0.99999"),
                _set("refutation/threshold", "0.99999"),
            ),
            (2,),
            "5",
        ),
        # review round 2: a scheme-2 grid at a 4.1M-coefficient product took 3.1 GB
        (
            "scheme2_full_length_products",
            _seq(
                _set(
                    "claim/method/grid",
                    {
                        "h": "0.0009765625",
                        "cap": "2000",
                        "l_min": "0.5",
                        "l_max": "200",
                        "eta": "0.0009765625",
                        "scheme": "2",
                        "tail_k": "0.0009765625",
                    },
                ),
                _set("claim/mechanism/params/steps", "10"),
                _set("refutation", None),
            ),
            (2,),
            "5",
        ),
        (
            "cap_many_cells",
            _set(
                "claim/method/grid",
                {"h": "0.0078125", "cap": "4096", "l_min": "0.00390625", "l_max": "13", "eta": "0.00048828125"},
            ),
            (2,),
            "5",
        ),
        (
            "h_tiny",
            _set("claim/method/grid/h", "0.0000000000000000000000000000000000000000000000000000000000001"),
            (1, 2),
            "5",
        ),
        ("eta_tiny", _set("claim/method/grid/eta", "0.00000095367431640625"), (2,), "5"),
        ("l_max_many_points", _set("claim/method/grid/l_max", "100000"), (2,), "5"),
        ("threshold_exponent", _set("claim/threshold", "1e-999"), (2,), "5"),
        ("decimal_too_long", _set("claim/threshold", "0." + "1" * 5000), (2,), "5"),
        # 6: malformed values never give a traceback
        ("empty_params", _set("claim/mechanism/params", {}), (2,), "6"),
        ("l_max_1e999", _set("claim/method/grid/l_max", "1e999"), (1, 2), "6"),
        ("seconds_2_60", _set("claim/result/seconds", 2**60), (2,), "6"),
        ("sigma_negative", _set("claim/mechanism/params/sigma", "-1"), (2,), "6"),
        # review: sigma this small overflowed a float in the scheme-3 work estimate (a traceback)
        (
            "sigma_tiny_scheme3",
            _seq(_set("claim/mechanism/params/sigma", "0.001"), _set("refutation", None)),
            (1,),
            "6",
        ),
        ("steps_not_integer", _set("claim/mechanism/params/steps", "2.5"), (2,), "6"),
        ("direction_in_ra", _set("claim/mechanism/params/direction", "both"), (2,), "6"),
        ("surrogate_in_notes", _set("notes", "\ud800"), (2,), "6"),
        # 7 and 9: grids the lattice construction cannot use
        ("forged_cap_not_multiple_of_h", forged_cap, (2,), "7"),
        ("cap_off_lattice", _set("claim/method/grid/cap", "36.7657"), (2,), "7"),
        ("h_not_power_of_two", _set("claim/method/grid/h", "0.015"), (2,), "7"),
        ("l_min_not_binary64", _set("claim/method/grid/l_min", "0.1"), (2,), "7"),
        ("l_min_above_one", _set("claim/method/grid/l_min", "2"), (2,), "7"),
        ("scheme1_with_tail_k", _set("claim/method/grid/scheme", "1"), (2,), "7"),
        (
            "empty_atom_list",
            _seq(
                _set("claim/mechanism/params/steps", "20"),
                _set(
                    "claim/method/grid",
                    {"h": "0.0625", "cap": "0.0625", "l_min": "0.25", "l_max": "4", "eta": "0.00390625"},
                ),
                _set("refutation", None),
            ),
            (1,),
            "9",
        ),
    ]
    sg_edits: list[tuple[str, Edit, tuple[int, ...], str]] = [
        (
            "eps_through_lattice",
            _set("claim/method", {"name": "lattice-upper", "prec_bits": 64, "grid": ra["claim"]["method"]["grid"]}),
            (2,),
            "1",
        ),
        ("eps_without_delta", lambda b: b["claim"].pop("delta"), (2,), "1"),
        ("refutation_other_orders", _set("refutation/method/orders", [2, 3]), (2,), "2"),
        ("refutation_other_delta", _set("refutation/delta", "0.001"), (2,), "2"),
        ("refutation_other_q", _set("refutation/mechanism/params/q", "0.02"), (2,), "2"),
        ("refutation_other_compositions", _set("refutation/mechanism/steps", 11), (2,), "2"),
        ("orders_many", _set("claim/method/orders", list(range(2, 300))), (2,), "5"),
        ("order_huge", _set("claim/method/orders", [2, 10**6]), (2,), "5"),
        ("orders_repeated", _set("claim/method/orders", [2, 2, 3]), (2,), "5"),
        ("rdp_prec_huge", _set("claim/method/prec_bits", 60000), (2,), "5"),
        (
            # review round 3: 128 orders at 1024 bits took 154 s (the cost is per order and bit)
            "orders_many_at_high_precision",
            lambda b: b["claim"]["method"].update(orders=list(range(64, 192)), prec_bits=1024),
            (2,),
            "5",
        ),
        ("compositions_huge", _set("claim/mechanism/steps", 2**52), (2,), "5"),
        ("q_above_one", _set("claim/mechanism/params/q", "1.5"), (2,), "6"),
        ("newline_after_decimal", _set("claim/threshold", sg["claim"]["threshold"] + "\n"), (2,), "6"),
        ("float_orders", _set("claim/method/orders", [float(a) for a in SG_ORDERS]), (2,), "6"),
        ("delta_one", _set("claim/delta", "1"), (2,), "6"),
    ]
    for name, edit, codes, defect in ra_edits:
        files.append((name, _body_edit(ra, edit), codes, defect))
    for name, edit, codes, defect in sg_edits:
        files.append((name, _body_edit(sg, edit), codes, defect))

    # 3: duplicate keys anywhere (text level); the first copy is the valid one
    text = json.dumps(finalize(ra), indent=1)
    files.append(("duplicate_claim_key", _dup_key_text(text, '"body": {', '\n  "step": "0.3",'), (2,), "3"))
    files.append(("duplicate_sigma", _dup_key_text(text, '"params": {', '\n     "sigma": "5",'), (2,), "3"))
    key = Ed25519PrivateKey.generate()
    signed = json.dumps(finalize(ra, key), indent=1)
    files.append(("duplicate_signature_key", _dup_key_text(signed, '"signature": {', '\n  "alg": "none",'), (2,), "3"))
    files.append(("duplicate_top_level", _dup_key_text(text, "{", '"format": "x",'), (2,), "3"))
    # 5 and 6: size, depth and bytes
    files.append(("too_large", text.encode() + b" " * (1 << 20), (2,), "5"))
    files.append(("nested_brackets", b"[" * 100_000 + b"]" * 100_000, (2,), "6"))
    files.append(
        (
            "nested_in_notes",
            text.replace('"step"', '"notes": ' + "[" * 50 + "]" * 50 + ', "step"', 1).encode(),
            (1, 2),
            "6",
        )
    )
    files.append(("binary", bytes(range(256)) * 8, (2,), "6"))
    # review: an unterminated string of escaped quotes made a regex pre-scan quadratic (hours at 1 MiB)
    files.append(("unterminated_escaped_quotes", b'"' + b'\\"' * 500_000, (2,), "5"))
    files.append(("nan_seconds", text.replace('"seconds": 0.1', '"seconds": NaN', 1).encode(), (2,), "6"))
    files.append(("infinity_seconds", text.replace('"seconds": 0.1', '"seconds": 1e400', 1).encode(), (2,), "6"))
    files.append(("int_5000_digits", text.replace('"seconds": 0.1', '"seconds": ' + "9" * 5000, 1).encode(), (2,), "6"))
    files.append(("empty", b"", (2,), "6"))
    files.append(("not_an_object", b"[1, 2, 3]", (2,), "6"))

    out = []
    for name, data, codes, defect in files:
        path = directory / f"{name}.json"
        path.write_bytes(data)
        out.append((name, path, codes, defect))
    return out
