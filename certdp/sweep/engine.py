"""Where independent tasks run: in this process, or on Dask.

A sweep (and ``certdp table sigma``) is a set of independent cells: embarrassingly parallel work
that should run on an existing distributed engine rather than a home-made pool. :func:`run_tasks`
hands each task to one of four schedulers and reports every result, in completion order, to a
callback that runs in the calling thread (so the caller writes files and journals from one place):

- ``serial``: one after another in this process; needs nothing beyond certdp.
- ``processes``: Dask's single-machine multiprocessing scheduler (``dask`` alone).
- ``local`` (the default of ``certdp sweep``): a ``dask.distributed.LocalCluster`` started for
  the run, one single-threaded worker process per core. A worker that dies is restarted by its
  nanny and its task is run again elsewhere (Dask retries a task whose worker died up to
  ``distributed.scheduler.allowed-failures`` times, then reports it as failed).
- ``tcp://HOST:PORT`` (or ``tls://``): the same graph sent to a running Dask scheduler; the
  cluster's workers must run the same certdp and python-flint versions (checked before any task
  is submitted).

Dask is an optional dependency (``pip install "certdp[sweep]"``); it is imported only when a Dask
scheduler is chosen.
"""

from __future__ import annotations

import os
import socket
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from certdp.errors import InvalidArgument, Unsupported, fmt_value

#: Schedulers named by a word; anything else must be a scheduler address.
SCHEDULERS = ("local", "processes", "serial")

#: Most worker processes a sweep starts on this machine (a Dask cluster elsewhere has its own).
MAX_WORKERS = 256

INSTALL_HINT = 'pip install "certdp[sweep]"'


@dataclass(frozen=True)
class TaskDone:
    """One finished task: its position in the submitted sequence, its return value or the error
    that ended it (``value`` is None then), and where it ran (``host:pid``)."""

    index: int
    value: Any
    error: str | None
    worker: str


def parse_scheduler(text: str) -> str:
    """Contract: ``text`` if it names a scheduler (serial, processes, local) or is a Dask scheduler
    address (tcp://HOST:PORT, tls://HOST:PORT); else InvalidArgument naming ``scheduler``."""
    if text in SCHEDULERS:
        return text
    proto, sep, rest = text.partition("://")
    host, colon, port = rest.rpartition(":")
    if sep and proto in ("tcp", "tls") and host and colon and port.isdigit() and 0 < int(port) < 65536:
        return text
    raise InvalidArgument(
        f"scheduler={fmt_value(text)} must be serial, processes, local or a Dask scheduler address tcp://HOST:PORT"
    )


def worker_count(scheduler: str, workers: int | None) -> int | None:
    """The number of worker processes to start: ``workers``, or one per core by default; None for
    a remote cluster (it has its own workers).

    Contract: an int in [1, MAX_WORKERS] (1 for serial) or None for an address; InvalidArgument
    naming ``workers`` when it does not apply or is out of range.
    """
    if scheduler not in SCHEDULERS:
        if workers is not None:
            raise InvalidArgument(
                f"workers={workers} does not apply to scheduler={scheduler}: the cluster has its own workers"
            )
        return None
    if workers is None:
        return 1 if scheduler == "serial" else os.cpu_count() or 1
    if not 1 <= workers <= MAX_WORKERS:
        raise InvalidArgument(f"workers={workers} must be in [1, {MAX_WORKERS}]")
    if scheduler == "serial" and workers != 1:
        raise InvalidArgument(f"workers={workers} does not apply to scheduler=serial (one task at a time)")
    return workers


def require_dask(scheduler: str) -> None:
    """Contract: returns if the modules ``scheduler`` needs import; else Unsupported with the
    install command (serial needs nothing)."""
    if scheduler == "serial":
        return
    try:
        import dask  # noqa: F401

        if scheduler != "processes":
            import distributed  # noqa: F401
    except ImportError:
        what = "Dask" if scheduler == "processes" else "Dask distributed"
        raise Unsupported(
            f"scheduler={scheduler} needs {what}, which is not installed: {INSTALL_HINT} "
            "(or --scheduler serial to run in this process)"
        ) from None


def here() -> str:
    """Contract: ``host:pid`` of the calling process."""
    return f"{socket.gethostname()}:{os.getpid()}"


def _guarded(fn: Callable[[Any], Any], item: Any) -> tuple[Any, str | None, str]:
    """Run one task; an exception becomes its text (a cell that raises must not stop the others,
    and Dask's local schedulers abandon the whole graph on the first exception)."""
    try:
        return fn(item), None, here()
    except Exception as exc:
        tb = traceback.extract_tb(exc.__traceback__)
        where = f" (at {tb[-1].filename}:{tb[-1].lineno})" if tb else ""
        return None, f"{type(exc).__name__}: {exc}{where}", here()


def versions() -> dict[str, str]:
    """Contract: the versions that decide what a task computes (certdp and python-flint)."""
    from importlib.metadata import version

    from certdp import __version__

    return {"certdp": __version__, "python-flint": version("python-flint")}


def run_tasks(
    fn: Callable[[Any], Any],
    items: Sequence[Any],
    on_done: Callable[[TaskDone], None],
    *,
    scheduler: str = "serial",
    workers: int | None = None,
    names: Sequence[str] | None = None,
) -> None:
    """Run ``fn(item)`` for every item on ``scheduler`` and call ``on_done`` once per item, in the
    calling thread, as each finishes.

    ``fn`` must be a module-level function and the items picklable (they travel to worker
    processes). ``names`` label the tasks on a Dask dashboard.

    Contract: ``on_done`` is called exactly once for each index in range(len(items)): with the
    value, or with the error text when ``fn`` raised, when its worker died more often than Dask
    allows, or when the cluster was lost. An exception from ``on_done`` stops the run (the tasks
    not yet finished are cancelled). InvalidArgument for a bad scheduler or worker count,
    Unsupported when Dask is missing, before any task runs.
    """
    scheduler = parse_scheduler(scheduler)
    n_workers = worker_count(scheduler, workers)
    require_dask(scheduler)
    if not items:
        return
    if scheduler == "serial":
        for i, item in enumerate(items):
            value, error, worker = _guarded(fn, item)
            on_done(TaskDone(i, value, error, worker))
    elif scheduler == "processes":
        _run_processes(fn, items, on_done, n_workers or 1)
    else:
        _run_distributed(fn, items, on_done, scheduler, n_workers, names)


def _run_processes(fn: Callable[[Any], Any], items: Sequence[Any], on_done: Callable[[TaskDone], None], n: int) -> None:
    from dask.callbacks import Callback
    from dask.multiprocessing import get

    keys = [f"certdp-task-{i}" for i in range(len(items))]
    graph = {k: (_guarded, fn, item) for k, item in zip(keys, items, strict=True)}
    index = {k: i for i, k in enumerate(keys)}
    reported: set[int] = set()
    reporting = [False]  # set while on_done runs: its own exceptions must propagate unchanged

    class _Report(Callback):  # type: ignore[misc]
        # posttask runs in the scheduling (calling) thread as each task's result arrives
        def _posttask(self, key: str, result: Any, dsk: Any, state: Any, worker_id: Any) -> None:
            value, error, worker = result
            reported.add(index[key])
            reporting[0] = True
            on_done(TaskDone(index[key], value, error, worker))
            reporting[0] = False

    try:
        with _Report():
            get(graph, keys, num_workers=min(n, len(items)))
    except Exception as exc:
        if reporting[0]:
            raise
        # a worker process died (BrokenProcessPool): this scheduler cannot retry, so every task
        # not finished is reported failed, and a resumed sweep runs exactly those again
        for i in range(len(items)):
            if i not in reported:
                on_done(TaskDone(i, None, f"{type(exc).__name__}: {exc} (the process pool broke)", "dask"))


@contextmanager
def _client(scheduler: str, n_workers: int | None) -> Iterator[Any]:
    import logging

    from distributed import Client, LocalCluster

    if scheduler == "local":
        cluster = LocalCluster(
            n_workers=min(n_workers or 1, MAX_WORKERS),
            threads_per_worker=1,  # the work is pure-Python and holds the GIL: one task per process
            processes=True,
            dashboard_address=":0",  # no fixed port: two sweeps on one machine must not collide
            silence_logs=logging.ERROR,
        )
        try:
            with Client(cluster) as client:
                yield client
        finally:
            cluster.close()
        return
    try:
        client = Client(scheduler, timeout="15s")
    except OSError as exc:
        raise InvalidArgument(f"scheduler={scheduler} cannot be reached ({exc})") from None
    with client:
        _check_worker_versions(client, scheduler)
        yield client


def _check_worker_versions(client: Any, scheduler: str) -> None:
    """A remote worker with another certdp or python-flint would compute other numbers: refuse."""
    mine = versions()
    theirs = client.run(versions)
    if not theirs:
        raise InvalidArgument(f"scheduler={scheduler} has no workers")
    for addr, v in sorted(theirs.items()):
        if v != mine:
            raise InvalidArgument(f"scheduler={scheduler}: worker {addr} runs {v}, this client runs {mine}")


def _run_distributed(
    fn: Callable[[Any], Any],
    items: Sequence[Any],
    on_done: Callable[[TaskDone], None],
    scheduler: str,
    n_workers: int | None,
    names: Sequence[str] | None,
) -> None:
    from distributed import as_completed

    # no more processes than tasks: a 3-cell sweep on a 64-core machine starts 3 workers
    with _client(scheduler, None if n_workers is None else min(n_workers, len(items))) as client:
        futures = [
            client.submit(_guarded, fn, item, key=f"certdp-{names[i] if names else i}-{os.getpid()}", pure=False)
            for i, item in enumerate(items)
        ]
        index = {f.key: i for i, f in enumerate(futures)}
        try:
            for fut in as_completed(futures):
                i = index[fut.key]
                try:
                    value, error, worker = fut.result()
                except Exception as exc:
                    on_done(TaskDone(i, None, f"{type(exc).__name__}: {exc}", "dask"))
                    continue
                on_done(TaskDone(i, value, error, worker))
        finally:
            client.cancel([f for f in futures if not f.done()])
