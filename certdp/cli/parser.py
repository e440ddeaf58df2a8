"""Argument parsing: commands, mechanisms, parameters and their help (with examples)."""

from __future__ import annotations

import argparse
from typing import NoReturn

from certdp import __version__
from certdp.errors import InvalidArgument

PARAMS: dict[str, tuple[tuple[str, ...], str]] = {
    "sigma": (
        ("gaussian", "discrete-gaussian", "subsampled-gaussian", "random-allocation"),
        "noise scale sigma > 0 (noise multiplier for subsampled-gaussian)",
    ),
    "shift": (
        (
            "gaussian",
            "laplace",
            "gaussian-mixture",
            "student-t",
            "generalized-gaussian",
            "discrete-laplace",
            "discrete-gaussian",
        ),
        "sensitivity shift (default 1; integer >= 1 for discrete mechanisms)",
    ),
    "scale": (("laplace",), "Laplace scale b > 0 (default 1)"),
    "a": (("discrete-laplace",), "discrete Laplace decay a > 0 (mass proportional to e^{-a|z|})"),
    "q": (("subsampled-gaussian",), "Poisson sampling rate q in (0, 1]"),
    "m": (("gaussian-mixture",), "mixture component means +-m, m >= 0 (default 1; unit variances)"),
    "nu": (("student-t",), "Student-t degrees of freedom nu >= 1 (default 3; unit scale)"),
    "beta": (("generalized-gaussian",), "generalized Gaussian exponent beta in [1, 2] (density ~ e^{-|x|^beta/beta})"),
}

REQUIRED = {
    "gaussian": ("sigma",),
    "laplace": (),
    "gaussian-mixture": (),
    "student-t": (),
    "generalized-gaussian": (),
    "discrete-laplace": ("a",),
    "discrete-gaussian": ("sigma",),
    "subsampled-gaussian": ("q", "sigma"),
    "random-allocation": ("sigma",),
}

#: The mechanism names (the keys of certdp.pairs.MECHANISMS) and the subsampled Gaussian's
#: directions (certdp.pairs.DIRECTIONS), spelled here so that building the parser imports no pair
#: (nor flint): --help and --version stay fast. tests/test_cli_startup.py checks they agree.
MECHANISM_NAMES: tuple[str, ...] = tuple(REQUIRED)
DIRECTIONS: tuple[str, ...] = ("remove", "add", "both")

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
    "expansion": "certdp expansion gaussian-mixture --m 1 --shift 0.1 --t 1 --json",
}

HELP = {
    "cgf": "certified CGF K(t) = t D_{t+1}(P||Q)",
    "rdp": "certified Renyi divergence D_alpha(P||Q)",
    "kl": "certified KL divergence KL(P||Q)",
    "rho": "certified zCDP parameter rho = sup_t K(t)/(t(t+1))",
    "gap": "certified zCDP-RDP gap Gamma(t) = rho t(t+1) - K(t)",
    "eps": "certified epsilon at delta: [lower, upper] bounds the true epsilon (the upper end is a sound value)",
    "delta": "certified delta at epsilon: [lower, upper] bounds the true delta (the upper end is a sound value)",
    "tv": "total variation of random allocation (closed-form bound, certified bounds, numeric exact, Monte Carlo)",
    "calibrate": "certified sigma for a TV target (random-allocation) or an (epsilon, delta) target "
    "(subsampled-gaussian, RDP): meets it, and one step less misses it",
    "expansion": "certified local-expansion terms of the gap (Su, Yang, Su, Wang, arXiv:2610.02414, Thm 3.1): "
    "rho - E_P L, kappa_3, kappa_4",
}

TV_METHODS = ("closed-form", "exact", "monte-carlo", "certified")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"certdp: error: {message}\n")


class _RaisingParser(_Parser):
    """A parser whose usage errors raise InvalidArgument instead of printing and exiting: a sweep
    checks every cell's command line before running any, and a worker reports the error text."""

    def error(self, message: str) -> NoReturn:
        raise InvalidArgument(message)


#: Flags that pick a route (the PLD lattice or RDP orders, a TV method); the help of a mechanism
#: lists what any of their choices reads.
_ROUTE_FLAGS = ("via", "method")
_ALWAYS_SHOWN = {"help", "json", "mechanism", "kind"}


def mechanism_flags(parser: argparse.ArgumentParser, command: str, namespace: argparse.Namespace) -> set[str] | None:
    """The flags (argparse dests) that ``certdp COMMAND MECHANISM`` reads for the mechanism (or
    the --event file) already parsed into ``namespace``: those certdp.cli.flags.used_flags
    accepts for some choice of the route flags not given yet (--via, --method), less the other
    mechanisms' parameters; None (show every flag) when no known mechanism or event is given.

    Contract: a flag outside the result is refused for that mechanism (by reject_unused, or as
    "not a parameter of" it) whatever route the user picks.
    """
    from certdp.cli.flags import used_flags  # flags imports this module

    mech = getattr(namespace, "mechanism", None)
    event = getattr(namespace, "event", None)
    if event is None and mech not in REQUIRED:
        return None
    if command == "calibrate" and mech not in ("random-allocation", "subsampled-gaussian"):
        return None  # calibrate refuses the mechanism itself
    variants: list[dict[str, object]] = [{}]
    if command == "calibrate" and mech == "random-allocation":
        variants.append({"tv": "0.1"})  # a TV target, or (without --tv) an (epsilon, delta) one
    for action in parser._actions:
        if action.dest in _ROUTE_FLAGS and action.choices and getattr(namespace, action.dest, None) is None:
            variants = [{**v, action.dest: choice} for v in variants for choice in action.choices]
    used: set[str] = set()
    for variant in variants:
        used |= used_flags(argparse.Namespace(**{**vars(namespace), **variant, "command": command}))
    if event is None:
        used -= {param for param, (mechs, _) in PARAMS.items() if mech not in mechs}
        if mech != "subsampled-gaussian" and not (
            mech == "random-allocation" and command in ("eps", "delta", "calibrate")
        ):
            used.discard("direction")
        if mech != "random-allocation":
            used.discard("k")
        if mech not in ("subsampled-gaussian", "random-allocation"):
            used.discard("epochs")
    return used


class _MechanismHelp(argparse.Action):
    """-h/--help of a command that takes a mechanism: after the mechanism (``certdp calibrate
    subsampled-gaussian --help``) only the flags it reads (:func:`mechanism_flags`), else all."""

    def __init__(self, option_strings: list[str], command: str, **kwargs: object) -> None:
        kwargs.update(dest=argparse.SUPPRESS, default=argparse.SUPPRESS, nargs=0)
        super().__init__(option_strings, **kwargs)  # type: ignore[arg-type]
        self.command = command

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, *_: object) -> None:
        shown = mechanism_flags(parser, self.command, namespace)
        if shown is not None:
            for action in parser._actions:
                if action.option_strings and action.dest not in shown | _ALWAYS_SHOWN and action is not self:
                    action.help = argparse.SUPPRESS
            what = getattr(namespace, "mechanism", None) or "--event"
            kind = f" {namespace.kind}" if getattr(namespace, "kind", None) else ""
            parser.description = (
                f"{parser.description}\nThe flags that certdp {self.command}{kind} {what} reads "
                f"(certdp {self.command}{kind} --help lists every command flag)."
            )
        parser.print_help()
        parser.exit()


def _mechanism_help(p: argparse.ArgumentParser, command: str) -> None:
    p.add_argument(
        "-h",
        "--help",
        action=_MechanismHelp,
        command=command,
        help="show this help and exit (after a mechanism: only the flags it reads)",
    )


def _precision_and_json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--prec", default=None, help="starting working precision in bits (default 64)")
    p.add_argument("--max-prec", default=None, help="largest working precision in bits (default 4096)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def build_parser(raising: bool = False) -> argparse.ArgumentParser:
    """The ``certdp`` parser; with ``raising``, a usage error raises InvalidArgument (one line)
    instead of printing it and exiting."""
    cls = _RaisingParser if raising else _Parser
    parser = cls(
        prog="certdp",
        description="Certified differential-privacy accounting: every number is a rigorous ball-arithmetic enclosure.",
        epilog="example:\n  " + EXAMPLES["eps"],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"certdp {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="command", parser_class=cls)
    sub.required = True
    mech_names = ", ".join(MECHANISM_NAMES)
    for name in ("cgf", "rdp", "kl", "rho", "gap", "eps", "delta", "tv", "calibrate", "expansion"):
        p = sub.add_parser(
            name,
            help=HELP[name],
            description=HELP[name] + ".",
            epilog=f"mechanisms: {mech_names}\nexample:\n  {EXAMPLES[name]}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
            add_help=False,
        )
        _mechanism_help(p, name)
        if name in ("eps", "delta"):  # --event describes the mechanism instead
            p.add_argument("mechanism", nargs="?", help="mechanism name (kebab-case); omit it with --event")
            p.add_argument(
                "--event",
                metavar="FILE",
                help="a dp_accounting DpEvent in its JSON form instead of a mechanism: every event of "
                "dp_accounting 0.6 is certified or refused with its reason (table: docs/integrations.md); "
                "an event of one pair follows the same rule as a mechanism, one of several parts or "
                "directions (sampling without or with replacement, mixtures of Gaussians, randomized response, "
                "Poisson-sampled Laplace) certdp's rule per part; with replacement the upper end reveals a "
                "record's count in the batch and the lower end is an extremal dataset's: both proved, not tight",
            )
            p.add_argument(
                "--relation",
                choices=("add_or_remove_one", "replace_one", "replace_special"),
                help="with --event: dp_accounting's neighbouring relation (default add_or_remove_one; "
                "sampling without or with replacement needs replace_one)",
            )
        else:
            p.add_argument("mechanism", help="mechanism name (kebab-case)")
        for param, (mechs, text) in PARAMS.items():
            p.add_argument(f"--{param}", help=f"{text}; for {', '.join(mechs)}")
        p.add_argument(
            "--direction",
            help=f"subsampled-gaussian (and random-allocation's eps / delta): divergence {', '.join(DIRECTIONS)} "
            "(default both)",
        )
        p.add_argument(
            "--steps",
            default=None,
            help="number of composed runs, an integer >= 1 (default 1; calibrate subsampled-gaussian needs "
            "--steps or --epochs); for random-allocation: steps M per epoch",
        )
        p.add_argument(
            "--epochs",
            default=None,
            help="random-allocation: number of epochs E (default 1); subsampled-gaussian: epochs E > 0 of "
            "Poisson-sampled DP-SGD, meaning steps = ceil(E/q) (instead of --steps)",
        )
        if name in ("eps", "delta", "calibrate"):
            p.add_argument(
                "--k",
                help="random-allocation: steps per epoch that each record is used in, 1 <= k <= M (default 1; "
                "1 < k < M: upper end by the reduction to k*E epochs of 1-of-floor(M/k), lower end by an additive "
                "statistic, neither refined to --rel-width, k <= 16 for the lower end; k = M: exactly the Gaussian "
                "of mu^2 = M*E/sigma^2, both ends refined; docs/math.md §9.8)",
            )
        if name in ("cgf", "rdp", "gap"):
            p.add_argument("--order", help="Renyi order alpha > 1 (alpha = t + 1)")
            p.add_argument("--t", help="CGF argument t > 0")
        if name == "expansion":
            p.add_argument("--t", help="order t > 0 of the gap (default 1)")
        if name in ("eps", "calibrate"):
            p.add_argument("--delta", required=name == "eps", help="target delta in (0, 1)")
        if name == "delta":
            p.add_argument("--eps", required=True, help="target epsilon >= 0")
        if name in ("eps", "delta"):
            p.add_argument(
                "--via",
                choices=("exact", "pld", "rdp", "zcdp"),
                help="the accountant (default: one rule, docs/accounting.md: exact for gaussian and its "
                "compositions, pld where every part has a loss distribution, else rdp; a switch from pld to rdp "
                "at pld's limits is a warning). exact: closed form (gaussian); pld: two-sided lattice bounds; "
                "rdp / zcdp: the conversion bounds eps (delta) from above only, so [lower, upper] then takes the "
                "best proved lower end (exact, pld, or 0; see lower_from) and the conversion's value is in "
                "rdp_bound / zcdp_bound",
            )
            p.add_argument(
                "--h",
                help="pld: lattice spacing (default 2^-11 = 0.00048828125, halved while one step's lattice has fewer "
                "than 2048 cells, down to 2^-20); pairs whose loss has atoms (laplace, "
                "discrete-laplace, discrete-gaussian) use a spacing near it that puts the lattice just below their "
                "atoms (the discrete ones: the atoms' own spacing, exact); given, one lattice and no refinement",
            )
            p.add_argument(
                "--rel-width",
                help="pld without --h: target relative width (upper - lower)/upper of the enclosure in (0, 1) "
                "(default 1e-4 for eps; delta: none, one lattice at the default spacing; random-allocation: 1e-3 "
                "for eps, 1e-2 for delta); the lattice is refined until it is met, else exit 3 "
                "(PrecisionExhausted) with the width reached",
            )
            p.add_argument("--orders", help="comma-separated Renyi orders to search instead of the default")
        if name == "tv":
            p.add_argument("--method", choices=TV_METHODS, help="how TV is computed (default closed-form)")
            p.add_argument("--samples", help="monte-carlo: number of draws (default 200000)")
            p.add_argument("--seed", help="monte-carlo: random seed (default 0)")
            p.add_argument("--width", help="certified: target width of [lower, upper] (default 1e-6)")
        if name == "calibrate":
            p.add_argument("--tv", help="random-allocation: TV target in (0, 1); attack accuracy <= 1/2 + tv/2")
            p.add_argument(
                "--epsilon",
                help="subsampled-gaussian and random-allocation: epsilon target (with --delta; random-allocation "
                "takes --tv or --epsilon/--delta, with --step default 1e-4 and --direction, --k)",
            )
            p.add_argument(
                "--step",
                help="sigma is rounded up to a multiple of this (default 1e-5 with --via pld, else 1e-6)",
            )
            p.add_argument(
                "--via",
                choices=("pld", "rdp"),
                help="subsampled-gaussian: the accountant (default pld up to 1000000 steps, rdp beyond with a "
                "warning: docs/accounting.md; pld: two-sided lattice bounds, and the refutation one step below is "
                "a proved DP violation; rdp: RDP orders, whose refutation only says that this accountant cannot "
                "certify it)",
            )
            p.add_argument(
                "--h",
                help="via pld: lattice spacing of the decisive bounds, a power of two (default 2^-12 at step "
                "1e-5, twice as coarse per factor 4 in the step)",
            )
            p.add_argument("--out", help="write a certificate (JSON, format v2) to this file, atomically")
            p.add_argument("--sign", help="sign the certificate with this Ed25519 private key (see certdp keygen)")
        if name == "rho":
            p.add_argument(
                "--method",
                choices=("auto", "closed-form", "search"),
                help="how rho is certified (default auto)",
            )
        if name == "calibrate":  # its precision is chosen per evaluation, not by the user
            p.add_argument("--json", action="store_true", help="print one JSON object")
        else:
            _precision_and_json(p)
    gd = sub.add_parser(
        "gdp",
        help="certified zCDP -> GDP: the optimal mu(rho) and the bounds sqrt(pi rho) <= mu <= sqrt(8 rho) "
        "(arXiv:2611.01218)",
        description="Every rho-zCDP mechanism is mu(rho)-GDP, mu(rho) = 2 Phi^-1(1/(1+e^-t)), "
        "t tanh(t/2) = rho (optimal; arXiv:2611.01218, Optimal Conversion from Zero-Concentrated to Gaussian DP).",
        epilog="example:\n  certdp gdp --rho 100 --json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    gd.add_argument("--rho", required=True, help="zCDP parameter rho > 0")
    cv = sub.add_parser(
        "convert",
        help="certified conversions between zCDP, GDP, (eps, delta) and TV",
        description="Convert a zCDP rho or a GDP mu: to GDP (mu), to (eps, delta) (with --delta or --eps), "
        "to TV (and attack accuracy 1/2 + TV/2), or GDP to zCDP (rho = mu^2/2).",
        epilog="examples:\n  certdp convert --from zcdp --to gdp --value 0.5\n"
        "  certdp convert --from gdp --to eps-delta --value 1 --delta 1e-5 --json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    cv.add_argument("--from", dest="from_", required=True, choices=("zcdp", "gdp"), help="the given notion")
    cv.add_argument("--to", required=True, choices=("gdp", "eps-delta", "tv", "zcdp"), help="the target notion")
    cv.add_argument("--value", required=True, help="rho (from zcdp) or mu (from gdp), > 0")
    cv.add_argument("--delta", help="eps-delta: certified epsilon at this delta")
    cv.add_argument("--eps", help="eps-delta: certified delta at this epsilon")
    for p in (gd, cv):
        _precision_and_json(p)
    k = sub.add_parser(
        "keygen",
        help="create an Ed25519 key pair for signing certificates",
        description="Write a private key (mode 600) to OUT and its public half to OUT.pub.",
        epilog="exit codes: 0 written, 2 OUT or OUT.pub exists or cannot be written\n"
        "example:\n  certdp keygen --out project.key",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    k.add_argument("--out", required=True, help="private key path (OUT.pub receives the public key)")
    k.add_argument("--json", action="store_true", help="print one JSON object")
    g = sub.add_parser(
        "sign",
        help="sign a certificate file in place (atomically)",
        epilog="exit codes: 0 signed, 1 the digest does not match the body (tampered), 2 unreadable, unparseable "
        "or schema-invalid certificate or key\n"
        "example:\n  certdp sign cert.json --key project.key",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    g.add_argument("certificate", help="certificate file")
    g.add_argument("--key", required=True, help="Ed25519 private key (PEM) from certdp keygen")
    g.add_argument("--json", action="store_true", help="print one JSON object")
    v = sub.add_parser(
        "verify",
        help="verify a certificate: schema, digest, signature, and recompute its claims",
        description="Verify a certificate: strict parsing within the verifier's work limits, schema, digest, "
        "signature, then recompute its claim and refutation and prove the one number each records (the upper "
        "end of a claim, the lower end of a refutation); the output lists the numbers it rechecked and the "
        "informative ones it did not. Either --pubkey (the signer must be that key) "
        "or --allow-untrusted (any signer, or none: the output then says signer_trusted: false) is required.",
        epilog="exit codes: 0 valid; 1 a digest, signature, claim or recorded number that does not hold; 2 usage, "
        "an unparseable or schema-invalid certificate, or a file over the work limits; 3 precision exhausted "
        "or undecided (a prec_bits too small for the check) (docs/certificates.md)\n"
        "example:\n  certdp verify cert.json --pubkey project.key.pub",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    v.add_argument("certificate", help="certificate file")
    trust = v.add_mutually_exclusive_group()
    trust.add_argument("--pubkey", help="require a signature by this public key (.pub from certdp keygen)")
    trust.add_argument(
        "--allow-untrusted",
        action="store_true",
        help="check the claims without checking the signer against a trusted key (reported as signer_trusted: false)",
    )
    v.add_argument("--json", action="store_true", help="print one JSON object")
    _audit_parser(sub)
    _claims_parser(sub)
    _curve_parser(sub)
    _table_parser(sub)
    _sweep_parser(sub)
    for name, p in sub.choices.items():
        if name != "sweep":  # a sweep's cells each run under these budgets (docs/sweeps.md)
            _budget_flags(p)
    return parser


def _budget_flags(p: argparse.ArgumentParser) -> None:
    """--max-seconds and --max-memory, which every command reads (certdp.budget; docs/cli.md)."""
    from certdp.budget import DEFAULT_MAX_MEMORY, DEFAULT_MAX_SECONDS

    p.add_argument(
        "--max-seconds",
        help=f"wall-time budget in seconds (default {DEFAULT_MAX_SECONDS}); past it the command stops with exit 3, "
        "says how far it got, and writes no file",
    )
    p.add_argument(
        "--max-memory",
        help=f"memory budget, e.g. 4GiB or 500MB (default {DEFAULT_MAX_MEMORY}); a step whose estimated memory "
        "exceeds it is refused before it runs (exit 3, no file)",
    )


def _sweep_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    s = sub.add_parser(
        "sweep",
        help="run a grid of calibrate, eps, delta, verify, audit or claims commands on Dask, resumably",
        description="Run every cell of SPEC (a TOML file: a job and a grid of its parameters; docs/sweeps.md) as "
        "one task on Dask, and write one file per cell to --out DIR (a certificate for calibrate, the command's "
        "JSON record otherwise) plus DIR/manifest.json (the spec, the versions, each cell's status and time). "
        "Files are written atomically on this machine as results arrive; a second run skips every cell whose "
        "file exists and checks out, and re-runs the failed ones. Certificates are signed here, after "
        "collection: the key never leaves this process. The schedulers: local (default: a Dask LocalCluster, "
        "one worker process per core), processes (Dask's multiprocessing scheduler), serial (in this process, "
        'no Dask) or tcp://HOST:PORT (a running Dask scheduler). Dask: pip install "certdp[sweep]".',
        epilog="exit codes: 0 every cell ok, 1 a cell failed or its check failed, 2 bad SPEC or usage (the "
        "message names the key)\n"
        "examples:\n"
        "  certdp sweep certificates/certificates.toml --out certs --sign project.key\n"
        "  certdp sweep table.toml --out results --scheduler tcp://10.0.0.5:8786 --json",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s.add_argument("spec", help="the sweep specification (TOML)")
    s.add_argument("--out", required=True, metavar="DIR", help="output folder (created if missing)")
    s.add_argument(
        "--scheduler",
        help="local (default), processes, serial, or tcp://HOST:PORT of a running Dask scheduler",
    )
    s.add_argument("--workers", metavar="N", help="worker processes for local and processes (default: one per core)")
    s.add_argument("--sign", metavar="KEY", help="sign each certificate with this Ed25519 private key, on this machine")
    s.add_argument(
        "--recheck",
        choices=("yes", "no"),
        help="verify each certificate a worker sends (recompute its claim and refutation) on this machine before "
        "signing or writing it (default: yes with --sign on a tcp:// cluster, whose workers may not be yours; "
        "no on this machine's own worker processes)",
    )
    s.add_argument(
        "--dry-run",
        action="store_true",
        help="check the spec and list the cells (and which a run would skip) without running any",
    )
    s.add_argument("--json", action="store_true", help="print one JSON object")


def _curve_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    c = sub.add_parser(
        "curve",
        help="certified curves as CSV and PNG: epsilon against steps (eps), Renyi divergence against order (rdp)",
        description="eps: the certified epsilon band (both ends of the PLD lattice enclosure) of Poisson-subsampled "
        "Gaussian DP-SGD at each step count, optionally beside installed peers' floats (--compare). rdp: the "
        "certified Renyi curve D_alpha of a mechanism with the zCDP line rho alpha and the gap "
        "Gamma(t) = rho t(t+1) - K(t) (Su, Yang, Su, Wang, arXiv:2610.02414). PNGs need matplotlib "
        '(pip install "certdp[plot]").',
        epilog="examples:\n"
        "  certdp curve eps subsampled-gaussian --q 0.01 --sigma 1.0 --steps 1..1000:100 --delta 1e-5 --csv eps.csv "
        "--png eps.png --compare dp_accounting,opacus\n"
        "  certdp curve rdp laplace --orders 1.01..256 --png rdp.png",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=False,
    )
    _mechanism_help(c, "curve")
    c.add_argument("kind", choices=("eps", "rdp"), help="which curve")
    c.add_argument("mechanism", help="mechanism name (eps: subsampled-gaussian)")
    for param, (mechs, text) in PARAMS.items():
        c.add_argument(f"--{param}", help=f"{text}; for {', '.join(mechs)}")
    c.add_argument("--direction", help=f"subsampled-gaussian divergence: {', '.join(DIRECTIONS)} (default both)")
    c.add_argument(
        "--steps",
        help="eps: step counts A..B (each), A..B:k (A, A+k, ... and B) or N1,N2,... (at most 200 points); "
        "rdp: the number of composed runs (default 1)",
    )
    c.add_argument("--delta", help="eps: target delta in (0, 1)")
    c.add_argument("--h", help="eps: PLD lattice spacing (default as certdp eps --via pld)")
    c.add_argument(
        "--compare",
        metavar="PEERS",
        help="eps: comma-separated installed peers among dp_accounting, prv, opacus, autodp, riskcal, drawn beside "
        "the band (their floats, not certified)",
    )
    c.add_argument(
        "--orders",
        help="rdp: orders A..B (40 log-spaced orders), A..B:n (n of them) or a1,a2,... (default 1.01..256)",
    )
    c.add_argument("--csv", metavar="FILE", help="write the points as CSV (atomically)")
    c.add_argument("--png", metavar="FILE", help="write the figure as PNG (atomically; needs matplotlib)")
    c.add_argument("--json", action="store_true", help="print one JSON object")


def _table_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    t = sub.add_parser(
        "table",
        help="a table of certified noise multipliers for a grid of DP-SGD settings (CSV, Markdown)",
        description="sigma: for every (q, steps, epsilon) of the grid, the certified noise multiplier of "
        "Poisson-subsampled Gaussian DP-SGD on the --step lattice (PLD lattice bounds, every direction), its "
        "certified epsilon, and the refutation at sigma - step (a certified lower bound above the target) "
        "when the bounds are tight enough to prove it. Each cell takes 5-60 s.",
        epilog="example:\n  certdp table sigma --q 0.001,0.01,0.1 --steps 100,1000,10000 --epsilon 1,8 --delta 1e-5 "
        "--markdown sigma.md --csv sigma.csv",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    t.add_argument("kind", choices=("sigma",), help="which table")
    t.add_argument("--q", required=True, help="comma-separated sampling rates in (0, 1]")
    t.add_argument("--steps", required=True, help="comma-separated step counts")
    t.add_argument("--epsilon", required=True, help="comma-separated epsilon targets > 0")
    t.add_argument("--delta", required=True, help="target delta in (0, 1)")
    t.add_argument(
        "--step", help="sigma lattice step (default 1e-4: the refutation at sigma - step is then usually provable)"
    )
    t.add_argument("--direction", help=f"{', '.join(DIRECTIONS)} (default both)")
    t.add_argument(
        "--jobs", metavar="N", help='worker processes (default 1; at most 8; more than 1 needs Dask: "certdp[sweep]")'
    )
    t.add_argument(
        "--scheduler",
        help="where the cells run: serial (the default for one job), processes (Dask's multiprocessing scheduler, "
        "the default for --jobs N > 1), local (a Dask LocalCluster) or tcp://HOST:PORT (a running Dask scheduler)",
    )
    t.add_argument("--csv", metavar="FILE", help="write the table as CSV (atomically)")
    t.add_argument("--markdown", metavar="FILE", help="write the table as Markdown (atomically)")
    t.add_argument("--json", action="store_true", help="print one JSON object")


AUDIT_DESCRIPTION = (
    "Regression-check other accountants: every number a peer prints (RDP at an order, epsilon, delta, "
    "a calibrated sigma) is held against certdp's certified enclosure of the SAME quantity and judged "
    "exact (inside, up to a float slack), conservative (above the upper end), UNSOUND (below the certified "
    "lower end by more than the float error of the peer's method: the peer claims more privacy than that "
    "quantity allows), roundoff (below it by no more than that float error), estimate (below it, and documented "
    "by the peer as an estimate) or inconclusive (certdp has one side only, or the peer failed)."
)


def _audit_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    a = sub.add_parser(
        "audit",
        help="audit peer accountants (dp_accounting, prv, opacus, autodp, riskcal, pld_accounting, random_allocation) "
        "against certified enclosures",
        description=AUDIT_DESCRIPTION,
        epilog="exit codes: 0 no UNSOUND value, 1 at least one UNSOUND value, an UNSOUND --claim or a --rerun "
        "whose verdicts differ (roundoff and estimate values are reported but do not count), 2 bad input "
        "or a missing peer, 3 a --claim that is inconclusive\n"
        "examples:\n"
        "  certdp audit --suite default --html report.html\n"
        "  certdp audit --peers dp_accounting,prv --cases my_configs.toml --json\n"
        '  certdp audit --claim "opacus prv eps=1.753 sigma=1.1 q=0.01 steps=1000 delta=1e-6"',
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    what = a.add_mutually_exclusive_group(required=True)
    what.add_argument("--suite", choices=("default",), help="the packaged suite (32 DP-SGD settings)")
    what.add_argument(
        "--cases",
        metavar="FILE",
        help="a TOML ([[case]] tables) or JSON case file: id, q, sigma, steps, delta, eps, orders, checks "
        "(rdp, eps-rdp, eps-pld, delta-pld, sigma, eps-allocation), pld_vdi, prv_eps_error, peers, note, "
        "and epochs, k for random allocation; see docs/audit.md",
    )
    what.add_argument(
        "--claim",
        metavar="TEXT",
        help='check one reported number: "PEER METHOD QUANTITY=VALUE KEY=VALUE ..." (the first KEY=VALUE is the '
        "reported eps, delta, sigma or rdp; METHOD rdp means an RDP accountant, anything else the exact value)",
    )
    what.add_argument(
        "--rerun",
        metavar="REPORT",
        help="rerun every peer call recorded in a report (the --json output, e.g. audits/report.json) and say "
        "which values and verdicts reproduce (exit 1 when a verdict does not)",
    )
    a.add_argument(
        "--peers",
        help="comma-separated peers among dp_accounting, prv, opacus, autodp, riskcal, pld_accounting, "
        "random_allocation (default: every installed one)",
    )
    a.add_argument(
        "--slack",
        metavar="REL",
        help="relative float slack: a value within REL x |value| of the certified enclosure is exact "
        "(default 2^-40 ~ 9.1e-13, about 4000 ulps; at most 0.01)",
    )
    a.add_argument("--html", metavar="FILE", help="write the HTML report (tables and plots; needs matplotlib) here")
    a.add_argument("--json", action="store_true", help="print one JSON object")


CLAIMS_DESCRIPTION = (
    "Check what papers and library docs print against certified enclosures. Each claim of the shipped "
    "registry (certdp/claims/*.toml: the random-allocation paper arXiv:2610.09651, the zCDP-RDP information "
    "gap paper arXiv:2610.02414, the zCDP-to-GDP paper arXiv:2611.01218, and outside papers and tutorials) "
    "is confirmed (the certified enclosure lies inside the interval the printed number stands for, or the "
    "bound or relation is certified), refuted (the certified opposite holds), imprecise (the enclosure "
    "straddles the boundary, or certdp could not certify the quantity) or out of scope (it needs data or "
    "training runs). The whole registry takes about 10 minutes on 2 cores."
)


def _claims_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    c = sub.add_parser(
        "claims",
        help="check the paper-claims registry (published numbers against certified enclosures)",
        description=CLAIMS_DESCRIPTION,
        epilog="exit codes: 0 every claim confirmed or out of scope, 1 a claim is refuted, 2 bad input, "
        "3 a claim is imprecise (none refuted)\n"
        "examples:\n"
        "  certdp claims list\n"
        "  certdp claims check --paper 2611.01218\n"
        "  certdp claims check --json --html claims.html\n"
        "  certdp claims check --file my_paper.toml   (the claim-file format: docs/claims.md)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    c.add_argument("action", choices=("check", "list"), help="check the claims, or list them without computing")
    c.add_argument("--paper", metavar="ID", help="only this paper's claims (its registry id or arXiv id)")
    c.add_argument(
        "--file",
        dest="files",
        action="append",
        metavar="FILE",
        help="a claim file instead of the registry (repeatable)",
    )
    c.add_argument("--jobs", metavar="N", help="worker processes (default: the CPU count; at most 8)")
    c.add_argument("--html", metavar="FILE", help="write the HTML report here")
    c.add_argument("--json", action="store_true", help="print one JSON object")
