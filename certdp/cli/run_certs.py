"""Runners of keygen, sign, verify and calibrate (which writes certificates)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from fractions import Fraction
from pathlib import Path

from certdp.budget import Deadline
from certdp.calibrate import calibrate_epsilon, calibrate_tv
from certdp.calibrate.pld import SideResult, calibrate_pld
from certdp.cert.checks import claim_and_refutation
from certdp.cert.crypto import MAX_KEY_FILE_BYTES, digest_hex, keygen, load_private_key, load_public_key_b64
from certdp.cert.limits import MAX_PLD_H, MIN_PLD_H, recordable
from certdp.cert.schema import validate
from certdp.cert.strict_json import loads_strict, read_capped
from certdp.cert.verify import verify_bytes
from certdp.cert.write import eps_check, finalize, make_body, pld_check, tv_check
from certdp.cert.write import write as write_certificate
from certdp.cli.common import progress_bar, steps_from_args
from certdp.cli.progress import status_line
from certdp.enclose import Enclosure
from certdp.errors import CertificateInvalid, CertificateMalformed, InvalidArgument, Unsupported, fmt_value
from certdp.notions.accountant import calibration_route
from certdp.notions.pld import lattice_record
from certdp.pairs.params import decimal_str, exact_str, real


def _write_verifiable(path: Path, body: dict[str, object], key: object) -> None:
    """Write a certificate only if the verifier will accept its shape: a file outside the
    verifier's work limits (certdp.cert.limits) would be refused by every auditor."""
    claim_and_refutation(body)
    write_certificate(path, finalize(body, key))  # type: ignore[arg-type]


def run_keygen(args: argparse.Namespace) -> dict[str, object]:
    priv, pub = keygen(writable_path("out", args.out))
    return {
        "quantity": "keygen",
        "private_key": str(priv),
        "public_key_file": str(pub),
        "public_key": read_capped(pub, "pubkey", MAX_KEY_FILE_BYTES).decode("ascii").strip(),
    }


def run_sign(args: argparse.Namespace) -> dict[str, object]:
    key = load_private_key(readable_path("key", args.key))
    data = read_capped(args.certificate)
    try:
        doc = loads_strict(data)
        validate(doc)
        digest = digest_hex(doc["body"])
    except CertificateMalformed as exc:
        raise CertificateMalformed(f"certificate={fmt_value(args.certificate)} is malformed: {exc}") from None
    if digest != doc["digest"]["value"]:
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
    pub = load_public_key_b64(readable_path("pubkey", args.pubkey)) if args.pubkey is not None else None
    data = read_capped(args.certificate)
    start = time.perf_counter()
    # the line is drawn here: the verifier stays small and knows nothing of terminals
    with status_line(args, f"verifying {args.certificate}: recomputing its claims"):
        try:
            report = verify_bytes(data, pub)
        except CertificateMalformed as exc:  # exit 2: name the input, as every unparseable input is named
            raise CertificateMalformed(f"certificate={fmt_value(args.certificate)} is malformed: {exc}") from None
    return {
        "quantity": "verify",
        "certificate": args.certificate,
        "status": report.status,
        "signature": "signed" if report.signed_by else "unsigned",
        "signed_by": report.signed_by,
        "signer_trusted": report.signer_trusted,
        "checks": report.checks,
        # free text is signed but never proved: listed with the metadata when the body has it
        "not_rechecked": [*METADATA_NOT_RECHECKED, *free_text_fields(data)],
        "not_rechecked_note": NOT_RECHECKED_NOTE,
        "seconds": round(time.perf_counter() - start, 3),
    }


#: the fields of every certificate that verify neither proves nor relies on (docs/certificates.md)
METADATA_NOT_RECHECKED = ("body/created", "body/certdp_version", "body/python_flint_version", "body/flint_version")
NOT_RECHECKED_NOTE = (
    "the *_unverified and seconds fields listed above, the metadata (created, certdp and flint versions) and "
    "the free text (notes, refutation_missing_reason) "
    "are informative only: a valid certificate may hold false values there; only the numbers under 'rechecked' "
    "are proved"
)


def free_text_fields(data: bytes) -> list[str]:
    """Contract: the body's free-text fields present in the (already verified) certificate bytes:
    signed, never proved (attack review: a note "PROVED: ..." in a valid file)."""
    import json

    try:
        body = json.loads(data).get("body", {})
    except (ValueError, AttributeError):
        return []
    return [f"body/{k}" for k in ("notes", "refutation_missing_reason") if isinstance(body, dict) and k in body]


def writable_path(name: str, value: str) -> Path:
    """``value`` as a file path that can be written, checked before any work is done (a long
    calibration must not end in "no such directory").

    Contract: a Path whose parent is an existing, writable directory and which is not itself a
    directory, a device or a FIFO (absent or a regular file), or InvalidArgument naming the flag.
    """
    if not value.strip():
        raise InvalidArgument(f"{name}='' must be a file path")
    path = Path(value)
    try:
        if "\x00" in value:
            raise ValueError("NUL")
        if path.is_dir():
            raise InvalidArgument(f"{name}={fmt_value(value)} is a directory; give a file path")
        if path.exists() and not path.is_file():  # a device or a FIFO: the rename would replace it
            raise InvalidArgument(f"{name}={fmt_value(value)} is not a regular file; give a file path")
        parent = path.parent if str(path.parent) else Path(".")
        if not parent.is_dir():
            raise InvalidArgument(f"{name}={fmt_value(value)}: directory {fmt_value(str(parent))} does not exist")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise InvalidArgument(f"{name}={fmt_value(value)}: directory {fmt_value(str(parent))} is not writable")
        if len(os.fsencode(path.name)) > os.pathconf(parent, "PC_NAME_MAX"):
            raise InvalidArgument(f"{name}={fmt_value(value)}: the file name is too long")
    except InvalidArgument:
        raise
    except OSError as exc:  # a name too long, a loop of links, ...: one line, not a traceback
        raise InvalidArgument(f"{name}={fmt_value(value)} cannot be used ({exc.strerror})") from None
    except (UnicodeError, ValueError):  # a lone surrogate or a NUL byte: no file system can hold the name
        raise InvalidArgument(f"{name}={fmt_value(value)} cannot be used as a file name") from None
    return path


def readable_path(name: str, value: str) -> Path:
    """Contract: a Path for a non-blank ``value``, or InvalidArgument naming the flag (the file
    itself is opened and checked by the loader)."""
    if not value.strip():
        raise InvalidArgument(f"{name}='' must be a file path")
    return Path(value)


def _eps_miss_reason(sigma_miss: object) -> str:
    if sigma_miss == 0:
        return "sigma - step = 0 is no noise at all: there is no smaller sigma on the step lattice to refute"
    return "the RDP epsilon one step below is not certified above the target"


def _pld_lattices(sides: list[SideResult]) -> dict[str, dict[str, object]]:
    return {s.direction: lattice_record(s.lattice) for s in sides}


def _ends(low: Fraction | None, up: Fraction | None, prec: int) -> Enclosure:
    """The exact dyadic ends as an Enclosure, exactly (a missing lower end is 0: eps >= 0). A ball
    union would round the ends outward by its radius: the certificate would then record a looser
    number than the one calibrate proved and prints."""
    return Enclosure.from_bounds(low if low is not None else 0, up if up is not None else 0, prec)


def _calibrate_pld(
    args: argparse.Namespace,
    steps: int,
    fields: dict[str, object],
    out: Path | None,
    key: object,
    budget: Deadline,
) -> dict[str, object]:
    """calibrate subsampled-gaussian --via pld: the claim by the lattice upper bound, the
    refutation by the lattice lower bound (a proved violation), and the certificate of both."""
    # no --h: calibrate_pld's default, which follows a small target (certdp.calibrate.pld._spacing_for)
    h = None if args.h is None else real("h", args.h, gt=0, le=1)
    if h is not None and (h.numerator != 1 or h.denominator & (h.denominator - 1) or not MIN_PLD_H <= h <= MAX_PLD_H):
        lo, hi = MIN_PLD_H.denominator.bit_length() - 1, MAX_PLD_H.denominator.bit_length() - 1
        raise InvalidArgument(
            f"h={fmt_value(args.h)} must be a power of two in [2^-{lo}, 2^-{hi}] (a certificate records it)"
        )
    with status_line(args, "calibrating sigma (PLD)") as update:
        res = calibrate_pld(
            args.q, steps, args.epsilon, args.delta, args.step, args.direction or "both", h, budget, progress=update
        )
    main = res.claim[0]
    rec: dict[str, object] = {
        "quantity": "calibration",
        "mechanism": args.mechanism,
        "q": exact_str(res.q),
        **fields,
        "epsilon": exact_str(res.eps),
        "delta": exact_str(res.delta),
        "direction": res.direction,
        "via": "pld",
        "step": exact_str(res.step),
        "sigma": exact_str(res.sigma),
        "epsilon_upper": decimal_str(res.eps_upper, "epsilon"),
        "epsilon_lower_at_sigma": None if main.lower is None else decimal_str(main.lower, "epsilon"),
        "sigma_miss": exact_str(res.sigma_miss),
        "epsilon_lower_at_miss": None if res.refutation is None else decimal_str(res.refutation[0].lower, "epsilon"),
        "violation_proved": res.refutation is not None,
        "miss_reason": res.miss_reason,
        "grid": {
            "claim": _pld_lattices(res.claim),
            "refutation": None if res.refutation is None else _pld_lattices(res.refutation),
            "prune_floor": str(res.prune_floor),
            "prec_bits": res.prec_bits,
            "lower": res.lower,
            "coarsen_powers": res.coarsen_powers,
        },
        "seconds": round(res.seconds, 3),
        "note": "sigma - step is proved NOT (epsilon, delta)-DP (the lattice lower bound): no sound accountant "
        "could certify it"
        if res.refutation is not None
        else "the refutation one step below was not proved (see miss_reason)",
    }
    if out is not None:
        bits = res.prune_floor.denominator.bit_length() - 1
        claim = pld_check(
            res.q,
            res.sigma,
            res.direction,
            res.steps,
            res.delta,
            "<=",
            res.eps,
            _pld_lattices(res.claim),
            res.prec_bits,
            bits,
            _ends(main.lower, res.eps_upper, res.prec_bits),
            other_end=main.lower is not None,
            coarsen_powers=res.coarsen_powers,
        )
        refute = None
        if res.refutation is not None:
            miss = res.refutation[0]
            refute = pld_check(
                res.q,
                res.sigma_miss,
                res.direction,
                res.steps,
                res.delta,
                ">",
                res.eps,
                _pld_lattices(res.refutation),
                res.prec_bits,
                bits,
                # a refutation records its proved lower end; without a computed upper end the
                # enclosure is that point (other_end False: nothing else is recorded)
                _ends(miss.lower, miss.upper if miss.upper is not None else miss.lower, res.prec_bits),
                other_end=miss.upper is not None,
                lower=res.lower,
                coarsen_powers=res.coarsen_powers,
            )
        body = make_body(
            res.step,
            claim,
            refute,
            res.miss_reason,
            notes="refutation: the PLD lattice lower bound proves that sigma - step violates (epsilon, delta)-DP "
            "for this mechanism (a statement about the mechanism, not about an accountant)",
        )
        _write_verifiable(out, body, key)
        rec["certificate"] = args.out
    return rec


def run_calibrate(args: argparse.Namespace) -> dict[str, object]:
    if args.sign is not None and args.out is None:
        raise InvalidArgument("sign needs --out: only a written certificate can be signed")
    out = writable_path("out", args.out) if args.out is not None else None
    key = load_private_key(readable_path("sign", args.sign), "sign") if args.sign is not None else None
    if out is not None:  # a value no certificate can record is refused now, not after the search
        ra = args.mechanism == "random-allocation"
        given = ("tv", "epsilon", "delta", "step") if ra else ("q", "epsilon", "delta", "step")
        for name in given:
            if getattr(args, name) is not None:
                recordable(name, getattr(args, name))
    budget = Deadline(args.max_seconds, name="max-seconds")  # started here: the whole command counts
    if args.mechanism == "random-allocation" and args.tv is None:
        from certdp.cli.run_allocation import run_calibrate_eps_delta

        return run_calibrate_eps_delta(args, budget, out, key)
    if args.mechanism == "random-allocation":
        if args.steps is None:
            raise InvalidArgument("steps is required for random-allocation (--steps M)")
        if args.tv is None:
            raise InvalidArgument("tv is required for random-allocation (--tv LAMBDA)")
        with progress_bar(args) as note:
            res = calibrate_tv(
                args.steps,
                args.epochs if args.epochs is not None else "1",
                args.tv,
                args.step,
                progress=note,
                max_seconds=budget,
            )
        rec: dict[str, object] = {"quantity": "calibration", "mechanism": args.mechanism, **res.to_dict()}
        if out is not None:
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
            _write_verifiable(out, body, key)
            rec["certificate"] = args.out
        return rec
    if args.mechanism == "subsampled-gaussian":
        for need in ("q", "epsilon", "delta"):
            if getattr(args, need) is None:
                raise InvalidArgument(f"{need} is required to calibrate subsampled-gaussian (--{need})")
        if args.steps is None and args.epochs is None:
            # a missing count never defaults to 1: one step is not a training run
            raise InvalidArgument("steps is required to calibrate subsampled-gaussian (--steps N, or --epochs E)")
        steps, fields = steps_from_args(args, args.q)
        if args.via == "pld":
            return _calibrate_pld(args, steps, fields, out, key, budget)
        route = calibration_route(steps)
        notes: list[str] = []
        if route.switched and "via" in getattr(args, "defaulted_flags", ()):
            # the one rule sent this calibration to RDP: never silently (record, warnings, stderr)
            notes.append(route.reason)
        with status_line(args, "calibrating sigma (RDP)"):
            res_e = calibrate_epsilon(
                args.q, steps, args.epsilon, args.delta, args.step, args.direction or "both", budget
            )
        rec = {
            "quantity": "calibration",
            "mechanism": args.mechanism,
            "q": exact_str(res_e.q),
            **fields,
            "epsilon": exact_str(res_e.eps),
            "delta": exact_str(res_e.delta),
            "direction": res_e.direction,
            "step": exact_str(res_e.step),
            "sigma": exact_str(res_e.sigma),
            "epsilon_upper": res_e.eps_at_sigma.upper_str(),
            "sigma_miss": exact_str(res_e.sigma_miss),
            # the RDP bound's lower end at sigma_miss: a statement about the conversion (it cannot certify the
            # target there), not a lower bound on epsilon; the PLD route proves violations
            "rdp_bound_lower_at_miss": None if res_e.eps_at_miss is None else res_e.eps_at_miss.lower_str(),
            "miss_reason": None if res_e.eps_at_miss is not None else _eps_miss_reason(res_e.sigma_miss),
            "orders": list(res_e.orders),
            "via": "rdp",
            "route": route.reason if route.switched else "via=rdp was asked for",
            "warnings": notes,
            "seconds": round(res_e.seconds, 3),
        }
        for note in notes:  # once the answer stands (a refusal above prints only its error)
            print(f"certdp: warning: {note}", file=sys.stderr)
        if out is not None:
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
            reason = None if refute else _eps_miss_reason(res_e.sigma_miss)
            body = make_body(
                res_e.step,
                claim,
                refute,
                reason,
                notes="refutation: the RDP conversion over the recorded orders cannot certify the "
                "target one step below (a statement about this accountant, not a DP violation)",
            )
            _write_verifiable(out, body, key)
            rec["certificate"] = args.out
        return rec
    raise Unsupported(
        f"calibrate is implemented for random-allocation and subsampled-gaussian, not mechanism={args.mechanism}"
    )
