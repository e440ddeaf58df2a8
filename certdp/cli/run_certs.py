"""Runners of keygen, sign, verify and calibrate (which writes certificates)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from certdp.calibrate import calibrate_epsilon, calibrate_tv
from certdp.cert.checks import claim_and_refutation
from certdp.cert.crypto import digest_hex, keygen, load_private_key, load_public_key_b64
from certdp.cert.schema import validate
from certdp.cert.strict_json import loads_strict, read_capped
from certdp.cert.verify import verify_bytes
from certdp.cert.write import eps_check, finalize, make_body, tv_check
from certdp.cert.write import write as write_certificate
from certdp.cli.common import progress_bar
from certdp.errors import CertificateInvalid, InvalidArgument, Unsupported
from certdp.pairs.params import exact_str


def _write_verifiable(path: Path, body: dict[str, object], key: object) -> None:
    """Write a certificate only if the verifier will accept its shape: a file outside the
    verifier's work limits (certdp.cert.limits) would be refused by every auditor."""
    claim_and_refutation(body)
    write_certificate(path, finalize(body, key))  # type: ignore[arg-type]


def run_keygen(args: argparse.Namespace) -> dict[str, object]:
    priv, pub = keygen(Path(args.out))
    return {
        "quantity": "keygen",
        "private_key": str(priv),
        "public_key_file": str(pub),
        "public_key": pub.read_text().strip(),
    }


def run_sign(args: argparse.Namespace) -> dict[str, object]:
    key = load_private_key(Path(args.key))
    data = read_capped(args.certificate)
    try:
        doc = loads_strict(data)
        validate(doc)
    except CertificateInvalid as exc:
        raise CertificateInvalid(f"certificate={args.certificate} is malformed: {exc}") from None
    if digest_hex(doc["body"]) != doc["digest"]["value"]:
        raise CertificateInvalid("field digest/value: does not match the canonical body; refusing to sign")
    signed = finalize(doc["body"], key)
    write_certificate(Path(args.certificate), signed)
    return {"quantity": "sign", "certificate": args.certificate, "public_key": signed["signature"]["public_key"]}


def run_verify(args: argparse.Namespace) -> dict[str, object]:
    if not args.pubkey and not args.allow_untrusted:
        # "valid under some key" is not "valid under our key": a script must ask for the former
        raise InvalidArgument(
            "pubkey is required: pass --pubkey KEY.pub to check the signer, or --allow-untrusted to check "
            "the claims without checking who signed them"
        )
    pub = load_public_key_b64(Path(args.pubkey)) if args.pubkey else None
    data = read_capped(args.certificate)
    start = time.perf_counter()
    report = verify_bytes(data, pub)
    return {
        "quantity": "verify",
        "certificate": args.certificate,
        "status": report.status,
        "signature": "signed" if report.signed_by else "unsigned",
        "signed_by": report.signed_by,
        "signer_trusted": report.signer_trusted,
        "checks": report.checks,
        "seconds": round(time.perf_counter() - start, 3),
    }


def run_calibrate(args: argparse.Namespace) -> dict[str, object]:
    key = load_private_key(Path(args.sign)) if args.sign else None
    if args.sign and not args.out:
        raise InvalidArgument("sign needs --out: only a written certificate can be signed")
    if args.mechanism == "random-allocation":
        if args.steps is None:
            raise InvalidArgument("steps is required for random-allocation (--steps M)")
        if args.tv is None:
            raise InvalidArgument("tv is required for random-allocation (--tv LAMBDA)")
        with progress_bar(args) as note:
            res = calibrate_tv(args.steps, args.epochs or "1", args.tv, args.step, progress=note)
        rec: dict[str, object] = {"quantity": "calibration", "mechanism": args.mechanism, **res.to_dict()}
        if args.out:
            secs = {a["side"]: a.get("seconds") for a in res.attempts if a.get("certified")}
            claim = tv_check(res.steps, res.epochs, res.sigma, "<=", res.tv, res.grid, res.tv_upper, secs.get("upper"))
            refute = None
            if res.tv_lower_at_miss is not None and res.miss_grid is not None:
                refute = tv_check(
                    res.steps,
                    res.epochs,
                    res.sigma_miss,
                    ">",
                    res.tv,
                    res.miss_grid,
                    res.tv_lower_at_miss,
                    secs.get("lower"),
                )
            body = make_body(res.step, claim, refute, res.miss_reason)
            _write_verifiable(Path(args.out), body, key)
            rec["certificate"] = args.out
        return rec
    if args.mechanism == "subsampled-gaussian":
        for need in ("q", "epsilon", "delta"):
            if getattr(args, need) is None:
                raise InvalidArgument(f"{need} is required to calibrate subsampled-gaussian (--{need})")
        if args.sigma is not None:
            raise InvalidArgument(f"sigma={args.sigma} is what calibrate computes; do not pass it")
        res_e = calibrate_epsilon(
            args.q, args.steps or "1", args.epsilon, args.delta, args.step, args.direction or "both"
        )
        rec = {
            "quantity": "calibration",
            "mechanism": args.mechanism,
            "q": exact_str(res_e.q),
            "steps": res_e.steps,
            "epsilon": exact_str(res_e.eps),
            "delta": exact_str(res_e.delta),
            "direction": res_e.direction,
            "step": exact_str(res_e.step),
            "sigma": exact_str(res_e.sigma),
            "epsilon_upper": res_e.eps_at_sigma.upper_str(),
            "sigma_miss": exact_str(res_e.sigma_miss),
            "epsilon_lower_at_miss": None if res_e.eps_at_miss is None else res_e.eps_at_miss.lower_str(),
            "orders": list(res_e.orders),
            "seconds": round(res_e.seconds, 3),
        }
        if args.out:
            claim = eps_check(
                res_e.q,
                res_e.sigma,
                res_e.direction,
                res_e.steps,
                res_e.delta,
                "<=",
                res_e.eps,
                list(res_e.orders),
                res_e.eps_at_sigma,
            )
            refute = None
            if res_e.eps_at_miss is not None:
                refute = eps_check(
                    res_e.q,
                    res_e.sigma_miss,
                    res_e.direction,
                    res_e.steps,
                    res_e.delta,
                    ">",
                    res_e.eps,
                    list(res_e.orders),
                    res_e.eps_at_miss,
                )
            reason = None if refute else "the RDP epsilon one step below is not certified above the target"
            body = make_body(
                res_e.step,
                claim,
                refute,
                reason,
                notes="refutation: the RDP conversion over the recorded orders cannot certify the "
                "target one step below (a statement about this accountant, not a DP violation)",
            )
            _write_verifiable(Path(args.out), body, key)
            rec["certificate"] = args.out
        return rec
    raise Unsupported(
        f"calibrate is implemented for random-allocation and subsampled-gaussian, not mechanism={args.mechanism}"
    )
