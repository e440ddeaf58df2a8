"""Command-line interface: ``certdp <command> <mechanism> --param value ... [--json]``.

Exit codes: 0 ok; 1 a check failed or was refuted; 2 bad usage or input; 3 precision exhausted
or undecided. Errors are one line on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from fractions import Fraction
from pathlib import Path
from typing import NoReturn

from certdp import __version__
from certdp.calibrate import calibrate_epsilon, calibrate_tv
from certdp.cert.crypto import digest_hex, keygen, load_private_key, load_public_key_b64
from certdp.cert.schema import validate
from certdp.cert.verify import verify_bytes
from certdp.cert.write import eps_check, finalize, make_body, tv_check
from certdp.cert.write import write as write_certificate
from certdp.enclose import DEFAULT_TARGET, Enclosure, Target
from certdp.errors import CertdpError, CertificateInvalid, InvalidArgument, PrecisionExhausted, Undecided, Unsupported
from certdp.notions import CONVERSION_TARGET, cgf, delta, epsilon, gap, kl, rdp, rho_detail
from certdp.notions.tv_certified import auto_grid, tv_bound
from certdp.notions.tv_closed_form import attack_accuracy_upper, chi2_epochs, tv_upper_closed_form
from certdp.notions.tv_numeric import approx_tv_lattice, approx_tv_monte_carlo
from certdp.pairs import DIRECTIONS, MECHANISMS, PrivacyPair, RandomAllocation, compose
from certdp.pairs.params import decimal_str, integer, real

#: Mechanisms that later issues add; named here so that users get a clear message.
PLANNED = {
    "gaussian-mixture": "issue 5",
    "student-t": "issue 5",
    "generalized-gaussian": "issue 5",
}

#: CLI parameter -> (mechanisms that take it, help text).
PARAMS: dict[str, tuple[tuple[str, ...], str]] = {
    "sigma": (
        ("gaussian", "discrete-gaussian", "subsampled-gaussian", "random-allocation"),
        "noise scale sigma > 0 (noise multiplier for subsampled-gaussian)",
    ),
    "shift": (
        ("gaussian", "laplace", "discrete-laplace", "discrete-gaussian"),
        "sensitivity shift (default 1; integer >= 1 for discrete mechanisms)",
    ),
    "scale": (("laplace",), "Laplace scale b > 0 (default 1)"),
    "a": (("discrete-laplace",), "discrete Laplace decay a > 0 (mass proportional to e^{-a|z|})"),
    "q": (("subsampled-gaussian",), "Poisson sampling rate q in (0, 1]"),
}
REQUIRED = {
    "gaussian": ("sigma",),
    "laplace": (),
    "discrete-laplace": ("a",),
    "discrete-gaussian": ("sigma",),
    "subsampled-gaussian": ("q", "sigma"),
    "random-allocation": ("sigma",),
}

EXAMPLES = {
    "cgf": "certdp cgf laplace --shift 0.7 --t 2 --json",
    "rdp": "certdp rdp subsampled-gaussian --q 0.01 --sigma 0.8 --order 3 --json",
    "kl": "certdp kl discrete-laplace --a 0.5 --shift 2",
    "rho": "certdp rho laplace --shift 0.7 --json",
    "gap": "certdp gap laplace --shift 0.5 --t 1",
    "eps": "certdp eps subsampled-gaussian --q 0.01 --sigma 1.0 --steps 500 --delta 1e-5",
    "delta": "certdp delta gaussian --sigma 2 --steps 10 --eps 1 --via zcdp",
    "tv": "certdp tv random-allocation --steps 100 --epochs 10 --sigma 1.426215 --method exact",
    "calibrate": "certdp calibrate random-allocation --steps 100 --epochs 10 --tv 0.1",
}
HELP = {
    "cgf": "certified CGF K(t) = t D_{t+1}(P||Q)",
    "rdp": "certified Renyi divergence D_alpha(P||Q)",
    "kl": "certified KL divergence KL(P||Q)",
    "rho": "certified zCDP parameter rho = sup_t K(t)/(t(t+1))",
    "gap": "certified zCDP-RDP gap Gamma(t) = rho t(t+1) - K(t)",
    "eps": "certified epsilon at delta (infimum over orders; the upper end is sound)",
    "delta": "certified delta at epsilon (infimum over orders; the upper end is sound)",
    "tv": "total variation of random allocation (closed-form bound, certified bounds, numeric exact, Monte Carlo)",
    "calibrate": "certified sigma for a TV target (random allocation): meets it, and one step less misses it",
}
TV_METHODS = ("closed-form", "exact", "monte-carlo", "certified")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"certdp: error: {message}\n")


def _build() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="certdp",
        description="Certified differential-privacy accounting: every number is a rigorous ball-arithmetic enclosure.",
        epilog="example:\n  " + EXAMPLES["eps"],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"certdp {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="command", parser_class=_Parser)
    sub.required = True
    mech_names = ", ".join(MECHANISMS)
    for name in ("cgf", "rdp", "kl", "rho", "gap", "eps", "delta", "tv", "calibrate"):
        p = sub.add_parser(
            name,
            help=HELP[name],
            description=HELP[name] + ".",
            epilog=f"mechanisms: {mech_names}\nexample:\n  {EXAMPLES[name]}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        p.add_argument("mechanism", help="mechanism name (kebab-case)")
        for param, (mechs, text) in PARAMS.items():
            p.add_argument(f"--{param}", help=f"{text}; for {', '.join(mechs)}")
        p.add_argument("--direction", help=f"subsampled-gaussian divergence: {', '.join(DIRECTIONS)} (default both)")
        p.add_argument(
            "--steps",
            default=None,
            help="number of composed runs (default 1); for random-allocation: steps M per epoch",
        )
        p.add_argument("--epochs", default=None, help="random-allocation: number of epochs E (default 1)")
        if name in ("cgf", "rdp", "gap"):
            p.add_argument("--order", help="Renyi order alpha > 1 (alpha = t + 1)")
            p.add_argument("--t", help="CGF argument t > 0")
        if name in ("eps", "calibrate"):
            p.add_argument("--delta", required=name == "eps", help="target delta in (0, 1)")
        if name == "delta":
            p.add_argument("--eps", required=True, help="target epsilon >= 0")
        if name in ("eps", "delta"):
            p.add_argument(
                "--via", default="rdp", choices=("rdp", "zcdp"), help="CGF (rdp, default) or rho t(t+1) (zcdp)"
            )
            p.add_argument("--orders", help="comma-separated Renyi orders to search instead of the default")
        if name == "tv":
            p.add_argument("--method", default="closed-form", choices=TV_METHODS, help="how TV is computed")
            p.add_argument("--samples", default="200000", help="monte-carlo: number of draws (default 200000)")
            p.add_argument("--seed", default="0", help="monte-carlo: random seed (default 0)")
            p.add_argument("--width", default="1e-6", help="certified: target width of [lower, upper] (default 1e-6)")
        if name == "calibrate":
            p.add_argument("--tv", help="random-allocation: TV target in (0, 1); attack accuracy <= 1/2 + tv/2")
            p.add_argument("--epsilon", help="subsampled-gaussian: epsilon target (with --delta)")
            p.add_argument("--step", default="1e-6", help="sigma is rounded up to a multiple of this (default 1e-6)")
            p.add_argument("--out", help="write a certificate (JSON, format v1) to this file, atomically")
            p.add_argument("--sign", help="sign the certificate with this Ed25519 private key (see certdp keygen)")
        if name == "rho":
            p.add_argument(
                "--method",
                default="auto",
                choices=("auto", "closed-form", "search"),
                help="how rho is certified (default auto)",
            )
        p.add_argument("--prec", default=None, help="starting working precision in bits (default 64)")
        p.add_argument("--max-prec", default=None, help="largest working precision in bits (default 4096)")
        p.add_argument("--json", action="store_true", help="print one JSON object")
    k = sub.add_parser(
        "keygen",
        help="create an Ed25519 key pair for signing certificates",
        description="Write a private key (mode 600) to OUT and its public half to OUT.pub.",
        epilog="example:\n  certdp keygen --out project.key",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    k.add_argument("--out", required=True, help="private key path (OUT.pub receives the public key)")
    k.add_argument("--json", action="store_true", help="print one JSON object")
    g = sub.add_parser(
        "sign",
        help="sign a certificate file in place (atomically)",
        epilog="example:\n  certdp sign cert.json --key project.key",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    g.add_argument("certificate", help="certificate file")
    g.add_argument("--key", required=True, help="Ed25519 private key (PEM) from certdp keygen")
    g.add_argument("--json", action="store_true", help="print one JSON object")
    v = sub.add_parser(
        "verify",
        help="verify a certificate: schema, digest, signature, and recompute its claims",
        epilog="exit codes: 0 valid, 1 invalid/tampered/refuted, 2 usage\n"
        "example:\n  certdp verify cert.json --pubkey project.key.pub",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    v.add_argument("certificate", help="certificate file")
    v.add_argument("--pubkey", help="require a signature by this public key (.pub from certdp keygen)")
    v.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def _run_keygen(args: argparse.Namespace) -> dict[str, object]:
    priv, pub = keygen(Path(args.out))
    return {
        "quantity": "keygen",
        "private_key": str(priv),
        "public_key_file": str(pub),
        "public_key": pub.read_text().strip(),
    }


def _read_certificate(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise InvalidArgument(f"certificate={path} cannot be read ({exc.__class__.__name__})") from None


def _run_sign(args: argparse.Namespace) -> dict[str, object]:
    key = load_private_key(Path(args.key))
    data = _read_certificate(args.certificate)
    try:
        doc = json.loads(data)
        validate(doc)
    except (ValueError, CertificateInvalid) as exc:
        raise CertificateInvalid(f"certificate={args.certificate} is malformed: {exc}") from None
    if digest_hex(doc["body"]) != doc["digest"]["value"]:
        raise CertificateInvalid("field digest/value: does not match the canonical body; refusing to sign")
    signed = finalize(doc["body"], key)
    write_certificate(Path(args.certificate), signed)
    return {"quantity": "sign", "certificate": args.certificate, "public_key": signed["signature"]["public_key"]}


def _run_verify(args: argparse.Namespace) -> dict[str, object]:
    pub = load_public_key_b64(Path(args.pubkey)) if args.pubkey else None
    data = _read_certificate(args.certificate)
    start = time.perf_counter()
    report = verify_bytes(data, pub)
    return {
        "quantity": "verify",
        "certificate": args.certificate,
        "status": report.status,
        "signature": "signed" if report.signed_by else "unsigned",
        "signed_by": report.signed_by,
        "checks": report.checks,
        "seconds": round(time.perf_counter() - start, 3),
    }


def _pair(args: argparse.Namespace) -> PrivacyPair:
    mech = args.mechanism
    if mech in PLANNED:
        raise Unsupported(f"mechanism={mech} is not available yet (planned in {PLANNED[mech]})")
    if mech not in MECHANISMS:
        raise InvalidArgument(f"mechanism={mech} must be one of {', '.join(MECHANISMS)}")
    kwargs: dict[str, str] = {}
    for param, (mechs, _) in PARAMS.items():
        value = getattr(args, param)
        if value is None:
            continue
        if mech not in mechs:
            raise InvalidArgument(f"{param}={value} is not a parameter of {mech}")
        kwargs[param] = value
    if args.direction is not None:
        if mech != "subsampled-gaussian":
            raise InvalidArgument(f"direction={args.direction} is not a parameter of {mech}")
        kwargs["direction"] = args.direction
    for req in REQUIRED[mech]:
        if req not in kwargs:
            raise InvalidArgument(f"{req} is required for {mech} (--{req})")
    if mech == "random-allocation":
        if args.steps is None:
            raise InvalidArgument("steps is required for random-allocation (--steps M)")
        return MECHANISMS[mech](steps=args.steps, epochs=args.epochs or "1", **kwargs)
    if args.epochs is not None:
        raise InvalidArgument(f"epochs={args.epochs} is not a parameter of {mech}")
    pair = MECHANISMS[mech](**kwargs)
    steps = integer("steps", args.steps or "1", ge=1)
    return pair if steps == 1 else compose(pair, steps)


def _target(args: argparse.Namespace, base: Target) -> Target:
    start = integer("prec", args.prec, ge=16) if args.prec is not None else base.start_prec
    top = integer("max-prec", args.max_prec, ge=16) if args.max_prec is not None else max(base.max_prec, start)
    if top < start:
        raise InvalidArgument(f"max-prec={top} must be >= prec={start}")
    return Target(base.rel_tol, base.abs_tol, start, top)


def _order_t(args: argparse.Namespace) -> tuple[str, str]:
    if (args.order is None) == (args.t is None):
        raise InvalidArgument("exactly one of --order and --t is required")
    if args.order is not None:
        return "order", args.order
    return "t", args.t


def _inputs(args: argparse.Namespace, pair: PrivacyPair) -> dict[str, object]:
    if isinstance(pair, RandomAllocation):
        return {"mechanism": args.mechanism, "params": pair.params(), "steps": pair.steps, "epochs": pair.epochs}
    base = pair.parts[0][0] if hasattr(pair, "parts") else pair
    return {"mechanism": args.mechanism, "params": base.params(), "steps": int(args.steps or 1)}


def _enclosure_record(quantity: str, enc: Enclosure, inputs: dict[str, object], **extra: object) -> dict[str, object]:
    rec: dict[str, object] = {"quantity": quantity}
    rec.update(enc.to_dict())
    rec.update(inputs)
    rec.update(extra)
    return rec


def _run_tv(args: argparse.Namespace, pair: PrivacyPair, inputs: dict[str, object]) -> dict[str, object]:
    if not isinstance(pair, RandomAllocation):
        raise Unsupported(f"tv is implemented for random-allocation only, not mechanism={args.mechanism}")
    method = args.method
    inputs["method"] = method
    if method == "certified":
        width = float(real("width", args.width, gt=0, lt=1))
        numeric = approx_tv_lattice(pair.steps, pair.epochs, pair.sigma)
        grid = auto_grid(pair, width / 2, ref=numeric)
        with _progress(args) as note:
            up = tv_bound(pair, grid, "upper", note)
            low = tv_bound(pair, grid, "lower", note)
        enc = Enclosure.from_bounds(low.bound.lower, up.bound.upper, grid.prec)
        return _enclosure_record(
            "tv",
            enc,
            inputs,
            certified=True,
            tv_upper=enc.upper_str(),
            tv_lower=enc.lower_str(),
            grid=grid.to_dict(),
            seconds=round(up.seconds + low.seconds, 3),
        )
    if method == "closed-form":
        target = _target(args, DEFAULT_TARGET)
        enc = tv_upper_closed_form(pair, target)
        acc = attack_accuracy_upper(pair, target)
        chi2 = chi2_epochs(pair, target)
        return _enclosure_record(
            "tv_upper",
            enc,
            inputs,
            certified=True,
            tv_upper=enc.upper_str(),
            accuracy_upper=acc.upper_str(),
            chi2_upper=chi2.upper_str(),
        )
    if method == "exact":
        res = approx_tv_lattice(pair.steps, pair.epochs, pair.sigma)
        lo, hi = res.value - res.error_estimate, res.value + res.error_estimate
        return {
            "quantity": "tv",
            "certified": False,
            "value": f"{res.value:.12g}",
            "lower": f"{lo:.12g}",
            "upper": f"{hi:.12g}",
            "error_estimate": f"{res.error_estimate:.3g}",
            "grid": res.grid,
            **inputs,
        }
    n = integer("samples", args.samples, ge=2)
    seed = integer("seed", args.seed, ge=0)
    est, se = approx_tv_monte_carlo(pair.steps, pair.epochs, pair.sigma, n=n, seed=seed)
    return {
        "quantity": "tv",
        "certified": False,
        "value": f"{est:.12g}",
        "stderr": f"{se:.3g}",
        "lower": f"{est - 4 * se:.12g}",
        "upper": f"{est + 4 * se:.12g}",
        "samples": n,
        "seed": seed,
        **inputs,
    }


@contextmanager
def _progress(args: argparse.Namespace) -> Iterator[Callable[[str, float], None]]:
    """A rich progress bar on a terminal; silent with --json or when output is not a terminal."""
    if args.json or not sys.stderr.isatty():
        yield lambda what, frac: None
        return
    from rich.progress import Progress

    with Progress(transient=True) as bar:
        task = bar.add_task("certifying", total=1.0)
        yield lambda what, frac: bar.update(task, completed=frac, description=what)


def _run_calibrate(args: argparse.Namespace) -> dict[str, object]:
    key = load_private_key(Path(args.sign)) if args.sign else None
    if args.sign and not args.out:
        raise InvalidArgument("sign needs --out: only a written certificate can be signed")
    if args.mechanism == "random-allocation":
        if args.steps is None:
            raise InvalidArgument("steps is required for random-allocation (--steps M)")
        if args.tv is None:
            raise InvalidArgument("tv is required for random-allocation (--tv LAMBDA)")
        with _progress(args) as note:
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
            write_certificate(Path(args.out), finalize(body, key))
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
            "q": decimal_str(res_e.q),
            "steps": res_e.steps,
            "epsilon": decimal_str(res_e.eps),
            "delta": decimal_str(res_e.delta),
            "direction": res_e.direction,
            "step": decimal_str(res_e.step),
            "sigma": decimal_str(res_e.sigma),
            "epsilon_upper": res_e.eps_at_sigma.upper_str(),
            "sigma_miss": decimal_str(res_e.sigma_miss),
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
            write_certificate(Path(args.out), finalize(body, key))
            rec["certificate"] = args.out
        return rec
    raise Unsupported(
        f"calibrate is implemented for random-allocation and subsampled-gaussian, not mechanism={args.mechanism}"
    )


def _run(args: argparse.Namespace) -> dict[str, object]:
    simple = {"keygen": _run_keygen, "sign": _run_sign, "verify": _run_verify, "calibrate": _run_calibrate}
    if args.command in simple:
        return simple[args.command](args)
    pair = _pair(args)
    cmd = args.command
    inputs = _inputs(args, pair)
    if cmd == "tv":
        return _run_tv(args, pair, inputs)
    if cmd in ("cgf", "rdp", "gap"):
        kind, value = _order_t(args)
        target = _target(args, DEFAULT_TARGET)
        if kind == "order":
            alpha = real("order", value, gt=1)
            t = alpha - 1
        else:
            t = real("t", value, gt=0)
            alpha = t + 1
        inputs.update({"order": _fmt(alpha), "t": _fmt(t)})
        if cmd == "cgf":
            enc = cgf(pair, t, target)
        elif cmd == "rdp":
            enc = rdp(pair, alpha, target)
        else:
            enc = gap(pair, t, target)
        return _enclosure_record(cmd, enc, inputs)
    if cmd == "kl":
        return _enclosure_record("kl", kl(pair, _target(args, DEFAULT_TARGET)), inputs)
    if cmd == "rho":
        res = rho_detail(pair, _target(args, DEFAULT_TARGET), method=args.method)
        arg = res.argmax
        where = None if arg is None else ("t->0" if arg == 0 else "t->inf" if arg == float("inf") else f"{arg:.6g}")
        return _enclosure_record("rho", res.enclosure, inputs, method=res.method, sup_at=where)
    orders = None
    if args.orders is not None:
        orders = [o.strip() for o in args.orders.split(",") if o.strip()]
        if not orders:
            raise InvalidArgument(f"orders={args.orders} must list at least one order")
    target = _target(args, CONVERSION_TARGET)
    if cmd == "eps":
        res = epsilon(pair, args.delta, via=args.via, orders=orders, target=target)
        inputs["delta"] = args.delta
        name = "epsilon"
    else:
        res = delta(pair, args.eps, via=args.via, orders=orders, target=target)
        inputs["eps"] = args.eps
        name = "delta"
    extra: dict[str, object] = {
        name: res.enclosure.upper_str(),
        "via": res.via,
        "order": None if res.order == float("inf") else f"{res.order:.17g}",
        "grid": res.grid,
    }
    if res.orders is not None:
        extra["orders"] = [_fmt(o) for o in res.orders]
    return _enclosure_record(name, res.enclosure, inputs, **extra)


def _fmt(x: Fraction) -> str:
    return decimal_str(x)


def _human(rec: dict[str, object]) -> str:
    if rec["quantity"] == "verify":
        checks = "; ".join(
            f"{c['check']}: {c['quantity']} {c['relation']} {c['threshold']} (recomputed {c['recomputed']})"
            for c in rec["checks"]
        )  # type: ignore[union-attr]
        who = f"signed by {rec['signed_by']}" if rec["signed_by"] else "unsigned"
        return f"{rec['certificate']}: valid, {who}\n  {checks}\n  {rec['seconds']} s"
    if rec["quantity"] in ("keygen", "sign"):
        return "\n".join(f"{k}: {v}" for k, v in rec.items() if k != "quantity")
    if rec["quantity"] == "calibration" and rec["mechanism"] == "subsampled-gaussian":
        miss = rec["epsilon_lower_at_miss"]
        lines = [
            f"subsampled-gaussian q={rec['q']} steps={rec['steps']} direction={rec['direction']}: "
            f"target ({rec['epsilon']}, {rec['delta']})",
            f"  sigma = {rec['sigma']}: certified epsilon <= {rec['epsilon_upper']} (RDP, {len(rec['orders'])} orders)",
            f"  sigma = {rec['sigma_miss']}: " + (f"certified RDP epsilon >= {miss}" if miss else "miss not certified"),
        ]
        if rec.get("certificate"):
            lines.append(f"  certificate written to {rec['certificate']}")
        return "\n".join(lines)
    if rec["quantity"] == "calibration":
        return _human_calibration(rec)
    if rec["quantity"] == "tv" or rec.get("method") == "closed-form":
        return _human_tv(rec)
    params = ", ".join(f"{k}={v}" for k, v in rec["params"].items())  # type: ignore[union-attr]
    head = f"{rec['quantity']} of {rec['mechanism']}({params})"
    if "epochs" in rec:
        pass  # random-allocation: steps and epochs are parameters, shown above
    elif rec.get("steps", 1) != 1:
        head += f" composed {rec['steps']} times"
    shown = {"epsilon": ("delta",), "delta": ("eps",)}.get(str(rec["quantity"]), ("order",))
    for key in shown:
        if rec.get(key) is not None:
            head += f", {key}={rec[key]}"
    lines = [
        head,
        f"  enclosure [{rec['lower']}, {rec['upper']}]",
        f"  width {rec['width']}  ({rec['prec_bits']} bits)",
    ]
    if rec["quantity"] in ("epsilon", "delta"):
        q = rec["quantity"]
        lines.append(f"  sound {q} = {rec[q]}  (via {rec['via']}, order {rec['order']}, grid {rec['grid']})")
    if rec["quantity"] == "rho":
        lines.append(
            f"  method {rec['method']}" + (f", sup approached at {rec['sup_at']}" if rec.get("sup_at") else "")
        )
    return "\n".join(lines)


def _human_calibration(rec: dict[str, object]) -> str:
    lines = [
        f"random-allocation M={rec['steps']} E={rec['epochs']}, target TV <= {rec['tv']} "
        f"(attack accuracy <= {0.5 + float(rec['tv']) / 2:g})",
        f"  sigma = {rec['sigma']}: certified TV <= {rec['tv_upper']}",
    ]
    if rec["tv_lower_at_miss"] is not None:
        lines.append(f"  sigma = {rec['sigma_miss']} misses: certified TV >= {rec['tv_lower_at_miss']}")
    else:
        lines.append(f"  sigma = {rec['sigma_miss']}: miss NOT certified ({rec['miss_reason']})")
    lines.append(f"  numeric exact sigma {rec['exact_sigma']}, closed-form sigma {rec['closed_form_sigma']}")
    lines.append(f"  {rec['seconds']} s")
    if rec.get("certificate"):
        lines.append(f"  certificate written to {rec['certificate']}")
    return "\n".join(lines)


def _human_tv(rec: dict[str, object]) -> str:
    params = ", ".join(f"{k}={v}" for k, v in rec["params"].items())  # type: ignore[union-attr]
    head = f"total variation of random-allocation({params}), method {rec['method']}"
    if rec.get("certified") and rec["quantity"] == "tv":
        return "\n".join([head, f"  certified {rec['tv_lower']} <= TV <= {rec['tv_upper']}  ({rec['seconds']} s)"])
    if rec.get("certified"):
        return "\n".join(
            [
                head,
                f"  certified TV upper bound U(c_E) = {rec['tv_upper']}  (enclosure [{rec['lower']}, {rec['upper']}])",
                f"  membership-attack accuracy <= {rec['accuracy_upper']}, chi^2 c_E <= {rec['chi2_upper']}",
            ]
        )
    extra = f"error estimate {rec['error_estimate']}" if "error_estimate" in rec else f"standard error {rec['stderr']}"
    return "\n".join([head, f"  NOT certified: TV ~ {rec['value']}  ({extra})"])


EXIT = {InvalidArgument: 2, Unsupported: 2, PrecisionExhausted: 3, Undecided: 3, CertificateInvalid: 1}


def _exit_code(exc: CertdpError) -> int:
    for cls, code in EXIT.items():
        if isinstance(exc, cls):
            return code
    return 1


def main(argv: Sequence[str] | None = None, out: Callable[[str], object] = print) -> int:
    """Entry point of the ``certdp`` console script; returns the exit code."""
    parser = _build()
    args = parser.parse_args(argv)
    try:
        rec = _run(args)
    except CertdpError as exc:
        sys.stderr.write(f"certdp: error: {exc}\n")
        return _exit_code(exc)
    out(json.dumps(rec) if args.json else _human(rec))
    return 0


def main_entry() -> None:
    """Console-script wrapper: exit with :func:`main`'s code."""
    raise SystemExit(main())
