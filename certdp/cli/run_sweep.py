"""The ``sweep`` command: every cell of a spec is one certdp command line, run as one task on
Dask (certdp.sweep.engine), with one output file per cell and a crash-safe manifest.

Where the work happens, and why:

- **Checked here, before any task.** Each cell's command line is parsed and its flags and values
  checked (the same parser and checks as the command line), so a typo in the spec exits 2 naming
  the key, not an hour later as a failed cell.
- **Computed on the worker.** The worker runs the command in its own process (certdp.cli.dispatch)
  against private copies of the cell's input files (a remote worker does not share this file
  system), and returns the record and, for calibrate, the unsigned certificate.
- **Written and signed here, after collection.** The private key never leaves this process: it is
  not pickled into the task graph, so it is never sent to a scheduler, held in a worker's memory
  or spilled to a worker's disk. Ed25519 signing takes well under a millisecond, so nothing is lost
  by not parallelizing it. Output files are written atomically on this machine as results arrive.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import platform
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from certdp.cert.crypto import atomic_write, load_private_key, public_key_b64
from certdp.cert.limits import recordable
from certdp.cert.strict_json import loads_strict
from certdp.cert.verify import check_integrity, verify_document
from certdp.cert.write import finalize
from certdp.cli.common import pair_from_args, progress_bar, steps_from_args
from certdp.cli.dispatch import execute
from certdp.cli.flags import apply_defaults, reject_unused
from certdp.cli.parser import build_parser
from certdp.cli.run_certs import readable_path
from certdp.cli.sweep_checks import certificate_summary, check_certificate_is_for, expected_claim
from certdp.errors import CertdpError, CertificateInvalid, InvalidArgument, LimitExceeded, fmt_value, prefixed
from certdp.fileio import read_capped
from certdp.pairs import DIRECTIONS
from certdp.pairs.params import integer, real
from certdp.sweep.engine import (
    SCHEDULERS,
    TaskDone,
    parse_scheduler,
    require_dask,
    run_tasks,
    versions,
    worker_count,
)
from certdp.sweep.ledger import Ledger, locked, previous_cells, sha256_hex
from certdp.sweep.spec import Cell, Spec, parse_spec

#: Largest input file a cell ships to its worker.
MAX_INPUT_BYTES = 16 << 20
#: Largest total of the distinct input files of one sweep (each file is read once, however many
#: cells name it): 10,000 cells of distinct 16 MiB files would otherwise hold 160 GB in memory
MAX_TOTAL_INPUT_BYTES = 256 << 20

#: Largest output file a resumed sweep reads back (a certificate is at most a few hundred KB).
MAX_OUTPUT_BYTES = 64 << 20


@dataclass(frozen=True)
class Job:
    """A job kind: the certdp command a cell runs, the spec keys that are its positional arguments
    (in order), fixed arguments after them, the keys that name input files (shipped to the worker),
    and whether the cell's output is a certificate."""

    command: str
    positional: tuple[str, ...] = ()
    fixed: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    certificate: bool = False


JOBS = {
    "calibrate": Job("calibrate", ("mechanism",), certificate=True),
    "eps": Job("eps", ("mechanism",), files=("event",)),
    "delta": Job("delta", ("mechanism",), files=("event",)),
    "verify": Job("verify", ("certificate",), files=("certificate", "pubkey")),
    "audit": Job("audit", files=("cases",)),
    "claims": Job("claims", fixed=("check",), files=("file",)),
}

#: Spec keys whose values are files (named by their stem in file names).
FILE_KEYS = frozenset(k for job in JOBS.values() for k in job.files)

#: Flags the sweep sets itself, and why a spec may not.
RESERVED = {
    "json": "every cell prints its JSON record",
    "out": "each cell's file goes to --out DIR of the sweep",
    "sign": "certificates are signed with the sweep's --sign KEY",
    "html": "a sweep writes one JSON file per cell, not reports",
    "jobs": "the sweep runs the cells in parallel, each in one process",
    "help": "it is not a parameter",
}

#: Bounds of the numeric flags, checked before any task runs (the commands check them again).
_BOUNDS: dict[str, dict[str, Any]] = {
    "q": {"gt": 0, "le": 1},
    "sigma": {"gt": 0},
    "epsilon": {"gt": 0},
    "eps": {"ge": 0},
    "delta": {"gt": 0, "lt": 1},
    "tv": {"gt": 0, "lt": 1},
    "step": {"gt": 0},
    "h": {"gt": 0, "le": 1},
    "epochs": {"gt": 0},
    "max_seconds": {"gt": 0},
}

#: Record fields copied into the manifest entry of a cell (what a reader of the manifest wants).
SUMMARY = ("sigma", "sigma_miss", "violation_proved", "epsilon_upper", "tv_upper", "lower", "upper", "status", "counts")


@dataclass(frozen=True)
class CellTask:
    """What a worker needs for one cell: the command line, the input files it names (their
    position in ``argv``, the path as the spec gives it, and their bytes) and whether the command
    writes a certificate."""

    name: str
    argv: tuple[str, ...]
    files: tuple[tuple[int, str, bytes], ...]
    certificate: bool

    @functools.cached_property
    def key(self) -> str:
        """Contract: a digest of the command line, the input files' contents and the certdp and
        python-flint versions: two tasks with the same key compute the same thing."""
        # the versions too: results in a folder are those of the certdp that writes its manifest
        ident = {"argv": self.argv, "files": [[i, p, sha256_hex(b)] for i, p, b in self.files], "versions": versions()}
        return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:32]


@dataclass(frozen=True)
class CellResult:
    """What a worker returns: the exit code, the record or error of the command, the certificate
    bytes (unsigned) when it wrote one, and the seconds the command took."""

    code: int
    record: dict[str, Any] | None
    error: str | None
    certificate: bytes | None
    seconds: float


def _restore(value: Any, paths: dict[str, str]) -> Any:
    """``value`` with the worker's private file paths replaced by the spec's."""
    if isinstance(value, str):
        for tmp, orig in paths.items():
            value = value.replace(tmp, orig)
        return value
    if isinstance(value, dict):
        return {k: _restore(v, paths) for k, v in value.items()}
    if isinstance(value, list):
        return [_restore(v, paths) for v in value]
    return value


def run_cell(task: CellTask) -> CellResult:
    """Run one cell on a worker: the command against private copies of its input files.

    Contract: the outcome of ``certdp ARGV --json`` as this process computes it (certdp.cli.dispatch),
    with the worker's file paths replaced by the spec's in the record and the error.
    """
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="certdp-cell-") as tmp:
        argv = list(task.argv)
        back: dict[str, str] = {}
        for n, (i, orig, data) in enumerate(task.files):
            folder = Path(tmp, f"in{n}")
            folder.mkdir()
            path = folder / (Path(orig).name or "input")
            path.write_bytes(data)
            argv[i] = str(path)
            back[str(path)] = orig
        cert = Path(tmp, "certificate.json")
        if task.certificate:
            argv += ["--out", str(cert)]
            back[str(cert)] = f"{task.name}.json"
        outcome = execute(argv)
        data_out = read_capped(cert, "out", MAX_OUTPUT_BYTES) if task.certificate and cert.exists() else None
    return CellResult(
        outcome.code,
        _restore(outcome.record, back),
        _restore(outcome.error, back),
        data_out,
        round(time.perf_counter() - start, 3),
    )


def _flag_table(parser: argparse.ArgumentParser, command: str) -> dict[str, tuple[str, bool]]:
    """The spec key of each flag of ``command``: its option string and whether it is a switch."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    table = {}
    for act in sub._actions:
        if act.option_strings:
            opt = max(act.option_strings, key=len)
            table[opt.lstrip("-").replace("-", "_")] = (opt, act.nargs == 0)
    return table


class _Planner:
    """Turns the cells of a spec into checked tasks (one parser for all of them)."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.job = JOBS[spec.job]
        self.parser = build_parser(raising=True)
        self.flags = _flag_table(self.parser, self.job.command)
        self.base = spec.path.resolve().parent
        self.expected: dict[str, dict[str, Any]] = {}  # cell name -> the claim its certificate must make
        self._inputs: dict[str, bytes] = {}  # resolved path -> its bytes (read once)
        self._input_bytes = 0

    def _where(self, cell: Cell) -> str:
        return f"grid[{cell.block}] cell {cell.name}"

    def task(self, cell: Cell) -> CellTask:
        """Contract: the checked task of ``cell``, or InvalidArgument naming the key and the cell."""
        job = self.job
        params = dict(cell.params)
        argv: list[str] = [job.command]
        files: list[tuple[int, str, bytes]] = []
        resolved = {}

        def add_value(key: str, value: str) -> None:
            if key in job.files:
                path = Path(value) if Path(value).is_absolute() else self.base / value
                files.append((len(argv), value, self._read(key, path)))
                resolved[len(argv)] = str(path)
                argv.append(value if not value.startswith("-") else f"./{value}")
            else:
                argv.append(value)

        for key in job.positional:
            if key in params:
                value = params[key]
                if not isinstance(value, str):
                    raise InvalidArgument(f"grid[{cell.block}].{key}={fmt_value(value)} must be a value, not a boolean")
                if value.startswith("-") and key not in job.files:  # it would be read as a flag
                    raise InvalidArgument(f"grid[{cell.block}].{key}={fmt_value(value)} must not start with -")
                add_value(key, value)
        argv += job.fixed
        for key, value in params.items():
            if key in job.positional:
                continue
            if key in RESERVED:
                raise InvalidArgument(f"grid[{cell.block}].{key} is set by the sweep: {RESERVED[key]}")
            if key not in self.flags:
                known = ", ".join(sorted(set(self.flags) - set(RESERVED)) + list(job.positional))
                raise InvalidArgument(
                    f"grid[{cell.block}].{key} is not a parameter of certdp {job.command} (known: {known})"
                )
            opt, switch = self.flags[key]
            if switch:
                if not isinstance(value, bool):
                    raise InvalidArgument(f"grid[{cell.block}].{key}={fmt_value(value)} must be true or false")
                if value:
                    argv.append(opt)
                continue
            if isinstance(value, bool):
                raise InvalidArgument(f"grid[{cell.block}].{key}={value} must be a value, not a boolean")
            if key in job.files:
                argv.append(opt)
                add_value(key, value)
            else:
                argv.append(f"{opt}={value}")  # the = form: a value may start with "-"
        argv.append("--json")
        checked = list(argv)
        for i, path in resolved.items():
            checked[i] = path
        try:
            args = self._check(checked)
            if job.certificate:
                self.expected[cell.name] = expected_claim(args)
        except CertdpError as exc:
            raise prefixed(exc, self._where(cell)) from None
        return CellTask(cell.name, tuple(argv), tuple(files), job.certificate)

    def _read(self, key: str, path: Path) -> bytes:
        # regular files only (certdp.fileio): a FIFO would block the planning, a device never end
        name = str(path.resolve())
        if name not in self._inputs:
            data = read_capped(path, key, MAX_INPUT_BYTES)
            self._input_bytes += len(data)
            if self._input_bytes > MAX_TOTAL_INPUT_BYTES:
                raise LimitExceeded(
                    f"{key}={fmt_value(str(path))}: the sweep's input files exceed {MAX_TOTAL_INPUT_BYTES} bytes in all"
                )
            self._inputs[name] = data
        return self._inputs[name]

    def _check(self, argv: list[str]) -> argparse.Namespace:
        """The checks a command makes before computing: flags, values, files; the checked arguments."""
        args = self.parser.parse_args(argv)
        reject_unused(args)
        apply_defaults(args)
        for name, bounds in _BOUNDS.items():
            value = getattr(args, name, None)
            if isinstance(value, str):
                real(name, value, **bounds)
        if isinstance(getattr(args, "steps", None), str):
            integer("steps", args.steps, ge=1)
        if getattr(args, "direction", None) is not None and args.direction not in DIRECTIONS:
            raise InvalidArgument(f"direction={fmt_value(args.direction)} must be one of {', '.join(DIRECTIONS)}")
        if args.command == "calibrate":
            ra = args.mechanism == "random-allocation"
            # random allocation: a TV target, or an (epsilon, delta) target
            needed = (
                (("steps", "tv") if args.epsilon is None else ("steps", "epsilon", "delta"))
                if ra
                else ("q", "epsilon", "delta")
            )
            for name in needed:
                if getattr(args, name) is None:
                    raise InvalidArgument(f"{name} is required to calibrate {args.mechanism} (--{name})")
            if args.mechanism == "subsampled-gaussian" and args.steps is None and args.epochs is None:
                raise InvalidArgument("steps is required to calibrate subsampled-gaussian (--steps N, or --epochs E)")
            given = ("tv", "epsilon", "delta", "step") if ra else ("q", "epsilon", "delta", "step")
            for name in given:
                if getattr(args, name) is not None:
                    recordable(name, getattr(args, name))
            if args.mechanism == "subsampled-gaussian" and args.q is not None:
                steps_from_args(args, args.q)
        elif args.command in ("eps", "delta") and args.mechanism is not None:
            pair_from_args(args)
        elif args.command == "verify" and args.pubkey is None and not args.allow_untrusted:
            raise InvalidArgument("pubkey is required: give pubkey = FILE, or allow_untrusted = true")
        return args


def _summary(rec: dict[str, Any] | None) -> dict[str, Any]:
    return {k: rec[k] for k in SUMMARY if rec is not None and k in rec}


class _Run:
    """One run of a sweep: decides what to skip, and records each finished cell."""

    def __init__(self, planner: _Planner, out: Path, key: Any, recheck: bool, tasks: list[CellTask]) -> None:
        self.out = out
        self.key = key
        self.pub = public_key_b64(key.public_key()) if key is not None else None
        self.recheck = recheck
        self.expected = planner.expected
        self.tasks = tasks
        self.cells = {c.name: c for c in planner.spec.cells}

    def entry(self, task: CellTask, **fields: Any) -> dict[str, Any]:
        """The manifest entry of ``task``: what the task itself determines, then ``fields``."""
        cell = self.cells[task.name]
        return {
            "name": task.name,
            "key": task.key,
            "job": cell.job,
            "block": cell.block,
            "params": {k: v for k, v in cell.params},
            "argv": ["certdp", *task.argv],
            "output": None,
            "sha256": None,
            "status": "pending",
            "exit_code": None,
            "seconds": None,
            "worker": None,
            "error": None,
            "summary": {},
            **fields,
        }

    def kept(self, task: CellTask, old: dict[str, Any] | None) -> dict[str, Any] | None:
        """The entry of a previous result that this run keeps, or None to run the cell again.

        Kept only if the old entry is for this very command line and certdp version, its file is
        NAME.json (a regular file, not a link, of at most MAX_OUTPUT_BYTES) with the recorded
        digest, and, for a certificate, its schema, digest and signature (by the --sign key) hold,
        its claim is the one this cell asks for and, with recheck, the verifier's recomputation
        confirms it. The entry is rebuilt from the task and the file (status, exit code, error
        and summary are read from the file); only the timing and the worker are carried over.
        """
        if old is None or old.get("key") != task.key or old.get("status") not in ("ok", "refuted"):
            return None
        name = f"{task.name}.json"
        path = self.out / name
        if old.get("output") != name or path.is_symlink():
            return None
        try:
            data = read_capped(path, "output", MAX_OUTPUT_BYTES, follow_links=False)
        except CertdpError:  # not a regular file, too large, unreadable: the cell runs again
            return None
        if sha256_hex(data) != old.get("sha256"):
            return None
        try:
            fields = self._check_file(task, data)
        except CertdpError:
            return None
        history = {k: old.get(k) for k in ("seconds", "worker", "finished")}
        return self.entry(task, output=name, sha256=old["sha256"], **fields, **history)

    def _check_file(self, task: CellTask, data: bytes) -> dict[str, Any]:
        """Status, exit code, error and summary of a kept output file; CertdpError if it cannot
        be kept."""
        doc = loads_strict(data)
        if not task.certificate:
            code = doc.get("exit_code") if isinstance(doc, dict) else None
            if code not in (0, 1) or isinstance(code, bool):
                raise CertificateInvalid("not a record this sweep writes")
            status = "ok" if code == 0 else "refuted"
            return {"status": status, "exit_code": code, "error": doc.get("error"), "summary": _summary(doc)}
        check_integrity(doc, self.pub)
        check_certificate_is_for(doc, self.expected[task.name])
        if self.recheck:
            verify_document(doc)
        return {"status": "ok", "exit_code": 0, "error": None, "summary": certificate_summary(doc, self.recheck)}

    def finish(self, task: CellTask, done: TaskDone) -> dict[str, Any]:
        """The manifest entry of a finished cell, its output file written (atomically) first."""
        base = {"worker": done.worker, "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        if done.error is not None:
            return self.entry(task, status="failed", error=done.error, **base)
        res: CellResult = done.value
        fields: dict[str, Any] = {"exit_code": res.code, "seconds": res.seconds, **base}
        fields["summary"] = _summary(res.record)
        ok = res.code == 0 and res.record is not None
        if task.certificate:
            if not ok:
                return self.entry(task, status="failed", error=res.error or f"exit code {res.code}", **fields)
            try:
                data, fields["summary"] = self._certificate(task, res.certificate)
            except CertdpError as exc:
                return self.entry(task, status="failed", error=f"the worker's certificate: {exc}", **fields)
        elif ok or res.code == 1:  # 1: the check failed or was refuted, which is this cell's answer
            rec = res.record if res.record is not None else {"quantity": task.argv[0], "error": res.error}
            data = (json.dumps({**rec, "exit_code": res.code}, indent=2) + "\n").encode()
        else:
            return self.entry(task, status="failed", error=res.error or f"exit code {res.code}", **fields)
        out = f"{task.name}.json"
        try:
            atomic_write(self.out / out, data)
        except CertdpError as exc:  # a folder in the way, a full disk: this cell failed, the others go on
            return self.entry(task, status="failed", error=str(exc), **fields)
        status = "ok" if res.code == 0 else "refuted"
        return self.entry(task, status=status, output=out, sha256=sha256_hex(data), error=res.error, **fields)

    def _certificate(self, task: CellTask, data: bytes | None) -> tuple[bytes, dict[str, Any]]:
        """The certificate to write (signed here when a key is given) and its summary. What the
        worker sent must be a whole certificate (schema, digest) making this cell's claim; with
        ``recheck`` it is also verified (claim and refutation recomputed) on this machine first,
        so that a worker cannot have a wrong certificate signed."""
        if data is None:
            raise CertificateInvalid("the command wrote no certificate")
        doc = loads_strict(data)
        check_integrity(doc)
        check_certificate_is_for(doc, self.expected[task.name])
        if self.recheck:
            verify_document(doc)
        # signed by this run's key, or not at all: a signature the worker put on it is dropped
        doc = finalize(doc["body"], self.key)
        return (json.dumps(doc, indent=2) + "\n").encode(), certificate_summary(doc, self.recheck)


def _versions() -> dict[str, str]:
    out = {**versions(), "python": platform.python_version()}
    for mod in ("dask", "distributed"):
        m = sys.modules.get(mod)
        if m is not None:
            out[mod] = getattr(m, "__version__", "?")
    return out


def run_sweep(args: argparse.Namespace) -> dict[str, Any]:
    """Runner of ``certdp sweep``. Contract: one output file per cell that finished (ok: exit 0;
    refuted: exit 1, the cell's answer) and DIR/manifest.json; ``exit_code`` 1 when a cell failed
    or was refuted, else 0; InvalidArgument (exit 2) for a bad spec or flag, before any task runs."""
    scheduler = parse_scheduler(args.scheduler or "local")
    workers = worker_count(scheduler, None if args.workers is None else integer("workers", args.workers, ge=1))
    spec = parse_spec(readable_path("spec", args.spec), tuple(JOBS), FILE_KEYS)
    if args.sign is not None and not JOBS[spec.job].certificate:
        raise InvalidArgument(f"sign applies to calibrate sweeps (certificates), not job={spec.job}")
    key = load_private_key(readable_path("sign", args.sign), "sign") if args.sign is not None else None
    remote = scheduler not in SCHEDULERS
    recheck = (args.recheck or ("yes" if remote and key is not None else "no")) == "yes"
    if recheck and not JOBS[spec.job].certificate:
        raise InvalidArgument(f"recheck applies to calibrate sweeps (certificates), not job={spec.job}")
    planner = _Planner(spec)
    tasks = [planner.task(c) for c in spec.cells]
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise InvalidArgument(f"out={fmt_value(args.out)} is a file, not a folder")
    if args.dry_run:
        old = previous_cells(out) if out.is_dir() else {}
        run = _Run(planner, out, key, recheck, tasks)
        rows = [
            {"name": t.name, "argv": ["certdp", *t.argv], "skip": bool(run.kept(t, old.get(t.name)))} for t in tasks
        ]
        text = "\n".join(f"{'skip' if r['skip'] else 'run '} {r['name']}: {' '.join(r['argv'])}" for r in rows)
        plan: dict[str, Any] = {"quantity": "sweep-plan", "cells": rows, "to_run": sum(not r["skip"] for r in rows)}
        if not args.json:
            plan["text"] = text
        return plan
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InvalidArgument(f"out={fmt_value(args.out)} cannot be created ({exc.strerror})") from None
    with locked(out):
        return _execute(args, spec, out, _Run(planner, out, key, recheck, tasks), scheduler, workers)


def _execute(
    args: argparse.Namespace, spec: Spec, out: Path, run: _Run, scheduler: str, workers: int | None
) -> dict[str, Any]:
    start = time.perf_counter()
    tasks = run.tasks
    old = previous_cells(out)
    entries = {}
    todo = []
    for t in tasks:
        kept = run.kept(t, old.get(t.name))
        entries[t.name] = kept if kept is not None else run.entry(t)
        if kept is None:
            todo.append(t)
    if todo:
        require_dask(scheduler)  # before the manifest is touched: a missing Dask changes nothing
    header = {
        "spec": spec.to_dict(),
        "versions": _versions(),
        "scheduler": scheduler,
        "workers": workers,
        "signed_by": run.pub,
        "recheck": run.recheck,
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    ledger = Ledger(out, header, entries)
    ledger.write()
    try:
        with progress_bar(args) as note:
            note(f"0 of {len(todo)} cells", 0.0)

            def on_done(done: TaskDone) -> None:
                entry = run.finish(todo[done.index], done)
                ledger.record(entry)
                finished = sum(1 for e in ledger.cells.values() if e["status"] != "pending")
                note(f"{finished} of {len(tasks)} cells", finished / len(tasks))

            run_tasks(run_cell, todo, on_done, scheduler=scheduler, workers=workers, names=[t.name for t in todo])
    finally:
        ledger.header["versions"] = _versions()  # dask's, now that it is loaded
        ledger.header["seconds"] = round(time.perf_counter() - start, 3)
        ledger.close()
    manifest = ledger.manifest()
    counts = manifest["counts"]
    bad = [e for e in ledger.cells.values() if e["status"] != "ok"]
    rec: dict[str, Any] = {
        "quantity": "sweep",
        "spec": str(spec.path),
        "out": str(out),
        "manifest": str(out / "manifest.json"),
        "job": spec.job,
        "scheduler": scheduler,
        "workers": workers,
        "cells": len(tasks),
        "ran": len(todo),
        "skipped": len(tasks) - len(todo),
        "counts": counts,
        "seconds": manifest["seconds"],
        "not_ok": [{"name": e["name"], "status": e["status"], "error": e["error"]} for e in bad[:20]],
        "exit_code": 1 if bad else 0,
    }
    lines = [
        f"sweep {spec.path} ({spec.job}): {len(tasks)} cells, ran {len(todo)}, skipped {len(tasks) - len(todo)} "
        f"in {manifest['seconds']} s on {scheduler}",
        "  " + ", ".join(f"{k} {v}" for k, v in counts.items()),
        *(f"  {e['status']}: {e['name']}: {e['error']}" for e in bad[:20]),
        f"manifest: {out / 'manifest.json'}",
    ]
    if not args.json:
        rec["text"] = "\n".join(lines)
    return rec
