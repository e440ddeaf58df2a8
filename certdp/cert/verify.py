"""The certificate verifier: small on purpose (imports the core, the pairs and notions a claim
names through certdp.cert.recompute, and the schema; never calibration, search heuristics or
adapters).

verify_document(doc) checks, in order: the schema, the digest of the canonical body, the
signature (and the pinned public key, if given), then reads every check exactly and checks
that it is well formed and within the work limits (certdp.cert.checks, certdp.cert.limits),
then RECOMPUTES every check (claim and refutation) from its recorded mechanism, method, grid or
orders and precision, with the enclosure code, and checks that the recomputed enclosure proves
it. Recorded numbers are never reused; they must merely be consistent with the recomputation.
Files are parsed strictly (certdp.cert.strict_json): duplicate keys, NaN, huge integers and deep
nesting are refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from certdp.cert.checks import Check, claim_and_refutation, decimal, dyadic
from certdp.cert.crypto import check_signature, digest_hex
from certdp.cert.recompute import recompute
from certdp.cert.schema import validate
from certdp.cert.strict_json import loads_strict
from certdp.errors import CertdpError, CertificateInvalid, LimitExceeded


@dataclass(frozen=True)
class VerifyReport:
    """``status`` is "valid"; ``signed_by`` is the signer's public key (None when unsigned);
    ``signer_trusted`` is True only when the signature was checked against a pinned key."""

    status: str
    signed_by: str | None
    signer_trusted: bool
    checks: list[dict[str, str]]


def _check(name: str, check: Check, raw: dict[str, Any]) -> dict[str, str]:
    try:
        enc = recompute(check)
    except (CertificateInvalid, LimitExceeded):
        raise
    except CertdpError as exc:
        raise CertificateInvalid(f"field body/{name}: recomputation failed: {exc}") from None
    except (ArithmeticError, ValueError, IndexError, MemoryError, AssertionError) as exc:
        # defence in depth: a file that drives the recomputation into an unexpected error is
        # rejected, never accepted and never a traceback (the error class names the bug to fix; an
        # AssertionError is a construction invariant of the lattice bounds that failed)
        raise CertificateInvalid(f"field body/{name}: recomputation failed ({exc.__class__.__name__})") from None
    if check.relation == "<=":
        holds, shown = enc.upper is not None and enc.upper <= check.threshold, enc.shown_upper
    else:
        holds, shown = enc.lower is not None and enc.lower > check.threshold, enc.shown_lower
    if not holds:
        raise CertificateInvalid(
            f"field body/{name}/threshold: refuted: recomputed {check.quantity} bound {shown} "
            f"does not prove {check.relation} {raw['threshold']}"
        )
    rec = raw["result"]
    low = decimal(f"body/{name}/result/lower", rec["lower"])
    up = decimal(f"body/{name}/result/upper", rec["upper"])
    low_d = dyadic(f"body/{name}/result/lower_dyadic", rec["lower_dyadic"])
    up_d = dyadic(f"body/{name}/result/upper_dyadic", rec["upper_dyadic"])
    # the decimals are the dyadic ends rounded outward: every recorded number is checked, none shown unchecked
    if not low <= low_d <= up_d <= up:
        raise CertificateInvalid(
            f"field body/{name}/result: the recorded ends are inconsistent (need lower <= lower_dyadic <= "
            "upper_dyadic <= upper)"
        )
    if (enc.upper is not None and enc.upper < low_d) or (enc.lower is not None and enc.lower > up_d):
        got = f"[{enc.shown_lower or '-'}, {enc.shown_upper or '-'}]"
        raise CertificateInvalid(f"field body/{name}/result: recorded bounds disagree with the recomputation {got}")
    params = ", ".join(f"{k}={v}" for k, v in raw["mechanism"]["params"].items())
    of = f"{raw['mechanism']['name']}({params})"
    if "steps" in raw["mechanism"]:
        of += f" x {raw['mechanism']['steps']} steps"
    if "delta" in raw:
        of += f", delta={raw['delta']}"
    return {
        "check": name,
        "quantity": check.quantity,
        "relation": check.relation,
        "threshold": raw["threshold"],
        "of": of,  # what was proved about: the recorded mechanism and parameters, as written
        "method": check.method,
        "recomputed": shown,
        "means": _MEANS.get((check.method, check.relation), ""),
    }


#: what a recomputed check proves, in a sentence (a PLD refutation is about the mechanism itself)
_MEANS = {
    ("pld-upper", "<="): "the mechanism is (epsilon, delta)-DP at this sigma (PLD lattice upper bound)",
    ("pld-lower", ">"): "the mechanism is NOT (epsilon, delta)-DP at this sigma: a proved violation that no "
    "sound accountant can certify away (PLD lattice lower bound)",
    ("rdp-orders", "<="): "the mechanism is (epsilon, delta)-DP at this sigma (RDP conversion over the orders)",
    ("rdp-orders", ">"): "the RDP conversion over these orders cannot certify the target here (a statement "
    "about this accountant, not a DP violation)",
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
            raise CertificateInvalid(f"field {where}: contains a control character")


def check_integrity(doc: Any, pubkey_b64: str | None = None) -> str | None:
    """Schema, digest and signature only (no recomputation); returns the signer's key or None.
    Raises CertificateInvalid naming the first failing field.

    Contract: schema, digest and signature hold; no recomputation.
    """
    validate(doc)
    _no_control_characters(doc)
    body = doc["body"]
    try:
        digest = digest_hex(body)
    except ValueError as exc:  # rfc8785: a value JSON canonicalization cannot represent
        raise CertificateInvalid(f"field body: cannot be canonicalized ({exc})") from None
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
    refutation sits one step below the claim) and every recomputed check proves its claim;
    otherwise raises CertificateInvalid naming the first failing field (LimitExceeded for a file
    outside the limits, refused before any recomputation). ``signer_trusted`` is True only when
    ``pubkey_b64`` was given (and then it signed the file).
    """
    signer = check_integrity(doc, pubkey_b64)
    body = doc["body"]
    try:
        claim, refutation, _ = claim_and_refutation(body)
    except (ArithmeticError, ValueError) as exc:
        if isinstance(exc, CertdpError):
            raise
        raise CertificateInvalid(f"field body: cannot be read ({exc.__class__.__name__})") from None
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
