"""Check many claims: each distinct computation runs once, dependencies first, in parallel processes.

The computations of all claims form a DAG (a ratio needs its two sigmas; an ACS variance ratio
needs both calibrated shifts; those need rho*). They are run level by level in a process pool,
and every claim is then judged from the collected intervals (certdp.claims.check).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field

from certdp.claims.check import ClaimResult, Outcome, judge
from certdp.claims.interval import Interval
from certdp.claims.model import STATUSES, Claim, Ref, summarize
from certdp.claims.quantities import all_deps, compute
from certdp.errors import CertdpError, InvalidArgument

Progress = Callable[[str, float], None]
#: Most worker processes a run starts (also never more than there are computations).
MAX_WORKERS = 8
#: Rough relative cost of the slow computations: a level starts with them, so that the pool's
#: workers are not left waiting on one long job at the end.
COST = {
    "ra_exact_sigma_bisect": 6,
    "ra_exact_sigma": 5,
    "ra_tv": 4,
    "eps_exact_subsampled": 4,
    "dpsgd_sigma_rdp": 3,
    "acs_shift_rdp": 2,
    "eps_rdp_grid": 2,
}


def _levels(claims: Iterable[Claim]) -> list[list[Ref]]:
    """Every computation the claims need, grouped so that each depends only on earlier groups."""
    depth: dict[str, int] = {}
    refs: dict[str, Ref] = {}

    def visit(r: Ref, stack: tuple[str, ...] = ()) -> int:
        if r.key in depth:
            return depth[r.key]
        if r.key in stack:
            raise CertdpError(f"quantity {r.label()} depends on itself")
        d = 1 + max((visit(x, (*stack, r.key)) for x in all_deps(r)), default=-1)
        depth[r.key], refs[r.key] = d, r
        return d

    for c in claims:
        for r in c.refs:
            visit(r)
    out: list[list[Ref]] = [[] for _ in range(1 + max(depth.values(), default=-1))]
    for k, d in depth.items():
        out[d].append(refs[k])
    return [sorted(lv, key=lambda r: -COST.get(r.name, 0)) for lv in out]


def run_quantity(ref: Ref, resolved: dict[str, Interval]) -> Outcome:
    """Evaluate one computation whose dependencies are all in ``resolved`` (check_claims fails a
    computation with a failed dependency before it runs, carrying that dependency's reason).
    Contract: its certified interval, or the one-line reason certdp could not certify it (a
    CertdpError, or an internal error, reported as such); never raises."""
    start = time.perf_counter()
    try:
        iv = compute(ref, resolved)
    except CertdpError as exc:  # an InvalidArgument is the claim file's fault: exit 2, not imprecise
        bad = isinstance(exc, InvalidArgument)
        return Outcome(None, f"{type(exc).__name__}: {exc}", time.perf_counter() - start, bad)
    except Exception as exc:  # a bug in one computation must not lose the whole run: reported, never confirmed
        return Outcome(None, f"internal error in {ref.name}: {type(exc).__name__}: {exc}", time.perf_counter() - start)
    return Outcome(iv, "", time.perf_counter() - start)


def run_identity(check_id: str) -> Outcome:
    """Run one proofs_checks check. Contract: the point interval 1 when its proof passed with a
    symbolic method, 0 when it did not (or its method is a numeric fallback, never a proof)."""
    start = time.perf_counter()
    try:
        from proofs_checks import CHECKS
    except ImportError:
        return Outcome(None, "proofs_checks is not installed (it ships with certdp's source and wheel)")
    found = [c for c in CHECKS if c.id == check_id]
    if not found:
        return Outcome(None, f"no proofs_checks id {check_id}")
    c = found[0]
    try:
        ok = bool(c.fn())
    except Exception as exc:  # a check that crashes proves nothing; report it
        return Outcome(None, f"{type(exc).__name__}: {exc}", time.perf_counter() - start)
    proved = ok and c.method.startswith("symbolic")
    text = f"{'PASS' if ok else 'FAIL'} ({c.method}): {c.statement}"
    return Outcome(Interval.point(1 if proved else 0, text), "", time.perf_counter() - start)


def _task(job: tuple[str, object, dict[str, Interval]]) -> tuple[str, Outcome]:
    kind, what, resolved = job
    if kind == "identity":
        assert isinstance(what, str)
        return f"identity:{what}", run_identity(what)
    assert isinstance(what, Ref)
    return what.key, run_quantity(what, resolved)


@dataclass(frozen=True)
class ClaimsReport:
    """Results of one run, in registry order, with the wall time and the worker count."""

    results: tuple[ClaimResult, ...]
    seconds: float
    workers: int
    computations: int = field(default=0)
    #: seconds spent per quantity name, each distinct computation counted once (identities: "identity")
    timings: tuple[tuple[str, float], ...] = field(default=())

    def counts(self) -> dict[str, int]:
        """Contract: the number of claims in each status (every status listed, zeros included)."""
        return {s: sum(r.status == s for r in self.results) for s in STATUSES}

    def summary(self) -> dict[str, dict[str, object]]:
        """Contract: :func:`certdp.claims.model.summarize` of this run (categories and statuses)."""
        return summarize([r.claim for r in self.results], [r.status for r in self.results])

    def to_dict(self) -> dict[str, object]:
        """Contract: JSON-ready: counts (by status, and by category: distinct printed numbers,
        derived checks, identities, out of scope), per-paper counts, every claim's record, time
        and workers."""
        summary = self.summary()
        papers: dict[str, dict[str, object]] = {}
        for r in self.results:
            p = papers.setdefault(r.claim.paper.id, {"citation": r.claim.paper.cite(), **{s: 0 for s in STATUSES}})
            p[r.status] = int(p[r.status]) + 1  # type: ignore[call-overload]
        for pid, p in papers.items():
            p["categories"] = summary[pid]
        return {
            "quantity": "claims",
            "total": len(self.results),
            "counts": self.counts(),
            "categories": summary["all"],
            "papers": papers,
            "claims": [r.to_dict() for r in self.results],
            "computations": self.computations,
            "timings": {k: round(v, 1) for k, v in self.timings},
            "seconds": round(self.seconds, 1),
            "workers": self.workers,
        }


def check_claims(claims: Iterable[Claim], progress: Progress | None = None, workers: int | None = None) -> ClaimsReport:
    """Check every claim. Contract: one ClaimResult per claim, in order, judged by
    :func:`certdp.claims.check.judge` from certified intervals; ``workers`` processes (default:
    the CPU count; at most MAX_WORKERS and the number of computations; 1 runs everything in this
    process)."""
    claims = tuple(claims)
    note = progress or (lambda what, frac: None)
    start = time.perf_counter()
    n = min(workers or os.cpu_count() or 1, MAX_WORKERS)
    levels = _levels(claims)
    checks = sorted({c.check for c in claims if c.kind == "identity" and c.check})
    total = sum(len(lv) for lv in levels) + len(checks)
    done = 0
    results: dict[str, Outcome] = {}
    resolved: dict[str, Interval] = {}
    n = max(1, min(n, total))
    pool = ProcessPoolExecutor(n) if n > 1 else None
    try:
        jobs_by_level: list[list[tuple[str, object, dict[str, Interval]]]] = [[("identity", c, {}) for c in checks]]
        for level in levels:
            jobs_by_level.append([("quantity", r, {}) for r in level])
        for i, jobs in enumerate(jobs_by_level):
            if i > 0:  # each job gets the intervals of its own dependencies; a failed one fails it here
                ready = []
                for k, w, _ in jobs:
                    deps = all_deps(w)  # type: ignore[arg-type]
                    failed = [d for d in deps if d.key not in resolved]
                    if failed:
                        why = f"needs {failed[0].label()}: {results[failed[0].key].error}"
                        results[w.key] = Outcome(None, why, bad_input=results[failed[0].key].bad_input)  # type: ignore[union-attr]
                        done += 1
                        continue
                    ready.append((k, w, {d.key: resolved[d.key] for d in deps}))
                jobs = ready
            # as_completed: the progress bar moves as jobs finish, not in submission order
            outs = (
                (f.result() for f in as_completed([pool.submit(_task, j) for j in jobs])) if pool else map(_task, jobs)
            )
            for key, out in outs:
                results[key] = out
                if out.interval is not None and not key.startswith("identity:"):
                    resolved[key] = out.interval
                done += 1
                note(f"certifying claims ({done}/{total} computations)", done / max(total, 1))
    finally:
        if pool:
            pool.shutdown(cancel_futures=True)
    identities = {k.removeprefix("identity:"): v for k, v in results.items() if k.startswith("identity:")}
    judged = tuple(judge(c, results, identities) for c in claims)
    spent: dict[str, float] = {}
    for key, out in results.items():
        name = "identity" if key.startswith("identity:") else json.loads(key)[0]
        spent[name] = spent.get(name, 0.0) + out.seconds
    timings = tuple(sorted(spent.items(), key=lambda kv: -kv[1]))
    return ClaimsReport(judged, time.perf_counter() - start, n, total, timings)
