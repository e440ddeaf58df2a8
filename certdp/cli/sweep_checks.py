"""What a sweep's calibrate cell must have produced: the claim its command line asks for.

A certificate that a worker sends back, or that a previous run left in the output folder, is
signed or skipped only if its claim is the one the cell's own arguments determine (mechanism,
steps, sampling rate, direction, target, delta, sigma step, accountant). Without this check a
certificate of another cell, or of another setting, could be signed or kept under this cell's
name: schema, digest and signature say nothing about which cell a file belongs to.
"""

from __future__ import annotations

import argparse
from fractions import Fraction
from typing import Any

from certdp.cli.common import steps_from_args
from certdp.errors import CertdpError, CertificateInvalid
from certdp.pairs.params import exact_str, integer, real


def expected_claim(args: argparse.Namespace) -> dict[str, Any]:
    """Contract: the claim fields a certificate of ``certdp calibrate`` with these (checked,
    defaulted) arguments records, as exact values."""
    if args.mechanism == "random-allocation" and args.tv is None:
        return {
            "mechanism": "random-allocation",
            "steps": Fraction(integer("steps", args.steps, ge=1)),
            "epochs": Fraction(integer("epochs", args.epochs or "1", ge=1)),
            # k of the M steps per epoch (1 when absent): a k = 1 file is no certificate of a k = 2
            # cell (attack review of the k > 1 certificates)
            "k": Fraction(integer("k", getattr(args, "k", None) or "1", ge=1)),
            "direction": args.direction or "both",
            "quantity": "epsilon",
            "threshold": real("epsilon", args.epsilon),
            "delta": real("delta", args.delta),
            "step": real("step", args.step),
            "method": "hockey-upper",
        }
    if args.mechanism == "random-allocation":
        return {
            "mechanism": "random-allocation",
            "steps": Fraction(integer("steps", args.steps, ge=1)),
            "epochs": Fraction(integer("epochs", args.epochs or "1", ge=1)),
            "quantity": "tv",
            "threshold": real("tv", args.tv),
            "step": real("step", args.step),
            "method": "lattice-upper",
        }
    q = real("q", args.q)
    return {
        "mechanism": "subsampled-gaussian",
        "method": "pld-upper" if args.via == "pld" else "rdp-orders",
        "steps": Fraction(steps_from_args(args, args.q)[0]),
        "q": q,
        "direction": args.direction or "both",
        "quantity": "epsilon",
        "threshold": real("epsilon", args.epsilon),
        "delta": real("delta", args.delta),
        "step": real("step", args.step),
    }


def _recorded(body: dict[str, Any]) -> dict[str, Any]:
    claim = body["claim"]
    mech = claim["mechanism"]
    params = mech["params"]
    got: dict[str, Any] = {
        "mechanism": mech["name"],
        "quantity": claim["quantity"],
        "threshold": claim["threshold"],
        "step": body["step"],
        "method": claim["method"]["name"],
    }
    if mech["name"] == "random-allocation":
        got.update(
            steps=params["steps"],
            epochs=params["epochs"],
            k=params.get("k", "1"),  # absent is k = 1 (checks.mechanism refuses k = 1 written out)
            direction=params.get("direction"),
            delta=claim.get("delta"),
        )
    else:
        got.update(
            steps=mech.get("steps"), q=params.get("q"), direction=params.get("direction"), delta=claim.get("delta")
        )
    return got


def check_certificate_is_for(doc: dict[str, Any], expected: dict[str, Any]) -> None:
    """Raise CertificateInvalid naming the first field of ``doc``'s claim that differs from
    ``expected`` (a schema-valid certificate is assumed: certdp.cert.verify.check_integrity).

    Contract: returns only if the claim is the one ``expected`` describes, field by field
    (numbers compared exactly).
    """
    got = _recorded(doc["body"])
    for field, want in expected.items():
        have = got.get(field)
        if isinstance(want, Fraction):
            try:
                same = have is not None and Fraction(str(have)) == want
            except (ValueError, ZeroDivisionError):
                same = False
        else:
            same = have == want
        if not same:
            shown = exact_str(want) if isinstance(want, Fraction) else want
            raise CertificateInvalid(f"its claim has {field}={have}, but this cell asks for {field}={shown}")


def certificate_summary(doc: dict[str, Any], rechecked: bool = False) -> dict[str, Any]:
    """Contract: the claimed sigma (with the neighbouring direction it covers, None for mechanisms
    without one) and its certified bound, the refuted sigma and its bound (None
    without a refutation: then sigma is proved sufficient, not proved the smallest on the step
    lattice), and the signer's public key (None when unsigned), as the certificate records them.
    The two bounds are the ends format v2 records as proved (the claim's upper, the refutation's
    lower; never a ``*_unverified`` field); ``rechecked`` says whether certdp verify's
    recomputation proved them on this machine (sweep --recheck) or they are as the worker wrote
    them."""
    body = doc["body"]
    claim, refute = body["claim"], body.get("refutation")
    return {
        "signed_by": None if doc.get("signature") is None else doc["signature"]["public_key"],
        "sigma": _canonical(claim["mechanism"]["params"]["sigma"]),
        # a one-direction claim is not DP for add-or-remove neighbours: the scope goes with sigma
        "direction": claim["mechanism"]["params"].get("direction"),
        # random allocation with each record in k of the M steps: the claim's k (1 when absent)
        **(
            {"k": _canonical(claim["mechanism"]["params"].get("k", "1"))}
            if claim["mechanism"]["name"] == "random-allocation" and claim["quantity"] == "epsilon"
            else {}
        ),
        "claim_upper": _canonical(claim["result"]["upper"]),
        "sigma_miss": None if refute is None else _canonical(refute["mechanism"]["params"]["sigma"]),
        "refutation_lower": None if refute is None else _canonical(refute["result"]["lower"]),
        "rechecked": rechecked,
    }


def _canonical(text: str) -> str:
    """A recorded decimal in certdp's one canonical form (``0.05``, not ``5e-2`` or ``0.050``);
    as written when it is outside the verifier's decimal limits (it is then no valid check)."""
    from certdp.cert.checks import decimal

    try:
        return exact_str(decimal("summary", text))
    except CertdpError:
        return text
