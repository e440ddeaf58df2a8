"""The certificate verifier: small on purpose (imports the core, the pairs and notions a claim
names through certdp.cert.recompute, and the schema; never calibration, search or adapters).

verify_document(doc) checks the schema, the digest of the canonical body and the signature, reads
every check exactly within the work limits (certdp.cert.checks, certdp.cert.limits), then
RECOMPUTES every check and proves the one number format v2 records per check, the end that decides
its relation (certdp.cert.recompute.prove_end); the report lists the numbers rechecked and the
informative ones not. Files are parsed strictly (certdp.cert.strict_json)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from certdp.cert.checks import Check, claim_and_refutation, decimal, describe, dyadic
from certdp.cert.crypto import check_signature, digest_hex
from certdp.cert.meaning import means
from certdp.cert.recompute import prove_end
from certdp.cert.schema import validate
from certdp.cert.strict_json import loads_strict
from certdp.errors import (
    BudgetExhausted,
    CertdpError,
    CertificateInvalid,
    CertificateMalformed,
    InvalidArgument,
    LimitExceeded,
    PrecisionExhausted,
    Undecided,
)
from certdp.pairs.params import exact_str


@dataclass(frozen=True)
class VerifyReport:
    """``status`` is "valid"; ``signed_by`` is the signer's public key (None when unsigned);
    ``signer_trusted`` is True only when the signature was checked against a pinned key."""

    status: str
    signed_by: str | None
    signer_trusted: bool
    checks: list[dict[str, Any]]


def _check(name: str, check: Check, raw: dict[str, Any]) -> dict[str, Any]:
    """Prove the one end the check records (format v2) and that it decides the relation."""
    rec, where = raw["result"], f"body/{name}/result"
    side = "upper" if check.relation == "<=" else "lower"
    shown = decimal(f"{where}/{side}", rec[side])
    end = dyadic(f"{where}/{side}_dyadic", rec[f"{side}_dyadic"])
    unverified = sorted(k for k in rec if k not in (side, f"{side}_dyadic"))
    for key in unverified:
        if key.endswith("_unverified"):
            decimal(f"{where}/{key}", rec[key])  # read (a decimal within the limits), never trusted
    # the decimal is the dyadic end rounded outward: both recorded numbers are proved, or neither
    if (side == "upper" and shown < end) or (side == "lower" and shown > end):
        raise CertificateInvalid(
            f"field {where}/{side}: {rec[side]} is not {side}_dyadic rounded outward ({exact_str(end)})"
        )
    if end < 0:  # tv and epsilon are >= 0: a negative end is no number certdp writes
        raise CertificateMalformed(f"field {where}/{side}_dyadic: {exact_str(end)} must be >= 0")
    threshold = exact_str(check.threshold)
    # the decimal decides the relation, hence so does its dyadic end (rounded outward from it)
    if not (shown <= check.threshold if side == "upper" else shown > check.threshold):
        raise CertificateInvalid(
            f"field {where}/{side}: refuted: the recorded {side} end {rec[side]} does not prove "
            f"{check.quantity} {check.relation} {threshold}"
        )
    try:
        proof = prove_end(check, end)
    except LimitExceeded as exc:
        # the message names the first failing field: the check, and (PLD) the direction's lattice
        text = str(exc)
        if text.startswith("field "):
            raise
        raise LimitExceeded(
            f"field body/{name}/{text}" if text.startswith("method/") else f"field body/{name}: {text}"
        ) from None
    except (CertificateInvalid, PrecisionExhausted, Undecided, BudgetExhausted):
        raise
    except InvalidArgument as exc:
        # inputs were validated above: the enclosure code refusing them at the recorded precision
        # means that precision cannot carry the check
        raise PrecisionExhausted(
            f"field body/{name}/method/prec_bits: recomputation failed at prec_bits={check.prec_bits}: {exc}"
        ) from None
    except CertdpError as exc:
        raise CertificateInvalid(f"field body/{name}: recomputation failed: {exc}") from None
    except (ArithmeticError, ValueError, IndexError, MemoryError, AssertionError) as exc:
        # defence in depth: a file that drives the recomputation into an unexpected error is
        # rejected, never accepted and never a traceback (the error class names the bug to fix; an
        # AssertionError is a construction invariant of the lattice bounds that failed)
        raise CertificateInvalid(f"field body/{name}: recomputation failed ({exc.__class__.__name__})") from None
    if proof.status == "undecided":
        raise Undecided(
            f"field {where}/{side}: {rec[side]} is undecided at prec_bits={check.prec_bits}: {proof.recomputed}"
        )
    if proof.status != "proved":
        raise CertificateInvalid(
            f"field {where}/{side}: the recorded {side} end {rec[side]} is not proved by {check.method}: "
            f"{proof.recomputed}"
        )
    return {
        "check": name,
        "quantity": check.quantity,
        "relation": check.relation,
        "threshold": threshold,
        "of": describe(raw, check.mechanism),
        "method": check.method,
        "recorded": {side: rec[side]},  # the file's own text (its value was checked above)
        "recomputed": proof.recomputed,
        # every number of the result that was proved, and every one that was not
        "rechecked": [f"result/{side}", f"result/{side}_dyadic", "threshold"],
        "not_rechecked": [f"result/{k}" for k in unverified],
        "means": means(check),
    }


_FREE_TEXT = ("notes", "refutation_missing_reason")


def _no_control_characters(doc: Any) -> None:
    """Refuse control characters (newline, tab, ...) in every string but the free-text notes.

    The schema's patterns end in ``$``, which Python's regex engine (unlike ECMA-262, the JSON
    Schema dialect) lets match before a final newline, so ``"1.5\n"`` passed as a decimal: two
    validators would disagree about one file (found by review)."""
    stack: list[tuple[str, Any]] = [("", doc)]
    while stack:
        where, node = stack.pop()
        if isinstance(node, dict):
            stack.extend((f"{where}/{k}".lstrip("/"), v) for k, v in node.items() if k not in _FREE_TEXT)
        elif isinstance(node, list):
            stack.extend((f"{where}/{i}", v) for i, v in enumerate(node))
        elif isinstance(node, str) and any(ord(ch) < 32 or ord(ch) == 127 for ch in node):
            raise CertificateMalformed(f"field {where}: contains a control character")


def check_integrity(doc: Any, pubkey_b64: str | None = None) -> str | None:
    """Schema, digest and signature only (no recomputation); returns the signer's key or None.
    Raises CertificateInvalid naming the first failing field.

    Contract: schema, digest and signature hold; no recomputation.
    """
    validate(doc)
    _no_control_characters(doc)
    body = doc["body"]
    digest = digest_hex(body)  # CertificateMalformed for a body JCS cannot represent
    if digest != doc["digest"]["value"]:
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
    """Verify a parsed certificate.

    Contract: returns only if the integrity checks pass, every check is well formed and within
    certdp.cert.limits (certdp.cert.checks: the method fits the quantity and the relation, the
    refutation sits one step below the claim) and, for every check, the one recorded end (upper for
    ``<=``, lower for ``>``) decides the relation and is proved by the recomputation; otherwise
    raises, naming the first failing field: CertificateMalformed (unparseable or schema-invalid,
    exit 2), LimitExceeded (outside the limits, refused before any recomputation, exit 2),
    CertificateInvalid (digest, signature, claim or recorded end that does not hold, exit 1),
    PrecisionExhausted or Undecided (prec_bits too small, or the recorded end undecided at the
    verifier's precision, exit 3). ``signer_trusted`` is True only when ``pubkey_b64`` was given
    (and then it signed the file).
    """
    signer = check_integrity(doc, pubkey_b64)
    body = doc["body"]
    try:
        claim, refutation, _ = claim_and_refutation(body)
    except (ArithmeticError, ValueError) as exc:
        if isinstance(exc, CertdpError):
            raise
        raise CertificateMalformed(f"field body: cannot be read ({exc.__class__.__name__})") from None
    checks = [_check("claim", claim, body["claim"])]
    if refutation is not None:
        checks.append(_check("refutation", refutation, body["refutation"]))
    return VerifyReport("valid", signer, pubkey_b64 is not None, checks)


def verify_bytes(data: bytes, pubkey_b64: str | None = None) -> VerifyReport:
    """Parse (strictly: certdp.cert.strict_json) and verify.

    Contract: as verify_document; bytes that are not one unambiguous JSON document within the
    limits are CertificateInvalid or LimitExceeded, never a traceback.
    """
    return verify_document(loads_strict(data), pubkey_b64)
