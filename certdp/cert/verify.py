"""The certificate verifier: small on purpose (imports the core, the pairs and notions a claim
names, and the schema; never calibration, search heuristics or adapters).

verify_document(doc) checks, in order: the schema, the digest of the canonical body, the
signature (and the pinned public key, if given), then RECOMPUTES every check (claim and
refutation) from its recorded mechanism, method, grid or orders and precision, with the
enclosure code, and checks that the recomputed enclosure proves it. Recorded numbers are never
reused; they must merely be consistent with the recomputation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from certdp.cert.crypto import check_signature, digest_hex
from certdp.cert.schema import validate
from certdp.enclose import Enclosure, Target
from certdp.errors import CertdpError, CertificateInvalid


@dataclass(frozen=True)
class VerifyReport:
    """``status`` is "valid"; ``signed_by`` is the signer's public key (None when unsigned)."""

    status: str
    signed_by: str | None
    checks: list[dict[str, str]]


def _recompute(check: dict[str, Any]) -> Enclosure:
    """Enclosure of the checked quantity, recomputed from the recorded method only."""
    mech, method = check["mechanism"], check["method"]
    params = mech["params"]
    if method["name"] in ("lattice-upper", "lattice-lower"):
        from certdp.notions.tv_certified import LatticeGrid, tv_bound
        from certdp.pairs import RandomAllocation

        if mech["name"] != "random-allocation" or "grid" not in method:
            raise CertificateInvalid(f"field method/name: {method['name']} needs random-allocation and a grid")
        fields = {k: float(v) for k, v in method["grid"].items() if k != "scheme"}
        scheme = int(method["grid"].get("scheme", "1"))
        grid = LatticeGrid(**fields, prec=method["prec_bits"], scheme=scheme)
        pair = RandomAllocation(params["steps"], params["sigma"], params["epochs"])
        return tv_bound(pair, grid, "upper" if method["name"] == "lattice-upper" else "lower").bound
    from certdp.notions import epsilon
    from certdp.pairs import SubsampledGaussian, compose

    if mech["name"] != "subsampled-gaussian" or "orders" not in method or "delta" not in check:
        raise CertificateInvalid("field method/name: rdp-orders needs subsampled-gaussian, orders and delta")
    pair = compose(SubsampledGaussian(params["q"], params["sigma"], params["direction"]), mech.get("steps", 1))
    target = Target(
        rel_tol=1e-12, abs_tol=1e-30, start_prec=method["prec_bits"], max_prec=max(4096, method["prec_bits"])
    )
    return epsilon(pair, check["delta"], orders=method["orders"], target=target).enclosure


def _check(name: str, check: dict[str, Any]) -> dict[str, str]:
    try:
        enc = _recompute(check)
    except CertificateInvalid:
        raise
    except CertdpError as exc:
        raise CertificateInvalid(f"field body/{name}: recomputation failed: {exc}") from None
    threshold = Fraction(check["threshold"])
    if check["relation"] == "<=":
        holds, shown = enc.upper <= threshold, enc.upper_str()
    else:
        holds, shown = enc.lower > threshold, enc.lower_str()
    if not holds:
        raise CertificateInvalid(
            f"field body/{name}/threshold: refuted: recomputed {check['quantity']} bound {shown} "
            f"does not prove {check['relation']} {check['threshold']}"
        )
    rec = check["result"]
    if enc.upper < Fraction(rec["lower"]) or enc.lower > Fraction(rec["upper"]):
        raise CertificateInvalid(f"field body/{name}/result: recorded bounds disagree with the recomputation {enc}")
    return {
        "check": name,
        "quantity": check["quantity"],
        "relation": check["relation"],
        "threshold": check["threshold"],
        "recomputed": shown,
    }


def check_integrity(doc: Any, pubkey_b64: str | None = None) -> str | None:
    """Schema, digest and signature only (no recomputation); returns the signer's key or None.
    Raises CertificateInvalid naming the first failing field.

    Contract: schema, digest and signature hold; no recomputation.
    """
    validate(doc)
    body = doc["body"]
    if digest_hex(body) != doc["digest"]["value"]:
        raise CertificateInvalid("field digest/value: does not match the canonical body (tampered?)")
    sig = doc["signature"]
    if sig is None:
        if pubkey_b64 is not None:
            raise CertificateInvalid("field signature: the certificate is unsigned but --pubkey was given")
    else:
        check_signature(body, sig)
        if pubkey_b64 is not None and sig["public_key"] != pubkey_b64:
            raise CertificateInvalid("field signature/public_key: signed by a different key than --pubkey")
    return None if sig is None else sig["public_key"]


def verify_document(doc: Any, pubkey_b64: str | None = None) -> VerifyReport:
    """Verify a parsed certificate. Contract: returns only if the integrity checks pass and every
    recomputed check proves its claim; otherwise raises CertificateInvalid naming the first
    failing field."""
    signer = check_integrity(doc, pubkey_b64)
    body = doc["body"]
    checks = [_check("claim", body["claim"])]
    if body["refutation"] is not None:
        checks.append(_check("refutation", body["refutation"]))
    return VerifyReport("valid", signer, checks)


def verify_bytes(data: bytes, pubkey_b64: str | None = None) -> VerifyReport:
    """Parse and verify; malformed JSON is CertificateInvalid, never a traceback.

    Contract: as verify_document; bytes that are not JSON are CertificateInvalid.
    """
    try:
        doc = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CertificateInvalid(f"field (document): not valid JSON ({exc.__class__.__name__})") from None
    return verify_document(doc, pubkey_b64)
